/* test_sweep_mpi.c - the MPI engine: the same grid under `mpirun -n 4` gives a merged CSV
 * byte-identical to a local run's, every rank computed points, and exactly one process,
 * rank 0, merged (stand-in evaluator; test_sweep_cli proves the same through hintsim sweep
 * --mpi with the model). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "sweep/sweep_out.h"
#include "sweep/sweep_point.h"
#include "sweep/sweep_run.h"
#include "tests/hs_test.h"
#include "tests/test_sweep_fake.h"

static const char *k_grid =
    "{\"traces\": [\"a.hst\"], \"profiles\": [\"p1\"],\n"
    " \"vary\": {\"ll.depth\": [16, 32, 64, 128], \"link.gbps\": [25, 100, 400]},\n"
    " \"hints\": [0, 4096, \"auto\"], \"objective\": \"throughput\"}";

static char *local_csv(const char *grid, const char *dir)
{
    test_sweep_fake_t fake = {0, 0, SIZE_MAX, 0};
    sweep_eval_t ev = {&test_sweep_fake_ops, &fake};
    sweep_run_opts_t ro = {.dir = dir, .jobs = 2};
    sweep_grid_t *g = NULL;
    sweep_plan_t *plan = NULL;
    sweep_stats_t s;
    sweep_result_t *res = NULL;
    size_t missing = 1;
    char path[4300], *csv = NULL;

    assert_int_equal(sweep_grid_load(grid, NULL, &g), HS_OK);
    assert_int_equal(sweep_grid_hash_traces(g), HS_OK);
    assert_int_equal(sweep_plan_build(g, &plan), HS_OK);
    assert_int_equal(sweep_point_keys(g, plan, &ev), HS_OK);
    assert_int_equal(sweep_run(g, plan, &ev, &ro, &s), HS_OK);
    assert_int_equal(sweep_out_collect(plan, dir, &res, &missing), HS_OK);
    assert_int_equal(missing, 0);
    assert_int_equal(sweep_out_write(g, plan, res, dir), HS_OK);
    snprintf(path, sizeof(path), "%s/sweep.csv", dir);
    assert_int_equal(hs_read_file(path, &csv, NULL), HS_OK);
    free(res);
    sweep_stats_release(&s);
    sweep_plan_free(plan);
    sweep_grid_free(g);
    return csv;
}

static void test_mpi_matches_local(void **state)
{
    char *dir = hs_test_tmpdir(), grid[4200], path[4200], *out = NULL, *a, *b = NULL;
    const char *helper = getenv("SWEEP_MPI_HELPER");
    int rc;

    (void)state;
    if (hs_test_run(NULL, "command -v mpirun >/dev/null") != 0 || !helper)
        skip();
    snprintf(path, sizeof(path), "%s/a.hst", dir);
    test_sweep_write(path, "trace for mpi");
    snprintf(grid, sizeof(grid), "%s/grid.json", dir);
    test_sweep_write(grid, k_grid);
    snprintf(path, sizeof(path), "%s/local", dir);
    a = local_csv(grid, path);
    rc = hs_test_run(&out, "ASAN_OPTIONS=detect_leaks=0 mpirun -n 4 --oversubscribe "
                     "--allow-run-as-root '%s' '%s' '%s/mpi'", helper, grid, dir);
    if (rc != 0)
        print_error("mpirun exit %d:\n%s\n", rc, out ? out : "");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "ranks 4 computed 36"));
    free(out);
    /* one merge, by rank 0 */
    snprintf(path, sizeof(path), "%s/mpi/merges.log", dir);
    assert_int_equal(hs_read_file(path, &out, NULL), HS_OK);
    assert_int_equal(strncmp(out, "rank 0 pid ", 11), 0);
    assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out));
    snprintf(path, sizeof(path), "%s/mpi/sweep.csv", dir);
    assert_int_equal(hs_read_file(path, &b, NULL), HS_OK);
    assert_string_equal(a, b);
    /* the counter spread the points: several writer pids (on 2 loaded cores a rank may
     * start too late for any) */
    free(out);
    rc = hs_test_run(&out, "grep -h '\"pid\"' '%s'/mpi/points/*.json | sort -u | wc -l", dir);
    assert_int_equal(rc, 0);
    assert_true(atoi(out) >= 2 && atoi(out) <= 4);
    free(out);
    free(a);
    free(b);
    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mpi_matches_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
