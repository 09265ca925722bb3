/* test_model_seeds.c - the source documents reproduced with the built-in profiles
 * (seeds/FACTS.md): seed 003's tx-depth table within 10% (and the 512/2048 drop comes from
 * the L1 term), seed 000's round trips and 2 MB bandwidth, and seed 000's pitfall 1 on a
 * dense medium-burst workload that no parameter was fitted to.
 *
 * Where one profile cannot hold every figure, the profile's notes say so with numbers; the
 * checks below use the document's figure and the 10% tolerance of issue 3. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "tests/hs_test.h"

static trace_t *stream(uint64_t size, size_t n, uint64_t gap_ns, int with_done)
{
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < n; i++) {
        trace_rec_t r = {.t_post_ns = i * gap_ns, .size_bytes = size,
                         .t_done_ns = with_done ? i * gap_ns : TRACE_TIME_UNKNOWN};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

static pred_result_t run(const char *prof, const char *const *sets, const trace_t *tr,
                         uint64_t hint, pred_mode_t mode)
{
    profile_t *p = NULL;
    pred_opts_t o = {.mode = mode};
    pred_result_t r;

    assert_int_equal(profile_load(prof, &p), HS_OK);
    for (; sets && *sets; sets++)
        assert_int_equal(profile_set(p, *sets), HS_OK);
    assert_int_equal(pred_run(&(pred_ctx_t){&model_engine_ops, tr, p, &o}, hint, 0, &r), HS_OK);
    profile_free(p);
    return r;
}

static void within(double got, double want, double tol, const char *what)
{
    double err = fabs(got - want) / want;
    printf("  %-40s model %9.3f  document %9.3f  (%+.1f%%)\n", what, got, want,
           100 * (got - want) / want);
    assert_true(err <= tol);
}

/* Seed 003, row D: 4 KB, 1 QP, depth 64/128/512/2048 (ib_write_bw back-to-back). */
static void test_seed003_4k(void **state)
{
    (void)state;
    static const char *const depth[] = {"bw.depth=64", "bw.depth=128", "bw.depth=512",
                                        "bw.depth=2048"};
    static const double want[] = {50.97, 77.80, 72.93, 73.87};
    trace_t *tr = stream(4096, 200000, 0, 0);
    double got[4];

    for (int i = 0; i < 4; i++) {
        const char *sets[] = {depth[i], NULL};
        pred_result_t r = run("seed003", sets, tr, 0, PRED_OPEN);
        got[i] = r.throughput_gbps;
        within(got[i], want[i], 0.10, depth[i]);
        pred_result_release(&r);
    }
    assert_true(got[0] < got[1]);              /* too shallow: waits for CQEs */
    assert_true(got[2] < got[1] * 0.99);       /* the drop at 512 ... */
    assert_true(got[3] < got[1] * 0.99);       /* ... and 2048 */
    /* the drop is the L1 term: without it 512 and 2048 match 128 */
    for (int i = 2; i < 4; i++) {
        const char *sets[] = {depth[i], "host.sq_lines_per_post=0", NULL};
        pred_result_t r = run("seed003", sets, tr, 0, PRED_OPEN);
        assert_float_equal(r.throughput_gbps, got[1], 1e-3 * got[1]);
        assert_true(r.costs.l1_us == 0);
        pred_result_release(&r);
    }
    trace_free(tr);
}

/* Seed 003, rows A-C: 1 MB, 4 QPs, depth 64/128/512: no difference. */
static void test_seed003_1m(void **state)
{
    (void)state;
    static const char *const depth[] = {"bw.depth=64", "bw.depth=128", "bw.depth=512"};
    static const double want[] = {50.97, 50.68, 50.85};
    trace_t *tr = stream(1 << 20, 20000, 0, 0);

    for (int i = 0; i < 3; i++) {
        const char *sets[] = {depth[i], "conn.qps=4", NULL};
        pred_result_t r = run("seed003", sets, tr, 0, PRED_OPEN);
        within(r.throughput_gbps, want[i], 0.10, depth[i]);
        pred_result_release(&r);
    }
    trace_free(tr);
}

/* Seed 000: ping-pong round trips (closed loop, one size). */
static void test_seed000_round_trips(void **state)
{
    (void)state;
    trace_t *t8 = stream(8, 1000, 1000000, 1), *t16 = stream(16384, 1000, 1000000, 1);
    pred_result_t r;

    r = run("seed000", NULL, t8, 0, PRED_CLOSED);
    within(r.p50_us, 5.1, 0.10, "8 B, hint 0 (us)");
    pred_result_release(&r);
    uint64_t hints[] = {8192, 65536};
    for (int i = 0; i < 2; i++) {
        r = run("seed000", NULL, t8, hints[i], PRED_CLOSED);
        printf("  8 B, hint %llu: %.3f us (document: below 3 us)\n",
               (unsigned long long)hints[i], r.p50_us);
        assert_true(r.p50_us < 3.0);
        pred_result_release(&r);
    }
    r = run("seed000", NULL, t16, 8192, PRED_CLOSED);
    within(r.p50_us, 18.1, 0.10, "16 KB, hint 8 KB (us)");
    pred_result_release(&r);
    r = run("seed000", NULL, t16, 65536, PRED_CLOSED);
    within(r.p50_us, 11.9, 0.10, "16 KB, hint 64 KB (us)");
    pred_result_release(&r);
    trace_free(t8);
    trace_free(t16);
}

/* Seed 000: 2 MB aggregate bandwidth about 12% lower with hint 8 KB than without. */
static void test_seed000_2m_bandwidth(void **state)
{
    (void)state;
    trace_t *tr = stream(2u << 20, 300, 0, 0);
    pred_result_t r0 = run("seed000", NULL, tr, 0, PRED_OPEN);
    pred_result_t r8 = run("seed000", NULL, tr, 8192, PRED_OPEN);
    double loss = 1 - r8.throughput_gbps / r0.throughput_gbps;

    within(loss, 0.12, 0.10, "2 MB bandwidth loss at hint 8 KB");
    pred_result_release(&r0);
    pred_result_release(&r8);
    trace_free(tr);
}

/* Pitfall 1, not fitted: 8 B background every 20 us, and every 300 requests a burst of 64
 * messages of 256 B-4 KB, one per microsecond. Hint 64 KB puts the bursts on the shallow
 * LL queue (per-message events, depth 16): p99 >= 3x p50 and stalls. Hint 0 keeps them on
 * the deep, moderated BW path: no stalls, p99 < 3x p50. */
static trace_t *burst_trace(uint64_t burst_gap_ns)
{
    trace_t *tr = NULL;
    uint64_t t = 0;
    unsigned s = 1;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (int cycle = 0; cycle < 200; cycle++) {
        for (int i = 0; i < 300; i++, t += 20000) {
            trace_rec_t r = {.t_post_ns = t, .t_done_ns = TRACE_TIME_UNKNOWN, .size_bytes = 8};
            assert_int_equal(trace_push(tr, &r), HS_OK);
        }
        for (int i = 0; i < 64; i++, t += burst_gap_ns) {
            s = s * 1103515245u + 12345u;
            trace_rec_t r = {.t_post_ns = t, .t_done_ns = TRACE_TIME_UNKNOWN,
                             .size_bytes = 256u << ((s >> 16) % 5)};
            assert_int_equal(trace_push(tr, &r), HS_OK);
        }
        t += 20000;
    }
    return tr;
}

static void test_seed000_pitfall1(void **state)
{
    (void)state;
    trace_t *tr = burst_trace(1000);
    pred_result_t h64 = run("seed000", NULL, tr, 65536, PRED_OPEN);
    pred_result_t h0 = run("seed000", NULL, tr, 0, PRED_OPEN);

    printf("  burst every 1 us: hint 64K p99/p50 = %.1f (%llu stalls), hint 0 = %.1f\n",
           h64.p99_us / h64.p50_us, (unsigned long long)h64.sq_full_stalls,
           h0.p99_us / h0.p50_us);
    assert_true(h64.p99_us >= 3 * h64.p50_us);
    assert_true(h64.sq_full_stalls > 0);
    assert_true(h0.p99_us < 3 * h0.p50_us);
    assert_int_equal(h0.sq_full_stalls, 0);
    pred_result_release(&h64);
    pred_result_release(&h0);
    trace_free(tr);
    /* Limit of the claim: when bursts outrun the link itself (one per 0.5 us, ~25 Gb/s
     * offered on a 15 Gb/s link) both hints queue and both show p99 >= 3x p50. */
    tr = burst_trace(500);
    h64 = run("seed000", NULL, tr, 65536, PRED_OPEN);
    h0 = run("seed000", NULL, tr, 0, PRED_OPEN);
    printf("  burst every 0.5 us: hint 64K p99/p50 = %.1f, hint 0 = %.1f\n",
           h64.p99_us / h64.p50_us, h0.p99_us / h0.p50_us);
    assert_true(h0.p99_us >= 3 * h0.p50_us);
    pred_result_release(&h64);
    pred_result_release(&h0);
    trace_free(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed003_4k),
        cmocka_unit_test(test_seed003_1m),
        cmocka_unit_test(test_seed000_round_trips),
        cmocka_unit_test(test_seed000_2m_bandwidth),
        cmocka_unit_test(test_seed000_pitfall1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
