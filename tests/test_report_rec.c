/* test_report_rec.c - recommend's visual report end to end on a sample trace with the real
 * model engine: every figure drawn, the CDF from per-message latencies replayed for the
 * recommended, runner-up and hint-0 candidates, the recommendation marked in the page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "model/model.h"
#include "plots/plot_gnuplot.h"
#include "plots/report_rec.h"
#include "tests/hs_test.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_recommend_report(void **state)
{
    const char *path = hs_test_src("traces/samples/allreduce.hst");
    char *dir = hs_test_tmpdir(), file[4096], *html = NULL, *gp = NULL, h[32], want[96];
    rec_opts_t ro = {.objective = OBJ_P99, .threads = 1, .pred = {.flows = 1}};
    rec_report_t rep = {0};
    profile_t *p = NULL;
    trace_t *tr = NULL;
    size_t len;
    int fixed;
    (void)state;
    assert_int_equal(profile_load("seed000", &p), HS_OK);
    assert_int_equal(trace_load(path, &tr), HS_OK);
    assert_int_equal(rec_run(&model_engine_ops, tr, p, &ro, &rep), HS_OK);
    assert_int_equal(rep_write_recommend(dir, &rep, &(pred_ctx_t){&model_engine_ops, tr, p, &ro.pred},
                                         path), HS_OK);
    snprintf(file, sizeof(file), "%s/report.html", dir);
    assert_int_equal(hs_read_file(file, &html, &len), HS_OK);
    assert_int_equal(count(html, "src=\"data:image/png;base64,"), 8); /* no measured figure */
    assert_non_null(strstr(html, "Predicted against measured latency: no measured")); /* not drawn */
    if (rep.results[rep.winner].hint_bytes)
        hs_format_size(rep.results[rep.winner].hint_bytes, h, sizeof(h));
    else
        snprintf(h, sizeof(h), "0 (no hint)");
    snprintf(want, sizeof(want), "Recommended hint: <b>%s</b>", h);
    assert_non_null(strstr(html, want));
    assert_non_null(strstr(html, "seed000"));
    assert_non_null(strstr(html, "<h2>Where the time goes</h2>")); /* report.md's cost terms */
    /* the CDF has one curve per distinct candidate of recommended, runner-up, hint 0, then
     * the next best candidates: 6 curves in all where there are 6 candidates */
    snprintf(file, sizeof(file), "%s/latency_cdf.gp", dir);
    assert_int_equal(hs_read_file(file, &gp, &len), HS_OK);
    fixed = 1 + (rep.runner_up != rep.winner) +
            (rep.baseline != rep.winner && rep.baseline != rep.runner_up);
    snprintf(want, sizeof(want), "ncurves = %d\n", rep.n < 6 ? (int)rep.n : 6);
    assert_non_null(strstr(gp, want));
    for (const char *q = gp; (q = strstr(q, "(candidate)'")) != NULL; q++)
        fixed++;
    assert_int_equal(fixed, rep.n < 6 ? (int)rep.n : 6);
    assert_non_null(strstr(gp, "(recommended)'"));
    assert_int_equal(strstr(gp, "(baseline)'") != NULL,
                     rep.baseline != rep.winner && rep.baseline != rep.runner_up);
    free(gp);
    free(html);
    rec_report_release(&rep);
    trace_free(tr);
    profile_free(p);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
}

int main(void)
{
    char gp[4096];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recommend_report),
    };

    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK) {
        fprintf(stderr, "test_report_rec: gnuplot not found (apt-get install gnuplot-nox)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
