/* test_sweep_mpi_helper.c - `mpirun -n N test_sweep_mpi_helper GRID DIR`: the MPI engine over
 * the stand-in evaluator (what hintsim sweep --mpi does, minus the model); rank 0 merges. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sweep/sweep_mpi.h"
#include "sweep/sweep_out.h"
#include "sweep/sweep_point.h"
#include "sweep/sweep_run.h"
#include "tests/test_sweep_fake.h"

static hs_status_t merge(const sweep_grid_t *g, const sweep_plan_t *plan, const char *dir)
{
    sweep_result_t *res = NULL;
    size_t missing = 0;
    hs_status_t st = sweep_out_collect(plan, dir, &res, &missing);

    if (st == HS_OK && missing)
        st = HS_ERR_CHECK;
    if (st == HS_OK)
        st = sweep_out_write(g, plan, res, dir);
    free(res);
    return st;
}

int main(int argc, char **argv)
{
    /* 2 ms a point: long enough that every rank takes some points from the shared counter */
    test_sweep_fake_t fake = {2000, 0, SIZE_MAX};
    sweep_eval_t ev = {&test_sweep_fake_ops, &fake};
    sweep_grid_t *g = NULL;
    sweep_plan_t *plan = NULL;
    sweep_stats_t s = {0};
    hs_status_t st;

    if (argc != 3) {
        fprintf(stderr, "usage: %s GRID DIR\n", argv[0]);
        return 2;
    }
    sweep_run_opts_t ro = {argv[2], 1, 0, 0, 1};
    if ((st = sweep_grid_load(argv[1], NULL, &g)) == HS_OK &&
        (st = sweep_grid_hash_traces(g)) == HS_OK && (st = sweep_plan_build(g, &plan)) == HS_OK &&
        (st = sweep_point_keys(g, plan, &ev)) == HS_OK &&
        (st = sweep_run(g, plan, &ev, &ro, &s)) == HS_OK && s.rank == 0)
        st = merge(g, plan, argv[2]);
    if (st == HS_OK && s.rank == 0)
        printf("ranks %d computed %zu\n", s.nranks, s.computed);
    sweep_mpi_finalize();
    sweep_stats_release(&s);
    sweep_plan_free(plan);
    sweep_grid_free(g);
    return hs_status_exit_code(st);
}
