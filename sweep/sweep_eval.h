/* sweep_eval.h - how one sweep point is evaluated: an ops table, so the sweep machinery
 * (keys, resume, local/MPI/Slurm engines, merge) does not depend on what computes a point.
 * sweep_eval_model.c plugs in the real model/simulator; the unit tests plug in a closed-form
 * stand-in.
 */
#ifndef HS_SWEEP_EVAL_H
#define HS_SWEEP_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_field.h"
#include "common/hs_status.h"
#include "model/predict/predict.h"
#include "sweep/sweep_grid.h"

/* The figures a point keeps of its prediction, each defined here once: X(member, kind of
 * hs_field.h), named as in PRED_FIGURES (model/predict/predict.h), from which they are copied. They
 * drive sweep_result_t's members, the point files (sweep_point.c) and the merged CSV and
 * JSON columns (sweep_out.c), in this order. */
#define SWEEP_RESULT_FIGURES(X)                                                             \
    X(p50_us, F64) X(p99_us, F64) X(mean_us, F64) X(throughput_gbps, F64)                    \
    X(ll_fraction, F64) X(switches, U64)

/* What one point produced. */
typedef struct {
    uint64_t hint_bytes; /* the hint evaluated (for "auto": the recommended one) */
    double value;        /* the objective's value for that hint */
    SWEEP_RESULT_FIGURES(HS_FIELD_MEMBER)
    pred_costs_t costs; /* the cost terms (PRED_COSTS), after the figures in every output:
                         * CSV columns cost_<key>_us, JSON "costs_us" */
} sweep_result_t;

typedef struct sweep_eval_ops {
    const char *name;
    /* Check the whole grid can run (profiles load, overrides apply) before any point runs;
     * log the first error naming the entry. May cache what it loads in ctx. */
    hs_status_t (*check)(void *ctx, const sweep_grid_t *g);
    /* Hash of the effective profile of a point (after every override): part of its key. */
    hs_status_t (*profile_hash)(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                                uint64_t *out);
    /* Evaluate one point. Must be deterministic: the same inputs give the same bytes. */
    hs_status_t (*eval)(void *ctx, const sweep_grid_t *g, const sweep_point_t *pt,
                        sweep_result_t *out);
    /* Optional (NULL: points one at a time, in forked workers or MPI ranks): an engine that
     * computes points in batches (the GPU: sweep_eval_cuda.h) is handed the n points this
     * process is about to eval, all at once, and eval then returns what it computed. The
     * runner calls it in this process only (sweep_run_batched in sweep_run.h). */
    hs_status_t (*prepare)(void *ctx, const sweep_grid_t *g, const sweep_point_t *const *pts,
                           size_t n);
    /* What the evaluator is built from (the build's SWEEP_EVAL_SOURCE: sweep_eval_model.h),
     * part of every point's key: a build whose evaluator changed recomputes a point instead
     * of reusing one an older build computed. */
    const char *source;
} sweep_eval_ops_t;

/* An evaluator bound to its state. */
typedef struct {
    const sweep_eval_ops_t *ops;
    void *ctx;
} sweep_eval_t;

/* 1 if a lower objective value is better (latencies), 0 if higher is (throughput). */
int sweep_objective_lower_better(const char *objective);

#endif
