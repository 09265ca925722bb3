/* sweep_run.h - running a sweep's points: which are left, and the local, slice and MPI
 * engines. Every engine writes one result file per point (sweep_point.h) and nothing else,
 * so they mix freely: a sweep started under mpirun can be resumed locally, Slurm slices can
 * run at different times, and the merge (sweep_out.h) reads only the files.
 */
#ifndef HS_SWEEP_RUN_H
#define HS_SWEEP_RUN_H

#include <stddef.h>

#include "common/hs_status.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"

typedef struct {
    const char *dir;     /* output directory (points/ is created under it) */
    unsigned jobs;       /* worker processes for the local engine (>= 1) */
    unsigned slice_i;    /* this run's slice: points whose index % slice_n == slice_i */
    unsigned slice_n;    /* 0 = no slicing */
    int mpi;             /* split the points across the ranks of MPI_COMM_WORLD */
} sweep_run_opts_t;

typedef struct {
    size_t total;      /* points in the plan */
    size_t mine;       /* points this run (slice) was responsible for */
    size_t reused;     /* of those, already done before this run (not recomputed) */
    size_t computed;   /* evaluated by this run (summed over ranks under MPI) */
    size_t *done_idx;  /* owned: plan indices of the points this process (rank) computed */
    size_t ndone;
    int rank, nranks;  /* 0 and 1 without MPI */
    double run_s;      /* seconds spent evaluating: from the start of the work (after the
                        * barrier under MPI) until every worker / rank finished */
} sweep_stats_t;

/* Points of slice I/N (all with slice_n == 0) that have no valid result file under dir.
 * *todo is malloc'ed (caller frees); *nmine counts the slice's points, done or not. */
hs_status_t sweep_run_todo(const sweep_plan_t *plan, const char *dir, unsigned slice_i,
                           unsigned slice_n, size_t **todo, size_t *ntodo, size_t *nmine);

/* Evaluate the points todo[0..ntodo) with jobs worker processes (1: in this process),
 * writing their result files under dir. On failure the first error is logged and returned;
 * points finished before it keep their files. */
hs_status_t sweep_run_local(const sweep_grid_t *g, const sweep_plan_t *plan, const size_t *todo,
                            size_t ntodo, const sweep_eval_t *ev, const char *dir,
                            unsigned jobs);

/* The whole run per opts: find what is left, then evaluate it locally, as one slice, or
 * spread over the MPI ranks (every rank calls this; sweep_mpi_init must have run).
 * Fills *stats (release with sweep_stats_release). */
hs_status_t sweep_run(const sweep_grid_t *g, const sweep_plan_t *plan, const sweep_eval_t *ev,
                      const sweep_run_opts_t *opts, sweep_stats_t *stats);
void sweep_stats_release(sweep_stats_t *stats);

#endif
