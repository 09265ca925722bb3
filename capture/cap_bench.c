/* cap_bench.c - the capture bench: ping-pong, post-to-completion and stream phases per
 * hint and size, a trace of every post-to-completion message, and a JSON report
 * (see cap_bench.h). */
#include "capture/cap_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_pace.h"
#include "common/hs_util.h"
#include "traces/trace.h"
#include "traces/trace_convert.h"

#define CAP_BENCH_MAX_SIZE ((uint64_t)1 << 30)
/* Messages per phase and size at most: every one is a trace record (32 bytes) and a
 * latency kept in memory until the trace is written. */
#define CAP_BENCH_MAX_ITERS ((uint64_t)100000000)
/* --gap-us at most: one second between posts */
#define CAP_BENCH_MAX_GAP_US 1e6

typedef struct {
    trace_t *tr;
    uint64_t t0_ns; /* trace clock origin */
} bench_ctx_t;

double cap_pctl(double *v, size_t n, double q)
{
    size_t k;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), hs_cmp_double);
    k = (size_t)(q * (double)n + 0.999999999);
    k = k == 0 ? 0 : k - 1;
    return v[k < n ? k : n - 1];
}

static cJSON *stats_json(double *us, size_t n)
{
    cJSON *j = cJSON_CreateObject();
    double sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += us[i];
    cJSON_AddNumberToObject(j, "count", (double)n);
    cJSON_AddNumberToObject(j, "mean_us", n ? sum / (double)n : 0);
    cJSON_AddNumberToObject(j, "p50_us", cap_pctl(us, n, 0.50));
    cJSON_AddNumberToObject(j, "p99_us", cap_pctl(us, n, 0.99));
    cJSON_AddNumberToObject(j, "max_us", n ? us[n - 1] : 0);
    return j;
}

static void on_done(void *arg, uint64_t msg, uint64_t t_done_ns, int implicit)
{
    bench_ctx_t *b = arg;
    trace_rec_t *r = &b->tr->recs[msg];

    r->t_done_ns = t_done_ns - b->t0_ns;
    if (implicit)
        r->flags |= TRACE_F_IMPLICIT;
}

static hs_status_t phase_pingpong(cap_conn_t *c, cap_path_id_t path, uint64_t size,
                                  const cap_bench_opts_t *o, cJSON *row)
{
    uint64_t n = o->warmup + o->iters;
    uint64_t *ns = calloc(n, sizeof(*ns));
    double *us = calloc(n, sizeof(*us));
    hs_status_t st = HS_ERR_NOMEM;

    if (!ns || !us) {
        hs_log_error("out of memory for %llu round trips (--iters + --warmup)",
                     (unsigned long long)n);
        goto out;
    }
    st = cap_conn_pingpong(c, path, size, n, ns);
    if (st != HS_OK)
        goto out;
    for (uint64_t i = 0; i < o->iters; i++)
        us[i] = (double)ns[o->warmup + i] / 1e3;
    cJSON_AddItemToObject(row, "round_trip_half", stats_json(us, o->iters));
out:
    free(ns);
    free(us);
    return st;
}

static uint16_t rec_flags(const cap_conn_t *c, cap_path_id_t path, uint64_t size, int cold)
{
    const cap_path_cfg_t *cfg = &c->cfg[path];
    uint16_t f = path == CAP_PATH_LL ? TRACE_F_PATH_LL : TRACE_F_PATH_BW;

    if (cold)
        f |= TRACE_F_COLD;
    if (size <= cfg->inline_bytes && c->ep->mem->cpu_visible &&
        cap_seg_count(size, cfg->seg_bytes) == 1)
        f |= TRACE_F_INLINE;
    return f;
}

/* One message of a latency phase: its record pushed, then posted, then waited for where the
 * path signals it. */
static hs_status_t latency_msg(cap_conn_t *c, bench_ctx_t *b, cap_qp_t *q, trace_rec_t *r)
{
    int sig = 0;
    hs_status_t st;

    r->t_post_ns = hs_now_ns() - b->t0_ns;
    st = trace_push(b->tr, r);
    if (st != HS_OK)
        return st;
    st = cap_qp_post_msg(c->ep, q, b->tr->n - 1, r->size_bytes, 0, &sig);
    if (st != HS_OK || !sig)
        return st;
    b->tr->recs[b->tr->n - 1].flags |= TRACE_F_SIGNALED;
    return cap_qp_wait_msg(c->ep, q, q->track.next_seq - 1);
}

/* Post-to-completion: one trace record per message; wait only where the path signals.
 * With o->gap_us, message i is posted no earlier than i gaps after the first, paced by the
 * live replay's progress loop (cap_pace.h), whose time between polls goes in the row. */
static hs_status_t phase_latency(cap_conn_t *c, bench_ctx_t *b, cap_path_id_t path,
                                 uint64_t size, int switched, const cap_bench_opts_t *o,
                                 cJSON *row)
{
    cap_qp_t *q = &c->ep->qp[path];
    uint64_t n = o->warmup + o->iters, first = b->tr->n, start_ns;
    uint64_t gap_ns = (uint64_t)(o->gap_us * 1e3 + 0.5);
    double *us = calloc(o->iters, sizeof(*us));
    cap_pace_t pace;
    cJSON *ptc;
    hs_status_t st = us ? HS_OK : HS_ERR_NOMEM;

    if (!us)
        hs_log_error("out of memory for %llu latencies (--iters)", (unsigned long long)o->iters);
    if (gap_ns)
        cap_pace_init(&pace, c->ep);
    start_ns = hs_now_ns();
    for (uint64_t i = 0; st == HS_OK && i < n; i++) {
        trace_rec_t r = {.size_bytes = size, .qp = (uint32_t)path, .opcode = TRACE_OP_WRITE,
                         .t_done_ns = TRACE_TIME_UNKNOWN,
                         .flags = rec_flags(c, path, size, i < o->warmup)};
        if (i == 0 && switched)
            r.flags |= TRACE_F_SWITCH;
        if (gap_ns)
            st = cap_pace_until(&pace, start_ns + i * gap_ns);
        if (st == HS_OK)
            st = latency_msg(c, b, q, &r);
    }
    if (st != HS_OK)
        goto free_us;
    st = cap_qp_drain(c->ep, q, NULL); /* every record gets its completion time */
    if (st != HS_OK)
        goto free_us;
    for (uint64_t i = 0; i < o->iters; i++) {
        const trace_rec_t *r = &b->tr->recs[first + o->warmup + i];
        us[i] = (double)(r->t_done_ns - r->t_post_ns) / 1e3;
    }
    ptc = stats_json(us, o->iters);
    cJSON_AddNumberToObject(ptc, "gap_us", (double)gap_ns / 1e3);
    if (gap_ns) /* as validate's replay_overhead.poll_gap_us */
        cJSON_AddItemToObject(ptc, "poll_gap_us", cap_hist_json(&pace.gap));
    cJSON_AddItemToObject(row, "post_to_completion", ptc);
free_us:
    if (gap_ns)
        cap_pace_fini(&pace);
    free(us);
    return st;
}

/* n messages posted back to back on q, then every completion drained. */
static hs_status_t stream_burst(cap_conn_t *c, cap_qp_t *q, uint64_t size, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        hs_status_t st = cap_qp_post_msg(c->ep, q, i, size, 0, NULL);
        if (st != HS_OK)
            return st;
    }
    return cap_qp_drain(c->ep, q, NULL);
}

/* Stream: keep the path's queue full for iters messages; throughput over the whole phase. */
static hs_status_t phase_stream(cap_conn_t *c, cap_path_id_t path, uint64_t size,
                                const cap_bench_opts_t *o, cJSON *row)
{
    cap_qp_t *q = &c->ep->qp[path];
    cap_done_fn saved = q->on_done;
    uint64_t t0, ns;
    cJSON *s;
    hs_status_t st;

    q->on_done = NULL;
    st = stream_burst(c, q, size, o->warmup);
    if (st != HS_OK)
        goto restore_on_done;
    t0 = hs_now_ns();
    st = stream_burst(c, q, size, o->iters);
    ns = hs_now_ns() - t0;
    if (st != HS_OK)
        goto restore_on_done;
    s = cJSON_AddObjectToObject(row, "stream");
    cJSON_AddNumberToObject(s, "messages", (double)o->iters);
    cJSON_AddNumberToObject(s, "throughput_gbps",
                            ns ? (double)(size * o->iters) * 8.0 / (double)ns : 0);
    cJSON_AddNumberToObject(s, "msg_rate_mpps", ns ? (double)o->iters * 1e3 / (double)ns : 0);
restore_on_done:
    q->on_done = saved;
    return st;
}

static hs_status_t bench_size(cap_conn_t *c, bench_ctx_t *b, uint64_t hint, uint64_t size,
                              cap_path_id_t *prev, const cap_bench_opts_t *o, cJSON *rows)
{
    cap_path_id_t path = cap_route_class(hint, size);
    cJSON *row = cJSON_CreateObject();
    uint64_t drain_ns = 0;
    int switched = (int)*prev >= 0 && *prev != path;
    unsigned ph = o->phases ? o->phases : CAP_PHASE_ALL;
    hs_status_t st = HS_OK;

    cJSON_AddItemToArray(rows, row);
    cJSON_AddNumberToObject(row, "hint", (double)hint);
    cJSON_AddNumberToObject(row, "size_bytes", (double)size);
    cJSON_AddStringToObject(row, "path", cap_path_name(path));
    if (switched)
        st = cap_qp_drain(c->ep, &c->ep->qp[*prev], &drain_ns);
    cJSON_AddNumberToObject(row, "switch_drain_us", (double)drain_ns / 1e3);
    *prev = path;
    if (st == HS_OK && (ph & CAP_PHASE_PINGPONG))
        st = phase_pingpong(c, path, size, o, row);
    if (st == HS_OK && (ph & CAP_PHASE_LATENCY))
        st = phase_latency(c, b, path, size, switched, o, row);
    if (st == HS_OK && (ph & CAP_PHASE_STREAM))
        st = phase_stream(c, path, size, o, row);
    return st;
}

static hs_status_t bench_hint(const cap_bench_opts_t *o, cap_live_t *l, bench_ctx_t *b,
                              uint64_t hint, uint64_t max_msg, int more, cJSON *report)
{
    cap_conn_t *c = NULL;
    cap_path_id_t prev = (cap_path_id_t)-1;
    cJSON *rows = cJSON_GetObjectItem(report, "results");
    hs_status_t st;

    st = cap_live_connect(&o->live, l, max_msg, hint, &c);
    if (st != HS_OK)
        return st;
    if (!cJSON_GetObjectItem(report, "config"))
        cJSON_AddItemToObject(report, "config", cap_live_config_json(l, c));
    for (int i = 0; i < CAP_NPATHS; i++) {
        c->ep->qp[i].on_done = on_done;
        c->ep->qp[i].on_done_arg = b;
    }
    for (size_t i = 0; st == HS_OK && i < o->nsizes; i++)
        st = bench_size(c, b, hint, o->sizes[i], &prev, o, rows);
    cap_conn_close(c, more && st == HS_OK);
    return st;
}

hs_status_t cap_bench_parse_phases(const char *text, unsigned *out)
{
    static const char *const names[] = {"pingpong", "latency", "stream"};
    const char *p = text;
    unsigned bits = 0;

    if (strcmp(text, "all") == 0) {
        *out = CAP_PHASE_ALL;
        return HS_OK;
    }
    while (*p) {
        size_t len = strcspn(p, ","), i;
        for (i = 0; i < 3; i++)
            if (strlen(names[i]) == len && strncmp(p, names[i], len) == 0)
                break;
        if (i == 3)
            return HS_ERR_USAGE;
        bits |= 1u << i;
        p += len;
        if (*p == ',' && *++p == '\0')
            return HS_ERR_USAGE;
    }
    if (bits == 0)
        return HS_ERR_USAGE;
    *out = bits;
    return HS_OK;
}

static hs_status_t check_opts(const cap_bench_opts_t *o, uint64_t *max_msg)
{
    *max_msg = 0;
    if (o->nsizes == 0 || o->nhints == 0 || o->iters == 0) {
        hs_log_error("capture bench needs --sizes, at least one hint and --iters >= 1");
        return HS_ERR_USAGE;
    }
    if (o->iters > CAP_BENCH_MAX_ITERS || o->warmup > CAP_BENCH_MAX_ITERS) {
        hs_log_error("--%s %llu: at most %llu (every message is a trace record kept in memory "
                     "until the trace is written)", o->iters > CAP_BENCH_MAX_ITERS ? "iters" :
                     "warmup", (unsigned long long)(o->iters > CAP_BENCH_MAX_ITERS ? o->iters :
                                                    o->warmup),
                     (unsigned long long)CAP_BENCH_MAX_ITERS);
        return HS_ERR_USAGE;
    }
    if (!(o->gap_us >= 0 && o->gap_us <= CAP_BENCH_MAX_GAP_US)) {
        hs_log_error("--gap-us %.15g: outside 0..%.15g", o->gap_us, CAP_BENCH_MAX_GAP_US);
        return HS_ERR_USAGE;
    }
    for (size_t i = 0; i < o->nsizes; i++) {
        if (o->sizes[i] == 0 || o->sizes[i] > CAP_BENCH_MAX_SIZE) {
            hs_log_error("--sizes: %llu is outside 1..1G",
                         (unsigned long long)o->sizes[i]);
            return HS_ERR_USAGE;
        }
        if (o->sizes[i] > *max_msg)
            *max_msg = o->sizes[i];
    }
    /* each endpoint registers (pins) two buffers of the largest size, and loopback has two
     * endpoints: more than half this machine's memory cannot work (in a 1 GiB VM --sizes
     * 256M was killed by the kernel's OOM killer, no message) */
    uint64_t need = (o->live.server || o->live.connect ? 2 : 4) * *max_msg;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && psz > 0 ? (double)pages * (double)psz : 0;
    if (phys > 0 && (double)need > phys / 2) {
        hs_log_error("--sizes: the largest, %llu bytes, needs %.0f MiB of registered buffers "
                     "(%s) and this machine has %.0f MiB of memory", (unsigned long long)*max_msg,
                     (double)need / 1048576.0, o->live.server || o->live.connect ?
                     "2 x size" : "2 x size for each of the loopback's two ends",
                     phys / 1048576.0);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

static hs_status_t write_trace(const cap_bench_opts_t *o, const cap_live_t *l, bench_ctx_t *b,
                               const cJSON *report)
{
    trace_hdr_t *h = &b->tr->hdr;

    h->mode = TRACE_MODE_BENCH;
    snprintf(h->producer, sizeof(h->producer), "hintsim capture bench");
    snprintf(h->device, sizeof(h->device), "%s", l->dev->name);
    snprintf(h->firmware, sizeof(h->firmware), "%s", l->dev->fw_ver);
    h->mem = l->mem->cpu_visible ? TRACE_MEM_HOST : TRACE_MEM_CUDA;
    h->hint_bytes = o->hints[0];
    h->hint_source = o->hints[0] ? TRACE_HINT_CODE : TRACE_HINT_NONE;
    h->pid = (int64_t)getpid();
    free(h->extra_json);
    h->extra_json = cJSON_PrintUnformatted(report);
    return o->out_fmt ? trace_save_as(o->out_path, (trace_fmt_t)o->out_fmt, b->tr)
                      : trace_save(o->out_path, b->tr);
}

hs_status_t cap_bench_run(const cap_bench_opts_t *o, cJSON **report)
{
    cap_live_t l;
    bench_ctx_t b = {0};
    uint64_t max_msg = 0;
    cJSON *rep = NULL;
    hs_status_t st = o->live.server ? HS_OK : check_opts(o, &max_msg);

    if (st != HS_OK)
        return st;
    st = cap_live_open(&o->live, &l);
    if (st != HS_OK)
        return st;
    rep = cJSON_CreateObject();
    if (l.role == CAP_ROLE_SERVER) {
        st = cap_live_serve(&o->live, &l);
        cJSON_AddStringToObject(rep, "role", "server");
        goto out;
    }
    cJSON_AddItemToObject(rep, "results", cJSON_CreateArray());
    st = trace_new(&b.tr);
    b.t0_ns = hs_now_ns();
    for (size_t i = 0; st == HS_OK && i < o->nhints; i++)
        st = bench_hint(o, &l, &b, o->hints[i], max_msg, i + 1 < o->nhints, rep);
    if (st == HS_OK && o->out_path) {
        cJSON_AddStringToObject(rep, "trace", o->out_path);
        st = write_trace(o, &l, &b, rep);
    }
out:
    if (b.tr)
        trace_free(b.tr);
    cap_live_close(&l);
    if (st != HS_OK) {
        cJSON_Delete(rep);
        return st;
    }
    *report = rep;
    return HS_OK;
}

static double jnum(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItem(o, a);

    x = x && b ? cJSON_GetObjectItem(x, b) : x;
    return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

/* One figure of a row into fp, w wide, prec decimals; "-" when the phase did not run (its
 * key is absent: it printed 0.00, a figure no phase measured). */
static void jcell(FILE *fp, const cJSON *o, const char *a, const char *b, int w, int prec)
{
    const cJSON *x = cJSON_GetObjectItem(o, a);

    x = x && b ? cJSON_GetObjectItem(x, b) : x;
    if (cJSON_IsNumber(x))
        fprintf(fp, " %*.*f", w, prec, x->valuedouble);
    else
        fprintf(fp, " %*s", w, "-");
}

void cap_bench_print(const cJSON *report, FILE *fp)
{
    const cJSON *rows = cJSON_GetObjectItem(report, "results"), *row;
    char hb[32], sb[32];

    if (!rows) {
        fprintf(fp, "server: the client's run is over\n");
        return;
    }
    fprintf(fp, "%8s %8s %4s | %23s | %23s | %10s %9s\n", "hint", "size", "path",
            "post->completion us", "round trip/2 us", "stream", "drain");
    fprintf(fp, "%8s %8s %4s | %7s %7s %7s | %7s %7s %7s | %10s %9s\n", "", "", "", "p50",
            "p99", "mean", "p50", "p99", "mean", "Gb/s", "us");
    cJSON_ArrayForEach(row, rows) {
        hs_format_size((uint64_t)jnum(row, "hint", NULL), hb, sizeof(hb));
        hs_format_size((uint64_t)jnum(row, "size_bytes", NULL), sb, sizeof(sb));
        fprintf(fp, "%8s %8s %4s |", jnum(row, "hint", NULL) ? hb : "none", sb,
                cJSON_GetObjectItem(row, "path")->valuestring);
        jcell(fp, row, "post_to_completion", "p50_us", 7, 2);
        jcell(fp, row, "post_to_completion", "p99_us", 7, 2);
        jcell(fp, row, "post_to_completion", "mean_us", 7, 2);
        fputs(" |", fp);
        jcell(fp, row, "round_trip_half", "p50_us", 7, 2);
        jcell(fp, row, "round_trip_half", "p99_us", 7, 2);
        jcell(fp, row, "round_trip_half", "mean_us", 7, 2);
        fputs(" |", fp);
        jcell(fp, row, "stream", "throughput_gbps", 10, 3);
        jcell(fp, row, "switch_drain_us", NULL, 9, 2);
        fputc('\n', fp);
    }
    row = cJSON_GetArrayItem(rows, 0);
    if (jnum(row, "post_to_completion", "gap_us") > 0)
        fprintf(fp, "post->completion paced: one message every %g us (--gap-us)\n",
                jnum(row, "post_to_completion", "gap_us"));
}
