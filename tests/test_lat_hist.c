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
        h->bins[lat_hist_bin(v[i])]++;
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
    memset(&tr, 0, sizeof(tr));
    memset(&o, 0, sizeof(o));
    tr.n = n;
    tr.recs = calloc(n, sizeof(*tr.recs));
    assert_int_equal(pred_raw_alloc(&raw, n), HS_OK);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decades),
        cmocka_unit_test(test_tail_and_ties),
        cmocka_unit_test(test_summarize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
