/* test_plot_figs.c - the report figures: data files, PNG + SVG from gnuplot, the cost
 * curves' crossover, provenance in every figure, missing gnuplot -> HS_ERR_ENV. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "model/model.h"
#include "model/profile/profile.h"
#include "plots/plot_figs.h"
#include "sim/sim.h"
#include "plots/plot_gnuplot.h"
#include "tests/hs_test.h"
#include "tests/test_plot_fixture.h"

static int file_starts_with(const char *dir, const char *name, const char *magic, size_t n)
{
    char path[4096], *buf = NULL;
    size_t len = 0;
    int ok;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (hs_read_file(path, &buf, &len) != HS_OK)
        return 0;
    ok = len > 200 && memcmp(buf, magic, n) == 0;
    free(buf);
    return ok;
}

static int exists(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

static void test_crossover(void **state)
{
    uint64_t sizes[5] = {8, 64, 512, 4096, 32768};
    double ll[5] = {1, 2, 3, 10, 40}, bw[5] = {3, 4, 5, 9, 12}, never[5] = {9, 9, 9, 99, 99};
    (void)state;
    assert_int_equal(plot_cost_crossover(sizes, ll, bw, 5), 4096);
    assert_int_equal(plot_cost_crossover(sizes, ll, never, 5), 0);
    /* BW cheaper from the start: no crossover "from LL to BW". */
    assert_int_equal(plot_cost_crossover(sizes, never, ll, 5), 0);
}

static void test_cost_at_uses_engine(void **state)
{
    fixture_t *f = fixture_new(0);
    double ll = 0, bw = 0;
    (void)state;
    /* 9 messages with jitter 0..8%: the median is message 4's, x1.04. */
    assert_int_equal(plot_cost_at(&fixture_engine_ops, f->prof, 4000, 1, &ll), HS_OK);
    assert_int_equal(plot_cost_at(&fixture_engine_ops, f->prof, 4000, 0, &bw), HS_OK);
    assert_float_equal(ll, (1.0 + 4.0) * 1.04, 1e-4);
    assert_float_equal(bw, (3.0 + 1.0) * 1.04, 1e-4);
    fixture_free(f);
}

/* The report's cost curve is model --curves' isolated message, also where a lone
 * message's batch has no timer to end it (BW: 16 WRs a batch, moderation off): an
 * open-loop replay of the curve's well-spaced messages held them all in one batch until
 * the trace ended, and the report drew the BW path at 40 ms (audit, seed003: 40014.5 us
 * against 14.47). Both engines, sizes 8 B and 64 KB. */
static void test_cost_at_isolated(void **state)
{
    static const pred_engine_ops_t *const engs[] = {&model_engine_ops, &sim_engine_ops};
    profile_t *p = NULL;
    model_curve_pt_t *pts = NULL;
    size_t n = 0;
    uint64_t cross;
    (void)state;

    assert_int_equal(profile_load("generic", &p), HS_OK);
    assert_int_equal(profile_set(p, "bw.signal_every=16"), HS_OK);
    assert_int_equal(profile_set(p, "bw.coal_period_us=0"), HS_OK);
    assert_int_equal(model_curves(p, 65536, &pts, &n, &cross), HS_OK);
    for (size_t e = 0; e < 2; e++) {
        for (size_t i = 3; i < n; i += 13) { /* 8 B, 64 KB */
            double ll = 0, bw = 0;
            assert_int_equal(plot_cost_at(engs[e], p, pts[i].size_bytes, 1, &ll), HS_OK);
            assert_int_equal(plot_cost_at(engs[e], p, pts[i].size_bytes, 0, &bw), HS_OK);
            print_message("%s %llu B: LL %.3f (curves %.3f), BW %.3f (curves %.3f)\n",
                          engs[e]->name, (unsigned long long)pts[i].size_bytes, ll,
                          pts[i].ll_lat_us, bw, pts[i].bw_lat_us);
            assert_float_equal(ll, pts[i].ll_lat_us, 0.01 * pts[i].ll_lat_us);
            assert_float_equal(bw, pts[i].bw_lat_us, 0.01 * pts[i].bw_lat_us);
        }
    }
    free(pts);
    profile_free(p);
}

/* Size ranges of the curves: consecutive sizes make one range. */
static void test_curve_ranges(void **state)
{
    uint64_t sizes[6] = {1, 2, 4, 8, 16, 32}, r[4][2];
    double a[6] = {1, 5, 5, 1, 5, 1}, b[6] = {2, 2, 2, 2, 2, 2};
    model_curve_pt_t pts[6], even[6];
    char txt[128];
    (void)state;

    /* a: LL latency and BW stream; b: BW latency and LL stream (both metrics the same) */
    for (size_t i = 0; i < 6; i++) {
        pts[i] = (model_curve_pt_t){sizes[i], a[i], b[i], b[i], a[i]};
        even[i] = (model_curve_pt_t){sizes[i], b[i], b[i], b[i], b[i]};
    }
    for (int m = 0; m < 2; m++) {
        size_t nr = model_curve_ranges(pts, 6, (model_curve_metric_t)m, 0, r, 4);
        assert_int_equal(nr, 2);
        model_curve_ranges_text(r, nr, txt, sizeof(txt));
        assert_string_equal(txt, "2B - 4B, 16B");
        assert_int_equal(model_curve_ranges(even, 6, (model_curve_metric_t)m, 0, r, 4), 0);
        /* 5 > 2 x 3: no */
        assert_int_equal(model_curve_ranges(pts, 6, (model_curve_metric_t)m, 2.0, r, 4), 0);
        /* at most max */
        assert_int_equal(model_curve_ranges(pts, 6, (model_curve_metric_t)m, 0, r, 1), 1);
    }
}

static void check_fig(const char *dir, const char *name)
{
    char file[128];

    snprintf(file, sizeof(file), "%s.png", name);
    assert_true(file_starts_with(dir, file, "\x89PNG", 4));
    snprintf(file, sizeof(file), "%s.svg", name);
    assert_true(file_starts_with(dir, file, "<?xml", 5));
    snprintf(file, sizeof(file), "%s.png.tmp", name);
    assert_false(exists(dir, file));
    snprintf(file, sizeof(file), "%s.log", name);
    assert_false(exists(dir, file));
}

static void test_all_figures(void **state)
{
    fixture_t *f = fixture_new(1);
    char *dir = hs_test_tmpdir(), path[4096], *text = NULL;
    plot_figset_t figs;
    size_t len;
    (void)state;
    assert_int_equal(plot_report_figures(dir, &f->in, &figs), HS_OK);
    assert_int_equal(figs.n, 8);
    assert_int_equal(figs.nskipped, 1); /* cost_terms: the fixture has none */
    for (size_t i = 0; i < figs.n; i++) {
        check_fig(dir, figs.figs[i].name);
        /* every program carries the provenance subtitle */
        snprintf(path, sizeof(path), "%s/%s.gp", dir, figs.figs[i].name);
        assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
        assert_non_null(strstr(text, "profile test-profile (hash 000000001234abcd)"));
        assert_non_null(strstr(text, "trace it''s/fixture.hst (2000 messages)"));
        free(text);
    }
    assert_string_equal(figs.figs[0].name, "size_hist");
    assert_int_equal(figs.figs[0].source, PLOT_SRC_SYNTHETIC);
    assert_int_equal(figs.figs[1].source, PLOT_SRC_MODELLED);
    assert_int_equal(figs.figs[7].source, PLOT_SRC_MEASURED);
    /* the fake engine crosses over at 2667 B: the first power of two past it is 4096 */
    snprintf(path, sizeof(path), "%s/cost_curves.gp", dir);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    assert_non_null(strstr(text, "cross_x = 4096\n"));
    free(text);
    /* restyling as plots/README says: `gnuplot NAME.gp` in DIR rewrites NAME.png and
     * NAME.svg in place and leaves no temporary */
    assert_int_equal(hs_test_run(NULL, "cd '%s' && rm -f latency_cdf.png latency_cdf.svg && gnuplot latency_cdf.gp "
                                 ">/dev/null 2>&1", dir), 0);
    check_fig(dir, "latency_cdf");
    assert_false(exists(dir, "latency_cdf.png.tmp"));
    assert_false(exists(dir, "latency_cdf.svg.tmp"));
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

static void test_histogram_counts(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), path[4096], *text = NULL, *line;
    plot_fig_t fig;
    unsigned long long total = 0, c;
    size_t len;
    unsigned k;
    (void)state;
    assert_int_equal(plot_size_hist(dir, &f->in, &fig), HS_OK);
    snprintf(path, sizeof(path), "%s/size_hist.dat", dir);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char lab[32];
        assert_int_equal(sscanf(line, "%u %31s %llu", &k, lab, &c), 3);
        total += c;
    }
    assert_int_equal(total, f->tr->n);
    free(text);
    /* the recommended hint (16K = 2^14) sits between class 14 and 15 */
    snprintf(path, sizeof(path), "%s/size_hist.gp", dir);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    assert_non_null(strstr(text, "hint_x = 14.500\n"));
    free(text);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

/* The tail figure: with latencies 1..2000 us, 20 messages (1%) are slower than 1980 us and
 * 2 (0.1%) slower than 1998 us: the points where the curve meets the p99 and p99.9 lines. */
static void test_ccdf_tail(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), path[4096], *text = NULL, *second;
    plot_fig_t fig;
    size_t len;
    float *lat = f->pred[f->in.rec_idx].lat_us;
    (void)state;
    assert_int_equal((int)f->tr->n, 2000);
    for (size_t i = 0; i < 2000; i++)
        lat[i] = (float)(2000 - i); /* in reverse: the figure sorts */
    assert_int_equal(plot_latency_ccdf(dir, &f->in, &fig), HS_OK);
    check_fig(dir, "latency_ccdf");
    snprintf(path, sizeof(path), "%s/latency_ccdf.dat", dir);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    second = strstr(text, "\n\n\n"); /* the recommended hint's block comes first */
    assert_non_null(second);
    *second = '\0';
    assert_non_null(strstr(text, "\n1980 0.01\n"));
    assert_non_null(strstr(text, "\n1998 0.001\n"));
    assert_non_null(strstr(text, "1 0.9995\n")); /* the fastest: all others are slower */
    assert_null(strstr(text, " 0\n"));            /* no zero on a log axis */
    free(text);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

/* The recommended bar is red and named above every bar, inside the frame whichever bar it
 * is: the first (the label once sat on the y axis), the last, one in the middle. */
static void test_throughput_marks_recommended(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), path[4096], *text = NULL;
    static const int rec[3] = {0, 3, 1};
    plot_fig_t fig;
    size_t len;
    (void)state;
    for (int k = 0; k < 3; k++) {
        f->in.rec_idx = rec[k];
        assert_int_equal(plot_throughput(dir, &f->in, &fig), HS_OK);
        check_fig(dir, "throughput");
        snprintf(path, sizeof(path), "%s/throughput.gp", dir);
        assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
        assert_non_null(strstr(text, "nbars = 4\n"));
        assert_non_null(strstr(text, "set label 1 'recommended' at %g, graph 0.95"));
        assert_non_null(strstr(text, "($1 == rec_x ? 0xd62728 : 0x2ca02c)"));
        free(text);
        text = NULL;
    }
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

/* The timeline: one point per message (2000 < 4000 buckets), red block for sizes <= the
 * recommended hint (16K), blue for the rest, at the post time since the first post. */
static void test_timeline(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), path[4096], want[64], *text = NULL, *blue;
    const trace_t *tr = f->tr;
    float *lat = f->pred[f->in.rec_idx].lat_us;
    size_t len, nll = 0, nred = 0, nblue = 0, big = SIZE_MAX;
    plot_fig_t fig;
    (void)state;
    for (size_t i = 0; i < tr->n; i++) {
        nll += tr->recs[i].size_bytes <= 16384;
        if (big == SIZE_MAX && tr->recs[i].size_bytes > 16384)
            big = i;
    }
    assert_true(nll > 0 && big != SIZE_MAX); /* both classes present */
    lat[big] = 54321.0f;
    assert_int_equal(plot_timeline(dir, &f->in, &fig), HS_OK);
    check_fig(dir, "timeline");
    snprintf(path, sizeof(path), "%s/timeline.dat", dir);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    blue = strstr(text, "\n\n\n");
    assert_non_null(blue);
    for (char *p = text; p < blue; p++)
        nred += *p == '\n';
    for (char *p = blue + 3; *p; p++)
        nblue += *p == '\n';
    assert_int_equal(nred + 1, nll); /* the last red line's newline is part of "\n\n\n" */
    assert_int_equal(nblue, tr->n - nll);
    snprintf(want, sizeof(want), "\n%.6f 54321\n",
             (double)(tr->recs[big].t_post_ns - tr->recs[0].t_post_ns) / 1e6);
    assert_non_null(strstr(blue, want));
    free(text);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

/* Cost terms per message, one stacked bar per candidate, in the table's order. */
static void test_cost_terms(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), path[4096], *text = NULL;
    plot_fig_t fig;
    size_t len;
    (void)state;
    assert_int_equal(plot_cost_terms(dir, &f->in, &fig), HS_ERR_UNSUPPORTED);
    assert_false(exists(dir, "cost_terms.png"));
    f->pred[1].costs = (pred_costs_t){.queue_us = 2000, .drain_us = 4000, .coalesce_us = 6000,
                                      .l1_us = 200, .base_us = 10000};
    assert_int_equal(plot_cost_terms(dir, &f->in, &fig), HS_OK);
    check_fig(dir, "cost_terms");
    snprintf(path, sizeof(path), "%s/cost_terms.dat", dir);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    assert_non_null(strstr(text, "\n1 \"4K\" 1 2 3 0.1 5\n")); /* 2000 messages */
    assert_non_null(strstr(text, "0 \"0 (none)\" 0 0 0 0 0\n"));
    free(text);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

static void test_skips_without_data(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir();
    plot_figset_t figs;
    (void)state;
    for (int i = 0; i < 4; i++) {
        free(f->pred[i].lat_us);
        f->pred[i].lat_us = NULL;
    }
    f->in.cost_engine = NULL;
    assert_int_equal(plot_report_figures(dir, &f->in, &figs), HS_OK);
    assert_int_equal(figs.n, 3);
    assert_int_equal(figs.nskipped, 6);
    assert_false(exists(dir, "latency_cdf.png"));
    assert_false(exists(dir, "latency_cdf.dat"));
    assert_false(exists(dir, "latency_ccdf.png"));
    assert_non_null(strstr(figs.skipped[0], "no per-message latencies"));
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

static void test_missing_gnuplot(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), buf[256];
    plot_figset_t figs;
    (void)state;
    setenv("HINTSIM_GNUPLOT", "/nonexistent/gnuplot", 1);
    assert_int_equal(plot_gnuplot_find(buf, sizeof(buf)), HS_ERR_ENV);
    assert_int_equal(plot_report_figures(dir, &f->in, &figs), HS_ERR_ENV);
    assert_false(exists(dir, "size_hist.png"));
    unsetenv("HINTSIM_GNUPLOT");
    assert_int_equal(plot_gnuplot_version(buf, sizeof(buf)), HS_OK);
    assert_non_null(strstr(buf, "gnuplot"));
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

static void test_bad_input(void **state)
{
    fixture_t *f = fixture_new(0);
    plot_figset_t figs;
    (void)state;
    f->in.rec_idx = 9;
    assert_int_equal(plot_report_figures("/nonexistent-dir-never", &f->in, &figs),
                     HS_ERR_INVALID);
    f->in.rec_idx = 2;
    f->in.npred = 0;
    assert_int_equal(plot_report_figures("/nonexistent-dir-never", &f->in, &figs),
                     HS_ERR_INVALID);
    fixture_free(f);
}

int main(void)
{
    char gp[4096];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crossover),
        cmocka_unit_test(test_cost_at_isolated),
        cmocka_unit_test(test_curve_ranges),
        cmocka_unit_test(test_cost_at_uses_engine),
        cmocka_unit_test(test_all_figures),
        cmocka_unit_test(test_histogram_counts),
        cmocka_unit_test(test_ccdf_tail),
        cmocka_unit_test(test_cost_terms),
        cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_throughput_marks_recommended),
        cmocka_unit_test(test_skips_without_data),
        cmocka_unit_test(test_missing_gnuplot),
        cmocka_unit_test(test_bad_input),
    };

    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK) {
        fprintf(stderr, "test_plot_figs: gnuplot not found (apt-get install gnuplot-nox)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
