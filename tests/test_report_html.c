/* test_report_html.c - report.html: self-contained, every figure embedded, provenance and
 * escaping, atomic on failure; base64 against RFC 4648's vectors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hs_util.h"
#include "plots/plot_gnuplot.h"
#include "plots/report_html.h"
#include "tests/hs_test.h"
#include "tests/test_plot_fixture.h"

static void test_base64(void **state)
{
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
                                      "Zm9vYmFy"};
    (void)state;
    for (size_t i = 0; i < 7; i++) {
        char *b = rep_base64((const unsigned char *)in[i], strlen(in[i]));
        assert_string_equal(b, out[i]);
        free(b);
    }
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static char *read_report(const char *dir)
{
    char path[4096], *text = NULL;
    size_t len;

    snprintf(path, sizeof(path), "%s/report.html", dir);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    return text;
}

static void test_html_validate(void **state)
{
    fixture_t *f = fixture_new(1);
    char *dir = hs_test_tmpdir(), *html;
    (void)state;
    assert_int_equal(rep_write_report(dir, &f->in), HS_OK);
    html = read_report(dir);
    assert_int_equal(count(html, "src=\"data:image/png;base64,"), 8);
    assert_int_equal(count(html, "<img "), 8);
    assert_int_equal(count(html, "http://") + count(html, "https://"), 0);
    assert_non_null(strstr(html, "<style>"));
    assert_non_null(strstr(html, "drain &lt;cost&gt; &amp; queueing decide"));
    assert_non_null(strstr(html, "builtin:test-profile"));
    assert_non_null(strstr(html, "000000001234abcd"));
    assert_non_null(strstr(html, "measured p99 us"));
    /* every figure's caption says where its numbers come from */
    assert_int_equal(count(html, "<span class=\"src\">modelled | profile test-profile"), 6);
    assert_int_equal(count(html, "<span class=\"src\">measured | profile"), 1);
    assert_int_equal(count(html, "<span class=\"src\">synthetic | profile"), 1);
    /* the recommended row is marked, its objective value printed */
    assert_int_equal(count(html, "class=\"best\""), 1);
    /* the hint as set: its exact bytes beside the short form, and the variable (the page had
     * neither; report.md has the line) */
    assert_non_null(strstr(html, "Recommended hint: <b>16K (16384 B)</b> &mdash; p99 = "));
    assert_non_null(strstr(html, "Set <code>RDMA_LOW_LATENCY_HINT=16384</code>"));
    /* the drain column is the total (the md's is per message), stalls have their own */
    assert_non_null(strstr(html, "<th>drain us, total</th><th>queue-full stalls</th>"));
    free(html);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

static void test_fmt_quantity(void **state)
{
    char b[64];
    (void)state;
    assert_string_equal(rep_fmt_quantity(2.864e7, "us", b, sizeof(b)), "28.64 s");
    assert_string_equal(rep_fmt_quantity(12.3, "us", b, sizeof(b)), "12.3 us");
    assert_string_equal(rep_fmt_quantity(0.25, "us", b, sizeof(b)), "250 ns");
    assert_string_equal(rep_fmt_quantity(1500, "us", b, sizeof(b)), "1.5 ms");
    assert_string_equal(rep_fmt_quantity(999.99, "us", b, sizeof(b)), "1 ms");
    assert_string_equal(rep_fmt_quantity(18e3, "us", b, sizeof(b)), "18 ms");
    assert_string_equal(rep_fmt_quantity(12.5, "Gb/s", b, sizeof(b)), "12.5 Gb/s");
    assert_string_equal(rep_fmt_quantity(NAN, "us", b, sizeof(b)), "n/a");
}

/* the headline of a trace whose p99 is 28.64 s reads so, not 2.864e+07 us */
static void test_html_headline_units(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), *html;
    (void)state;
    f->pred[f->in.rec_idx].p99_us = 2.864e7;
    assert_int_equal(rep_write_html(dir, &f->in, NULL), HS_OK);
    html = read_report(dir);
    assert_non_null(strstr(html, "&mdash; p99 = 28.64 s "));
    assert_null(strstr(html, "e+07"));
    free(html);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

/* report.md's cost-term table, in report.html too: per message, the total their sum */
static void test_html_cost_table(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), *html;
    (void)state;
    assert_int_equal(rep_write_html(dir, &f->in, NULL), HS_OK);
    html = read_report(dir);
    assert_null(strstr(html, "Where the time goes")); /* the fixture has no cost terms */
    free(html);
    f->pred[2].costs = (pred_costs_t){.queue_us = 2000, .drain_us = 4000, .base_us = 10000};
    assert_int_equal(rep_write_html(dir, &f->in, NULL), HS_OK);
    html = read_report(dir);
    assert_non_null(strstr(html, "<h2>Where the time goes</h2>"));
    /* 2000 messages; the recommended row (index 2) is marked */
    assert_non_null(strstr(html, "16K (16384 B) &#9733;</td><td>1.000</td><td>2.000</td>"
                                 "<td>0.000</td><td>0.000</td><td>5.000</td><td>8.000</td>"));
    free(html);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

static void test_html_tables_only(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), *html;
    (void)state;
    f->in.objective = "balanced";
    f->in.rec_idx = -1;
    f->in.runner_idx = -1;
    assert_int_equal(rep_write_html(dir, &f->in, NULL), HS_OK);
    html = read_report(dir);
    assert_int_equal(count(html, "<img "), 0);
    assert_non_null(strstr(html, "No recommendation was made."));
    assert_non_null(strstr(html, "Without a hint: <b>0 (no hint)</b> <span"));
    assert_null(strstr(html, "measured p99"));
    free(html);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

static void test_html_atomic_on_failure(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), path[4096];
    plot_figset_t figs = {.n = 1};
    struct stat st;
    (void)state;
    /* a figure whose PNG is not there: the page must not appear half-written */
    snprintf(figs.figs[0].name, sizeof(figs.figs[0].name), "missing");
    assert_int_equal(rep_write_html(dir, &f->in, &figs), HS_ERR_IO);
    snprintf(path, sizeof(path), "%s/report.html", dir);
    assert_int_not_equal(stat(path, &st), 0);
    assert_int_equal(hs_test_run(NULL, "ls '%s' | grep -c tmp", dir), 1); /* no temp left */
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

/* Without gnuplot the page is still written, says why there are no plots, and the call
 * reports the environment problem. */
static void test_html_without_gnuplot(void **state)
{
    fixture_t *f = fixture_new(0);
    char *dir = hs_test_tmpdir(), *html;
    (void)state;
    setenv("HINTSIM_GNUPLOT", "/nonexistent/gnuplot", 1);
    assert_int_equal(rep_write_report(dir, &f->in), HS_ERR_ENV);
    unsetenv("HINTSIM_GNUPLOT");
    html = read_report(dir);
    assert_int_equal(count(html, "<img "), 0);
    assert_non_null(strstr(html, "gnuplot was not found; install the Debian package gnuplot-nox"));
    assert_non_null(strstr(html, "class=\"best\""));
    free(html);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(dir);
    fixture_free(f);
}

int main(void)
{
    char gp[4096];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_html_validate),
        cmocka_unit_test(test_fmt_quantity),
        cmocka_unit_test(test_html_headline_units),
        cmocka_unit_test(test_html_cost_table),
        cmocka_unit_test(test_html_tables_only),
        cmocka_unit_test(test_html_atomic_on_failure),
        cmocka_unit_test(test_html_without_gnuplot),
    };

    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK) {
        fprintf(stderr, "test_report_html: gnuplot not found (apt-get install gnuplot-nox)\n");
        return 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
