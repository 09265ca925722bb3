/* trace_perftest.c - import perftest's per-iteration latency output (`ib_*_lat -U`).
 *
 * What perftest prints (linux-rdma/perftest, print_report_lat in perftest_parameters.c):
 * a banner ("RDMA_Write Latency Test", " Device         : mlx5_0", " Max inline data : 220[B]"),
 * the result header line (" #bytes #iterations    t_min[usec] ..."), then with -U the line
 * "#, usec" followed by one "i, latency" line per iteration (i from 1; the latency is
 * the post-to-post delta divided by the round-trip factor: 2 for send/write, 1 for
 * read/atomic), then the summary line whose first two fields are the size in bytes and the
 * iteration count. With -a this repeats per size. With -H as well, a second, sorted copy
 * of the list follows the first; it is skipped. With -C the unit is "cycles", which cannot
 * be converted without the CPU clock, so it is refused.
 *
 * The result is a ping-pong trace: posts back to back (each post at the previous
 * completion), completion = post + the printed latency, size from the summary line. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/trace_convert.h"
#include "traces/trace_format.h"

typedef struct {
    trace_t *tr;
    const char *path;
    unsigned long lineno;
    size_t pending_from;  /* first record of the current sample group */
    unsigned long first_sample_line;
    uint64_t next_index;  /* expected sample index (1, 2, ...); 0 = not in a group */
    int skip_list;        /* inside a second list of the same group (-H: sorted copy) */
    uint64_t t_ns;        /* next post time */
    uint64_t inline_max;
    int have_inline;
    uint8_t opcode;
    char test[64];
    char *groups;         /* JSON array body for extra_json: one entry per size (malloc'ed) */
    size_t groups_len, groups_cap;
} pt_state_t;

static void pt_banner(pt_state_t *s, const char *line)
{
    static const struct {
        const char *word;
        uint8_t op;
    } tests[] = {{"RDMA_Write", TRACE_OP_WRITE}, {"Send", TRACE_OP_SEND},
                 {"RDMA_Read", TRACE_OP_READ}, {"Atomic", TRACE_OP_ATOMIC}};
    const char *p;
    char tok[64];

    if ((p = strstr(line, "Latency Test"))) {
        for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
            if (strstr(line, tests[i].word))
                s->opcode = tests[i].op;
        while (*line == ' ')
            line++;
        snprintf(s->test, sizeof(s->test), "%.*s", (int)(p - line + 12), line);
        for (char *c = s->test; *c; c++) /* it goes into JSON text: keep it plain */
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                *c = '_';
    }
    if ((p = strstr(line, "Device         :")) && sscanf(p + 16, "%63s", tok) == 1)
        snprintf(s->tr->hdr.device, sizeof(s->tr->hdr.device), "%s", tok);
    if ((p = strstr(line, "Max inline data :")) && sscanf(p + 17, "%" SCNu64, &s->inline_max) == 1)
        s->have_inline = 1;
}

/* Whether line is shaped like a sample: digits, then a comma (perftest prints "%d, %g"). */
static int pt_is_sample(const char *line)
{
    const char *p = line + strspn(line, " \t");
    size_t digits = strspn(p, "0123456789");

    return digits > 0 && p[digits + strspn(p + digits, " \t")] == ',';
}

/* Parse a line pt_is_sample accepted; -1 with why naming the field that is not a number. */
static int pt_parse_sample(const char *line, uint64_t *idx, double *us, char *why, size_t wl)
{
    const char *comma = strchr(line, ',');
    const char *v = comma + 1 + strspn(comma + 1, " \t");
    char *end;

    errno = 0;
    *idx = strtoull(line, &end, 10);
    if (errno) {
        snprintf(why, wl, "sample index '%.*s' is out of range", (int)(comma - line), line);
        return -1;
    }
    *us = strtod(v, &end);
    if (end == v || end[strspn(end, " \t")] != '\0') {
        snprintf(why, wl, "latency '%.40s' is not a number (expected \"index, usec\")", v);
        return -1;
    }
    return 0;
}

/* A sample line: 1 when taken, 0 if the line is not shaped like one, -1 on a bad one. */
static int pt_sample(pt_state_t *s, const char *line, char *why, size_t wl)
{
    uint64_t idx;
    double us;
    trace_rec_t rec = {0};

    if (!pt_is_sample(line))
        return 0;
    if (pt_parse_sample(line, &idx, &us, why, wl) != 0)
        return -1;
    if (idx != s->next_index) {
        snprintf(why, wl, "sample index %" PRIu64 ", expected %" PRIu64, idx, s->next_index);
        return -1;
    }
    if (!isfinite(us) || us < 0 || us > 1e9) {
        snprintf(why, wl, "latency %g usec is not a plausible value", us);
        return -1;
    }
    rec.t_post_ns = s->t_ns;
    rec.t_done_ns = s->t_ns + (uint64_t)llround(us * 1000.0);
    rec.opcode = s->opcode;
    rec.flags = TRACE_F_SIGNALED;
    s->t_ns = rec.t_done_ns;
    s->next_index++;
    return trace_push(s->tr, &rec) == HS_OK ? 1 : (snprintf(why, wl, "out of memory"), -1);
}

/* Inside the sorted copy (-H): 1 for a sample skipped, 0 when the copy has ended, -1 on a
 * malformed sample (checked like the first list's). */
static int pt_skip(pt_state_t *s, const char *line, char *why, size_t wl)
{
    uint64_t idx;
    double us;

    if (pt_is_sample(line))
        return pt_parse_sample(line, &idx, &us, why, wl) == 0 ? 1 : -1;
    s->skip_list = 0;
    return 0;
}

/* What perftest may print inside a list besides samples and the summary: blank lines, its
 * rule of dashes and its column line. */
static int pt_list_noise(const char *line)
{
    const char *p = line + strspn(line, " \t");

    return *p == '\0' || *p == '-' || strstr(p, "#bytes") != NULL;
}

/* One whitespace-separated field of the summary line at *p: a whole number >= 0 (no sign:
 * sscanf's %lu reads " -2" as 18446744073709551614). 1 with *v, 0 when the field is not
 * numeric at all, -1 with why for a signed or out-of-range number. */
static int pt_field(const char **p, const char *name, uint64_t *v, char *why, size_t wl)
{
    const char *f = *p + strspn(*p, " \t");
    size_t n = strcspn(f, " \t");
    char *end;

    if ((*f == '-' || *f == '+') && f[1] >= '0' && f[1] <= '9') {
        snprintf(why, wl, "%s '%.*s' in the summary line is not a whole number >= 0", name,
                 (int)(n < 40 ? n : 40), f);
        return -1;
    }
    if (!(*f >= '0' && *f <= '9'))
        return 0;
    errno = 0;
    *v = strtoull(f, &end, 10);
    if (errno || (size_t)(end - f) != n) {
        snprintf(why, wl, "%s '%.*s' in the summary line is not a whole number in range",
                 name, (int)(n < 40 ? n : 40), f);
        return -1;
    }
    *p = end;
    return 1;
}

static int pt_group_add(pt_state_t *s, uint64_t size, uint64_t iters)
{
    char entry[160];
    int n = snprintf(entry, sizeof(entry), "%s{\"size_bytes\":%" PRIu64 ",\"iterations\":%"
                     PRIu64 ",\"samples\":%zu}", s->groups_len ? "," : "", size, iters,
                     s->tr->n - s->pending_from);

    if (s->groups_len + (size_t)n + 1 > s->groups_cap) {
        size_t cap = s->groups_cap ? 2 * s->groups_cap : 4096;
        char *g = realloc(s->groups, cap);
        if (!g)
            return -1;
        s->groups = g;
        s->groups_cap = cap;
    }
    memcpy(s->groups + s->groups_len, entry, (size_t)n + 1);
    s->groups_len += (size_t)n;
    return 0;
}

/* The summary line " 2       1000   ..." closes a group: give its samples their size.
 * 1 when it was one, 0 when not, -1 with why for one with a bad size or count. */
static int pt_summary(pt_state_t *s, const char *line, char *why, size_t wl)
{
    uint64_t size, iters;
    const char *p = line;
    int rc;

    if (s->tr->n == s->pending_from)
        return 0;
    if ((rc = pt_field(&p, "size", &size, why, wl)) <= 0)
        return rc;
    if ((rc = pt_field(&p, "iteration count", &iters, why, wl)) <= 0) {
        if (rc == 0)
            snprintf(why, wl, "summary line without an iteration count: '%.40s'", line);
        return -1;
    }
    for (size_t i = s->pending_from; i < s->tr->n; i++) {
        s->tr->recs[i].size_bytes = size;
        if (s->have_inline && size <= s->inline_max)
            s->tr->recs[i].flags |= TRACE_F_INLINE;
    }
    if (pt_group_add(s, size, iters) != 0) {
        snprintf(why, wl, "out of memory");
        return -1;
    }
    s->pending_from = s->tr->n;
    s->next_index = 0;
    return 1;
}

static int pt_line(pt_state_t *s, char *line, char *why, size_t wl)
{
    int rc;

    if (strncmp(line, "#, ", 3) == 0) {
        if (strcmp(line + 3, "usec") != 0) {
            snprintf(why, wl, "per-iteration unit '%s' cannot be converted to ns (rerun "
                     "perftest without -C)", line + 3);
            return -1;
        }
        if (s->next_index && s->tr->n > s->pending_from) {
            /* -U and -H together print the same deltas twice, unsorted then sorted:
             * keep the first (the time order), skip the copy */
            s->skip_list = 1;
            return 0;
        }
        s->next_index = 1;
        s->first_sample_line = s->lineno;
        return 0;
    }
    if (s->skip_list && (rc = pt_skip(s, line, why, wl)) != 0)
        return rc < 0 ? -1 : 0;
    if (s->next_index) {
        rc = pt_sample(s, line, why, wl);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        if ((rc = pt_summary(s, line, why, wl)) != 0)
            return rc < 0 ? -1 : 0;
        if (!pt_list_noise(line)) { /* a sample cut or mangled beyond recognition */
            snprintf(why, wl, "expected a sample \"index, usec\" or the summary line "
                     "\"#bytes #iterations ...\", found '%.40s'", line);
            return -1;
        }
    }
    pt_banner(s, line);
    return 0;
}

static hs_status_t pt_finish(pt_state_t *s)
{
    char *extra;
    size_t cap;
    trace_hdr_t *h = &s->tr->hdr;

    if (s->tr->n == 0) {
        hs_log_error("%s: no per-iteration samples (a \"#, usec\" line followed by \"1, <usec>\" "
                     "lines): was perftest run with -U?", s->path);
        return HS_ERR_INVALID;
    }
    if (s->tr->n != s->pending_from) {
        hs_log_error("%s:%lu: the samples starting here have no summary line giving their "
                     "size (output cut short?)", s->path, s->first_sample_line);
        return HS_ERR_INVALID;
    }
    h->mode = TRACE_MODE_CONVERTED;
    snprintf(h->producer, sizeof(h->producer), "perftest");
    h->producer_version[0] = '\0';
    h->host[0] = '\0';
    snprintf(h->clock_source, sizeof(h->clock_source), "perftest cycles");
    cap = s->groups_len + 512;
    if (!(extra = malloc(cap)))
        return HS_ERR_NOMEM;
    snprintf(extra, cap, "{\"source\":\"perftest -U\",\"test\":\"%s\",\"latency\":\"as printed: "
             "post-to-post delta / round-trip factor (2 send/write, 1 read/atomic)\","
             "\"timeline\":\"posts back to back, completion = post + latency\",\"groups\":[%s]}",
             s->test, s->groups ? s->groups : "");
    free(h->extra_json);
    h->extra_json = extra;
    return HS_OK;
}

hs_status_t trace_perftest_read(FILE *fp, const char *path, trace_t **out)
{
    pt_state_t s = {.path = path, .opcode = TRACE_OP_WRITE};
    char *line = NULL, why[256];
    size_t cap = 0;
    hs_status_t st = trace_new(&s.tr);

    if (st != HS_OK)
        return st;
    while (getline(&line, &cap, fp) != -1) {
        size_t n = strlen(line);
        s.lineno++;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (pt_line(&s, line, why, sizeof(why)) != 0) {
            hs_log_error("%s:%lu: %s", path, s.lineno, why);
            st = HS_ERR_INVALID;
            goto free_parse;
        }
    }
    st = pt_finish(&s);
    if (st != HS_OK)
        goto free_parse;
    *out = s.tr;
    s.tr = NULL;
free_parse:
    free(line);
    free(s.groups);
    trace_free(s.tr);
    return st;
}
