/* model.h - the analytical path model as a prediction engine (see model/predict.h and the
 * recursion in model/MODEL.md), and the isolated per-size cost curves of each path. */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include "model/predict.h"

extern const pred_engine_ops_t model_engine_ops;

/* One point of the isolated cost curves (the analogue of UCX_PROTO_INFO). */
typedef struct {
    uint64_t size_bytes;
    double ll_lat_us, bw_lat_us;   /* one message alone, closed loop */
    double ll_gbps, bw_gbps;       /* a back-to-back stream of that size on the path alone */
} model_curve_pt_t;

/* Curves for sizes 1, 2, 4, ... up to max_bytes (LL alone = every message on LL with both
 * QPs live; BW alone = hint 0). *crossover_bytes = the smallest size at which the BW path's
 * latency is lower than the LL path's (0 if it never is). The caller frees *out. */
hs_status_t model_curves(const profile_t *p, uint64_t max_bytes, model_curve_pt_t **out,
                         size_t *n_out, uint64_t *crossover_bytes);

#endif
