/* test_sweep_grid.c - grid parsing and checking, expansion order, point keys, and the
 * CLI's refusal of bad grids (exit 1 naming the entry, before any point runs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hs_util.h"
#include "sweep/sweep_grid.h"
#include "sweep/sweep_point.h"
#include "tests/hs_test.h"
#include "tests/test_sweep_fake.h"

typedef struct {
    char *dir;
    char grid[4096];
} gfix_t;

static int setup(void **state)
{
    gfix_t *f = calloc(1, sizeof(*f));
    char path[4200];

    f->dir = hs_test_tmpdir();
    snprintf(path, sizeof(path), "%s/a.hst", f->dir);
    test_sweep_write(path, "trace a");
    snprintf(path, sizeof(path), "%s/b.hst", f->dir);
    test_sweep_write(path, "trace b, longer");
    snprintf(f->grid, sizeof(f->grid), "%s/grid.json", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    gfix_t *f = *state;
    char cmd[4200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f->dir);
    free(f);
    return 0;
}

static const char *k_good =
    "{\"traces\": [\"a.hst\", \"b.hst\"], \"profiles\": [\"generic\"],\n"
    " \"set\": {\"link.gbps\": 200},\n"
    " \"vary\": {\"ll.depth\": [16, \"32\", 64], \"host.l1d_bytes\": [\"32K\", \"48K\"],\n"
    "          \"switch.perturb_factor\": [1.50]},\n"
    " \"hints\": [0, \"4K\", 16384, \"auto\"], \"objective\": \"mean\", \"engine\": \"sim\",\n"
    " \"mode\": \"closed\", \"description\": \"test\"}";

static void test_parse_good(void **state)
{
    gfix_t *f = *state;
    sweep_grid_t *g = NULL;

    assert_int_equal(test_sweep_write(f->grid, k_good), 0);
    assert_int_equal(sweep_grid_load(f->grid, NULL, &g), HS_OK);
    assert_int_equal(g->ntraces, 2);
    assert_string_equal(g->traces[1].label, "b.hst");
    assert_int_equal(g->nprofiles, 1);
    assert_int_equal(g->nfixed, 1);
    assert_string_equal(g->fixed[0], "link.gbps=200");
    assert_int_equal(g->naxes, 3);
    assert_string_equal(g->axes[0].key, "ll.depth");
    assert_int_equal(g->axes[0].n, 3);
    assert_string_equal(sweep_axis_value(&g->axes[0], 1), "32");
    assert_string_equal(g->axes[1].assign[1], "host.l1d_bytes=49152");
    assert_string_equal(sweep_axis_value(&g->axes[2], 0), "1.5");
    assert_int_equal(g->nhints, 4);
    assert_int_equal(g->hints[1].bytes, 4096);
    assert_true(g->hints[3].is_auto);
    assert_string_equal(g->objective, "mean");
    assert_string_equal(g->engine, "sim");
    assert_string_equal(g->mode, "closed");
    assert_int_equal(sweep_grid_hash_traces(g), HS_OK);
    assert_int_equal(g->traces[0].size_bytes, 7);
    assert_true(g->traces[0].hash != g->traces[1].hash);
    sweep_grid_free(g);
}

static void test_defaults_and_extra(void **state)
{
    gfix_t *f = *state;
    sweep_grid_t *g = NULL;
    char tr[4200];
    const char *traces[1] = {tr}, *profiles[1] = {"other"}, *sets[1] = {"bw.depth=1K"};
    sweep_grid_extra_t x = {traces, 1, profiles, 1, sets, 1};

    snprintf(tr, sizeof(tr), "%s/a.hst", f->dir);
    assert_int_equal(test_sweep_write(f->grid, "{\"vary\": {\"ll.depth\": [8]}}"), 0);
    assert_int_equal(sweep_grid_load(f->grid, &x, &g), HS_OK);
    assert_int_equal(g->ntraces, 1);
    assert_string_equal(g->profiles[0], "other");
    assert_string_equal(g->fixed[0], "bw.depth=1024");
    assert_int_equal(g->nhints, 1);
    assert_true(g->hints[0].is_auto);
    assert_string_equal(g->objective, "p99");
    assert_string_equal(g->engine, "model");
    assert_string_equal(g->mode, "open");
    sweep_grid_free(g);
}

static void expect_bad(const gfix_t *f, const char *text)
{
    sweep_grid_t *g = NULL;

    assert_int_equal(test_sweep_write(f->grid, text), 0);
    assert_int_equal(sweep_grid_load(f->grid, NULL, &g), HS_ERR_INVALID);
    assert_null(g);
}

static void test_parse_bad(void **state)
{
    gfix_t *f = *state;

    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"colour\": 1}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {\"ll.dept\": [1]}}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {\"ll.depth\": []}}");
    expect_bad(f, "{\"traces\": [\"nope.hst\"], \"profiles\": \"p\"}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {\"ll.depth\": [-1]}}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {\"ll.depth\": [1.5]}}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {\"ll.depth\": [4, 4]}}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"set\": {\"ll.depth\": 4},"
                  " \"vary\": {\"ll.depth\": [8]}}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"hints\": []}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"hints\": [\"big\"]}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"objective\": \"p42\"}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"engine\": \"mod\"}");
    expect_bad(f, "{\"traces\": [\"a.hst\"]}");
    expect_bad(f, "{\"profiles\": \"p\"}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": [\"dir/missing.json\"]}");
    expect_bad(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\",");
    expect_bad(f, "[1, 2]");
}

/* The grid is refused naming the message; what stderr said must contain needle. */
static void expect_said(const gfix_t *f, const char *text, const char *needle)
{
    hs_test_stderr_t cap;
    sweep_grid_t *g = NULL;
    char *err;

    assert_int_equal(test_sweep_write(f->grid, text), 0);
    hs_test_stderr_begin(&cap);
    assert_int_equal(sweep_grid_load(f->grid, NULL, &g), HS_ERR_INVALID);
    err = hs_test_stderr_end(&cap);
    assert_null(g);
    if (!strstr(err, needle))
        print_error("stderr:\n%s\nexpected: %s\n", err, needle);
    assert_non_null(strstr(err, needle));
    free(err);
}

/* A key given twice in any object, and anything after the object, is refused with the key
 * and the byte offset of its second occurrence (a second "hints" used to corrupt the heap:
 * parse_hints appended to the first's array). */
static void test_duplicate_keys(void **state)
{
    static const char *const grids[] = {
        "{\"traces\":[\"a.hst\"],\"profiles\":[\"generic\"],\"hints\":[0],\"hints\":[4096]}",
        "{\"traces\":[\"a.hst\"],\"profiles\":[\"generic\"],\"hints\":[0,64,128,256],"
        "\"hints\":[4096]}",
        "{\"traces\":[\"a.hst\"],\"profiles\":[\"generic\"],\"hints\":\"auto\",\"\\u0068ints\":0}",
        "{\"traces\":[\"a.hst\"],\"profiles\":\"p\",\"vary\":{\"ll.depth\":[8],\"ll.depth\":[9]}}",
        "{\"traces\":[\"a.hst\"],\"traces\":[\"b.hst\"],\"profiles\":\"p\"}",
    };
    static const char *const keys[] = {"hints", "hints", "hints", "ll.depth", "traces"};
    static const char *const second[] = {"\"hints\"", "\"hints\"", "\"\\u0068ints\"",
                                         "\"ll.depth\"", "\"traces\""};
    gfix_t *f = *state;
    char needle[128];

    for (size_t i = 0; i < sizeof(grids) / sizeof(grids[0]); i++) {
        const char *at = NULL; /* the last spelling of the key: its opening quote */
        for (const char *p = grids[i]; (p = strstr(p, second[i])) != NULL; p++)
            at = p;
        snprintf(needle, sizeof(needle), "duplicate key '%s' at byte offset %td", keys[i],
                 at - grids[i]);
        expect_said(f, grids[i], needle);
    }
    expect_said(f, "{\"traces\":[\"a.hst\"],\"profiles\":\"p\"}\n  x",
                "trailing data after the JSON value at byte offset 38");
    expect_said(f, "{\"traces\":[\"a.hst\"],\"profiles\":\"p\"} {}",
                "trailing data after the JSON value at byte offset 36");
}

/* A grid that is a FIFO without a writer is refused at once (reading it waited forever). */
static void test_grid_fifo(void **state)
{
    gfix_t *f = *state;
    char *out = NULL;

    assert_int_equal(hs_test_run(NULL, "rm -f '%s' && mkfifo '%s'", f->grid, f->grid), 0);
    assert_int_equal(hs_test_run(&out, "timeout 30 '%s' sweep --grid '%s' -o '%s/out' --quiet",
                                 hs_test_bin(), f->grid, f->dir), 1);
    if (!strstr(out, "not a regular file"))
        fail_msg("%s", out);
    free(out);
}

static void test_expand_order(void **state)
{
    gfix_t *f = *state;
    sweep_grid_t *g = NULL;
    sweep_plan_t *plan = NULL;
    const char *sets[8];

    assert_int_equal(test_sweep_write(f->grid, k_good), 0);
    assert_int_equal(sweep_grid_load(f->grid, NULL, &g), HS_OK);
    assert_int_equal(sweep_plan_build(g, &plan), HS_OK);
    assert_int_equal(plan->n, 2 * 1 * 3 * 2 * 1 * 4);
    /* hints innermost, then the last axis, ..., the first axis, profiles, traces outermost */
    assert_int_equal(plan->pts[1].hint, 1);
    assert_int_equal(plan->pts[4].ax[1], 1);
    assert_int_equal(plan->pts[4].ax[0], 0);
    assert_int_equal(plan->pts[8].ax[0], 1);
    assert_int_equal(plan->pts[24].trace, 1);
    assert_int_equal(plan->pts[47].ax[0], 2);
    assert_int_equal(plan->pts[47].hint, 3);
    assert_int_equal(sweep_point_sets(g, &plan->pts[13], sets, 8), 4);
    assert_string_equal(sets[0], "link.gbps=200");
    assert_string_equal(sets[1], "ll.depth=32");
    assert_string_equal(sets[2], "host.l1d_bytes=49152");
    assert_string_equal(sets[3], "switch.perturb_factor=1.5");
    sweep_plan_free(plan);
    sweep_grid_free(g);
}

static void test_too_many_points(void **state)
{
    gfix_t *f = *state;
    char text[2048], *p = text;
    const char *keys[] = {"ll.depth", "bw.depth", "host.post_ns", "link.gbps", "conn.qps"};
    sweep_grid_t *g = NULL;
    sweep_plan_t *plan = NULL;

    p += sprintf(p, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {");
    for (int k = 0; k < 5; k++) { /* 30^5 = 24.3 M points */
        p += sprintf(p, "%s\"%s\": [", k ? ", " : "", keys[k]);
        for (int v = 1; v <= 30; v++)
            p += sprintf(p, "%s%d", v > 1 ? ", " : "", v);
        p += sprintf(p, "]");
    }
    sprintf(p, "}}");
    assert_int_equal(test_sweep_write(f->grid, text), 0);
    assert_int_equal(sweep_grid_load(f->grid, NULL, &g), HS_OK);
    assert_int_equal(sweep_plan_build(g, &plan), HS_ERR_INVALID);
    assert_null(plan);
    sweep_grid_free(g);
}

static void test_keys(void **state)
{
    gfix_t *f = *state;
    sweep_grid_t *g = NULL;
    sweep_plan_t *p1 = NULL, *p2 = NULL;
    test_sweep_fake_t fake = {0, 0, SIZE_MAX, 0};
    sweep_eval_t ev = {&test_sweep_fake_ops, &fake};

    assert_int_equal(test_sweep_write(f->grid, k_good), 0);
    assert_int_equal(sweep_grid_load(f->grid, NULL, &g), HS_OK);
    assert_int_equal(sweep_grid_hash_traces(g), HS_OK);
    assert_int_equal(sweep_plan_build(g, &p1), HS_OK);
    assert_int_equal(sweep_plan_build(g, &p2), HS_OK);
    assert_int_equal(sweep_point_keys(g, p1, &ev), HS_OK);
    assert_int_equal(sweep_point_keys(g, p2, &ev), HS_OK);
    for (size_t i = 0; i < p1->n; i++) {
        assert_int_equal(p1->pts[i].key, p2->pts[i].key); /* deterministic */
        for (size_t j = 0; j < i; j++)
            assert_true(p1->pts[i].key != p1->pts[j].key); /* every input counts */
    }
    /* the objective is an input too */
    strcpy(g->objective, "p50");
    assert_int_equal(sweep_point_keys(g, p2, &ev), HS_OK);
    assert_true(p1->pts[0].key != p2->pts[0].key);
    /* and what the evaluator is built from: another build's points are not this one's */
    sweep_eval_ops_t rebuilt = test_sweep_fake_ops;
    sweep_eval_t ev2 = {&rebuilt, &fake};
    strcpy(g->objective, "mean");
    assert_int_equal(sweep_point_keys(g, p2, &ev), HS_OK);
    assert_int_equal(p1->pts[0].key, p2->pts[0].key);
    rebuilt.source = "fake-2";
    assert_int_equal(sweep_point_keys(g, p2, &ev2), HS_OK);
    for (size_t i = 0; i < p1->n; i++)
        assert_true(p1->pts[i].key != p2->pts[i].key);
    sweep_plan_free(p1);
    sweep_plan_free(p2);
    sweep_grid_free(g);
}

/* The CLI refuses a bad grid with exit 1, naming the entry, and writes no point. */
static void cli_expect(const gfix_t *f, const char *text, const char *needle)
{
    char *out = NULL, pts[4200];
    struct stat sb;
    int rc;

    assert_int_equal(test_sweep_write(f->grid, text), 0);
    rc = hs_test_run(&out, "'%s' sweep --grid '%s' -o '%s/out' --quiet", hs_test_bin(),
                     f->grid, f->dir);
    assert_non_null(out);
    if (rc != 1 || !strstr(out, needle))
        print_error("rc %d, output:\n%s\nexpected: %s\n", rc, out, needle);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, needle));
    snprintf(pts, sizeof(pts), "%s/out/points", f->dir);
    assert_int_not_equal(stat(pts, &sb), 0);
    free(out);
}

static void test_cli_bad_grids(void **state)
{
    gfix_t *f = *state;

    cli_expect(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {\"ll.dept\": [1]}}",
               "vary.ll.dept: unknown parameter 'll.dept'");
    cli_expect(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"vary\": {\"bw.depth\": []}}",
               "vary.bw.depth: empty axis");
    cli_expect(f, "{\"traces\": [\"a.hst\", \"gone.hst\"], \"profiles\": \"p\"}",
               "traces[1]: ");
    cli_expect(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"colour\": 1}",
               "unknown key 'colour'");
    cli_expect(f, "{\"traces\": [\"a.hst\"], \"profiles\": \"p\", \"hints\": [8, \"x\"]}",
               "hints[1]: ");
    cli_expect(f, "{\"traces\": [\"a.hst\"],\n \"profiles\": \"p\" oops}",
               "not valid JSON near byte offset 39");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parse_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defaults_and_extra, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_bad, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_fifo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expand_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_many_points, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cli_bad_grids, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
