/* sweep_batch.c - the runner for evaluators that compute points in batches
 * (sweep_eval_ops_t.prepare: the GPU engine, sweep_eval_cuda.h).
 *
 * One process per device: no forked workers. The points left (todo) are split statically,
 * rank r of N taking todo[k] with k % N == r (a dynamic counter would hand out one point at a
 * time, and a GPU needs thousands at once); a Slurm task's slice is already its share. Each
 * share goes to prepare() in batches of SWEEP_BATCH_POINTS, then every point is written
 * through sweep_point_run as by the other engines, so point files, resume and the merge are
 * the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "sweep/sweep_mpi.h"
#include "sweep/sweep_point.h"
#include "sweep/sweep_run.h"

#define SWEEP_BATCH_POINTS 65536

static hs_status_t run_share(const sweep_grid_t *g, const sweep_plan_t *plan, const size_t *todo,
                             size_t ntodo, const sweep_eval_t *ev, const char *dir, int rank,
                             int nranks, size_t *done, size_t *n)
{
    const sweep_point_t **pts = malloc(SWEEP_BATCH_POINTS * sizeof(*pts));
    size_t *idx = malloc(SWEEP_BATCH_POINTS * sizeof(*idx));
    hs_status_t st = pts && idx ? HS_OK : HS_ERR_NOMEM;
    size_t k = (size_t)rank;

    if (st != HS_OK)
        goto free_bufs;
    while (k < ntodo) {
        size_t m = 0;
        for (; k < ntodo && m < SWEEP_BATCH_POINTS; k += (size_t)nranks) {
            idx[m] = todo[k];
            pts[m++] = &plan->pts[todo[k]];
        }
        st = ev->ops->prepare(ev->ctx, g, pts, m);
        if (st != HS_OK)
            goto free_bufs;
        for (size_t j = 0; j < m; j++) {
            st = sweep_point_run(g, pts[j], ev, dir);
            if (st != HS_OK)
                goto free_bufs;
            done[(*n)++] = idx[j];
        }
    }
free_bufs:
    free(pts);
    free(idx);
    return st;
}

hs_status_t sweep_run_batched(const sweep_grid_t *g, const sweep_plan_t *plan, const size_t *todo,
                              size_t ntodo, const sweep_eval_t *ev, const sweep_run_opts_t *o,
                              sweep_stats_t *stats)
{
    char sub[4096];
    hs_status_t st = HS_OK, all;
    size_t n = 0;
    uint64_t t0;

    snprintf(sub, sizeof(sub), "%s/points", o->dir);
    if (stats->rank == 0)
        st = hs_mkdir_p(sub);
    stats->done_idx = malloc((ntodo ? ntodo : 1) * sizeof(*stats->done_idx));
    if (!stats->done_idx)
        st = HS_ERR_NOMEM;
    if (o->mpi && sweep_mpi_barrier() != HS_OK)
        return HS_ERR_ENV;
    t0 = hs_now_ns();
    if (st == HS_OK)
        st = run_share(g, plan, todo, ntodo, ev, o->dir, stats->rank, stats->nranks,
                       stats->done_idx, &n);
    stats->ndone = n;
    stats->computed = n;
    if (o->mpi && sweep_mpi_combine(st, n, &all, &stats->computed) != HS_OK)
        return HS_ERR_ENV;
    stats->run_s = (double)(hs_now_ns() - t0) / 1e9;
    return o->mpi ? all : st;
}
