/* test_pred_jitter.c - the jitter quantiles (model/MODEL.md section 8): the quantile
 * function, its effect on a closed-loop trace's percentiles in both engines, and nothing
 * when the profile has none. Expected values come from the profile's numbers and the rule,
 * not from the code's output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "sim/sim.h"
#include "tests/hs_test.h"

#define NMSG 20000

static trace_t *closed_trace(void)
{
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < NMSG; i++) {
        trace_rec_t r = {.t_post_ns = 0, .t_done_ns = 0, .size_bytes = 64}; /* no think time */
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

static profile_t *jitter_profile(double p90, double p99, double p999)
{
    profile_t *p = NULL;
    char set[64];

    assert_int_equal(profile_load("generic", &p), HS_OK);
    snprintf(set, sizeof(set), "jitter.p90_us=%g", p90);
    assert_int_equal(profile_set(p, set), HS_OK);
    snprintf(set, sizeof(set), "jitter.p99_us=%g", p99);
    assert_int_equal(profile_set(p, set), HS_OK);
    snprintf(set, sizeof(set), "jitter.p999_us=%g", p999);
    assert_int_equal(profile_set(p, set), HS_OK);
    return p;
}

static void test_quantile_function(void **state)
{
    profile_t *p = jitter_profile(10, 50, 200), *bad = jitter_profile(30, 20, 10);
    (void)state;
    assert_true(pred_has_jitter(p));
    assert_float_equal(pred_jitter_at(p, 0.0), 0, 0);
    assert_float_equal(pred_jitter_at(p, 0.5), 0, 0);
    assert_float_equal(pred_jitter_at(p, 0.7), 5, 1e-12);     /* halfway to p90 */
    assert_float_equal(pred_jitter_at(p, 0.9), 10, 1e-12);
    assert_float_equal(pred_jitter_at(p, 0.945), 30, 1e-9);   /* halfway to p99 */
    assert_float_equal(pred_jitter_at(p, 0.99), 50, 1e-9);
    assert_float_equal(pred_jitter_at(p, 0.9999), 200, 0);
    /* quantiles that fall are raised to the one before: never a falling function */
    assert_float_equal(pred_jitter_at(bad, 0.995), 30, 0);
    assert_float_equal(pred_jitter_at(bad, 0.9999), 30, 0);
    profile_free(bad);
    profile_free(p);
}

/* Every message of a closed loop of identical messages has the same modelled latency L; the
 * jitter makes the trace's percentiles L + the profile's quantiles, the median stays L. */
static void check_engine(const pred_engine_ops_t *eng)
{
    trace_t *tr = closed_trace();
    profile_t *none = NULL, *p = jitter_profile(10, 50, 200);
    pred_opts_t o = {.mode = PRED_CLOSED, .include_cold = 1};
    pred_result_t r0, r;
    double L;

    assert_int_equal(profile_load("generic", &none), HS_OK);
    assert_false(pred_has_jitter(none));
    assert_int_equal(pred_run(&(pred_ctx_t){eng, tr, none, &o}, 4096, 0, &r0), HS_OK);
    L = r0.p50_us;
    assert_float_equal(r0.p99_us, L, L * 0.005); /* no jitter: every message the same */
    assert_int_equal(pred_run(&(pred_ctx_t){eng, tr, p, &o}, 4096, 0, &r), HS_OK);
    /* the histogram's 0.4% and the draws' own spread over 20000 messages (u_(k) of the
     * 99th percentile within about +-0.0015 of 0.99: +-7 us of the 40 us between p90 and
     * p99 at 0.445 us per 0.001 of u below it, +-0.25 us... above: 150 us per 0.009) */
    assert_float_equal(r.p50_us, L, L * 0.005 + 0.06); /* J(0.504) = 0.05 us */
    assert_float_equal(r.p90_us, L + 10, 0.5 + 0.004 * (L + 10));
    assert_float_equal(r.p99_us, L + 50, 2.0 + 0.004 * (L + 50));
    assert_true(r.p999_us > L + 50 && r.p999_us <= (L + 200) * 1.004);
    /* the mean: L + the mean of the quantile function (0.4 x 5 + 0.09 x 30 + 0.009 x 125
     * + 0.001 x 200 = 6.025 us) */
    assert_float_equal(r.mean_us, L + 6.025, 0.25);
    pred_result_release(&r0);
    pred_result_release(&r);
    profile_free(p);
    profile_free(none);
    trace_free(tr);
}

static void test_model(void **state)
{
    (void)state;
    check_engine(&model_engine_ops);
}

static void test_sim(void **state)
{
    (void)state;
    check_engine(&sim_engine_ops);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantile_function),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
