/* cli_predict.c - what `model`, `sim` and `recommend` share on the command line: the
 * profile with its --set overrides, the trace, and the predict command itself (parse, one
 * pred_job_run, print): the figures of CLI.md per hint with one engine; --curves adds each
 * path's isolated cost curve and the size where they cross. Which options a command has
 * comes from its engine's ops table (--flows and --platform where it runs flows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/model.h"
#include "model/predict/pred_job.h"
#include "model/recommend/recommend.h"

struct pred_cli_opts {
    const char *profile;
    hs_strlist_t hint;
    const char *mode;
    int json;
    hs_strlist_t set;
    int include_cold;
    int curves;
    int quiet;
    uint64_t flows;
    const char *platform;
    uint64_t threads;
};

#define PRED_COMMON_OPTS                                                                    \
    {"profile", 'p', HS_OPT_STR, offsetof(struct pred_cli_opts, profile), "P", "generic",  \
     "built-in profile name or JSON file"},                                                 \
    {"hint", 0, HS_OPT_LIST, offsetof(struct pred_cli_opts, hint), "H[,H..]", NULL,          \
     "hint in bytes (K/M/G), repeatable; 0 = no hint (default: 0)"},                        \
    {"mode", 0, HS_OPT_STR, offsetof(struct pred_cli_opts, mode), "open|closed", "open",    \
     "open: the trace's post times; closed: after the previous completion + think time"},   \
    {"json", 0, HS_OPT_FLAG, offsetof(struct pred_cli_opts, json), NULL, NULL, "JSON output"}, \
    {"set", 0, HS_OPT_LIST, offsetof(struct pred_cli_opts, set), "KEY=VALUE", NULL,         \
     "override one profile parameter (repeatable)"},                                        \
    {"include-cold", 0, HS_OPT_FLAG, offsetof(struct pred_cli_opts, include_cold), NULL,    \
     NULL, "count cold-start messages in the figures (default: reported apart)"},         \
    {"quiet", 'q', HS_OPT_FLAG, offsetof(struct pred_cli_opts, quiet), NULL, NULL,          \
     "no progress bar or notes on stderr (errors and warnings still print)"}

static const hs_opt_t g_model_opts[] = {
    PRED_COMMON_OPTS,
    {"curves", 0, HS_OPT_FLAG, offsetof(struct pred_cli_opts, curves), NULL, NULL,
     "also print each path's isolated per-size latency/throughput and the crossover"},
    {"threads", 0, HS_OPT_U64, offsetof(struct pred_cli_opts, threads), "N", "0",
     "hints replayed in parallel (0 = one per online CPU)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_opt_t g_sim_opts[] = {
    PRED_COMMON_OPTS,
    {"flows", 0, HS_OPT_U64, offsetof(struct pred_cli_opts, flows), "N", "1",
     "senders replaying the trace into one receiver"},
    {"platform", 0, HS_OPT_STR, offsetof(struct pred_cli_opts, platform), "FILE", NULL,
     "SimGrid platform XML (default: generated from the profile)"},
    {"threads", 0, HS_OPT_U64, offsetof(struct pred_cli_opts, threads), "N", "0",
     "hints simulated in parallel, a process each (0 = one per online CPU; with --flows, "
     "one at a time)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_model_spec = {
    "hintsim model TRACE --profile P [--hint H ...] [--mode open|closed] [--json] "
    "[--set K=V ...] [--curves] [--threads N]",
    "predict latency/throughput per hint with the analytical model (model/MODEL.md)",
    g_model_opts, 1, 1,
    "Latency = completion seen by the poster - the trace's post time (open) or the replayed "
    "post time (closed). Figures are modelled, not measured."};

static const hs_cmd_spec_t g_sim_spec = {
    "hintsim sim TRACE --profile P [--hint H ...] [--mode open|closed] [--json] "
    "[--set K=V ...] [--flows N] [--platform FILE] [--threads N]",
    "predict per hint with the SimGrid discrete-event simulator", g_sim_opts, 1, 1,
    "Same semantics as `hintsim model` (model/MODEL.md); figures are simulated."};

/* Load a profile and apply --set overrides; shared by every command taking --profile. */
int cli_profile_open(const char *name, const hs_strlist_t *set, profile_t **out)
{
    profile_t *p = NULL;
    hs_status_t st = profile_load(name, &p);

    if (st != HS_OK)
        return hs_status_exit_code(st);
    for (size_t i = 0; i < set->n; i++)
        if ((st = profile_set(p, set->v[i])) != HS_OK)
            goto free_profile;
    if ((st = profile_validate(p)) != HS_OK)
        goto free_profile;
    *out = p;
    return 0;
free_profile:
    profile_free(p);
    return hs_status_exit_code(st);
}

int cli_trace_open(const char *path, trace_t **out)
{
    trace_t *tr = NULL;
    hs_status_t st = trace_load_posts(path, 1, &tr);

    if (st != HS_OK)
        return hs_status_exit_code(st);
    if (tr->n == 0) {
        hs_log_error("%s: the trace has no records", path);
        trace_free(tr);
        return 1;
    }
    *out = tr;
    return 0;
}

/* Every --hint value, comma lists expanded; default {0}. */
static int parse_hints(const hs_strlist_t *in, uint64_t **out, size_t *n_out)
{
    uint64_t *all = NULL;
    size_t n = 0;

    for (size_t i = 0; i < in->n; i++) {
        uint64_t *v = NULL;
        size_t nv = 0;
        if (hs_parse_size_list(in->v[i], &v, &nv) != HS_OK) {
            fprintf(stderr, "hintsim: --hint '%s': expected sizes like 0,8K,64K\n", in->v[i]);
            free(all);
            return 2;
        }
        uint64_t *grown = realloc(all, (n + nv) * sizeof(*all));
        if (!grown) {
            free(v);
            free(all);
            return 1;
        }
        all = grown;
        memcpy(all + n, v, nv * sizeof(*v));
        n += nv;
        free(v);
    }
    if (n == 0) {
        all = calloc(1, sizeof(*all));
        if (!all)
            return 1;
        n = 1;
    }
    /* a hint asked twice (--hint 4K --hint 4K,0) is replayed and shown once, where first asked */
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < u && all[j] != all[i])
            j++;
        if (j == u)
            all[u++] = all[i];
    }
    n = u;
    *out = all;
    *n_out = n;
    return 0;
}

/* The text table's cells, one function per text form of PRED_FIGURES (predict.h): each
 * after a space, right-aligned in its column of width w. */
static void text_cell_num(int w, double v)
{
    char c[32]; /* a cell that fits its column (rec_fmt_cell): none runs into the next */

    printf(" %*s", w, rec_fmt_cell(v, w, c, sizeof(c)));
}

static void text_cell_pct(int w, double fraction)
{
    printf(" %*.1f%%", w - 1, 100 * fraction);
}

static void text_cell_count(int w, uint64_t v)
{
    printf(" %*llu", w, (unsigned long long)v);
}

#define TEXT_HEAD_(member, kind, head, width, form) printf(" %*s", width, head);
#define TEXT_CELL_(member, kind, head, width, form) text_cell_##form(width, r->member);

/* One row; flow names the flow ("flow 1", "all flows") with --flows, else NULL. */
static void print_result_text(const pred_result_t *r, const char *flow)
{
    char h[48];

    rec_label_hint(r->hint_bytes, h, sizeof(h));
    if (flow)
        printf("%-10s ", flow);
    printf("%-16s", h);
    PRED_FIGURES(TEXT_CELL_)
    printf("\n");
}

static void print_classes_text(const pred_result_t *r, unsigned flows)
{
    char h[48], lo[32], hi[32];

    rec_label_hint(r->hint_bytes, h, sizeof(h));
    printf("\nby size class, hint %s%s:        count     p50_us     p99_us\n", h,
           flows > 1 ? ", all flows together" : "");
    for (size_t i = 0; i < r->nclasses; i++) {
        const pred_class_t *c = &r->classes[i];
        rec_format_hint(c->min_bytes, lo, sizeof(lo));
        rec_format_hint(c->max_bytes, hi, sizeof(hi));
        char c50[32], c99[32];
        printf("  %8s - %-8s %14llu %10s %10s\n", lo, hi, (unsigned long long)c->count,
               rec_fmt_cell(c->p50_us, 10, c50, sizeof(c50)),
               rec_fmt_cell(c->p99_us, 10, c99, sizeof(c99)));
    }
    if (r->cold_count)
        printf("  cold start (apart): %llu messages, p50 %.3f us, p99 %.3f us, max %.3f us\n",
               (unsigned long long)r->cold_count, r->cold_p50_us, r->cold_p99_us,
               r->cold_max_us);
}

static void print_header_text(const pred_engine_ops_t *eng, const profile_t *p,
                              const char *path, const trace_t *tr, const pred_opts_t *po)
{
    const char *detail = pred_engine_detail(eng);

    printf("engine %s (figures are %s), profile %s (%s, hash %016llx)\n", eng->name,
           pred_engine_figures(eng), p->name, p->origin,
           (unsigned long long)profile_hash(p));
    if (detail)
        printf("network model: %s\n", detail);
    if (po->platform) { /* it changes the figures and not the profile's hash */
        uint64_t h = 0;
        size_t len = 0;
        if (hs_hash_file(po->platform, 0, &h, &len) == HS_OK)
            printf("platform %s (%zu bytes, hash %016llx), not generated from the profile\n",
                   po->platform, len, (unsigned long long)h);
    }
    printf("trace %s: %zu records, mode %s", path, tr->n,
           po->mode == PRED_OPEN ? "open" : "closed");
    if (po->flows > 1)
        printf(", %u flows into one receiver (per flow, then all flows together)", po->flows);
    printf("\n\n");
    if (po->flows > 1)
        printf("%-10s ", "flow");
    printf("%-16s", "hint");
    PRED_FIGURES(TEXT_HEAD_)
    printf("\n");
}

static uint64_t trace_max_size(const trace_t *tr)
{
    uint64_t m = 1;

    for (size_t i = 0; i < tr->n; i++)
        if (tr->recs[i].size_bytes > m)
            m = tr->recs[i].size_bytes;
    return m;
}

#define CURVE_RANGES 16       /* size ranges listed at most */
#define CURVE_TPUT_REL 0.001  /* a stream "beats" another by more than this (not rounding) */

/* key: [[lo, hi], ...] in o. */
static void add_ranges(cJSON *o, const char *key, const uint64_t (*r)[2], size_t nr)
{
    cJSON *arr = cJSON_AddArrayToObject(o, key);

    for (size_t i = 0; arr && i < nr; i++) {
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)r[i][0]));
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)r[i][1]));
        cJSON_AddItemToArray(arr, pair);
    }
}

/* Curves: text table or a "curves" member of root. */
static int emit_curves(const profile_t *p, const trace_t *tr, cJSON *root)
{
    model_curve_pt_t *pts = NULL;
    size_t n = 0;
    uint64_t cross = 0;
    uint64_t max = trace_max_size(tr);
    hs_status_t st = model_curves(p, max > (1u << 20) ? max : (1u << 20), &pts, &n, &cross);

    if (st != HS_OK)
        return hs_status_exit_code(st);
    uint64_t bw_lo = 0, bw_hi = 0; /* sizes at which a BW stream beats an LL stream */
    uint64_t lat_r[CURVE_RANGES][2], tput_r[CURVE_RANGES][2];
    /* BW's latency lower at all; its stream faster by more than 0.1% (not a rounding) */
    size_t nlat = model_curve_ranges(pts, n, MODEL_CURVE_LAT, 0, lat_r, CURVE_RANGES);
    size_t ntput = model_curve_ranges(pts, n, MODEL_CURVE_STREAM, CURVE_TPUT_REL, tput_r,
                                      CURVE_RANGES);
    if (ntput) {
        bw_lo = tput_r[0][0];
        bw_hi = tput_r[ntput - 1][1];
    }
    if (root) {
        cJSON *c = cJSON_AddObjectToObject(root, "curves");
        cJSON *arr = c ? cJSON_AddArrayToObject(c, "points") : NULL;
        for (size_t i = 0; arr && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size_bytes", (double)pts[i].size_bytes);
            cJSON_AddNumberToObject(o, "ll_lat_us", pts[i].ll_lat_us);
            cJSON_AddNumberToObject(o, "bw_lat_us", pts[i].bw_lat_us);
            cJSON_AddNumberToObject(o, "ll_gbps", pts[i].ll_gbps);
            cJSON_AddNumberToObject(o, "bw_gbps", pts[i].bw_gbps);
            cJSON_AddItemToArray(arr, o);
        }
        if (c) {
            cJSON_AddNumberToObject(c, "crossover_bytes", (double)cross);
            cJSON_AddNumberToObject(c, "bw_faster_stream_min_bytes", (double)bw_lo);
            cJSON_AddNumberToObject(c, "bw_faster_stream_max_bytes", (double)bw_hi);
            add_ranges(c, "bw_lower_latency_ranges", lat_r, nlat);
            add_ranges(c, "bw_faster_stream_ranges", tput_r, ntput);
        }
    } else {
        char s[32];
        printf("\nisolated cost per path (one message alone; stream of one size):\n");
        printf("%8s %12s %12s %10s %10s\n", "size", "LL_lat_us", "BW_lat_us", "LL_Gb/s",
               "BW_Gb/s");
        for (size_t i = 0; i < n; i++) {
            rec_format_hint(pts[i].size_bytes, s, sizeof(s));
            printf("%8s %12.3f %12.3f %10.3f %10.3f\n", s, pts[i].ll_lat_us, pts[i].bw_lat_us,
                   pts[i].ll_gbps, pts[i].bw_gbps);
        }
        char txt[512];
        model_curve_ranges_text(lat_r, nlat, txt, sizeof(txt));
        if (nlat)
            printf("crossover: the BW path has the lower latency at %s\n", txt);
        else
            printf("crossover: none (the LL path is as fast or faster at every size)\n");
        model_curve_ranges_text(tput_r, ntput, txt, sizeof(txt));
        if (ntput)
            printf("throughput: a BW stream beats an LL stream by more than 0.1%% at %s\n", txt);
        else
            printf("throughput: the LL path streams within 0.1%% of the BW path or faster at "
                   "every size\n");
    }
    free(pts);
    return 0;
}

/* What the printers are given: the job, its output, the trace's file, --curves. */
typedef struct {
    const pred_job_t *job;
    const pred_job_out_t *out;
    const char *path;
    int curves;
} pred_print_t;

static cJSON *hint_json(const pred_print_t *pp, const pred_hint_out_t *h)
{
    cJSON *o = pred_result_to_json(&h->res), *arr;

    if (!o || !h->flows)
        return o;
    arr = cJSON_AddArrayToObject(o, "flows");
    for (unsigned f = 0; arr && f < pp->out->nflows; f++) {
        cJSON *x = pred_result_to_json(&h->flows[f]);
        cJSON_AddNumberToObject(x, "flow", f);
        cJSON_AddItemToArray(arr, x);
    }
    cJSON_AddItemToObject(o, "aggregate", pred_result_to_json(&h->agg));
    return o;
}

/* "platform": the file with its hash, or null where the engine generates it (simulated). */
static void add_platform(cJSON *root, const pred_job_t *j)
{
    cJSON *pl;
    uint64_t h = 0;
    size_t len = 0;
    char hx[32];

    if (!j->po.platform) {
        if (j->eng->kind == PRED_SIMULATED)
            cJSON_AddNullToObject(root, "platform");
        return;
    }
    pl = cJSON_AddObjectToObject(root, "platform");
    if (pl && hs_hash_file(j->po.platform, 0, &h, &len) == HS_OK) {
        snprintf(hx, sizeof(hx), "%016llx", (unsigned long long)h);
        cJSON_AddStringToObject(pl, "path", j->po.platform);
        cJSON_AddStringToObject(pl, "hash", hx);
        cJSON_AddNumberToObject(pl, "bytes", (double)len);
    }
}

/* Beside the link's overload warning, each hint's paths that cannot carry what the trace
 * offers them (open loop; model/recommend/recommend.h, rec_path_load): into the JSON warnings w, or
 * to stderr when w is NULL. A sender's paths are its own, whatever the flows. */
static void path_warnings(const pred_job_t *j, cJSON *w)
{
    char buf[600];

    for (size_t i = 0; j->po.mode == PRED_OPEN && i < j->nhints; i++) {
        rec_path_load_t l[2];
        if (rec_path_load(j->tr, j->p, j->hints[i], l) != HS_OK)
            continue; /* the replay already checked the profile's rules */
        for (int k = 0; k < 2; k++) {
            if (!rec_path_load_warning(&l[k], buf, sizeof(buf)))
                continue;
            if (w)
                cJSON_AddItemToArray(w, cJSON_CreateString(buf));
            else
                fprintf(stderr, "warning: %s\n", buf);
        }
    }
}

static int emit_json(const pred_print_t *pp)
{
    const pred_job_t *j = pp->job;
    const char *detail = pred_engine_detail(j->eng);
    cJSON *root = cJSON_CreateObject(), *arr, *w;
    char *text;
    int rc = 0;

    if (!root)
        return 1;
    cJSON_AddStringToObject(root, "engine", j->eng->name);
    if (detail)
        cJSON_AddStringToObject(root, "engine_detail", detail);
    cJSON_AddItemToObject(root, "profile", pred_profile_json(j->p));
    add_platform(root, j);
    cJSON_AddItemToObject(root, "trace", pred_trace_json(pp->path, j->tr));
    cJSON_AddStringToObject(root, "mode", j->po.mode == PRED_OPEN ? "open" : "closed");
    if (pp->out->nflows > 1)
        cJSON_AddNumberToObject(root, "flows", pp->out->nflows);
    arr = cJSON_AddArrayToObject(root, "results");
    for (size_t i = 0; i < j->nhints; i++)
        cJSON_AddItemToArray(arr, hint_json(pp, &pp->out->hints[i]));
    w = cJSON_AddArrayToObject(root, "warnings");
    if (pp->out->warning[0])
        cJSON_AddItemToArray(w, cJSON_CreateString(pp->out->warning));
    path_warnings(j, w);
    if (pp->curves && (rc = emit_curves(j->p, j->tr, root)) != 0)
        goto delete_root;
    text = cJSON_Print(root);
    printf("%s\n", text ? text : "{}");
    free(text);
delete_root:
    cJSON_Delete(root);
    return rc;
}

static int emit_text(const pred_print_t *pp)
{
    const pred_job_t *j = pp->job;
    const pred_job_out_t *out = pp->out;

    print_header_text(j->eng, j->p, pp->path, j->tr, &j->po);
    for (size_t i = 0; i < j->nhints; i++) {
        if (!out->hints[i].flows) {
            print_result_text(&out->hints[i].res, NULL);
            continue;
        }
        for (unsigned f = 0; f < out->nflows; f++) {
            char lbl[16];
            snprintf(lbl, sizeof(lbl), "flow %u", f);
            print_result_text(&out->hints[i].flows[f], lbl);
        }
        print_result_text(&out->hints[i].agg, "all flows");
    }
    for (size_t i = 0; i < j->nhints; i++) {
        const pred_hint_out_t *h = &out->hints[i];
        print_classes_text(h->flows ? &h->agg : &h->res, h->flows ? out->nflows : 1);
    }
    if (out->warning[0])
        fprintf(stderr, "warning: %s\n", out->warning); /* stdout keeps the tables */
    path_warnings(j, NULL);
    return pp->curves ? emit_curves(j->p, j->tr, NULL) : 0;
}

/* The job from the parsed options; what it holds is released by job_release. */
typedef struct {
    pred_job_t job;
    uint64_t *hints;
    profile_t *p;
    trace_t *tr;
    char platform_tmp[512]; /* --platform - or a pipe, copied once: removed on release */
} job_hold_t;

/* The engine reads --platform once per replay (SimGrid takes a path): "-", a FIFO or a
 * pipe is read once here into a temporary file, whose path the job uses instead. */
static int platform_once(const char *platform, job_hold_t *h, const char **use)
{
    struct stat sb;
    char *text = NULL;
    size_t len = 0;
    int fd, rc = 1;

    *use = platform;
    if (!platform || (strcmp(platform, "-") != 0 && stat(platform, &sb) == 0 &&
                      S_ISREG(sb.st_mode)))
        return 0;
    if (hs_read_file(platform, &text, &len) != HS_OK)
        return 1;
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(h->platform_tmp, sizeof(h->platform_tmp), "%.400s/hintsim-platform-XXXXXX.xml",
             dir);
    fd = mkstemps(h->platform_tmp, 4);
    if (fd < 0) {
        fprintf(stderr, "hintsim: --platform %s: cannot make a temporary copy in %s\n",
                platform, dir);
        h->platform_tmp[0] = '\0';
        goto free_text;
    }
    if (write(fd, text, len) == (ssize_t)len) {
        *use = h->platform_tmp;
        rc = 0;
    } else {
        fprintf(stderr, "hintsim: --platform %s: writing its copy %s failed\n", platform,
                h->platform_tmp);
    }
    close(fd);
free_text:
    free(text);
    return rc;
}

static void job_release(job_hold_t *h)
{
    if (h->platform_tmp[0])
        unlink(h->platform_tmp);
    free(h->hints);
    profile_free(h->p);
    trace_free(h->tr);
}

static int job_from_opts(const pred_engine_ops_t *eng, const struct pred_cli_opts *o,
                         const char *path, job_hold_t *h)
{
    pred_job_t *j = &h->job;
    int rc;

    j->eng = eng;
    if (pred_mode_parse(o->mode, &j->po.mode) != HS_OK) {
        fprintf(stderr, "hintsim: --mode '%s': expected open or closed\n", o->mode);
        return 2;
    }
    if (eng->run_flows && o->flows < 1) {
        fprintf(stderr, "hintsim: --flows must be at least 1\n");
        return 2;
    }
    j->po.include_cold = o->include_cold;
    j->po.flows = eng->run_flows ? (unsigned)o->flows : 1;
    j->po.trace_name = path;
    hs_log_set_quiet(o->quiet);
    if ((rc = platform_once(o->platform, h, &j->po.platform)) != 0 ||
        (rc = parse_hints(&o->hint, &h->hints, &j->nhints)) != 0 ||
        (rc = cli_profile_open(o->profile, &o->set, &h->p)) != 0 ||
        (rc = cli_trace_open(path, &h->tr)) != 0)
        return rc;
    j->hints = h->hints;
    j->p = h->p;
    j->tr = h->tr;
    j->quiet = o->quiet;
    j->threads = pred_threads((unsigned)o->threads);
    return 0;
}

int cli_predict_main(const pred_engine_ops_t *eng, int argc, char **argv)
{
    const hs_cmd_spec_t *spec = eng->run_flows ? &g_sim_spec : &g_model_spec;
    struct pred_cli_opts o = {0};
    job_hold_t h = {0};
    pred_job_out_t out = {0};
    pred_print_t pp = {.job = &h.job, .out = &out, .curves = 0};
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(spec, argc, argv, &o, &pos, &npos);
    hs_status_t st;

    if (rc >= 0) {
        hs_opt_free(spec, &o, pos);
        return rc;
    }
    pp.path = pos[0];
    pp.curves = o.curves;
    if ((rc = job_from_opts(eng, &o, pos[0], &h)) != 0)
        goto release_job;
    /* nothing reaches stdout until every hint's figures exist (an engine error leaves it
     * empty) */
    st = pred_job_run(&h.job, &out);
    if (st != HS_OK) {
        rc = hs_status_exit_code(st);
        goto release_out;
    }
    rc = o.json ? emit_json(&pp) : emit_text(&pp);
release_out:
    pred_job_out_release(&out);
release_job:
    job_release(&h);
    hs_opt_free(spec, &o, pos);
    return rc;
}
