/* test_sweep_mpi_helper.c - `mpirun -n N test_sweep_mpi_helper GRID DIR`: the MPI engine over
 * the stand-in evaluator (what hintsim sweep --mpi does, minus the model); the merge step,
 * given to sweep_run, also appends "rank R pid P" to DIR/merges.log, so that a test can
 * count the processes that merged (one: rank 0). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sweep/sweep_mpi.h"
#include "sweep/sweep_out.h"
#include "sweep/sweep_point.h"
#include "sweep/sweep_run.h"
#include "tests/test_sweep_fake.h"

typedef struct {
    const sweep_grid_t *g;
    const sweep_plan_t *plan;
    const char *dir;
} merge_ctx_t;

static hs_status_t merge(void *ctx)
{
    const merge_ctx_t *m = ctx;
    const sweep_grid_t *g = m->g;
    const sweep_plan_t *plan = m->plan;
    const char *dir = m->dir;
    sweep_result_t *res = NULL;
    size_t missing = 0;
    char log[4200];
    FILE *fp;
    int rank = 0, n = 0;
    hs_status_t st = sweep_mpi_init(&rank, &n);

    snprintf(log, sizeof(log), "%s/merges.log", dir);
    if (st != HS_OK || !(fp = fopen(log, "a")))
        return HS_ERR_IO;
    fprintf(fp, "rank %d pid %ld\n", rank, (long)getpid());
    if (fclose(fp) != 0)
        return HS_ERR_IO;
    st = sweep_out_collect(plan, dir, &res, &missing);

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
    test_sweep_fake_t fake = {2000, 0, SIZE_MAX, 0};
    sweep_eval_t ev = {&test_sweep_fake_ops, &fake};
    sweep_grid_t *g = NULL;
    sweep_plan_t *plan = NULL;
    sweep_stats_t s = {0};
    hs_status_t st;

    if (argc != 3) {
        fprintf(stderr, "usage: %s GRID DIR\n", argv[0]);
        return 2;
    }
    merge_ctx_t m = {NULL, NULL, argv[2]};
    sweep_run_opts_t ro = {.dir = argv[2], .jobs = 1, .mpi = 1, .merge = merge, .merge_ctx = &m};
    if ((st = sweep_grid_load(argv[1], NULL, &g)) == HS_OK &&
        (st = sweep_grid_hash_traces(g)) == HS_OK && (st = sweep_plan_build(g, &plan)) == HS_OK &&
        (st = sweep_point_keys(g, plan, &ev)) == HS_OK) {
        m.g = g;
        m.plan = plan;
        st = sweep_run(g, plan, &ev, &ro, &s);
    }
    if (st == HS_OK && s.rank == 0)
        printf("ranks %d computed %zu\n", s.nranks, s.computed);
    sweep_mpi_finalize();
    sweep_stats_release(&s);
    sweep_plan_free(plan);
    sweep_grid_free(g);
    return hs_status_exit_code(st);
}
