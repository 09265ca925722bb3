/* sweep_run.h - running a sweep's points: which are left, and the local, slice and MPI
 * engines. Every engine writes one result file per point (sweep_point.h) and nothing else,
 * so they mix freely: a sweep started under mpirun can be resumed locally, Slurm slices can
 * run at different times, and the merge (sweep_out.h) reads only the files.
 *
 * The merge is a step of its own, run by exactly one process once the points are done: in
 * the local engine the parent, after its last worker has exited; under MPI rank 0, after
 * every rank has finished (the status all-reduce is the barrier); a slice never (the Slurm
 * script's merge job, `hintsim sweep ... --merge`, does it once the whole array has ended).
 * No process scans the point files of others to decide whether it should merge.
 */
#ifndef HS_SWEEP_RUN_H
#define HS_SWEEP_RUN_H

#include <stddef.h>

#include "common/hs_status.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"

/* The merge step (sweep_run_opts_t.merge): ctx is merge_ctx. */
typedef hs_status_t (*sweep_merge_fn)(void *ctx);

typedef struct {
    const char *dir;     /* output directory (points/ is created under it) */
    unsigned jobs;       /* worker processes for the local engine (>= 1) */
    unsigned slice_i;    /* this run's slice: points whose index % slice_n == slice_i */
    unsigned slice_n;    /* 0 = no slicing */
    int mpi;             /* split the points across the ranks of MPI_COMM_WORLD */
    sweep_merge_fn merge; /* NULL: no merge; else called once, by the one merging process,
                           * when every point of the run succeeded (never for a slice) */
    void *merge_ctx;
} sweep_run_opts_t;

typedef struct {
    size_t total;      /* points in the plan */
    size_t mine;       /* points this run (slice) was responsible for */
    size_t reused;     /* of those, already done before this run (not recomputed) */
    size_t computed;   /* evaluated by this run (summed over ranks under MPI) */
    size_t *done_idx;  /* owned: plan indices of the points this process (rank) computed */
    size_t ndone;
    int rank, nranks;  /* 0 and 1 without MPI */
    int merged;        /* 1 in the process that ran opts->merge (whatever it returned) */
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
 * spread over the MPI ranks (every rank calls this; sweep_mpi_init must have run), then
 * run opts->merge in the one process that merges (see above): its status is returned
 * there. Fills *stats (release with sweep_stats_release). */
hs_status_t sweep_run(const sweep_grid_t *g, const sweep_plan_t *plan, const sweep_eval_t *ev,
                      const sweep_run_opts_t *opts, sweep_stats_t *stats);
void sweep_stats_release(sweep_stats_t *stats);

/* sweep_run's engine for evaluators with ops->prepare (sweep_batch.c): this process's share
 * of todo (all of it, or under MPI every nranks-th from its rank on) in batches, in this
 * process; fills stats' done list, computed and run_s. */
hs_status_t sweep_run_batched(const sweep_grid_t *g, const sweep_plan_t *plan, const size_t *todo,
                              size_t ntodo, const sweep_eval_t *ev, const sweep_run_opts_t *o,
                              sweep_stats_t *stats);

#endif
