/* predict.c - pred_run (one engine, one hint) and the shared summariser.
 *
 * Percentiles come from the log-linear histogram of model/lat_hist.h (128 bins per octave,
 * so a reported percentile is within 0.4% of the exact order statistic, clamped to the exact
 * min/max): O(n) per hint, which is what lets recommend evaluate dozens of hints over
 * 10 M messages in seconds. */
#include "model/predict/predict.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hs_mem.h"
#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/predict/pred_jitter_rule.h"
#include "model/lat_hist.h"
#include "model/path_rules.h"

#define PRED_NBINS LAT_HIST_NBINS
#define PRED_NCLASSES HS_SIZE_CLASSES

typedef struct {
    uint32_t *bins; /* PRED_NBINS counts */
    uint64_t n;
    double min_us, max_us, sum_us;
} lat_hist_t;

/* An empty histogram, its bins not allocated yet (hist_open). */
static void hist_empty(lat_hist_t *h)
{
    memset(h, 0, sizeof(*h));
    h->min_us = INFINITY;
}

/* Allocate h's bins (hist_empty's), all zero, unless they are; -1 when out of memory. */
static inline int hist_open(lat_hist_t *h)
{
    if (__builtin_expect(h->bins != NULL, 1))
        return 0;
    h->bins = calloc(PRED_NBINS, sizeof(*h->bins));
    return h->bins ? 0 : -1;
}

/* h's min and max taken over latencies from lo to hi (minsd/maxsd, no branch). */
static inline void hist_span(lat_hist_t *h, double lo, double hi)
{
    h->min_us = lo < h->min_us ? lo : h->min_us;
    h->max_us = hi > h->max_us ? hi : h->max_us;
}

/* A latency into h's bin: the bin, min and max. No count and no sum: hist_add adds them; a
 * size class's histogram takes its count from its bins after the walk (walk_main: an
 * increment made each message of a class wait for the one before) and has no figure that
 * reads a sum. */
static inline void hist_put(lat_hist_t *h, size_t bin, double us)
{
    h->bins[bin]++;
    hist_span(h, us, us);
}

static void hist_add(lat_hist_t *h, float f)
{
    double us = f;

    hist_put(h, lat_hist_bin(f), us);
    h->n++;
    h->sum_us += us;
}

/* Count class histogram a (hist_put's) from its bins, and add its bins, count, min
 * and max into h (not its sum). */
static void hist_merge_class(lat_hist_t *h, lat_hist_t *a)
{
    uint64_t n = 0;

    for (size_t b = 0; b < PRED_NBINS; b++) {
        n += a->bins[b];
        h->bins[b] += a->bins[b];
    }
    a->n = n;
    h->n += n;
    hist_span(h, a->min_us, a->max_us);
}

static double hist_pct(const lat_hist_t *h, double q)
{
    return lat_hist_pct(h->bins, h->n, h->min_us, h->max_us, q);
}

void pred_result_release(pred_result_t *r)
{
    free(r->classes);
    free(r->lat_us);
    memset(r, 0, sizeof(*r));
}

static hs_status_t fill_classes(lat_hist_t *cls, pred_result_t *out)
{
    size_t n = 0;

    for (unsigned k = 0; k < PRED_NCLASSES; k++)
        n += cls[k].n > 0;
    out->classes = calloc(n ? n : 1, sizeof(*out->classes));
    if (!out->classes)
        return HS_ERR_NOMEM;
    for (unsigned k = 0; k < PRED_NCLASSES; k++) {
        if (!cls[k].n)
            continue;
        pred_class_t *c = &out->classes[out->nclasses++];
        hs_size_class_bounds(k, &c->min_bytes, &c->max_bytes);
        c->count = cls[k].n;
        c->p50_us = hist_pct(&cls[k], 0.50);
        c->p99_us = hist_pct(&cls[k], 0.99);
    }
    return HS_OK;
}

static void fill_main(const lat_hist_t *h, const lat_hist_t *cold, pred_result_t *out)
{
    out->count = h->n;
    out->p50_us = hist_pct(h, 0.50);
    out->p90_us = hist_pct(h, 0.90);
    out->p99_us = hist_pct(h, 0.99);
    out->p999_us = hist_pct(h, 0.999);
    out->max_us = h->n ? h->max_us : 0;
    out->mean_us = h->n ? h->sum_us / (double)h->n : 0;
    out->cold_count = cold->n;
    out->cold_p50_us = hist_pct(cold, 0.50);
    out->cold_p99_us = hist_pct(cold, 0.99);
    out->cold_max_us = cold->n ? cold->max_us : 0;
}

/* What one walk over the messages gathers: the main, cold-start and per-class histograms,
 * the bytes and the LL count of the messages in the figures. The walk adds each message to
 * its class only (hist_put), and the main histogram's sum: its bins, count, min and
 * max are the classes' merged after the walk (walk_main). */
typedef struct {
    lat_hist_t main, cold, cls[PRED_NCLASSES];
    double bytes;
    uint64_t nll;
} pred_walk_t;

static void walk_free(pred_walk_t *w)
{
    for (unsigned k = 0; k < PRED_NCLASSES; k++)
        free(w->cls[k].bins);
    free(w->main.bins);
    free(w->cold.bins);
}

/* Every histogram empty, bytes and count 0; the main histogram's bins allocated, the cold
 * and class ones when their first message comes (a trace has a few of the 65 classes:
 * allocating and zeroing all of them was most of a summary of a short trace; measured:
 * pred_summarize on the 10,000-message kv sample); -1 (nothing held) when out of memory. */
static int walk_init(pred_walk_t *w)
{
    memset(w, 0, sizeof(*w));
    hist_empty(&w->main);
    hist_empty(&w->cold);
    for (unsigned k = 0; k < PRED_NCLASSES; k++)
        hist_empty(&w->cls[k]);
    return hist_open(&w->main);
}

/* Walk the messages once into w; cold-start messages go apart unless include_cold. The
 * arrays are read through locals: through raw and tr they were loaded again after every
 * bin's store. has_path: raw->path is set (a constant per call, so that the loop tests it
 * once). Returns -1 when a histogram's bins could not be allocated (walk_free releases
 * what was). */
static inline __attribute__((always_inline)) int
summarize_walk(const trace_t *tr, int include_cold, const pred_raw_t *raw, pred_walk_t *w,
               const int has_path)
{
    const trace_rec_t *recs = tr->recs;
    const float *lat = raw->lat_us;
    const uint8_t *path = raw->path;
    size_t n = tr->n;
    double bytes = 0, sum_us = 0;
    uint64_t nll = 0;

    for (size_t i = 0; i < n; i++) {
        float f = lat[i]; /* one NaN test: the walk's and pred_in_figures' are the same */
        if (isnan(f))
            continue; /* not measured (validate) */
        double us = f;
        if (!pred_in_figures(&recs[i], f, include_cold)) {
            if (hist_open(&w->cold))
                return -1;
            hist_add(&w->cold, f);
            continue;
        }
        lat_hist_t *h = &w->cls[hs_size_class(recs[i].size_bytes)];
        if (hist_open(h))
            return -1;
        hist_put(h, lat_hist_bin(f), us);
        sum_us += us;
        bytes += (double)recs[i].size_bytes;
        if (has_path)
            nll += path[i] == TRACE_F_PATH_LL;
    }
    w->bytes = bytes;
    w->nll = nll;
    w->main.sum_us = sum_us;
    return 0;
}

/* The classes' counts, and the main histogram's bins, count, min and max: its classes'
 * (every message in the figures is in one class). */
static void walk_main(pred_walk_t *w)
{
    for (unsigned k = 0; k < PRED_NCLASSES; k++)
        if (w->cls[k].bins)
            hist_merge_class(&w->main, &w->cls[k]);
}

hs_status_t pred_summarize(const trace_t *tr, const pred_opts_t *o, const pred_raw_t *raw,
                           uint64_t hint_bytes, pred_result_t *out)
{
    pred_walk_t w;
    hs_status_t st;
    double span_us;

    memset(out, 0, sizeof(*out));
    if (walk_init(&w))
        return HS_ERR_NOMEM;
    /* a trace of cold-start messages only is summarised on them: apart, none would be left */
    int include_cold = o->include_cold || pred_all_cold(tr);
    if (raw->path ? summarize_walk(tr, include_cold, raw, &w, 1)
                  : summarize_walk(tr, include_cold, raw, &w, 0)) {
        walk_free(&w);
        return HS_ERR_NOMEM;
    }
    walk_main(&w);
    out->hint_bytes = hint_bytes;
    fill_main(&w.main, &w.cold, out);
    span_us = raw->t_last_done_us - raw->t_first_post_us;
    out->throughput_gbps = span_us > 0 ? w.bytes * 8.0 / (span_us * 1e3) : 0;
    out->ll_fraction = w.main.n ? (double)w.nll / (double)w.main.n : 0;
    out->switches = raw->switches;
    out->drain_us_total = raw->drain_us_total;
    out->sq_full_stalls = raw->sq_full_stalls;
    out->costs = raw->costs;
    st = fill_classes(w.cls, out);
    walk_free(&w);
    return st;
}

hs_status_t pred_raw_alloc(pred_raw_t *raw, size_t n)
{
    n = n ? n : 1;
    memset(raw, 0, sizeof(*raw));
    raw->lat_us = hs_alloc_big(n * sizeof(*raw->lat_us));
    raw->path = hs_alloc_big(n * sizeof(*raw->path));
    if (raw->lat_us && raw->path)
        return HS_OK;
    pred_raw_free(raw);
    return HS_ERR_NOMEM;
}

void pred_raw_free(pred_raw_t *raw)
{
    free(raw->lat_us);
    free(raw->path);
    raw->lat_us = NULL;
    raw->path = NULL;
}

int pred_has_jitter(const profile_t *p)
{
    return p->jitter_p90_us > 0 || p->jitter_p99_us > 0 || p->jitter_p999_us > 0 ||
           p->jitter_long_p90_us > 0 || p->jitter_long_p99_us > 0 || p->jitter_long_p999_us > 0;
}

/* The two sets' points (pred_jitter_rule.h: pjr_points). */
static void jitter_sets(const profile_t *p, double v0[4], double v1[4])
{
    pjr_points(v0, p->jitter_p90_us, p->jitter_p99_us, p->jitter_p999_us);
    pjr_points(v1, p->jitter_long_p90_us, p->jitter_long_p99_us, p->jitter_long_p999_us);
}

double pred_jitter_at(const profile_t *p, double u)
{
    double v0[4], v1[4];

    jitter_sets(p, v0, v1);
    return pjr_quantile(v0, u);
}

double pred_jitter_long_at(const profile_t *p, double u)
{
    double v0[4], v1[4];

    jitter_sets(p, v0, v1);
    return pjr_quantile(v1, u);
}

double pred_jitter_weight(const profile_t *p, float lat_us)
{
    return pjr_weight(p->jitter_cycle_us, p->jitter_long_cycle_us, lat_us);
}

double pred_jitter_cycle_us(const pred_ctx_t *c, size_t i, float lat_us, double stall_us)
{
    int closed = c->o->mode == PRED_CLOSED;

    return pjr_cycle(lat_us, closed && i ? trace_think_ns(c->tr, i) * 1e-3 : 0,
                     c->p->jitter_think_reach, closed, stall_us);
}

double pred_jitter_for(const profile_t *p, double u, float lat_us, double cycle_us)
{
    double v0[4], v1[4];

    jitter_sets(p, v0, v1);
    return pjr_mix(&(pjr_sets_t){{v0, v1}, {p->jitter_cycle_us, p->jitter_long_cycle_us}}, u,
                   pred_jitter_weight(p, lat_us), cycle_us);
}

void pred_jitter_apply(const pred_ctx_t *c, const pred_raw_t *raw)
{
    const profile_t *p = c->p;
    double v0[4], v1[4], c0 = p->jitter_cycle_us, c1 = p->jitter_long_cycle_us;
    const pjr_sets_t sets = {{v0, v1}, {c0, c1}};

    if (!pred_has_jitter(p))
        return;
    jitter_sets(p, v0, v1);
    for (size_t i = 0; i < c->tr->n; i++) {
        uint64_t s = (uint64_t)i ^ 0x6a09e667f3bcc909ULL; /* message i's own draw */
        double u = (double)(hs_splitmix64(&s) >> 11) * 0x1.0p-53;
        float lat = raw->lat_us[i];
        double w = pjr_weight(c0, c1, lat);
        double stall_us = pjr_mix(&sets, 1.0, w, 1.0); /* the stall: J at 1 */
        double cyc = pred_jitter_cycle_us(c, i, lat, stall_us);
        raw->lat_us[i] = (float)(lat + pjr_mix(&sets, u, w, cyc));
    }
}

hs_status_t pred_run_into(const pred_ctx_t *c, uint64_t hint_bytes, const pred_raw_t *buf,
                          pred_result_t *out)
{
    pred_raw_t raw = {.lat_us = buf->lat_us, .path = buf->path};

    if (c->tr->n == 0) {
        hs_log_error("the trace has no records: nothing to predict");
        return HS_ERR_INVALID;
    }
    hs_status_t st = c->eng->replay(c->tr, c->p, c->o, hint_bytes, &raw);
    if (st != HS_OK)
        return st;
    pred_jitter_apply(c, &raw);
    return pred_summarize(c->tr, c->o, &raw, hint_bytes, out);
}

hs_status_t pred_run(const pred_ctx_t *c, uint64_t hint_bytes, int keep_lat, pred_result_t *out)
{
    pred_raw_t raw;
    hs_status_t st = pred_check_trace(c->tr, c->p, c->o);

    if (st != HS_OK)
        return st;
    st = pred_raw_alloc(&raw, c->tr->n); /* an empty trace: pred_run_into says so */
    if (st != HS_OK)
        return st; /* nothing left allocated */
    st = pred_run_into(c, hint_bytes, &raw, out);
    if (st != HS_OK)
        goto free_raw;
    if (keep_lat) {
        out->lat_us = raw.lat_us;
        raw.lat_us = NULL;
    }
free_raw:
    pred_raw_free(&raw);
    return st;
}

/* ---- several hints at once --------------------------------------------------------- */

typedef struct {
    const pred_ctx_t *c;
    const uint64_t *hints;
    pred_result_t *res;
    hs_status_t *st;
    size_t n, next, done;
    pthread_mutex_t lock;
    hs_progress_t *bar; /* NULL: no progress bar */
    int failed;         /* a hint failed (its error logged): the others not yet started stop */
} pred_pool_t;

/* One worker: hints in turn, replayed into per-message arrays of its own, allocated once
 * (a fresh pair per hint made the kernel fault in and zero 5 bytes per message every time:
 * hs_mem.h). */
static void *pool_worker(void *arg)
{
    pred_pool_t *pool = arg;
    pred_raw_t buf;
    hs_status_t have = pred_raw_alloc(&buf, pool->c->tr->n);

    for (;;) {
        pthread_mutex_lock(&pool->lock);
        size_t i = pool->next++;
        int stop = pool->failed;
        pthread_mutex_unlock(&pool->lock);
        if (i >= pool->n)
            break;
        if (stop) { /* an error was logged: the rest are not run */
            pool->st[i] = HS_ERR_INVALID;
            continue;
        }
        pool->st[i] = have;
        if (have == HS_OK)
            pool->st[i] = pred_run_into(pool->c, pool->hints[i], &buf, &pool->res[i]);
        pthread_mutex_lock(&pool->lock);
        pool->failed |= pool->st[i] != HS_OK;
        pool->done++;
        if (pool->bar)
            hs_progress_update(pool->bar, pool->done);
        pthread_mutex_unlock(&pool->lock);
    }
    pred_raw_free(&buf);
    return NULL;
}

static hs_status_t pool_run(pred_pool_t *pool, unsigned nthreads)
{
    pthread_t tid[64];
    unsigned started = 0;

    if (nthreads > 64)
        nthreads = 64;
    if (nthreads > pool->n)
        nthreads = (unsigned)pool->n;
    for (; started + 1 < nthreads; started++)
        if (pthread_create(&tid[started], NULL, pool_worker, pool) != 0)
            break;
    pool_worker(pool); /* this thread works too */
    for (unsigned t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    /* the first failure in hint order that ran (a hint that did not run says only that) */
    hs_status_t first = HS_OK;
    for (size_t i = 0; i < pool->n && first == HS_OK; i++)
        first = pool->st[i];
    return first;
}

unsigned pred_threads(unsigned asked)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    return asked ? asked : (unsigned)(ncpu > 0 ? ncpu : 1);
}

/* The WRs a message of size bytes takes on a path of segment seg (0: one). */
static uint64_t wrs_of(uint64_t size, double seg)
{
    return prules_nwr((uint64_t)seg, PRULES_NO_SHIFT, size);
}

int pred_all_cold(const trace_t *tr)
{
    for (size_t i = 0; i < tr->n; i++)
        if (!(tr->recs[i].flags & TRACE_F_COLD))
            return 0;
    return tr->n > 0;
}

hs_status_t pred_check_trace(const trace_t *tr, const profile_t *p, const pred_opts_t *o)
{
    const char *name = o && o->trace_name ? o->trace_name : "the trace";
    int closed = o && o->mode == PRED_CLOSED;
    double think = 0; /* closed loop: the think times so far, its span less the latencies */

    /* records are named by their index in the file (the trace may have been sorted) */
    for (size_t i = 0; i < tr->n; i++) {
        const trace_rec_t *r = &tr->recs[i];
        size_t fi = trace_file_index(tr, i);
        if (r->size_bytes > PRED_MAX_MSG_BYTES) {
            hs_log_error("%s: record %zu: size %llu bytes: a replay takes messages of up to "
                         "2^40 bytes (1 TiB)", name, fi, (unsigned long long)r->size_bytes);
            return HS_ERR_INVALID;
        }
        if (wrs_of(r->size_bytes, p->ll_seg_bytes) > UINT32_MAX ||
            wrs_of(r->size_bytes, p->bw_seg_bytes) > UINT32_MAX) {
            hs_log_error("%s: record %zu: size %llu bytes needs more than 2^32 - 1 work "
                         "requests of ll.seg_bytes=%.0f / bw.seg_bytes=%.0f", name, fi,
                         (unsigned long long)r->size_bytes, p->ll_seg_bytes, p->bw_seg_bytes);
            return HS_ERR_INVALID;
        }
        if (!closed && i && r->t_post_ns < tr->recs[i - 1].t_post_ns) {
            hs_log_error("%s: record %zu: posted at %llu ns, before record %zu (%llu ns): an "
                         "open-loop replay needs the records in post order", name, fi,
                         (unsigned long long)r->t_post_ns, trace_file_index(tr, i - 1),
                         (unsigned long long)tr->recs[i - 1].t_post_ns);
            return HS_ERR_INVALID;
        }
        if (!closed && r->t_post_ns - tr->recs[0].t_post_ns > PRED_MAX_SPAN_NS) {
            hs_log_error("%s: record %zu: posted %llu ns after the first record: an open-loop "
                         "replay takes traces of up to 2^50 ns (13 days) from first post to "
                         "last (its times are doubles of ns)", name, fi,
                         (unsigned long long)(r->t_post_ns - tr->recs[0].t_post_ns));
            return HS_ERR_INVALID;
        }
        if (closed && i && (think += trace_think_ns(tr, i)) > (double)PRED_MAX_SPAN_NS) {
            hs_log_error("%s: record %zu: the think times up to it add up to %.0f ns: a "
                         "closed-loop replay takes up to 2^50 ns (13 days) of them (its times "
                         "are doubles of ns)", name, fi, think);
            return HS_ERR_INVALID;
        }
        if (closed && i + 1 < tr->n && r->t_done_ns == TRACE_TIME_UNKNOWN) {
            hs_log_error("%s: closed-loop replay needs completion times: record %zu has none "
                         "(use --mode open)", name, fi);
            return HS_ERR_INVALID;
        }
    }
    return HS_OK;
}

hs_status_t pred_run_hints(const pred_ctx_t *c, const uint64_t *hints, size_t n,
                           unsigned nthreads, pred_result_t *results, hs_progress_t *bar)
{
    pred_pool_t pool = {.c = c, .hints = hints, .res = results, .n = n,
                        .lock = PTHREAD_MUTEX_INITIALIZER, .bar = bar};
    hs_status_t st;

    if (n == 0)
        return HS_OK;
    /* checked once here, or each hint's replay would say it again */
    if ((st = pred_check_trace(c->tr, c->p, c->o)) != HS_OK)
        return st;
    pool.st = calloc(n, sizeof(*pool.st));
    if (!pool.st)
        return HS_ERR_NOMEM;
    st = pool_run(&pool, nthreads ? nthreads : 1);
    free(pool.st);
    return st;
}
