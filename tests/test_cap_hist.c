/* test_cap_hist.c - the live runs' duration histogram (capture/cap_hist.h): every
 * percentile within its 3% bin of the exact nearest-rank one, never above the max, the max
 * exact, small values exact, an empty histogram 0. */
#include <math.h>
#include <stdlib.h>

#include "capture/cap_hist.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Seeded log-uniform durations from 1 ns to about 2^40 ns: each percentile of the
 * histogram against the exact nearest-rank value of the sorted samples. */
static void test_pctl_within_bin(void **state)
{
    enum { N = 20000 };
    static const double qs[] = {0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0};
    uint64_t *v = malloc(N * sizeof(*v)), s = 0x9e3779b97f4a7c15ull;
    cap_hist_t *h = calloc(1, sizeof(*h));
    (void)state;
    assert_non_null(v);
    assert_non_null(h);
    for (size_t i = 0; i < N; i++) {
        hs_xorshift64(&s);
        v[i] = (uint64_t)exp2((double)(s % 40000) / 1000.0);
        cap_hist_add(h, v[i]);
    }
    qsort(v, N, sizeof(*v), cmp_u64);
    assert_int_equal(h->n, N);
    assert_true(cap_hist_max_us(h) == (double)v[N - 1] / 1e3);
    for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
        double exact = (double)v[(size_t)ceil(qs[k] * N) - 1] / 1e3;
        double got = cap_hist_pctl_us(h, qs[k]);
        assert_true(got <= cap_hist_max_us(h));
        assert_true(fabs(got - exact) <= exact / 32 + 1e-3);
    }
    free(v);
    free(h);
}

static void test_small_and_empty(void **state)
{
    cap_hist_t *h = calloc(1, sizeof(*h));
    (void)state;
    assert_non_null(h);
    assert_true(cap_hist_pctl_us(h, 0.5) == 0);
    for (uint64_t ns = 1; ns <= 31; ns++) /* below one octave of bins: one bin per ns */
        cap_hist_add(h, ns);
    assert_true(fabs(cap_hist_pctl_us(h, 0.5) - 16e-3) < 1e-12);
    assert_true(fabs(cap_hist_pctl_us(h, 1.0) - 31e-3) < 1e-12);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pctl_within_bin),
        cmocka_unit_test(test_small_and_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
