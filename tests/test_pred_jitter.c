/* test_pred_jitter.c - the jitter quantiles (model/MODEL.md section 8): the quantile
 * function, its effect on a closed-loop trace's percentiles in both engines, nothing when
 * the profile has none, and the tail's share scaled by each message's cycle. Expected values come from the profile's numbers and the rule,
 * not from the code's output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "sim/sim.h"
#include "tests/hs_test.h"

#define NMSG 20000

/* NMSG messages of 64 B, each posted think_ns after the one before completed (open loop:
 * posted every period_ns, far apart). */
static trace_t *spaced_trace(uint64_t think_ns, uint64_t period_ns)
{
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < NMSG; i++) {
        uint64_t t = i * period_ns;
        trace_rec_t r = {.t_post_ns = t, .t_done_ns = t + period_ns - think_ns, .size_bytes = 64};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

static trace_t *closed_trace(void)
{
    return spaced_trace(0, 0); /* no think time */
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

/* The cycle and the scaled quantile, from the rule: cycle = latency + the stall's reach
 * before the post (closed: the think time, at most the stall; open: the stall); the tail's
 * share scales by cycle / jitter.cycle_us. */
static void test_cycle_rule(void **state)
{
    trace_t *tr = spaced_trace(30000, 1000000); /* think 30 us */
    profile_t *p = jitter_profile(10, 50, 200);
    pred_opts_t closed = {.mode = PRED_CLOSED}, open = {.mode = PRED_OPEN};
    pred_ctx_t cc = {.tr = tr, .p = p, .o = &closed}, co = {.tr = tr, .p = p, .o = &open};
    (void)state;
    assert_float_equal(pred_jitter_cycle_us(&cc, 0, 40, 200), 40, 0);
    assert_float_equal(pred_jitter_cycle_us(&cc, 5, 40, 200), 70, 1e-12);
    assert_float_equal(pred_jitter_cycle_us(&cc, 5, 40, 20), 60, 1e-12);
    assert_float_equal(pred_jitter_cycle_us(&co, 5, 40, 200), 240, 0);
    /* jitter.think_reach: that share of the think time, still at most the stall; open loop
     * keeps the whole stall */
    assert_int_equal(profile_set(p, "jitter.think_reach=0.25"), HS_OK);
    assert_float_equal(pred_jitter_cycle_us(&cc, 5, 40, 200), 47.5, 1e-12);
    assert_float_equal(pred_jitter_cycle_us(&cc, 5, 40, 5), 45, 1e-12);
    assert_float_equal(pred_jitter_cycle_us(&co, 5, 40, 200), 240, 0);
    assert_int_equal(profile_set(p, "jitter.think_reach=0"), HS_OK);
    assert_float_equal(pred_jitter_cycle_us(&cc, 5, 40, 200), 40, 0);
    assert_int_equal(profile_set(p, "jitter.think_reach=1"), HS_OK);
    /* no jitter.cycle_us: the quantile as it is */
    assert_float_equal(pred_jitter_for(p, 0.995, 40, 500), pred_jitter_at(p, 0.995), 0);
    assert_int_equal(profile_set(p, "jitter.cycle_us=50"), HS_OK);
    /* a cycle of 100 us, twice the measured one: the top 1% is the top 0.5%'s jitter */
    assert_float_equal(pred_jitter_for(p, 0.99, 40, 100), pred_jitter_at(p, 0.995), 1e-12);
    assert_float_equal(pred_jitter_for(p, 0.99, 40, 100), 50 + 150 * 5.0 / 9, 1e-9);
    /* half the cycle: half the share in the tail; the same cycle: the quantile unchanged */
    assert_float_equal(pred_jitter_for(p, 0.995, 40, 25), pred_jitter_at(p, 0.99), 1e-12);
    assert_float_equal(pred_jitter_for(p, 0.93, 40, 50), pred_jitter_at(p, 0.93), 1e-12);
    /* the body below the stall's 1% keeps its shape in what is left: a tenth of the cycle
     * leaves it 99.9% (u 0.6 -> 0.6 x 0.99 / 0.999); twice the cycle, 98% (the median moves
     * to 0.5 x 0.99 / 0.98, an eighth of a us of jitter, not the p90's half) */
    assert_float_equal(pred_jitter_for(p, 0.6, 40, 5), pred_jitter_at(p, 0.6 * 0.99 / 0.999),
                       1e-12);
    assert_float_equal(pred_jitter_for(p, 0.6, 40, 5), 10 * (0.6 * 0.99 / 0.999 - 0.5) / 0.4,
                       1e-9);
    assert_float_equal(pred_jitter_for(p, 0.5, 40, 100), 10 * (0.5 * 0.99 / 0.98 - 0.5) / 0.4,
                       1e-9);
    /* a long set measured at a cycle of 150 us: below 50 us of latency the first set, above
     * 150 the long one, between them both interpolated by the latency; each set's share
     * scaled by the cycle over its own */
    assert_int_equal(profile_set(p, "jitter.long_p90_us=30"), HS_OK);
    assert_int_equal(profile_set(p, "jitter.long_p99_us=150"), HS_OK);
    assert_int_equal(profile_set(p, "jitter.long_p999_us=400"), HS_OK);
    assert_int_equal(profile_set(p, "jitter.long_cycle_us=150"), HS_OK);
    assert_float_equal(pred_jitter_weight(p, 40), 0, 0);
    assert_float_equal(pred_jitter_weight(p, 75), 0.25, 1e-12);
    assert_float_equal(pred_jitter_weight(p, 1e6), 1, 0);
    assert_float_equal(pred_jitter_for(p, 0.99, 40, 100), 50 + 150 * 5.0 / 9, 1e-9);
    assert_float_equal(pred_jitter_for(p, 0.99, 150, 150), 150, 1e-9);
    assert_float_equal(pred_jitter_for(p, 0.99, 150, 300), 150 + 250 * 5.0 / 9, 1e-9);
    /* latency 100 us, cycle 100: the first set's share x 2 (J0(0.995)), the long set's x 2/3
     * (J1(0.985) = 30 + 120 x 85 / 90), half of each */
    assert_float_equal(pred_jitter_for(p, 0.99, 100, 100),
                       0.5 * (50 + 150 * 5.0 / 9) + 0.5 * (30 + 120 * 85.0 / 90), 1e-9);
    assert_float_equal(pred_jitter_for(p, 1.0, 100, 1), 0.5 * 200 + 0.5 * 400, 1e-9);
    profile_free(p);
    trace_free(tr);
}

/* The share of messages at least `above` us over the modelled latency L. */
static double share_over(const pred_result_t *r, size_t n, double L, double above)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        k += r->lat_us[i] >= L + above - 1e-3;
    return (double)k / (double)n;
}

/* In both engines and both modes, the share of messages with at least p99's jitter (50 us)
 * is 1% times the cycle over jitter.cycle_us (binomial spread over 20000 draws: 0.1% at 2%). */
static void check_cycle_share(const pred_engine_ops_t *eng, pred_mode_t mode, double times)
{
    trace_t *tr = spaced_trace(100000, 1000000); /* think 100 us, posts 1 ms apart */
    profile_t *none = NULL, *p = jitter_profile(10, 50, 200);
    pred_opts_t o = {.mode = mode, .include_cold = 1};
    pred_result_t r0, r;
    char set[64];
    double L, reach = mode == PRED_CLOSED ? 100 : 200;

    assert_int_equal(profile_load("generic", &none), HS_OK);
    assert_int_equal(pred_run(&(pred_ctx_t){eng, tr, none, &o}, 4096, 0, &r0), HS_OK);
    L = r0.p50_us;
    assert_float_equal(r0.p99_us, L, L * 0.005);
    snprintf(set, sizeof(set), "jitter.cycle_us=%.17g", (L + reach) / times);
    assert_int_equal(profile_set(p, set), HS_OK);
    assert_int_equal(pred_run(&(pred_ctx_t){eng, tr, p, &o}, 4096, 1, &r), HS_OK);
    assert_float_equal(share_over(&r, NMSG, L, 50), 0.01 * times, 0.0015 * sqrt(times) + 1e-3);
    assert_float_equal(share_over(&r, NMSG, L, 200), 0.001 * times, 0.0006 * sqrt(times));
    pred_result_release(&r0);
    pred_result_release(&r);
    profile_free(p);
    profile_free(none);
    trace_free(tr);
}

static void test_cycle_share_model(void **state)
{
    (void)state;
    check_cycle_share(&model_engine_ops, PRED_CLOSED, 2);
    check_cycle_share(&model_engine_ops, PRED_CLOSED, 0.5);
    check_cycle_share(&model_engine_ops, PRED_OPEN, 4);
}

static void test_cycle_share_sim(void **state)
{
    (void)state;
    check_cycle_share(&sim_engine_ops, PRED_CLOSED, 2);
    check_cycle_share(&sim_engine_ops, PRED_OPEN, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantile_function),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_sim),
        cmocka_unit_test(test_cycle_rule),
        cmocka_unit_test(test_cycle_share_model),
        cmocka_unit_test(test_cycle_share_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
