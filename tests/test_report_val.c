/* test_report_val.c - validate's visual report from a report JSON shaped like
 * cap_validate_run's: candidates sorted by hint, predicted against measured drawn, the
 * recommended and runner-up found, missing keys refused with the key named; validate -o's
 * files replaced whole or not at all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "plots/plot_gnuplot.h"
#include "plots/report_val.h"
#include "tests/hs_test.h"

static cJSON *result(double p50, double p99, double gbps)
{
    cJSON *j = cJSON_CreateObject();

    cJSON_AddNumberToObject(j, "p50_us", p50);
    cJSON_AddNumberToObject(j, "p99_us", p99);
    cJSON_AddNumberToObject(j, "throughput_gbps", gbps);
    return j;
}

static cJSON *report(const char *trace_path)
{
    static const struct { double hint; const char *role; double p50, p99, mp50, mp99; } c[] = {
        {16384, "recommended", 3, 9, 3.3, 11}, {0, "no hint", 5, 14, 5.6, 15},
        {4096, "runner-up", 3.5, 10, 3.6, 12}, {1048576, "everything LL", 4, 30, 4.4, 28}};
    cJSON *j = cJSON_CreateObject(), *t = cJSON_AddObjectToObject(j, "trace");
    cJSON *v = cJSON_AddObjectToObject(j, "validation"), *res = cJSON_AddArrayToObject(j, "results");

    cJSON_AddStringToObject(t, "path", trace_path);
    cJSON_AddNumberToObject(v, "recommended_hint", 16384);
    cJSON_AddNumberToObject(v, "best_measured_hint", 16384);
    cJSON_AddNumberToObject(v, "regret_pct", 0);
    cJSON_AddStringToObject(v, "objective", "p99");
    cJSON_AddStringToObject(v, "verdict", "the hints' measured results differ");
    for (int i = 0; i < 4; i++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddNumberToObject(r, "hint", c[i].hint);
        cJSON_AddStringToObject(r, "candidate", c[i].role);
        cJSON_AddItemToObject(r, "predicted", result(c[i].p50, c[i].p99, 1));
        cJSON_AddItemToObject(r, "measured", result(c[i].mp50, c[i].mp99, 1));
        cJSON_AddItemToArray(res, r);
    }
    return j;
}

static void test_validate_report(void **state)
{
    char *dir = hs_test_tmpdir(), file[4096], *html = NULL, *dat = NULL;
    cJSON *rep = report(hs_test_src("traces/samples/kv.hst"));
    cJSON *cfg = cJSON_AddObjectToObject(rep, "config");
    cJSON *dev = cJSON_AddObjectToObject(cfg, "device"), *peer = cJSON_AddObjectToObject(cfg, "peer");
    size_t len;
    (void)state;
    cJSON_AddStringToObject(dev, "name", "mlx5_0");
    cJSON_AddStringToObject(dev, "gid", "::ffff:10.0.0.2");
    cJSON_AddStringToObject(peer, "address", "10.0.0.1");
    cJSON_AddStringToObject(peer, "gid", "::ffff:10.0.0.1");
    assert_int_equal(rep_write_validate(dir, rep, "seed000", NULL), HS_OK);
    snprintf(file, sizeof(file), "%s/report.html", dir);
    assert_int_equal(hs_read_file(file, &html, &len), HS_OK);
    /* where it was measured: the device, its GID and the peer's (validate's config) */
    assert_non_null(strstr(html, "measured on mlx5_0 (GID ::ffff:10.0.0.2) against 10.0.0.1 "
                                 "(GID ::ffff:10.0.0.1): best hint"));
    assert_non_null(strstr(html, "hintsim validate report"));
    assert_non_null(strstr(html, "Recommended hint: <b>16K (16384 B)</b> &mdash; p99 = 9 us"));
    assert_non_null(strstr(html, "Runner-up: <b>4K (4096 B)</b>"));
    assert_non_null(strstr(html, "regret 0.0%"));
    assert_non_null(strstr(html, "<figure id=\"pred_vs_meas\">"));
    assert_non_null(strstr(html, "Latency CDF: no per-message latencies")); /* not drawn */
    /* rows sorted by hint: 0, 4K, 16K, 1M; measured beside predicted */
    snprintf(file, sizeof(file), "%s/pred_vs_meas.dat", dir);
    assert_int_equal(hs_read_file(file, &dat, &len), HS_OK);
    assert_string_equal(dat, "\"0 (none)\" 5.6 5 15 14\n\"4K\" 3.6 3.5 12 10\n"
                             "\"16K\" 3.3 3 11 9\n\"1M\" 4.4 4 28 30\n");
    free(dat);
    free(html);
    cJSON_Delete(rep);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

/* validate's measurements are the expensive part: without gnuplot the page (tables) is
 * written and the call succeeds, after a warning naming the package. */
static void test_validate_without_gnuplot(void **state)
{
    char *dir = hs_test_tmpdir(), file[4096], *html = NULL;
    cJSON *rep = report(hs_test_src("traces/samples/kv.hst"));
    size_t len;
    (void)state;
    setenv("HINTSIM_GNUPLOT", "/nonexistent/gnuplot", 1);
    assert_int_equal(rep_write_validate(dir, rep, "seed000", NULL), HS_OK);
    unsetenv("HINTSIM_GNUPLOT");
    snprintf(file, sizeof(file), "%s/report.html", dir);
    assert_int_equal(hs_read_file(file, &html, &len), HS_OK);
    assert_non_null(strstr(html, "measured p99 us"));
    assert_non_null(strstr(html, "install the Debian package gnuplot-nox"));
    assert_non_null(strstr(html, "measured: best hint")); /* no config: no device named */
    free(html);
    cJSON_Delete(rep);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

/* The VM guest's case: no $HINTSIM_GNUPLOT and no gnuplot anywhere on PATH. Still HS_OK,
 * report.html with the measured table and the warning, and no figure files. */
static void test_validate_gnuplot_not_on_path(void **state)
{
    char *dir = hs_test_tmpdir(), file[4096], *html = NULL;
    char *old_path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    char *old_gp = getenv("HINTSIM_GNUPLOT") ? strdup(getenv("HINTSIM_GNUPLOT")) : NULL;
    cJSON *rep = report(hs_test_src("traces/samples/kv.hst"));
    size_t len;
    hs_status_t st;
    (void)state;
    /* a loopback run: a device and no peer */
    cJSON_AddStringToObject(cJSON_AddObjectToObject(cJSON_AddObjectToObject(rep, "config"),
                                                     "device"), "name", "rxe0");
    unsetenv("HINTSIM_GNUPLOT");
    setenv("PATH", dir, 1); /* an empty directory */
    st = rep_write_validate(dir, rep, "seed000", NULL);
    setenv("PATH", old_path, 1);
    if (old_gp)
        setenv("HINTSIM_GNUPLOT", old_gp, 1);
    assert_int_equal(st, HS_OK);
    snprintf(file, sizeof(file), "%s/report.html", dir);
    assert_int_equal(hs_read_file(file, &html, &len), HS_OK);
    assert_non_null(strstr(html, "measured p99 us"));
    assert_non_null(strstr(html, "install the Debian package gnuplot-nox"));
    assert_int_equal(hs_test_run(NULL, "ls '%s' | grep -q '\\.png$'", dir), 1);
    assert_non_null(strstr(html, "measured on rxe0 in loopback: best hint"));
    free(html);
    free(old_path);
    free(old_gp);
    cJSON_Delete(rep);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

static void test_bad_report(void **state)
{
    char *dir = hs_test_tmpdir();
    cJSON *rep = report(hs_test_src("traces/samples/kv.hst"));
    (void)state;
    cJSON_DeleteItemFromObject(rep, "trace");
    assert_int_equal(rep_write_validate(dir, rep, "seed000", NULL), HS_ERR_INVALID);
    cJSON_DeleteItemFromObject(rep, "results");
    assert_int_equal(rep_write_validate(dir, rep, "seed000", NULL), HS_ERR_INVALID);
    assert_int_equal(hs_test_run(NULL, "test -e '%s/report.html'", dir), 1);
    cJSON_Delete(rep);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_int_equal(hs_write_file_atomic(path, text), HS_OK);
}

static char *get(const char *dir, const char *name)
{
    char path[4096], *text = NULL;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (hs_read_file(path, &text, NULL) != HS_OK)
        return NULL;
    return text;
}

/* A macro, so that a failure names the caller's line. */
#define assert_file(dir, name, text) do { \
        char *got_ = get(dir, name); \
        assert_non_null(got_); \
        assert_string_equal(got_, text); \
        free(got_); \
    } while (0)

/* validate -o DIR: a run whose report cannot be written leaves an earlier run's files
 * as they were (validate.json was replaced before the report failed, a mix of two runs);
 * a run that succeeds replaces them whole: an earlier figure this run did not draw goes,
 * files not validate's stay, no staging folder is left. */
static void test_validate_dir_replaced_whole(void **state)
{
    char *dir = hs_test_tmpdir(), *html;
    cJSON *rep = report(hs_test_src("traces/samples/kv.hst")), *bad = cJSON_Duplicate(rep, 1);
    (void)state;
    put(dir, "validate.json", "earlier\n");
    put(dir, "report.html", "earlier\n");
    put(dir, "latency_cdf.png", "earlier\n"); /* validate draws no latency CDF */
    put(dir, "notes.txt", "mine\n");
    put(dir, "report.json", "recommend's\n");
    cJSON_DeleteItemFromObject(bad, "trace");
    assert_int_equal(rep_write_validate_dir(dir, "{\"new\": 1}\n", bad, "seed000", NULL),
                     HS_ERR_INVALID);
    assert_file(dir, "validate.json", "earlier\n");
    assert_file(dir, "report.html", "earlier\n");
    assert_file(dir, "latency_cdf.png", "earlier\n");
    assert_int_equal(hs_test_run(NULL, "ls -A '%s' | grep -q hintsim-stage", dir), 1);

    assert_int_equal(rep_write_validate_dir(dir, "{\"new\": 1}\n", rep, "seed000", NULL), HS_OK);
    assert_file(dir, "validate.json", "{\"new\": 1}\n");
    html = get(dir, "report.html");
    assert_non_null(html);
    assert_non_null(strstr(html, "hintsim validate report"));
    assert_int_equal(hs_test_run(NULL, "test -s '%s/pred_vs_meas.png'", dir), 0);
    assert_null(get(dir, "latency_cdf.png"));
    assert_file(dir, "notes.txt", "mine\n");
    assert_file(dir, "report.json", "recommend's\n");
    assert_int_equal(hs_test_run(NULL, "ls -A '%s' | grep -q hintsim-stage", dir), 1);
    assert_true(rep_validate_owns("validate.json") && rep_validate_owns("size_hist.gp"));
    assert_false(rep_validate_owns("report.json") || rep_validate_owns("notes.txt"));
    free(html);
    cJSON_Delete(bad);
    cJSON_Delete(rep);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

int main(void)
{
    char gp[4096];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_report),
        cmocka_unit_test(test_validate_without_gnuplot),
        cmocka_unit_test(test_validate_gnuplot_not_on_path),
        cmocka_unit_test(test_bad_report),
        cmocka_unit_test(test_validate_dir_replaced_whole),
    };

    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK) {
        fprintf(stderr, "test_report_val: gnuplot not found (apt-get install gnuplot-nox)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
