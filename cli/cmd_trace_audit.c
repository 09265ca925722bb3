/* cmd_trace_audit.c - `hintsim trace audit DIR [-o MERGED.hst] [--json]`: compare the
 * per-process traces libhintcap wrote (seed 000, pitfall 3: one module's config file
 * overrode the env hint in some processes only) and merge them for `recommend`.
 *
 * Exit 0 when every process ran with the same effective hint, 1 when they differ (each
 * process, its hint and where it came from are listed) or a trace is unreadable, 2 usage.
 * With -o the merged trace is written either way: QP indices are renumbered per process,
 * records ordered by post time (comparable only within a host: CLOCK_MONOTONIC).
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/hs_util.h"
#include "traces/trace.h"
#include "traces/trace_convert.h"
#include "traces/trace_format.h"

/* The producer of a merged trace: a trace of an earlier audit in DIR is not a process's. */
#define AUDIT_PRODUCER "hintsim trace audit"

struct audit_opts {
    const char *out;
    int json;
};

static const hs_opt_t g_audit_opts[] = {
    {"output", 'o', HS_OPT_STR, offsetof(struct audit_opts, out), "MERGED.hst", NULL,
     "write all processes' records as one trace ('-': .hst on standard output, the report on "
     "stderr)"},
    {"json", 0, HS_OPT_FLAG, offsetof(struct audit_opts, json), NULL, NULL, "JSON output"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_audit_spec = {
    "hintsim trace audit DIR [-o MERGED.hst] [--json]",
    "compare the effective hint of every captured process; merge their traces",
    g_audit_opts, 1, 1,
    "DIR holds the .hst files of 'hintsim capture run -o DIR'. Exit 1 when the processes'\n"
    "effective hints differ (seed 000, pitfall 3) or a trace cannot be read."};

typedef struct {
    char *path;
    trace_t *tr;
} audit_item_t;

typedef struct {
    audit_item_t *v;
    size_t n;
} audit_set_t;

static int cmp_item(const void *a, const void *b)
{
    return strcmp(((const audit_item_t *)a)->path, ((const audit_item_t *)b)->path);
}

static int is_trace_name(const char *name)
{
    size_t n = strlen(name);

    return n > 4 && strcmp(name + n - 4, ".hst") == 0 && name[0] != '.';
}

static void audit_set_free(audit_set_t *s)
{
    size_t i;

    for (i = 0; i < s->n; i++) {
        free(s->v[i].path);
        trace_free(s->v[i].tr);
    }
    free(s->v);
}

/* Leave out the traces an earlier audit merged into DIR (audited again, a merge counted
 * every process twice); an error when nothing else is left. */
static hs_status_t audit_drop_merged(const char *dir, audit_set_t *s)
{
    size_t i, kept = 0;

    for (i = 0; i < s->n; i++) {
        if (strcmp(s->v[i].tr->hdr.producer, AUDIT_PRODUCER) == 0) {
            hs_log_warn("%s: left out: a merged trace of an earlier audit", s->v[i].path);
            free(s->v[i].path);
            trace_free(s->v[i].tr);
            continue;
        }
        s->v[kept++] = s->v[i];
    }
    s->n = kept;
    if (kept == 0) {
        hs_log_error("%s: no .hst traces of a process, only merged ones", dir);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

/* Load every DIR/ *.hst, sorted by name. Errors are logged (trace_load names the file). */
static hs_status_t audit_load(const char *dir, audit_set_t *s)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    hs_status_t st = HS_OK;
    size_t i;

    if (!d) {
        hs_log_error("%s: cannot open directory", dir);
        return HS_ERR_IO;
    }
    while ((e = readdir(d)) != NULL) {
        audit_item_t *nv;

        if (!is_trace_name(e->d_name))
            continue;
        nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
        if (!nv || asprintf(&nv[s->n].path, "%s/%s", dir, e->d_name) < 0) {
            s->v = nv ? nv : s->v;
            st = HS_ERR_NOMEM;
            break;
        }
        s->v = nv;
        s->v[s->n++].tr = NULL;
    }
    closedir(d);
    if (st != HS_OK)
        return st;
    if (s->n == 0) {
        hs_log_error("%s: no .hst traces (run 'hintsim capture run -o %s -- COMMAND')", dir, dir);
        return HS_ERR_INVALID;
    }
    if (s->n > 1)
        qsort(s->v, s->n, sizeof(*s->v), cmp_item);
    for (i = 0; i < s->n; i++)
        if ((st = trace_load(s->v[i].path, &s->v[i].tr)) != HS_OK)
            return st;
    return audit_drop_merged(dir, s);
}

/* The hint most processes use (ties: the smallest). */
static uint64_t majority_hint(const audit_set_t *s)
{
    uint64_t best = 0;
    size_t i, j, best_n = 0;

    for (i = 0; i < s->n; i++) {
        size_t c = 0;
        uint64_t h = s->v[i].tr->hdr.hint_bytes;

        for (j = 0; j < s->n; j++)
            c += s->v[j].tr->hdr.hint_bytes == h;
        if (c > best_n || (c == best_n && h < best)) {
            best = h;
            best_n = c;
        }
    }
    return best;
}

/* s made plain (hs_fputs_plain), then spaces to width columns. */
static void put_col(FILE *fp, const char *s, size_t width)
{
    for (size_t n = hs_fputs_plain(fp, s); n < width; n++)
        fputc(' ', fp);
}

static void print_text(FILE *fp, const audit_set_t *s, uint64_t major, int differ)
{
    size_t i;

    fprintf(fp, "%-40s %8s %5s %-10s %10s %-7s %10s %8s\n", "trace", "pid", "rank", "device",
            "hint", "source", "records", "dropped");
    for (i = 0; i < s->n; i++) {
        const trace_hdr_t *h = &s->v[i].tr->hdr;
        const char *base = strrchr(s->v[i].path, '/');
        char hint[32];

        hs_format_size(h->hint_bytes, hint, sizeof(hint));
        /* the file's name and its header's device made plain: either can hold escapes */
        put_col(fp, base ? base + 1 : s->v[i].path, 40);
        fprintf(fp, " %8lld %5d ", (long long)h->pid, (int)h->rank);
        put_col(fp, h->device[0] ? h->device : "-", 10);
        fprintf(fp, " %10s %-7s %10zu %8llu%s\n", hint, trace_hint_src_str(h->hint_source),
                s->v[i].tr->n, (unsigned long long)h->dropped,
                h->hint_bytes != major ? "  <- differs" : "");
    }
    if (differ)
        fprintf(fp, "effective hints DIFFER between processes (seed 000, pitfall 3): check which "
                "module or config file sets them\n");
    else
        fprintf(fp, "all %zu processes use the same effective hint\n", s->n);
}

static void print_json(FILE *fp, const audit_set_t *s, uint64_t major, int differ,
                       const char *merged)
{
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "processes");
    char *text;
    size_t i;

    for (i = 0; i < s->n; i++) {
        const trace_hdr_t *h = &s->v[i].tr->hdr;
        cJSON *p = cJSON_CreateObject();

        cJSON_AddStringToObject(p, "path", s->v[i].path);
        cJSON_AddStringToObject(p, "host", h->host);
        cJSON_AddNumberToObject(p, "pid", (double)h->pid);
        cJSON_AddNumberToObject(p, "rank", h->rank);
        cJSON_AddStringToObject(p, "device", h->device);
        cJSON_AddStringToObject(p, "firmware", h->firmware);
        cJSON_AddStringToObject(p, "mem", trace_mem_str(h->mem));
        cJSON_AddNumberToObject(p, "hint_bytes", (double)h->hint_bytes);
        cJSON_AddStringToObject(p, "hint_source", trace_hint_src_str(h->hint_source));
        cJSON_AddNumberToObject(p, "records", (double)s->v[i].tr->n);
        cJSON_AddNumberToObject(p, "dropped", (double)h->dropped);
        cJSON_AddBoolToObject(p, "differs", h->hint_bytes != major);
        cJSON_AddItemToArray(arr, p);
    }
    cJSON_AddBoolToObject(root, "hints_differ", differ);
    cJSON_AddNumberToObject(root, "majority_hint_bytes", (double)major);
    if (merged)
        cJSON_AddStringToObject(root, "merged", merged);
    text = cJSON_Print(root);
    if (text)
        fprintf(fp, "%s\n", text);
    free(text);
    cJSON_Delete(root);
}

static int cmp_rec(const void *a, const void *b)
{
    const trace_rec_t *x = a, *y = b;

    return x->t_post_ns < y->t_post_ns ? -1 : x->t_post_ns > y->t_post_ns;
}

/* One trace of every process's records; QPs renumbered so they stay distinct. */
static hs_status_t audit_merge(const audit_set_t *s, uint64_t major, const char *path)
{
    trace_t *m = NULL;
    uint64_t qp_base = 0; /* QP indices are 32-bit: every process's must fit past the last's */
    hs_status_t st = trace_new(&m);
    size_t i, j;

    if (st != HS_OK)
        goto no_memory;
    for (i = 0; i < s->n; i++) {
        const trace_t *t = s->v[i].tr;
        uint64_t max_qp = 0;

        for (j = 0; j < t->n; j++)
            max_qp = (uint64_t)t->recs[j].qp + 1 > max_qp ? (uint64_t)t->recs[j].qp + 1 : max_qp;
        if (qp_base + max_qp > (uint64_t)UINT32_MAX + 1) {
            hs_log_error("%s: QP index %llu: the processes' QPs, numbered one after another, "
                         "do not fit 32 bits", s->v[i].path, (unsigned long long)(max_qp - 1));
            trace_free(m);
            return HS_ERR_INVALID;
        }
        for (j = 0; j < t->n; j++) {
            trace_rec_t r = t->recs[j];

            r.qp += (uint32_t)qp_base;
            if ((st = trace_push(m, &r)) != HS_OK)
                goto no_memory;
        }
        qp_base += max_qp;
        m->hdr.dropped += t->hdr.dropped;
    }
    if (m->n > 1)
        qsort(m->recs, m->n, sizeof(*m->recs), cmp_rec);
    snprintf(m->hdr.producer, sizeof(m->hdr.producer), AUDIT_PRODUCER);
    m->hdr.mode = TRACE_MODE_PRELOAD;
    snprintf(m->hdr.host, sizeof(m->hdr.host), "%s", s->v[0].tr->hdr.host);
    snprintf(m->hdr.device, sizeof(m->hdr.device), "%s", s->v[0].tr->hdr.device);
    snprintf(m->hdr.firmware, sizeof(m->hdr.firmware), "%s", s->v[0].tr->hdr.firmware);
    m->hdr.mem = s->v[0].tr->hdr.mem;
    m->hdr.hint_bytes = major;
    m->hdr.hint_source = s->v[0].tr->hdr.hint_source;
    if (asprintf(&m->hdr.extra_json, "{\"merged_processes\": %zu}", s->n) < 0)
        m->hdr.extra_json = NULL;
    /* "-": the merged trace as .hst on standard output */
    st = trace_save_as(path, strcmp(path, "-") == 0 ? TRACE_FMT_HST : trace_fmt_from_ext(path), m);
    trace_free(m);
    return st;
no_memory:
    hs_log_error("%s: out of memory while merging", path);
    trace_free(m);
    return st;
}

int cmd_trace_audit(int argc, char **argv)
{
    struct audit_opts o;
    audit_set_t set = {NULL, 0};
    char **pos = NULL;
    int npos = 0, rc, differ = 0;
    uint64_t major;
    size_t i;
    hs_status_t st;

    memset(&o, 0, sizeof(o));
    rc = hs_cli_parse(&g_audit_spec, argc, argv, &o, &pos, &npos);
    if (rc >= 0)
        goto out;
    st = audit_load(pos[0], &set);
    if (st != HS_OK) {
        rc = hs_status_exit_code(st);
        goto out;
    }
    major = majority_hint(&set);
    for (i = 0; i < set.n; i++)
        differ |= set.v[i].tr->hdr.hint_bytes != major;
    if (o.out && (st = audit_merge(&set, major, o.out)) != HS_OK) {
        rc = hs_status_exit_code(st);
        goto out;
    }
    if (o.json) /* the report on stderr when the merged trace takes stdout ("-o -") */
        print_json(o.out && strcmp(o.out, "-") == 0 ? stderr : stdout, &set, major, differ,
                   o.out);
    else
        print_text(o.out && strcmp(o.out, "-") == 0 ? stderr : stdout, &set, major, differ);
    rc = differ ? 1 : 0;
out:
    audit_set_free(&set);
    hs_opt_free(&g_audit_spec, &o, pos);
    return rc;
}
