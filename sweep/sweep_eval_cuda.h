/* sweep_eval_cuda.h - the CUDA sweep engine: one trace against a batch of what-if replays
 * on the GPU, one thread per replay (`hintsim sweep --engine cuda`).
 *
 * A replay is the analytical model's chunk-by-chunk recursion of model/MODEL.md (the base
 * replay, pred_opts_t.every_chunk: no skip, memo or closed form), with the per-path rules of
 * model/path_rules.h and the latency histogram of model/lat_hist.h compiled for the GPU, so
 * that its figures are the CPU model's: p50/p90/p99/p999 from the same streaming histogram,
 * mean, max, throughput, LL share, switches, drain, stalls and the cost terms, with the
 * profile's jitter (MODEL.md section 8) as the CPU adds it. The trace lies in device memory
 * once (sizes and post times or think times, staged by each block through shared memory);
 * each replay's rings, open batches and histogram are its own.
 *
 * Built only when CMake finds a CUDA compiler (sweep/cuda.cmake); without one, or without a
 * GPU at run time, every entry point returns HS_ERR_UNSUPPORTED or HS_ERR_ENV saying why.
 */
#ifndef HS_SWEEP_EVAL_CUDA_H
#define HS_SWEEP_EVAL_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"
#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"
#include "traces/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the library entry point ---------------------------------------------------------- */

typedef struct scu_ctx scu_ctx_t;

/* What the last scu_replay_batch did. */
typedef struct {
    int device;              /* the CUDA device used */
    char device_name[128];
    size_t batch;            /* replays per kernel launch (the last launch's) */
    size_t launches;
    size_t bytes_per_replay; /* device memory per replay: rings, open batches, histogram */
    double kernel_s;         /* GPU time of the replays and summaries (CUDA events) */
} scu_stats_t;

/* Open the GPU for this process: device (-1: the local MPI/Slurm rank modulo the devices,
 * from OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID or SLURM_LOCALID; else 0).
 * HS_ERR_ENV (logged, saying why) without a usable device; HS_ERR_UNSUPPORTED in a build
 * without CUDA. */
hs_status_t scu_open(int device, scu_ctx_t **out);
void scu_close(scu_ctx_t *c);

/* Replay tr (checked by pred_check_trace for every profile) under mode for each of n
 * (profiles[i], hints[i]) with the model's recursion on the GPU, and summarise each into
 * out[i] as pred_summarize does (no size classes and no cold-start figures: count and the
 * figures cover the messages pred_summarize counts). include_cold as pred_opts_t's.
 * The caller releases each out[i] with pred_result_release. HS_ERR_INVALID (logged, naming
 * the profile) when a replay's times are not finite. */
hs_status_t scu_replay_batch(scu_ctx_t *c, const trace_t *tr, pred_mode_t mode,
                             int include_cold, const profile_t *const *profiles,
                             const uint64_t *hints, size_t n, pred_result_t *out,
                             scu_stats_t *stats);

/* Why the engine is or is not available in this build (CMake's finding), for doctor. */
const char *scu_build_note(void);
/* 1 when this build has the engine. */
int scu_built(void);

/* ---- the sweep evaluator --------------------------------------------------------------- */

/* The model evaluator of sweep_eval_model.h (its keys, checks and profiles), with its points
 * computed on the GPU in batches (sweep_eval_ops_t.prepare): fixed hints as one replay each;
 * "auto" points are the recommender's (rec_run, on the CPU). The grid's engine must be
 * "model". Release with sweep_eval_cuda_destroy. */
hs_status_t sweep_eval_cuda_create(const sweep_grid_t *g, sweep_eval_t *out);
void sweep_eval_cuda_destroy(sweep_eval_t *ev);

#ifdef __cplusplus
}
#endif

#endif
