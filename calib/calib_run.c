/* calib_run.c - calibrate's measurements: synthetic traces through validate's live replay
 * (cap_live_connect + cap_replay_run); see calib_run.h.
 *
 * The order: single messages on both paths, the streams (every path x depth x size), the
 * forced switches, then the mixed replays, paced at a fraction of what the streams
 * sustained for the same sizes (a load the device can carry, as the traces validate
 * checks are paced below the calibrated link).
 */
#include "calib/calib_run.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/cap_bench.h"
#include "capture/cap_replay.h"
#include "common/hs_util.h"
#include "model/predict/pred_jitter_rule.h"

#define STEP_NS 1000ULL /* closed-loop rows: a message posted at every step, done at the next:
                         * no think time, so each waits for the previous one */
enum { SWITCH_MSGS = 8, SWITCH_REPS = 5, JITTER_ROUNDS = 5 };

static int in_list(uint64_t v, const uint64_t *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

static uint64_t max_of(const uint64_t *v, size_t n)
{
    uint64_t mx = 0;

    for (size_t i = 0; i < n; i++)
        mx = v[i] > mx ? v[i] : mx;
    return mx;
}

/* ---- synthetic traces ------------------------------------------------------------------ */

static hs_status_t push(trace_t *tr, uint64_t post, uint64_t done, uint64_t size, int cold)
{
    trace_rec_t r = {.t_post_ns = post, .t_done_ns = done, .size_bytes = size,
                     .opcode = TRACE_OP_WRITE,
                     .flags = (uint16_t)(TRACE_F_SIGNALED | (cold ? TRACE_F_COLD : 0))};

    return trace_push(tr, &r);
}

/* Closed-loop ping-pong rows: per size, warmup cold messages then iters measured ones. */
static hs_status_t trace_rows(const uint64_t *sizes, size_t n, uint64_t warmup, uint64_t iters,
                              trace_t **out)
{
    uint64_t t = 0;
    hs_status_t st = trace_new(out);

    for (size_t i = 0; st == HS_OK && i < n; i++)
        for (uint64_t k = 0; st == HS_OK && k < warmup + iters; k++, t += STEP_NS)
            st = push(*out, t, t + STEP_NS, sizes[i], k < warmup);
    return st;
}

/* The reach run's closed-loop rows of one size: warmup cold messages, then JITTER_ROUNDS
 * pairs of blocks of iters messages, the first back to back, the second think_ns apart
 * (think_ns between a message's completion and the next post), so that both blocks of a
 * pair see the same spell of the device. */
static hs_status_t trace_reach(uint64_t size, uint64_t warmup, uint64_t iters,
                               uint64_t think_ns, trace_t **out)
{
    hs_status_t st = trace_new(out);
    uint64_t t = 0;

    for (uint64_t k = 0; st == HS_OK && k < warmup; k++, t += STEP_NS)
        st = push(*out, t, t + STEP_NS, size, 1);
    for (uint64_t k = 0; st == HS_OK && k < 2 * JITTER_ROUNDS * iters; k++) {
        uint64_t gap = (k / iters) % 2 ? think_ns : 0;
        st = push(*out, t, t + STEP_NS, size, 0);
        t += STEP_NS + gap;
    }
    return st;
}

/* An open-loop burst: len messages of size, all due at once (back to back, as fast as the
 * path's depth lets them go). */
static hs_status_t trace_burst(uint64_t size, uint64_t len, trace_t **out)
{
    hs_status_t st = trace_new(out);

    for (uint64_t k = 0; st == HS_OK && k < len; k++)
        st = push(*out, 0, TRACE_TIME_UNKNOWN, size, 0);
    return st;
}

/* Closed loop, sizes alternating small / big: every message after the first switches. */
static hs_status_t trace_switch(uint64_t small, uint64_t big, trace_t **out)
{
    hs_status_t st = trace_new(out);

    for (uint64_t k = 0; st == HS_OK && k < SWITCH_MSGS; k++)
        st = push(*out, k * STEP_NS, (k + 1) * STEP_NS, k % 2 ? big : small, 0);
    return st;
}

/* n messages, sizes drawn uniformly from sizes[0..ns), Poisson arrivals gap_ns apart on
 * average. */
static hs_status_t trace_mixed(const uint64_t *sizes, size_t ns, uint64_t n, double gap_ns,
                               uint64_t seed, trace_t **out)
{
    double t = 0;
    uint64_t s = seed;
    hs_status_t st = trace_new(out);

    for (uint64_t k = 0; st == HS_OK && k < n; k++) {
        double u = ((double)(hs_splitmix64(&s) >> 11) + 0.5) / 9007199254740992.0;
        st = push(*out, (uint64_t)t, TRACE_TIME_UNKNOWN, sizes[hs_splitmix64(&s) % ns], 0);
        t += -log(u) * gap_ns;
    }
    return st;
}

/* ---- measured figures -------------------------------------------------------------------- */

typedef struct {
    const calib_run_opts_t *o;
    calib_exec_fn_t exec;
    void *ctx;
    calib_meas_t *m;
    hs_progress_t *pb;
    uint64_t step, nsteps;
    uint64_t *svc_size;     /* per measured stream replay: its size and time per message */
    double *svc_us;
    size_t nsvc;
} mctx_t;

static hs_status_t keep_sub(calib_meas_t *m, trace_t *sub)
{
    trace_t **ns = realloc(m->subs, (m->nsubs + 1) * sizeof(*ns));

    if (!ns)
        return HS_ERR_NOMEM;
    m->subs = ns;
    m->subs[m->nsubs++] = sub;
    return HS_OK;
}

static hs_status_t keep_str(calib_meas_t *m, const char *s, const char **out)
{
    char **ns = realloc(m->strs, (m->nstrs + 1) * sizeof(*ns));

    *out = NULL;
    if (!ns)
        return HS_ERR_NOMEM;
    m->strs = ns;
    if (!s[0])
        return HS_OK;
    if (!(m->strs[m->nstrs] = strdup(s)))
        return HS_ERR_NOMEM;
    *out = m->strs[m->nstrs++];
    return HS_OK;
}

static hs_status_t add_obs(calib_obs_t **arr, size_t *n, const calib_obs_t *o)
{
    calib_obs_t *na = realloc(*arr, (*n + 1) * sizeof(*na));

    if (!na)
        return HS_ERR_NOMEM;
    *arr = na;
    (*arr)[(*n)++] = *o;
    return HS_OK;
}

/* The warm latencies of messages [a, b) in replays [r0, r1) into v; how many. */
static size_t warm_lat(const calib_bench_t *bn, const pred_raw_t *raw, size_t a, size_t b,
                       uint64_t r0, uint64_t r1, double *v)
{
    size_t n = 0;

    for (uint64_t r = r0; r < r1; r++)
        for (size_t i = a; i < b; i++)
            if (!(bn->tr->recs[i].flags & TRACE_F_COLD) && isfinite(raw[r].lat_us[i]) &&
                raw[r].lat_us[i] > 0)
                v[n++] = raw[r].lat_us[i];
    return n;
}

/* Median latency of the warm messages [a, b) of tr over the measured replays of bn into
 * o->meas_us, and the spread of the replays' own medians into o->noise_rel. */
static hs_status_t warm_median(const calib_bench_t *bn, const pred_raw_t *raw, size_t a,
                               size_t b, calib_obs_t *o)
{
    double *v = malloc(((b - a) * bn->reps + 1) * sizeof(*v)), lo = INFINITY, hi = 0;
    size_t n = v ? warm_lat(bn, raw, a, b, bn->skip, bn->reps, v) : 0;

    if (!v)
        return HS_ERR_NOMEM;
    if (n == 0) {
        free(v);
        hs_log_error("calibrate: %s, %llu B: no warm message completed with a latency",
                     bn->group, (unsigned long long)bn->tr->recs[a].size_bytes);
        return HS_ERR_CHECK;
    }
    o->meas_us = cap_pctl(v, n, 0.5); /* the lower median, as calib_predict_replay takes */
    for (uint64_t r = bn->skip; bn->reps - bn->skip > 1 && r < bn->reps; r++) {
        size_t k = warm_lat(bn, raw, a, b, r, r + 1, v);
        double m = k ? cap_pctl(v, k, 0.5) : o->meas_us;
        lo = m < lo ? m : lo;
        hi = m > hi ? m : hi;
    }
    o->noise_rel = hi >= lo ? (hi - lo) / o->meas_us : 0;
    free(v);
    return HS_OK;
}

static void raws_free(pred_raw_t *raw, uint64_t n)
{
    for (uint64_t r = 0; raw && r < n; r++)
        pred_raw_free(&raw[r]);
    free(raw);
}

/* raw's b->reps buffers allocated (NULL raw: no memory), then bench b executed into them. */
static hs_status_t exec_into(mctx_t *x, const calib_bench_t *b, pred_raw_t *raw)
{
    if (!raw)
        return HS_ERR_NOMEM;
    for (uint64_t r = 0; r < b->reps; r++) {
        hs_status_t st = pred_raw_alloc(&raw[r], b->tr->n);
        if (st != HS_OK)
            return st;
    }
    return x->exec(x->ctx, b, x->step + 1 == x->nsteps, raw);
}

/* Run bench b through the executor into raw (b->reps of them, allocated here); the step
 * counts whatever became of it. */
static hs_status_t run_bench(mctx_t *x, const calib_bench_t *b, pred_raw_t **out)
{
    pred_raw_t *raw = calloc(b->reps, sizeof(*raw));
    hs_status_t st = exec_into(x, b, raw);

    if (x->pb)
        hs_progress_update(x->pb, x->step + 1);
    x->step++;
    if (st != HS_OK)
        goto free_raws;
    *out = raw;
    return HS_OK;

free_raws:
    raws_free(raw, b->reps);
    return st;
}

/* The observation of rows a..i-1 of a single-message bench (one size), with a trace of
 * its own kept in m (held out: its size in o->holdout). */
static hs_status_t single_run_obs(mctx_t *x, const calib_bench_t *b, const pred_raw_t *raw,
                                  size_t a, size_t i)
{
    const trace_t *tr = b->tr;
    calib_obs_t o = {.group = b->group, .hint_bytes = b->hint, .mode = PRED_CLOSED,
                     .cls = CALIB_SINGLE, .size_bytes = tr->recs[a].size_bytes};
    trace_t *sub = NULL;
    hs_status_t st = warm_median(b, raw, a, i, &o);

    if (st != HS_OK)
        return st;
    st = trace_new(&sub);
    if (st != HS_OK)
        goto free_sub;
    for (size_t k = a; k < i; k++) {
        st = trace_push(sub, &tr->recs[k]);
        if (st != HS_OK)
            goto free_sub;
    }
    st = keep_sub(x->m, sub);
    if (st != HS_OK)
        return st;
    o.trace = sub;
    if (in_list(o.size_bytes, x->o->holdout, x->o->nholdout))
        return add_obs(&x->m->held, &x->m->nheld, &o);
    return add_obs(&x->m->fit, &x->m->nfit, &o);

free_sub:
    trace_free(sub);
    return st;
}

/* One observation per run of equal sizes in a single-message bench. */
static hs_status_t single_obs(mctx_t *x, const calib_bench_t *b, const pred_raw_t *raw)
{
    const trace_t *tr = b->tr;
    size_t a = 0;

    for (size_t i = 1; i <= tr->n; i++) {
        hs_status_t st;

        if (i < tr->n && tr->recs[i].size_bytes == tr->recs[a].size_bytes)
            continue;
        st = single_run_obs(x, b, raw, a, i);
        if (st != HS_OK)
            return st;
        a = i;
    }
    return HS_OK;
}

/* One observation for a whole stream or mixed bench; its trace moves into m. */
static hs_status_t whole_obs(mctx_t *x, calib_bench_t *b, const pred_raw_t *raw, int held)
{
    calib_obs_t o = {.group = b->group, .hint_bytes = b->hint, .mode = b->mode, .cls = b->cls,
                     .depth = b->depth};
    uint64_t mx = 0;
    hs_status_t st = warm_median(b, raw, 0, b->tr->n, &o);

    for (size_t i = 0; i < b->tr->n; i++)
        mx = b->tr->recs[i].size_bytes > mx ? b->tr->recs[i].size_bytes : mx;
    o.size_bytes = mx;
    if (st != HS_OK)
        return st;
    st = keep_str(x->m, b->set, &o.set);
    if (st != HS_OK)
        return st;
    st = keep_sub(x->m, b->tr);
    if (st != HS_OK)
        return st;
    o.trace = b->tr;
    b->tr = NULL;
    return held ? add_obs(&x->m->held, &x->m->nheld, &o) : add_obs(&x->m->fit, &x->m->nfit, &o);
}

/* What a stream's replays sustained: the best rate (its bytes over first post to last
 * completion), and per replay the time per message at its size (what paces the mixed
 * replay). */
static hs_status_t note_rate(mctx_t *x, const calib_bench_t *b, const pred_raw_t *raw)
{
    double bytes = 0;
    uint64_t *ns = realloc(x->svc_size, (x->nsvc + b->reps) * sizeof(*ns));
    double *nu = ns ? realloc(x->svc_us, (x->nsvc + b->reps) * sizeof(*nu)) : NULL;

    if (ns)
        x->svc_size = ns;
    if (!ns || !nu)
        return HS_ERR_NOMEM;
    x->svc_us = nu;
    for (size_t i = 0; i < b->tr->n; i++)
        bytes += (double)b->tr->recs[i].size_bytes;
    for (uint64_t r = b->skip; r < b->reps; r++) {
        double span_ns = (raw[r].t_last_done_us - raw[r].t_first_post_us) * 1e3;
        double gbps = span_ns > 0 ? bytes * 8 / span_ns : 0;
        if (isfinite(gbps) && gbps > x->m->stream_gbps)
            x->m->stream_gbps = gbps;
        if (span_ns > 0 && isfinite(span_ns)) {
            x->svc_size[x->nsvc] = b->tr->recs[0].size_bytes;
            x->svc_us[x->nsvc++] = span_ns / 1e3 / (double)b->tr->n;
        }
    }
    return HS_OK;
}

/* The mean time per message the streams sustained over sizes[0..n) (each size's median
 * over its replays, every path and depth); 0 when a size has none. */
static double mix_service_us(const mctx_t *x, const uint64_t *sizes, size_t n)
{
    double sum = 0, *v = malloc((x->nsvc + 1) * sizeof(*v));

    if (!v)
        return 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (size_t j = 0; j < x->nsvc; j++)
            if (x->svc_size[j] == sizes[i])
                v[k++] = x->svc_us[j];
        if (k == 0) {
            free(v);
            return 0;
        }
        sum += cap_pctl(v, k, 0.5) / (double)n;
    }
    free(v);
    return sum;
}

static hs_status_t measure_singles(mctx_t *x, int ll)
{
    const calib_run_opts_t *o = x->o;
    uint64_t all[256];
    size_t n = 0;
    calib_bench_t b = {.group = ll ? "single_ll" : "single_bw", .cls = CALIB_SINGLE,
                       .mode = PRED_CLOSED, .reps = 2}; /* twice: the device's own spread */
    pred_raw_t *raw = NULL;
    hs_status_t st;

    for (size_t i = 0; i < o->nsizes; i++)
        all[n++] = o->sizes[i];
    for (size_t i = 0; i < o->nholdout; i++)
        all[n++] = o->holdout[i];
    b.hint = ll ? max_of(all, n) : 0;
    st = trace_rows(all, n, o->warmup, o->iters, &b.tr);
    if (st != HS_OK)
        goto free_trace;
    st = run_bench(x, &b, &raw);
    if (st != HS_OK)
        goto free_trace;
    st = single_obs(x, &b, raw);
    raws_free(raw, b.reps);
free_trace:
    trace_free(b.tr);
    return st;
}

static hs_status_t measure_stream(mctx_t *x, int ll, uint64_t size, uint64_t depth, int held)
{
    calib_bench_t b = {.group = ll ? "stream_ll" : "stream_bw", .cls = CALIB_STREAM,
                       .mode = PRED_OPEN, .depth = depth, .reps = x->o->stream_reps + 1,
                       .skip = 1};
    pred_raw_t *raw = NULL;
    hs_status_t st;

    /* LL: the hint covers the size; BW: hint 0, whose depth is bw.depth */
    b.hint = ll ? size : 0;
    snprintf(b.set, sizeof(b.set), "%s.depth=%llu", ll ? "ll" : "bw", (unsigned long long)depth);
    st = trace_burst(size, x->o->stream_len, &b.tr);
    if (st != HS_OK)
        goto free_trace;
    st = run_bench(x, &b, &raw);
    if (st != HS_OK)
        goto free_trace;
    st = note_rate(x, &b, raw);
    if (st != HS_OK)
        goto free_raws;
    st = whole_obs(x, &b, raw, held);
free_raws:
    raws_free(raw, b.reps);
free_trace:
    trace_free(b.tr);
    return st;
}

static hs_status_t measure_streams(mctx_t *x)
{
    const calib_run_opts_t *o = x->o;
    hs_status_t st = HS_OK;

    for (int ll = 1; ll >= 0; ll--)
        for (size_t d = 0; d < o->ndepths + o->ndholdout; d++)
            for (size_t s = 0; st == HS_OK && s < o->nssizes + o->nsholdout; s++) {
                int dh = d >= o->ndepths, sh = s >= o->nssizes;
                uint64_t depth = dh ? o->dholdout[d - o->ndepths] : o->depths[d];
                uint64_t size = sh ? o->sholdout[s - o->nssizes] : o->ssizes[s];
                st = measure_stream(x, ll, size, depth, dh || sh);
            }
    return st;
}

/* Forced switches: the drain per switch of each replay, median and MAD over the replays. */
static hs_status_t measure_switch(mctx_t *x)
{
    const calib_run_opts_t *o = x->o;
    calib_bench_t b = {.group = "switch", .cls = CALIB_SINGLE, .mode = PRED_CLOSED,
                       .reps = SWITCH_REPS};
    double drains[SWITCH_REPS], dev[SWITCH_REPS];
    size_t n = 0;
    pred_raw_t *raw = NULL;
    hs_status_t st;

    b.hint = o->sizes[0];
    st = trace_switch(o->sizes[0], max_of(o->sizes, o->nsizes), &b.tr);
    if (st != HS_OK)
        goto free_trace;
    st = run_bench(x, &b, &raw);
    if (st != HS_OK)
        goto free_trace;
    for (uint64_t r = 0; r < b.reps; r++)
        if (raw[r].switches > 0 && raw[r].drain_us_total > 0)
            drains[n++] = raw[r].drain_us_total / (double)raw[r].switches;
    if (n > 0) {
        x->m->drain_us_median = cap_pctl(drains, n, 0.5);
        for (size_t i = 0; i < n; i++)
            dev[i] = fabs(drains[i] - x->m->drain_us_median);
        x->m->drain_us_mad = cap_pctl(dev, n, 0.5);
        x->m->nswitches = (size_t)raw[0].switches * n;
    }
    raws_free(raw, b.reps);
free_trace:
    trace_free(b.tr);
    return st;
}

/* One replay's jitter set from its n warm latencies v (sorted here). */
static calib_jitter_t jitter_of_round(double *v, size_t n)
{
    double med = cap_pctl(v, n, 0.5);

    return (calib_jitter_t){.p90_us = cap_pctl(v, n, 0.90) - med,
                            .p99_us = cap_pctl(v, n, 0.99) - med,
                            .p999_us = cap_pctl(v, n, 0.999) - med,
                            .cycle_us = med, /* back to back: the cycle is the latency */
                            .n = n};
}

/* The median over the rounds r[0..k) of the figure at byte offset off of each. */
static double round_median(const calib_jitter_t *r, size_t k, size_t off)
{
    double f[JITTER_ROUNDS];

    for (size_t i = 0; i < k; i++)
        f[i] = *(const double *)((const char *)&r[i] + off);
    return cap_pctl(f, k, 0.5);
}

/* Each figure's median over the rounds r[0..k) (their n summed). */
static calib_jitter_t jitter_median(const calib_jitter_t *r, size_t k)
{
    calib_jitter_t m = {.p90_us = round_median(r, k, offsetof(calib_jitter_t, p90_us)),
                        .p99_us = round_median(r, k, offsetof(calib_jitter_t, p99_us)),
                        .p999_us = round_median(r, k, offsetof(calib_jitter_t, p999_us)),
                        .cycle_us = round_median(r, k, offsetof(calib_jitter_t, cycle_us))};

    for (size_t i = 0; i < k; i++)
        m.n += r[i].n;
    return m;
}

/* Jitter: JITTER_ROUNDS replays of o->jitter_len closed-loop messages of size on the LL
 * path, back to back; in each, the warm messages' latency beyond their median at the 90th,
 * 99th and 99.9th percentile, and the median itself as the cycle they were measured at;
 * each figure the median over the replays, so that one disturbed replay moves none (what
 * the model adds per message: MODEL.md section 8). */
static hs_status_t measure_jitter(mctx_t *x, uint64_t size, calib_jitter_t *out)
{
    const calib_run_opts_t *o = x->o;
    calib_bench_t b = {.group = "jitter", .cls = CALIB_SINGLE, .mode = PRED_CLOSED,
                       .reps = JITTER_ROUNDS};
    calib_jitter_t round[JITTER_ROUNDS];
    pred_raw_t *raw = NULL;
    double *v = NULL;
    size_t k = 0;
    hs_status_t st;

    b.hint = size;
    st = trace_rows(&size, 1, o->warmup, o->jitter_len, &b.tr);
    if (st != HS_OK)
        goto free_trace;
    st = run_bench(x, &b, &raw);
    if (st != HS_OK)
        goto free_trace;
    v = malloc(b.tr->n * sizeof(*v));
    if (!v) {
        st = HS_ERR_NOMEM;
        goto free_raw;
    }
    for (uint64_t r = 0; r < b.reps; r++) {
        size_t n = warm_lat(&b, raw, 0, b.tr->n, r, r + 1, v);
        if (n > 0)
            round[k++] = jitter_of_round(v, n);
    }
    if (k > 0) {
        *out = jitter_median(round, k);
        out->bytes = size;
    }
    free(v);
free_raw:
    raws_free(raw, b.reps);
free_trace:
    trace_free(b.tr);
    return st;
}

/* The first jitter set's size: the smallest single-message size. */
static uint64_t jitter_bytes(const calib_run_opts_t *o)
{
    uint64_t size = o->sizes[0];

    for (size_t i = 1; i < o->nsizes; i++)
        size = o->sizes[i] < size ? o->sizes[i] : size;
    return size;
}

/* The jitter runs: none, or the first set, the reach run and the long set when
 * o->jitter_long_bytes is larger. */
static unsigned jitter_sets(const calib_run_opts_t *o)
{
    return o->jitter_len ? 2 + (o->jitter_long_bytes > jitter_bytes(o)) : 0;
}

/* The model's p99 beyond the median of closed-loop messages of j's cycle, think_us apart,
 * when a stall reaches across the share `share` of the think time (pred_jitter_apply's
 * rule: the first set alone, as for a message of that latency). */
static double reach_p99(const double v[4], double c0, double think_us, double share)
{
    const pjr_sets_t sets = {{v, v}, {c0, 0}};

    return pjr_mix(&sets, 0.99, 0, pjr_cycle((float)c0, think_us, share, 1, v[3]));
}

double calib_think_reach(const calib_jitter_t *j, const calib_jitter_t *r)
{
    double v[4], lo = 0, hi = 1, f0, f1;

    if (!j->n || !r->n || !(j->cycle_us > 0) || !(r->think_us > 0))
        return NAN;
    pjr_points(v, j->p90_us, j->p99_us, j->p999_us);
    f0 = reach_p99(v, j->cycle_us, r->think_us, 0);
    f1 = reach_p99(v, j->cycle_us, r->think_us, 1);
    if (!(f1 - f0 > 0.01 * f1))
        return NAN;
    if (r->p99_us <= f0)
        return 0;
    if (r->p99_us >= f1)
        return 1;
    for (int k = 0; k < 60; k++) { /* reach_p99 grows with the share */
        double mid = (lo + hi) / 2;
        if (reach_p99(v, j->cycle_us, r->think_us, mid) < r->p99_us)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

/* The reach (jitter.think_reach): one replay of trace_reach, its think time
 * CALIB_REACH_CYCLES of the first set's cycles; each pair of blocks gives a share
 * (calib_think_reach: the back-to-back block's jitter, the think block's p99), and the
 * share is their median (NAN when no pair determines one); m->reach gets the think
 * blocks' figures, each the median over the pairs. */
static hs_status_t measure_reach(mctx_t *x, uint64_t size, double cycle_us)
{
    const calib_run_opts_t *o = x->o;
    calib_bench_t b = {.group = "reach", .cls = CALIB_SINGLE, .mode = PRED_CLOSED,
                       .reps = 1, .hint = size};
    uint64_t think_ns = (uint64_t)llround(CALIB_REACH_CYCLES * cycle_us * 1e3);
    calib_jitter_t think[JITTER_ROUNDS];
    double share[JITTER_ROUNDS], *v = NULL;
    pred_raw_t *raw = NULL;
    size_t k = 0, ns = 0, a = o->warmup, len = o->jitter_len;
    hs_status_t st = trace_reach(size, o->warmup, len, think_ns, &b.tr);

    if (st != HS_OK)
        goto free_trace;
    st = run_bench(x, &b, &raw);
    if (st != HS_OK)
        goto free_trace;
    v = malloc(len * sizeof(*v));
    if (!v) {
        st = HS_ERR_NOMEM;
        goto free_raw;
    }
    for (size_t p = 0; p < JITTER_ROUNDS; p++, a += 2 * len) {
        size_t n0 = warm_lat(&b, raw, a, a + len, 0, 1, v), n1;
        calib_jitter_t back;
        if (n0 == 0)
            continue;
        back = jitter_of_round(v, n0);
        n1 = warm_lat(&b, raw, a + len, a + 2 * len, 0, 1, v);
        if (n1 == 0)
            continue;
        think[k] = jitter_of_round(v, n1);
        think[k].think_us = (double)think_ns * 1e-3;
        share[ns] = calib_think_reach(&back, &think[k]);
        ns += !isnan(share[ns]);
        k++;
    }
    x->m->reach_share = ns ? cap_pctl(share, ns, 0.5) : NAN;
    x->m->reach_pairs = ns;
    if (k > 0) {
        x->m->reach = jitter_median(think, k);
        x->m->reach.bytes = size;
        x->m->reach.think_us = (double)think_ns * 1e-3;
    }
    free(v);
free_raw:
    raws_free(raw, b.reps);
free_trace:
    trace_free(b.tr);
    return st;
}

/* The first set, the reach, the long set. */
static hs_status_t measure_jitters(mctx_t *x)
{
    calib_jitter_t *j = x->m->jitter;
    hs_status_t st = measure_jitter(x, jitter_bytes(x->o), &j[0]);

    x->m->reach_share = NAN;
    if (st != HS_OK)
        return st;
    if (j[0].n && j[0].cycle_us > 0)
        st = measure_reach(x, jitter_bytes(x->o), j[0].cycle_us);
    if (st != HS_OK || jitter_sets(x->o) <= 2)
        return st;
    return measure_jitter(x, x->o->jitter_long_bytes, &j[1]);
}

/* The mixed trace: every stream size, the hint between the two largest (both paths, with
 * switches), then hint 0; messages arrive o->mixed_load times as often as the streams
 * sustained them (the mix's mean time per message): a load the device can carry. */
static hs_status_t measure_mixed(mctx_t *x, uint64_t hint)
{
    const calib_run_opts_t *o = x->o;
    uint64_t sizes[256];
    size_t n = 0;
    calib_bench_t b = {.group = "mixed", .cls = CALIB_MIXED, .mode = PRED_OPEN, .hint = hint,
                       .reps = 3, .skip = 1};
    pred_raw_t *raw = NULL;
    double svc;
    hs_status_t st;

    for (size_t i = 0; i < o->nssizes; i++)
        sizes[n++] = o->ssizes[i];
    for (size_t i = 0; i < o->nsholdout; i++)
        sizes[n++] = o->sholdout[i];
    svc = mix_service_us(x, sizes, n);
    if (!(svc > 0)) {
        hs_log_error("calibrate: a stream size has no measured time per message: cannot pace "
                     "the mixed replay");
        return HS_ERR_CHECK;
    }
    x->m->mixed_gap_us = svc / o->mixed_load;
    st = trace_mixed(sizes, n, o->mixed_len, 1e3 * x->m->mixed_gap_us, o->seed, &b.tr);
    if (st != HS_OK)
        goto free_trace;
    st = run_bench(x, &b, &raw);
    if (st != HS_OK)
        goto free_trace;
    st = whole_obs(x, &b, raw, 1);
    raws_free(raw, b.reps);
free_trace:
    trace_free(b.tr);
    return st;
}

/* The mixed replay's hint: the second largest stream size (the largest goes to BW). */
static uint64_t mixed_hint(const calib_run_opts_t *o)
{
    uint64_t mx = 0, second = 0;

    for (size_t i = 0; i < o->nssizes + o->nsholdout; i++) {
        uint64_t v = i < o->nssizes ? o->ssizes[i] : o->sholdout[i - o->nssizes];
        if (v > mx) {
            second = mx;
            mx = v;
        } else if (v > second && v < mx) {
            second = v;
        }
    }
    return second ? second : mx;
}

uint64_t calib_run_steps(const calib_run_opts_t *o)
{
    return 2 + 2 * (o->nssizes + o->nsholdout) * (o->ndepths + o->ndholdout) + 1 +
           (o->mixed_len ? 2 : 0) + jitter_sets(o);
}

static hs_status_t check_opts(const calib_run_opts_t *o)
{
    if (o->nsizes < 2 || o->nsizes + o->nholdout > 256 || o->nssizes < 1 ||
        o->nssizes + o->nsholdout > 256 || o->ndepths < 1 || o->iters < 1 ||
        o->stream_len < 1 || o->stream_reps < 1 || (o->mixed_len && !(o->mixed_load > 0))) {
        hs_log_error("calibrate: needs 2..256 single-message sizes, 1..256 stream sizes, a "
                     "depth, at least one message per size and stream, and a positive mixed "
                     "load");
        return HS_ERR_USAGE;
    }
    return HS_OK;
}

/* Every bench, in the order of calib_run_steps; the caller releases what they left. */
static hs_status_t measure_all(mctx_t *x)
{
    const calib_run_opts_t *o = x->o;
    hs_status_t st = measure_singles(x, 1);

    if (st != HS_OK)
        return st;
    st = measure_singles(x, 0);
    if (st != HS_OK)
        return st;
    st = measure_streams(x);
    if (st != HS_OK)
        return st;
    st = measure_switch(x);
    if (st != HS_OK)
        return st;
    if (o->mixed_len) {
        st = measure_mixed(x, mixed_hint(o));
        if (st != HS_OK)
            return st;
        st = measure_mixed(x, 0);
        if (st != HS_OK)
            return st;
    }
    return o->jitter_len ? measure_jitters(x) : HS_OK;
}

hs_status_t calib_measure_with(const calib_run_opts_t *o, calib_exec_fn_t exec, void *ctx,
                               hs_progress_t *pb, calib_meas_t *out)
{
    mctx_t x = {o, exec, ctx, out, pb, 0, calib_run_steps(o), NULL, NULL, 0};
    hs_status_t st = check_opts(o);

    memset(out, 0, sizeof(*out));
    if (st != HS_OK)
        return st;
    st = measure_all(&x);
    free(x.svc_size);
    free(x.svc_us);
    if (st != HS_OK)
        calib_meas_release(out);
    return st;
}

/* ---- executors --------------------------------------------------------------------------- */

hs_status_t calib_exec_model(void *ctx, const calib_bench_t *b, int last, pred_raw_t *raw)
{
    const calib_model_exec_t *x = ctx;
    pred_opts_t po = {.mode = b->mode, .include_cold = 1, .flows = 1};
    profile_t *p = NULL;
    hs_status_t st = profile_clone(x->prof, &p);

    (void)last;
    if (st != HS_OK)
        return st;
    if (b->set[0]) {
        st = profile_set(p, b->set);
        if (st != HS_OK)
            goto free_profile;
    }
    for (uint64_t r = 0; r < b->reps; r++) {
        st = x->eng->replay(b->tr, p, &po, b->hint, &raw[r]);
        if (st != HS_OK)
            goto free_profile;
    }
free_profile:
    profile_free(p);
    return st;
}

typedef struct {
    const calib_run_opts_t *o;
    cap_live_t live;
    calib_meas_t *m;
} live_exec_t;

/* What the connection is: device, host, peer, and the paths as the device applied them.
 * Only a connection at the profile's own depths gives the paths (a depth override caps
 * signal_every). */
static void live_note(live_exec_t *x, const calib_bench_t *b, const cap_conn_t *c)
{
    calib_meas_t *m = x->m;

    if (!b->set[0] && !m->have_cfg) {
        memcpy(m->cfg, c->cfg, sizeof(m->cfg));
        m->have_cfg = 1;
    }
    if (m->device[0])
        return;
    snprintf(m->device, sizeof(m->device), "%s", x->live.dev->name);
    snprintf(m->firmware, sizeof(m->firmware), "%s", x->live.dev->fw_ver);
    if (gethostname(m->host, sizeof(m->host) - 1) != 0)
        snprintf(m->host, sizeof(m->host), "unknown");
    snprintf(m->peer, sizeof(m->peer), "%s", x->live.has_peer ? x->live.peer_addr : "");
}

/* One bench on its own connection, as validate measures each candidate. */
static hs_status_t exec_live(void *ctx, const calib_bench_t *b, int last, pred_raw_t *raw)
{
    live_exec_t *x = ctx;
    profile_t *base = x->live.prof, *tmp = NULL;
    cap_conn_t *c = NULL;
    uint64_t max_msg = 1;
    hs_status_t st;

    for (size_t i = 0; i < b->tr->n; i++)
        max_msg = b->tr->recs[i].size_bytes > max_msg ? b->tr->recs[i].size_bytes : max_msg;
    if (b->set[0]) { /* the override, on a copy of the live profile for this connection */
        st = profile_clone(base, &tmp);
        if (st != HS_OK)
            return st;
        st = profile_set(tmp, b->set);
        if (st != HS_OK)
            goto restore_profile;
        x->live.prof = tmp;
    }
    st = cap_live_connect(&x->o->live, &x->live, max_msg, b->hint, &c);
    if (st != HS_OK)
        goto restore_profile;
    live_note(x, b, c);
    for (uint64_t r = 0; r < b->reps; r++) {
        cap_replay_overhead_t ov = {0};
        st = cap_replay_run(c, &(cap_replay_opts_t){.tr = b->tr, .hint = b->hint,
                                                    .hysteresis = (uint64_t)x->live.prof->switch_hysteresis,
                                                    .mode = b->mode, .overhead = &ov}, &raw[r]);
        if (st != HS_OK)
            goto close_conn;
        if (r >= b->skip)
            cap_replay_overhead_merge(&x->m->overhead[b->cls], &ov);
    }
close_conn:
    cap_conn_close(c, !last && st == HS_OK);
restore_profile:
    x->live.prof = base;
    profile_free(tmp);
    return st;
}

hs_status_t calib_measure(const calib_run_opts_t *o, hs_progress_t *pb, calib_meas_t *out)
{
    live_exec_t x = {.o = o, .m = out};
    hs_status_t st = check_opts(o);

    if (st != HS_OK)
        return st;
    st = cap_live_open(&o->live, &x.live);
    if (st != HS_OK)
        return st;
    st = calib_measure_with(o, exec_live, &x, pb, out);
    cap_live_close(&x.live);
    return st;
}

hs_status_t calib_serve(const calib_run_opts_t *o)
{
    cap_live_t l;
    hs_status_t st = cap_live_open(&o->live, &l);

    if (st != HS_OK)
        return st;
    st = cap_live_serve(&o->live, &l);
    cap_live_close(&l);
    return st;
}

void calib_meas_release(calib_meas_t *m)
{
    for (size_t i = 0; i < m->nsubs; i++)
        trace_free(m->subs[i]);
    for (size_t i = 0; i < m->nstrs; i++)
        free(m->strs[i]);
    free(m->subs);
    free(m->strs);
    free(m->fit);
    free(m->held);
    memset(m, 0, sizeof(*m));
}
