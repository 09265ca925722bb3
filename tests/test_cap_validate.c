/* test_cap_validate.c - the arithmetic of validate's summary: objective values, rank
 * correlation (with ties), medians, the "hint does not take effect" test, the shuffle;
 * and the bench's phase list and percentile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_bench.h"
#include "capture/cap_validate.h"
#include "tests/hs_test.h"

static void test_objective(void **state)
{
    pred_result_t r;
    cap_obj_t o;
    (void)state;
    memset(&r, 0, sizeof(r));
    r.p50_us = 2;
    r.p99_us = 9;
    r.mean_us = 3;
    r.throughput_gbps = 40;
    assert_true(cap_obj_value(CAP_OBJ_P99, &r) == 9);
    assert_true(cap_obj_value(CAP_OBJ_P50, &r) == 2);
    assert_true(cap_obj_value(CAP_OBJ_MEAN, &r) == 3);
    assert_true(cap_obj_value(CAP_OBJ_THROUGHPUT, &r) == -40); /* lower is better */
    assert_int_equal(cap_obj_parse("p50", &o), HS_OK);
    assert_int_equal(o, CAP_OBJ_P50);
    assert_int_equal(cap_obj_parse("p42", &o), HS_ERR_USAGE);
}

static void test_rank_correlation(void **state)
{
    const double x[] = {1, 2, 3, 4};
    const double same[] = {10, 20, 30, 40};
    const double rev[] = {4, 3, 2, 1};
    const double flat[] = {5, 5, 5, 5};
    const double tie[] = {1, 2, 2, 3};
    (void)state;
    assert_true(fabs(cap_rank_correlation(x, same, 4) - 1) < 1e-12);
    assert_true(fabs(cap_rank_correlation(x, rev, 4) + 1) < 1e-12);
    assert_true(cap_rank_correlation(x, flat, 4) == 0);
    /* ranks of tie = 1, 2.5, 2.5, 4 against 1..4: r = 4.5 / sqrt(5 * 4.5) */
    assert_true(fabs(cap_rank_correlation(x, tie, 4) - 4.5 / sqrt(5 * 4.5)) < 1e-12);
    assert_true(cap_rank_correlation(x, same, 1) == 0);
}

static void test_median(void **state)
{
    double a[] = {5, 1, 3}, b[] = {4, 1, 3, 2};
    (void)state;
    assert_true(cap_median(a, 3) == 3);
    assert_true(cap_median(b, 4) == 2.5);
    assert_true(cap_median(NULL, 0) == 0);
}

static void test_ineffective(void **state)
{
    /* measured medians within the largest repeat spread, predictions 2x apart */
    const double meas[] = {20.0, 20.5, 19.8}, spread[] = {1.0, 0.4, 0.9};
    const double pred[] = {3.0, 6.0, 5.0};
    /* measured clearly apart */
    const double meas2[] = {20.0, 40.0, 19.8};
    /* predictions equal too: nothing to say */
    const double pred2[] = {5.0, 5.0, 5.05};
    (void)state;
    /* the three verdicts: no effect, differ, tie (measured and predicted); one hint alone
     * differs from nothing */
    assert_int_equal(cap_hint_verdict(meas, spread, pred, 3), CAP_VERDICT_NO_EFFECT);
    assert_int_equal(cap_hint_verdict(meas2, spread, pred, 3), CAP_VERDICT_DIFFER);
    assert_int_equal(cap_hint_verdict(meas2, spread, pred2, 3), CAP_VERDICT_DIFFER);
    assert_int_equal(cap_hint_verdict(meas, spread, pred2, 3), CAP_VERDICT_TIE);
    assert_int_equal(cap_hint_verdict(meas, spread, pred, 1), CAP_VERDICT_DIFFER);
    /* an open-loop replay the device could not keep up with (live audit: kv offers 7.5 Gb/s,
     * rxe carried 0.42) is said to be saturated, not "the hint does not take effect" */
    char w[400];
    const double carried[2] = {0.42, 0.44}, kept[2] = {7.4, 7.49};
    assert_int_equal(cap_saturation_warning(7.49, carried, 2, w, sizeof(w)), 1);
    assert_non_null(strstr(w, "offers 7.49 Gb/s and the device carried 0.42 Gb/s"));
    assert_int_equal(cap_saturation_warning(7.49, kept, 2, w, sizeof(w)), 0);
    assert_int_equal(cap_saturation_warning(0, carried, 2, w, sizeof(w)), 0); /* span 0 */
}

static void test_shuffle(void **state)
{
    size_t idx[6], seen[6] = {0};
    uint64_t seed = 7, seed2 = 7;
    size_t a[6], moved = 0;
    (void)state;
    for (size_t i = 0; i < 6; i++)
        idx[i] = a[i] = i;
    cap_shuffle(idx, 6, &seed);
    cap_shuffle(a, 6, &seed2);
    for (size_t i = 0; i < 6; i++) {
        seen[idx[i]]++;
        assert_int_equal(idx[i], a[i]); /* same seed, same order */
        moved += idx[i] != i;
    }
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(seen[i], 1); /* a permutation */
    assert_true(moved > 0);
    assert_true(seed != 7); /* the generator advanced: the next round differs */
}

static void test_phases_pctl(void **state)
{
    unsigned ph = 0;
    double v[] = {5, 1, 4, 2, 3};
    (void)state;
    assert_int_equal(cap_bench_parse_phases("all", &ph), HS_OK);
    assert_int_equal(ph, CAP_PHASE_ALL);
    assert_int_equal(cap_bench_parse_phases("stream,pingpong", &ph), HS_OK);
    assert_int_equal(ph, CAP_PHASE_STREAM | CAP_PHASE_PINGPONG);
    assert_int_equal(cap_bench_parse_phases("latency,", &ph), HS_ERR_USAGE);
    assert_int_equal(cap_bench_parse_phases("warp", &ph), HS_ERR_USAGE);
    assert_true(cap_pctl(v, 5, 0.5) == 3);
    assert_true(cap_pctl(v, 5, 0.99) == 5);
    assert_true(cap_pctl(v, 5, 0.0) == 1);
}

static void test_live_usage(void **state)
{
    cap_live_opts_t o = {.device = "none", .port = 18515, .timeout_s = 10, .mem = "host"};
    cap_live_t l;
    (void)state;
    o.server = 1;
    o.connect = "127.0.0.1";
    assert_int_equal(cap_live_open(&o, &l), HS_ERR_USAGE); /* both ends at once */
    o.server = 0;
    o.port = 70000;
    assert_int_equal(cap_live_open(&o, &l), HS_ERR_USAGE);
    o.port = 18515;
    o.timeout_s = 0;
    assert_int_equal(cap_live_open(&o, &l), HS_ERR_USAGE);
    o.timeout_s = 10;
    o.mem = "gpu";
    assert_int_equal(cap_live_open(&o, &l), HS_ERR_USAGE);
}

/* capture bench's table: a phase that did not run (--phases) shows "-", not 0.00 (a figure
 * no phase measured, live audit). */
static void test_bench_print_absent(void **state)
{
    (void)state;
    cJSON *rep = cJSON_Parse("{\"results\": [{\"hint\": 64, \"size_bytes\": 64, \"path\": "
                             "\"LL\", \"round_trip_half\": {\"p50_us\": 11.5, \"p99_us\": "
                             "12.5, \"mean_us\": 11.75}}]}");
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);

    assert_non_null(rep);
    assert_non_null(fp);
    cap_bench_print(rep, fp);
    fclose(fp);
    assert_non_null(strstr(buf, "  11.50   12.50   11.75"));
    assert_null(strstr(buf, "0.00"));
    assert_non_null(strstr(buf, "  LL |       -       -       - |   11.50"));
    free(buf);
    cJSON_Delete(rep);
}

/* The CLI's exit codes where no device is needed to decide (CLI.md: 2 usage, 3 environment). */
static void test_cli_codes(void **state)
{
    const char *bin = hs_test_bin();
    char *out = NULL;
    (void)state;
    assert_int_equal(hs_test_run(NULL, "%s capture bench --device d0", bin), 2); /* no sizes */
    assert_int_equal(hs_test_run(NULL, "%s capture bench -d d0 --sizes 8,,9", bin), 2);
    assert_int_equal(hs_test_run(NULL, "%s capture bench -d d0 --sizes 8 --phases warp", bin), 2);
    assert_int_equal(hs_test_run(NULL, "%s capture bench -d d0 --sizes 8 --server --connect h",
                                 bin), 2);
    /* counts no memory holds: said before the device is opened (in the VM they exited 1
     * with no message: the allocation failed) */
    assert_int_equal(hs_test_run(&out, "%s capture bench -d d0 --sizes 64 --iters 99999999999 "
                                 "-o x.hst 2>&1", bin), 2);
    assert_non_null(strstr(out, "--iters 99999999999: at most 100000000"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s capture bench -d d0 --sizes 64 --warmup 4294967297 "
                                 "-o x.hst 2>&1", bin), 2);
    assert_non_null(strstr(out, "--warmup 4294967297: at most"));
    free(out);
    /* a server with no device says so, and not first that it listens */
    assert_int_equal(hs_test_run(&out, "%s capture bench -d no_such_dev0 --sizes 64 --server "
                                 "--port 18999 2>&1", bin), 3);
    assert_null(strstr(out, "listening"));
    free(out);
    assert_int_equal(hs_test_run(NULL, "%s validate --device d0", bin), 2); /* no trace */
    assert_int_equal(hs_test_run(NULL, "%s validate t.hst -d d0 --mode sideways", bin), 2);
    /* -o on the server end: refused before the device is opened (it ran, then failed) */
    assert_int_equal(hs_test_run(&out, "%s validate -d no_such_dev0 --server -o vdir 2>&1",
                                 bin), 2);
    assert_non_null(strstr(out, "-o belongs to the --connect end"));
    free(out);
    assert_int_equal(hs_test_run(NULL, "%s capture bench --help", bin), 0);
    /* no such device: exit 3 and a message saying what is missing (here: no device at all,
     * or the list of devices present where there are some) */
    assert_int_equal(hs_test_run(&out, "%s capture bench -d no_such_dev0 --sizes 64", bin), 3);
    assert_true(strstr(out, "no verbs device") != NULL);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objective),   cmocka_unit_test(test_rank_correlation),
        cmocka_unit_test(test_median),      cmocka_unit_test(test_ineffective),
        cmocka_unit_test(test_shuffle),     cmocka_unit_test(test_phases_pctl),
        cmocka_unit_test(test_live_usage),  cmocka_unit_test(test_cli_codes),
        cmocka_unit_test(test_bench_print_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
