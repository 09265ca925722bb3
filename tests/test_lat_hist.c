/* test_lat_hist.c - the streaming latency histogram (model/lat_hist.h) against exact
 * quantiles: every percentile the summariser reports is within LAT_HIST_REL_ERR of the exact
 * nearest-rank order statistic, for latencies spread over many decades, for heavy tails and
 * for ties; and pred_summarize (every engine's figures, the CPU sweep's too) reports what
 * the histogram gives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "hs_test.h"
#include "model/lat_hist.h"
#include "model/predict/predict.h"

/* The bound, with room for the float rounding of a latency before it is binned (2^-24). */
#define BOUND (LAT_HIST_REL_ERR * (1.0 + 1e-6))

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static double uniform01(void)
{
    return (double)(hs_xorshift64(&g_rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* Exact nearest-rank percentile of sorted v[0..n). */
static double exact_pct(const double *sorted, size_t n, double q)
{
    uint64_t rank = (uint64_t)ceil(q * (double)n);
    return sorted[(rank < 1 ? 1 : rank) - 1];
}

typedef struct {
    uint32_t *bins;
    uint64_t n;
    double min, max;
} hist_t;

static void hist_fill(hist_t *h, const double *v, size_t n)
{
    h->bins = calloc(LAT_HIST_NBINS, sizeof(*h->bins));
    assert_non_null(h->bins);
    h->n = n;
    h->min = INFINITY;
    h->max = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        h->bins[lat_hist_bin((float)v[i])]++;
        h->min = fmin(h->min, v[i]);
        h->max = fmax(h->max, v[i]);
    }
}

/* Every q of a fine grid (and the tails) within the bound of the exact quantile; returns the
 * worst relative error seen. */
static double check_quantiles(double *v, size_t n)
{
    static const double tails[] = {0.5, 0.9, 0.99, 0.999, 0.9999, 1e-9, 1.0};
    hist_t h;
    double worst = 0;

    hist_fill(&h, v, n);
    qsort(v, n, sizeof(*v), hs_cmp_double);
    for (int k = 0; k <= 1000 + 7; k++) {
        double q = k <= 1000 ? k / 1000.0 : tails[k - 1001];
        double e = exact_pct(v, n, q), got = lat_hist_pct(h.bins, h.n, h.min, h.max, q);
        double rel = fabs(got - e) / e;
        if (rel > BOUND)
            fail_msg("q=%g: histogram %.17g, exact %.17g: relative error %g > %g", q, got, e,
                     rel, BOUND);
        worst = fmax(worst, rel);
    }
    free(h.bins);
    return worst;
}

/* Log-uniform over 1 ns .. 1e9 us (15 decades): every octave's bins are exercised. */
static void test_decades(void **state)
{
    size_t n = 200000;
    double *v = malloc(n * sizeof(*v));

    (void)state;
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(float)(0.002 * pow(10.0, 15.0 * uniform01()));
    double worst = check_quantiles(v, n);
    /* the bound is tight: over 1000 quantiles some land near a bin's edge */
    assert_true(worst > LAT_HIST_REL_ERR * 0.5);
    free(v);
}

/* A narrow body and a heavy tail (what an overloaded replay gives), and many ties. */
static void test_tail_and_ties(void **state)
{
    size_t n = 100000;
    double *v = malloc(n * sizeof(*v));

    (void)state;
    for (size_t i = 0; i < n; i++) {
        double u = uniform01();
        v[i] = (double)(float)(u < 0.98 ? 3.0 + 0.01 * uniform01() : 3.0 / pow(uniform01(), 2));
    }
    check_quantiles(v, n);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(float)(1.0 + (double)(i % 7));
    check_quantiles(v, n);
    free(v);
}

/* A trace of n zeroed records, its replay's arrays and default options, for pred_summarize
 * (the caller fills sizes, flags and latencies). */
static void summary_input(trace_t *tr, pred_raw_t *raw, pred_opts_t *o, size_t n)
{
    memset(tr, 0, sizeof(*tr));
    memset(o, 0, sizeof(*o));
    tr->n = n;
    tr->recs = calloc(n, sizeof(*tr->recs));
    assert_non_null(tr->recs);
    assert_int_equal(pred_raw_alloc(raw, n), HS_OK);
}

/* pred_summarize's p50/p99 and mean over latencies handed to it: the histogram's
 * percentiles, within the bound of the exact ones, and the exact mean. */
static void test_summarize(void **state)
{
    size_t n = 50000;
    trace_t tr;
    pred_raw_t raw;
    pred_opts_t o;
    pred_result_t res;
    double *v = malloc(n * sizeof(*v)), sum = 0;

    (void)state;
    summary_input(&tr, &raw, &o, n);
    for (size_t i = 0; i < n; i++) {
        tr.recs[i].size_bytes = 64;
        raw.lat_us[i] = (float)(0.5 * pow(10.0, 4.0 * uniform01()));
        raw.path[i] = TRACE_F_PATH_LL;
        v[i] = raw.lat_us[i];
        sum += v[i];
    }
    raw.t_last_done_us = 1000;
    assert_int_equal(pred_summarize(&tr, &o, &raw, 0, &res), HS_OK);
    qsort(v, n, sizeof(*v), hs_cmp_double);
    assert_true(fabs(res.p50_us - exact_pct(v, n, 0.5)) <= BOUND * exact_pct(v, n, 0.5));
    assert_true(fabs(res.p99_us - exact_pct(v, n, 0.99)) <= BOUND * exact_pct(v, n, 0.99));
    assert_true(res.p50_us != exact_pct(v, n, 0.5) || res.p99_us != exact_pct(v, n, 0.99));
    assert_true(res.mean_us == sum / (double)n);
    assert_true(res.ll_fraction == 1.0);
    pred_result_release(&res);
    pred_raw_free(&raw);
    free(tr.recs);
    free(v);
}

/* pred_summarize on messages of many size classes, with cold-start messages (apart) and
 * unmeasured ones (NaN: left out): the main figures are those of the messages in the figures
 * whatever class holds them (the summariser merges its classes' histograms into the main
 * one), each class's figures its own messages', the mean and the bytes summed in message
 * order, the cold figures the cold messages'. */
static void test_summarize_classes(void **state)
{
    size_t n = 60000, nin = 0, ncold = 0, nll = 0;
    trace_t tr;
    pred_raw_t raw;
    pred_opts_t o;
    pred_result_t res;
    double *in = malloc(n * sizeof(*in)), *cold = malloc(n * sizeof(*cold));
    double *cls = malloc(n * sizeof(*cls)), sum = 0, bytes = 0;
    size_t per_class[HS_SIZE_CLASSES] = {0}, covered = 0;

    (void)state;
    summary_input(&tr, &raw, &o, n);
    for (size_t i = 0; i < n; i++) {
        double u = uniform01();
        tr.recs[i].size_bytes = (uint64_t)pow(2.0, 24.0 * uniform01());
        tr.recs[i].flags = u < 0.1 ? TRACE_F_COLD : 0;
        unsigned k = hs_size_class(tr.recs[i].size_bytes);
        /* each class its own scale (the largest in a middle class, not the last merged) */
        raw.lat_us[i] = u > 0.99 ? NAN : (float)((1.0 + (k * 3) % 17) * pow(10.0, 3.0 * uniform01()));
        raw.path[i] = uniform01() < 0.3 ? TRACE_F_PATH_LL : TRACE_F_PATH_BW;
        if (isnan(raw.lat_us[i]))
            continue;
        if (tr.recs[i].flags & TRACE_F_COLD) {
            cold[ncold++] = raw.lat_us[i];
            continue;
        }
        in[nin++] = raw.lat_us[i];
        sum += raw.lat_us[i];
        bytes += (double)tr.recs[i].size_bytes;
        nll += raw.path[i] == TRACE_F_PATH_LL;
        per_class[k]++;
    }
    raw.t_first_post_us = 0;
    raw.t_last_done_us = 1000;
    assert_int_equal(pred_summarize(&tr, &o, &raw, 4096, &res), HS_OK);
    qsort(in, nin, sizeof(*in), hs_cmp_double);
    qsort(cold, ncold, sizeof(*cold), hs_cmp_double);
    assert_int_equal(res.count, nin);
    assert_true(res.max_us == in[nin - 1]);
    const double qs[] = {0.5, 0.9, 0.99, 0.999};
    const double got[] = {res.p50_us, res.p90_us, res.p99_us, res.p999_us};
    for (size_t j = 0; j < 4; j++)
        assert_true(fabs(got[j] - exact_pct(in, nin, qs[j])) <= BOUND * exact_pct(in, nin, qs[j]));
    assert_true(res.mean_us == sum / (double)nin);
    assert_true(res.throughput_gbps == bytes * 8.0 / (1000.0 * 1e3));
    assert_true(res.ll_fraction == (double)nll / (double)nin);
    assert_int_equal(res.cold_count, ncold);
    assert_true(res.cold_max_us == cold[ncold - 1]);
    assert_true(fabs(res.cold_p50_us - exact_pct(cold, ncold, 0.5)) <=
                BOUND * exact_pct(cold, ncold, 0.5));
    assert_true(res.nclasses > 10);
    for (size_t c = 0; c < res.nclasses; c++) {
        const pred_class_t *pc = &res.classes[c];
        unsigned k = hs_size_class(pc->min_bytes);
        size_t m = 0;
        assert_int_equal(pc->count, per_class[k]);
        for (size_t i = 0; i < n; i++)
            if (hs_size_class(tr.recs[i].size_bytes) == k && !isnan(raw.lat_us[i]) &&
                !(tr.recs[i].flags & TRACE_F_COLD))
                cls[m++] = raw.lat_us[i];
        qsort(cls, m, sizeof(*cls), hs_cmp_double);
        assert_true(fabs(pc->p50_us - exact_pct(cls, m, 0.5)) <= BOUND * exact_pct(cls, m, 0.5));
        assert_true(fabs(pc->p99_us - exact_pct(cls, m, 0.99)) <= BOUND * exact_pct(cls, m, 0.99));
        covered += pc->count;
    }
    assert_int_equal(covered, nin);
    /* without the replay's paths (a measured run's raw): the same figures, no LL share */
    pred_result_t nopath;
    uint8_t *pathv = raw.path;
    raw.path = NULL;
    assert_int_equal(pred_summarize(&tr, &o, &raw, 4096, &nopath), HS_OK);
    raw.path = pathv;
    assert_true(nopath.ll_fraction == 0 && nopath.p99_us == res.p99_us &&
                nopath.mean_us == res.mean_us && nopath.count == res.count);
    pred_result_release(&nopath);
    pred_result_release(&res);
    pred_raw_free(&raw);
    free(tr.recs);
    free(in);
    free(cold);
    free(cls);
}

/* The bin as lat_hist.h defines it, written from the definition: the float of the latency
 * in units of LAT_HIST_MIN_US, its exponent and top 7 mantissa bits. */
static size_t bin_ref(double us)
{
    if (!(us > LAT_HIST_MIN_US))
        return 0;
    int e;
    double m = frexp((double)(float)(us / LAT_HIST_MIN_US), &e); /* in [0.5, 1) */
    if (isinf(m) || e - 1 >= LAT_HIST_OCTAVES)
        return LAT_HIST_NBINS - 1;
    return (size_t)(e - 1) * LAT_HIST_BINS_PER_OCTAVE +
           (size_t)((m * 2 - 1) * LAT_HIST_BINS_PER_OCTAVE);
}

/* lat_hist_bin gives the definition's bin for a float, and for a double through its float
 * (what a caller holding a double bins): at the edges (NaN, 0, the bound and its neighbours,
 * the top of the range, infinity) and for latencies at random over the whole range, doubles
 * that are not floats included. */
static void test_bin_float(void **state)
{
    (void)state;
    const double edges[] = {NAN, -1.0, 0.0, LAT_HIST_MIN_US, nextafter(LAT_HIST_MIN_US, 1.0),
                            (double)nextafterf((float)LAT_HIST_MIN_US, 1.0f), 1.0, 3.0e16,
                            ldexp(1.0, 54), ldexp(1.0, 54) * 0.999, 1e30, 1e39, INFINITY};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        assert_int_equal(lat_hist_bin((float)edges[i]), bin_ref(edges[i]));
    for (int i = 0; i < 1000000; i++) {
        double us = LAT_HIST_MIN_US * 0.5 * exp2(uniform01() * 70.0);
        assert_int_equal(lat_hist_bin((float)us), bin_ref(us));
        assert_int_equal(lat_hist_bin((float)us), bin_ref((float)us));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bin_float),
        cmocka_unit_test(test_decades),
        cmocka_unit_test(test_tail_and_ties),
        cmocka_unit_test(test_summarize),
        cmocka_unit_test(test_summarize_classes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
