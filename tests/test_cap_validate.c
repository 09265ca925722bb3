/* test_cap_validate.c - the arithmetic of validate's summary (its objectives are
 * model/predict/objective.h's, tested in test_recommend.c): rank correlation (with ties), medians,
 * the statistics over rounds (verdicts, bootstrap intervals, noise) on the case and
 * on seeded random rounds, the saturation warning, the shuffle; and the bench's phase list
 * and percentile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_bench.h"
#include "capture/cap_validate.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"

/* cap_stats_run's input from its positional fields, with point predictions (no intervals) */
#define STATS_IN(...) ((cap_stats_in_t){__VA_ARGS__, NULL, NULL})

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

/* Uniform in [0, 1). */
static double rng_unit(uint64_t *s)
{
    return (double)(hs_xorshift64(s) >> 11) / 9007199254740992.0;
}

/* Round r of class k: base[k] times a multiplicative noise of +-noise (uniform). */
static void fill_rounds(double *obj, const double *base, size_t n, size_t rounds, double noise,
                        uint64_t *seed)
{
    for (size_t k = 0; k < n; k++)
        for (size_t r = 0; r < rounds; r++)
            obj[k * rounds + r] = base[k] * (1.0 + noise * (2.0 * rng_unit(seed) - 1.0));
}

/* The case: rounds [317, 305, 329] us against [8672, 3864, 2792] us do not overlap,
 * so the classes differ and a recommendation of the slow one is worse, whatever the slow
 * one's spread (the old test, medians against the largest max-min spread, called it "the
 * hint does not take effect": 3864 - 317 < 8672 - 2792). */
static void test_verdict_rounds_apart(void **state)
{
    const double obj[] = {317, 305, 329, 8672, 3864, 2792};
    const double pred[] = {20, 300};
    cap_stats_t s;
    (void)state;
    assert_true(cap_rounds_apart(obj, obj + 3, 3));
    assert_false(cap_rounds_apart(obj + 3, (const double[]){3000, 9000, 100}, 3));
    assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, 2, 3, 1, 7), &s), HS_OK);
    assert_int_equal(s.verdict, CAP_VERDICT_DIFFER);
    assert_int_equal(s.best, 0);
    assert_int_equal(s.rec_verdict, CAP_REC_WORSE);
    assert_true(s.rec_apart);
    assert_true(s.diff_ci.lo > 0); /* every resample of the slow one is above the fast one */
    /* medians 317 and 3864: regret 100 * (3864 - 317) / 317 */
    assert_true(fabs(s.regret_pct - 100.0 * (3864 - 317) / 317) < 1e-9);
    assert_true(s.regret_ci.lo > 0 && s.regret_ci.lo <= s.regret_pct &&
                s.regret_pct <= s.regret_ci.hi);
    /* recommending the fast one: best */
    assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, 2, 3, 0, 7), &s), HS_OK);
    assert_int_equal(s.rec_verdict, CAP_REC_BEST);
    assert_true(s.regret_pct == 0 && s.regret_ci.hi == 0);
    /* two classes: no rank correlation (+-1 by construction), with the reason */
    assert_non_null(s.rank_note);
    assert_non_null(strstr(s.rank_note, "fewer than 4 classes"));
    /* one round: undecided, not "differ" or "tie" */
    const double one[] = {317, 8672};
    assert_int_equal(cap_stats_run(&STATS_IN(one, pred, 2, 1, 1, 7), &s), HS_OK);
    assert_int_equal(s.verdict, CAP_VERDICT_UNDECIDED);
    assert_int_equal(s.rec_verdict, CAP_REC_UNDECIDED);
    assert_false(s.noise_defined);
    /* bad input */
    assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, 2, 3, 2, 7), &s),
                     HS_ERR_INVALID);
    assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, 0, 3, 0, 7), &s),
                     HS_ERR_INVALID);
}

/* Seeded random classes whose rounds never overlap (up to 30% noise, each 2x the last):
 * always "differ", a recommendation other than the fastest always "worse", never a tie,
 * whatever the order of the rounds or the spread of any one class. */
static void test_verdict_random_separated(void **state)
{
    uint64_t seed = 0x22a11ULL;
    double obj[6 * 9], base[6], pred[6];
    cap_stats_t s;
    (void)state;
    for (int iter = 0; iter < 200; iter++) {
        size_t n = 2 + hs_xorshift64(&seed) % 5, rounds = 3 + hs_xorshift64(&seed) % 7;
        size_t rec = hs_xorshift64(&seed) % n;
        for (size_t k = 0; k < n; k++) {
            base[k] = 10.0 * pow(2.0, (double)((k + (size_t)iter) % n)); /* a rotation */
            pred[k] = base[k] * (0.5 + rng_unit(&seed));
        }
        fill_rounds(obj, base, n, rounds, 0.1 + 0.2 * rng_unit(&seed), &seed);
        assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, n, rounds, rec,
                                                         (uint64_t)iter + 1), &s), HS_OK);
        assert_int_equal(s.verdict, CAP_VERDICT_DIFFER);
        assert_true(base[s.best] == 10.0);
        /* every pair is apart; the predictions' order, pair by pair, counted */
        size_t discordant = 0;
        for (size_t a = 0; a < n; a++)
            for (size_t b = a + 1; b < n; b++)
                discordant += (base[a] < base[b]) != (pred[a] < pred[b]);
        assert_int_equal(s.pairs_apart, n * (n - 1) / 2);
        assert_int_equal(s.pairs_discordant, discordant);
        if (rec != s.best) {
            assert_int_equal(s.rec_verdict, CAP_REC_WORSE);
            assert_true(s.diff_ci.lo > 0);
        }
        assert_true(s.regret_ci.lo >= 0 && s.regret_ci.lo <= s.regret_ci.hi);
    }
}

/* Seeded random classes that are one distribution (30% noise): "differ" in under a tenth
 * (the bootstrap interval of worst - best, picked after the fact, said so in a fifth); when the
 * predictions differ by more than 5% that is "no effect", when they agree "tie"; and a
 * recommendation is "indistinguishable" from the best far more often than "worse". */
static void test_verdict_random_same(void **state)
{
    uint64_t seed = 0xfeedULL;
    double obj[6 * 7], base[6], pred[6], flat[6];
    size_t differ = 0, worse = 0, tied = 0, noeffect = 0, tie = 0, picked = 0;
    cap_stats_t s;
    (void)state;
    for (int iter = 0; iter < 300; iter++) {
        size_t n = 4 + hs_xorshift64(&seed) % 3, rounds = 7;
        for (size_t k = 0; k < n; k++) {
            base[k] = 100;
            pred[k] = 10.0 * (double)(k + 1);
            flat[k] = 50;
        }
        fill_rounds(obj, base, n, rounds, 0.3, &seed);
        assert_int_equal(cap_stats_run(&STATS_IN(obj, iter % 2 ? pred : flat, n,
                                                         rounds, 0, (uint64_t)iter + 1), &s),
                         HS_OK);
        differ += s.verdict == CAP_VERDICT_DIFFER;
        noeffect += s.verdict == CAP_VERDICT_NO_EFFECT;
        tie += s.verdict == CAP_VERDICT_TIE;
        if (s.verdict == CAP_VERDICT_NO_EFFECT)
            assert_true(iter % 2); /* the predictions differ */
        if (s.verdict == CAP_VERDICT_TIE)
            assert_false(iter % 2);
        worse += s.rec_verdict == CAP_REC_WORSE;
        tied += s.rec_verdict == CAP_REC_TIED;
        /* "worse" than a best picked after the fact needs the classes to differ at all */
        if (s.rec_verdict == CAP_REC_WORSE && !s.rec_apart)
            assert_int_equal(s.verdict, CAP_VERDICT_DIFFER);
        picked += s.verdict != CAP_VERDICT_DIFFER && s.best != 0 && s.diff_ci.lo > 0;
        if (iter % 2 == 0) /* tied predictions: no rank correlation, not a 0 */
            assert_non_null(s.rank_note);
    }
    printf("same distribution, 300 cases: differ %zu, no effect %zu, tie %zu; recommended "
           "worse %zu, indistinguishable %zu (of which %zu with the interval of the difference "
           "above 0)\n", differ, noeffect, tie, worse, tied, picked);
    assert_true(picked > 0); /* the case the omnibus gate is for occurs in this sample */
    assert_true(differ < 300 / 10); /* the permutation test's 5%, and rounds apart by chance */
    assert_true(noeffect > 100 && tie > 100);
    assert_true(worse * 5 < tied);
}

/* Rank correlation from 4 classes up, with a bootstrap interval that holds the point value;
 * predictions in the measured order give 1; the noise of even against odd rounds. */
static void test_rank_interval_and_noise(void **state)
{
    uint64_t seed = 0x5151ULL;
    double obj[6 * 8], base[6] = {10, 20, 30, 40, 50, 60}, pred[6] = {1, 2, 3, 4, 5, 6};
    cap_stats_t s;
    (void)state;
    fill_rounds(obj, base, 6, 8, 0.02, &seed);
    assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, 6, 8, 0, 3), &s), HS_OK);
    assert_null(s.rank_note);
    assert_true(fabs(s.rank - 1) < 1e-12);
    assert_true(s.rank_ci.lo == 1 && s.rank_ci.hi == 1); /* 2% noise never reorders them */
    assert_true(s.noise_rank_defined && fabs(s.noise_rank - 1) < 1e-12);
    /* heavy noise: the interval widens and still holds the point value */
    fill_rounds(obj, base, 6, 8, 0.9, &seed);
    assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, 6, 8, 0, 3), &s), HS_OK);
    assert_true(s.rank_ci.lo < s.rank_ci.hi);
    assert_true(s.rank_ci.lo <= s.rank && s.rank <= s.rank_ci.hi);
    assert_true(s.rank_ci.lo >= -1 && s.rank_ci.hi <= 1);
    assert_true(s.mae_ci.lo <= s.mae_pct && s.mae_pct <= s.mae_ci.hi);
    /* three classes: none, whatever the data */
    assert_int_equal(cap_stats_run(&STATS_IN(obj, pred, 3, 8, 0, 3), &s), HS_OK);
    assert_non_null(s.rank_note);
    /* noise by hand: rounds 10 12 11 13 -> even {10, 11} = 10.5, odd {12, 13} = 12.5 */
    const double two[] = {10, 12, 11, 13, 40, 41, 42, 43};
    assert_int_equal(cap_stats_run(&STATS_IN(two, pred, 2, 4, 0, 3), &s), HS_OK);
    assert_true(s.noise_defined);
    assert_true(fabs(s.noise_rec_pct - 200.0 / 10.5) < 1e-9);
    assert_false(s.noise_rank_defined);
    /* medians per class and their intervals */
    assert_true(s.median[0] == 11.5 && s.median[1] == 41.5);
    assert_true(s.median_ci[0].lo >= 10 && s.median_ci[0].hi <= 13);
    /* the regret's noise: the recommended class's and the best's, summed (the second
     * class: even rounds {40, 42} = 41 against odd {41, 43} = 42) */
    assert_true(fabs(s.noise_regret_pct - 200.0 / 10.5) < 1e-9);
    assert_int_equal(cap_stats_run(&STATS_IN(two, pred, 2, 4, 1, 3), &s), HS_OK);
    assert_true(fabs(s.noise_regret_pct - (100.0 / 41 + 200.0 / 10.5)) < 1e-9);
    const double three[] = {10, 12, 11, 13, 40, 44, 42, 46};
    assert_int_equal(cap_stats_run(&STATS_IN(three, pred, 2, 4, 1, 3), &s), HS_OK);
    assert_true(fabs(s.noise_regret_pct - (400.0 / 41 + 200.0 / 10.5)) < 1e-9);
    assert_int_equal(s.pairs_apart, 1);
    assert_int_equal(s.pairs_discordant, 0);
    const double rev[] = {5, 1};
    assert_int_equal(cap_stats_run(&STATS_IN(three, rev, 2, 4, 1, 3), &s), HS_OK);
    assert_int_equal(s.pairs_discordant, 1);
}

/* A pair the device tells apart counts as misordered only where the model tells it apart
 * too: its predictions' own intervals do not overlap (validate: the order statistics of
 * the predicted latencies around the objective's quantile). */
static void test_pairs_model_tied(void **state)
{
    const double obj[] = {10, 12, 11, 13, 40, 44, 42, 46}, rev[] = {5, 1};
    const double lo_apart[] = {4, 0.5}, hi_apart[] = {6, 1.5};
    const double lo_tied[] = {0.5, 0.5}, hi_tied[] = {6, 6};
    cap_stats_t s;
    (void)state;
    assert_int_equal(cap_stats_run(&(cap_stats_in_t){obj, rev, 2, 4, 1, 3, lo_apart, hi_apart},
                                   &s), HS_OK);
    assert_int_equal(s.pairs_apart, 1);
    assert_int_equal(s.pairs_discordant, 1);
    assert_int_equal(s.pairs_model_tied, 0);
    assert_int_equal(cap_stats_run(&(cap_stats_in_t){obj, rev, 2, 4, 1, 3, lo_tied, hi_tied},
                                   &s), HS_OK);
    assert_int_equal(s.pairs_apart, 1);
    assert_int_equal(s.pairs_discordant, 0);
    assert_int_equal(s.pairs_model_tied, 1);
    /* point predictions: a tie is no order either */
    assert_int_equal(cap_stats_run(&(cap_stats_in_t){obj, (const double[]){3, 3}, 2, 4, 1, 3,
                                                     NULL, NULL}, &s), HS_OK);
    assert_int_equal(s.pairs_discordant, 0);
    assert_int_equal(s.pairs_model_tied, 1);
}

/* The interval of a quantile from order statistics: p99 of 600 values (1..600, shuffled)
 * is ranks 589..599; the ranks clamp to 1..n; none of nothing. */
static void test_quantile_interval(void **state)
{
    double v[600], lo, hi;
    uint64_t seed = 7;
    (void)state;
    for (size_t i = 0; i < 600; i++)
        v[i] = (double)(i + 1);
    for (size_t i = 599; i > 0; i--) {
        size_t j = hs_xorshift64(&seed) % (i + 1);
        double t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    cap_quantile_interval(v, 600, 0.99, &lo, &hi);
    assert_true(lo == 589 && hi == 599);
    cap_quantile_interval(v, 600, 0.5, &lo, &hi); /* 300 -+ 24.0: ranks 275..325 */
    assert_true(lo == 275 && hi == 325);
    v[0] = 42;
    cap_quantile_interval(v, 1, 0.5, &lo, &hi);
    assert_true(lo == 42 && hi == 42);
    cap_quantile_interval(v, 0, 0.99, &lo, &hi);
    assert_true(isnan(lo) && isnan(hi));
}

static void test_saturation(void **state)
{
    (void)state;
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
    assert_null(strstr(buf, "paced")); /* back to back: no pace line */
    free(buf);
    cJSON_Delete(rep);
}

/* capture bench's table says when the post-to-completion phase was paced (--gap-us): its
 * figures are a sparse message's, not a back-to-back one's. */
static void test_bench_print_paced(void **state)
{
    (void)state;
    cJSON *rep = cJSON_Parse("{\"results\": [{\"hint\": 4096, \"size_bytes\": 64, \"path\": "
                             "\"LL\", \"post_to_completion\": {\"p50_us\": 28.5, \"p99_us\": "
                             "40, \"mean_us\": 29, \"gap_us\": 500}}]}");
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);

    assert_non_null(rep);
    assert_non_null(fp);
    cap_bench_print(rep, fp);
    fclose(fp);
    assert_non_null(strstr(buf, "post->completion paced: one message every 500 us (--gap-us)"));
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
    /* a pace beyond a second, or negative: refused before the device is opened */
    assert_int_equal(hs_test_run(&out, "%s capture bench -d d0 --sizes 64 --gap-us 1000001 "
                                 "2>&1", bin), 2);
    assert_non_null(strstr(out, "--gap-us 1000001: outside 0..1000000"));
    free(out);
    assert_int_equal(hs_test_run(NULL, "%s capture bench -d d0 --sizes 64 --gap-us -1", bin), 2);
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
        cmocka_unit_test(test_rank_correlation),
        cmocka_unit_test(test_median),      cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_pairs_model_tied), cmocka_unit_test(test_quantile_interval),
        cmocka_unit_test(test_verdict_rounds_apart),
        cmocka_unit_test(test_verdict_random_separated),
        cmocka_unit_test(test_verdict_random_same),
        cmocka_unit_test(test_rank_interval_and_noise),
        cmocka_unit_test(test_shuffle),     cmocka_unit_test(test_phases_pctl),
        cmocka_unit_test(test_live_usage),  cmocka_unit_test(test_cli_codes),
        cmocka_unit_test(test_bench_print_absent),
        cmocka_unit_test(test_bench_print_paced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
