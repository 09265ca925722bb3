/* calib_forward.h - the forward model of calibration: what a prediction engine says the
 * benchmark's figures should have been under a profile. */
#ifndef HS_CALIB_FORWARD_H
#define HS_CALIB_FORWARD_H

#include "calib/calib_fit.h"
#include "model/predict/predict.h"

/* calib_predict_fn_t for "isolated message" observations (capture bench's
 * post-to-completion median): replays a few well-spaced messages of obs->size_bytes under
 * obs->hint_bytes through the engine ctx (a const pred_engine_ops_t *) and returns the
 * median latency. */
hs_status_t calib_predict_isolated(void *ctx, const profile_t *p, const calib_obs_t *obs,
                                   double *pred_us);

/* calib_predict_fn_t that replays obs->trace (the benchmark's own messages: their sizes and
 * post times, in obs->mode: what the live replay ran) under obs->hint_bytes, with obs->set applied for the duration, and
 * returns the median latency of its non-cold messages. Falls back to
 * calib_predict_isolated when obs->trace is NULL. ctx: a const pred_engine_ops_t *. */
hs_status_t calib_predict_replay(void *ctx, const profile_t *p, const calib_obs_t *obs,
                                 double *pred_us);

#endif
