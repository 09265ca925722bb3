/* sweep_eval_model.h - the evaluator that `hintsim sweep` runs: each point replays its trace
 * under its profile (after overrides) with the analytical model or the SimGrid simulator
 * (grid "engine"), for a fixed hint through pred_run, or for "auto" through the
 * recommender, and reports the objective's value.
 */
#ifndef HS_SWEEP_EVAL_MODEL_H
#define HS_SWEEP_EVAL_MODEL_H

#include "common/hs_status.h"
#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"

/* Bind the evaluator for g (loads each trace once, logging the entry of one that does not
 * load; g must outlive it). Release with sweep_eval_model_destroy. */
hs_status_t sweep_eval_model_create(const sweep_grid_t *g, sweep_eval_t *out);
void sweep_eval_model_destroy(sweep_eval_t *ev);

/* For engines built on this one (sweep_eval_cuda.h), after its check(): point pt's profile
 * with every override applied and validated (logged otherwise; the caller frees it), grid
 * trace i as loaded, and a replay's figures as the point's result under the grid's
 * objective. */
hs_status_t sweep_eval_model_profile(const sweep_eval_t *ev, const sweep_point_t *pt,
                                     profile_t **out);
const trace_t *sweep_eval_model_trace(const sweep_eval_t *ev, size_t i);
void sweep_eval_model_result(const sweep_eval_t *ev, const pred_result_t *r, sweep_result_t *out);

/* The id of the sources the evaluators are built from (16 hex digits: sweep/eval_source.cmake
 * hashes common/, traces/, model/, sim/ and sweep/sweep_eval*), the same on every host
 * built from the same tree; `hintsim version` prints it. */
const char *sweep_eval_source(void);

#endif
