/* model.h - the analytical path model as a prediction engine (see model/predict/predict.h and the
 * recursion in model/MODEL.md), and the isolated per-size cost curves of each path. */
#ifndef HS_MODEL_H
#define HS_MODEL_H

#include "model/predict/predict.h"

extern const pred_engine_ops_t model_engine_ops;

/* The replay's accelerators (model/engine/README.md): each gives what the chunk-by-chunk
 * replay gives, faster, where its condition holds. pred_opts_t.model_off leaves the ones
 * named off (with those that need them: ENTRY needs SKIP, STEADY needs BOUND);
 * pred_opts_t.every_chunk leaves all off. */
enum {
    MODEL_ACCEL_SKIP = 1 << 0,   /* the steady-state skip over a message's full chunks */
    MODEL_ACCEL_ENTRY = 1 << 1,  /* a long message's start on an idle path, kept */
    MODEL_ACCEL_MEMO = 1 << 2,   /* a segmented message's replay, applied again shifted */
    MODEL_ACCEL_BOUND = 1 << 3,  /* a link-bound message in closed form */
    MODEL_ACCEL_STEADY = 1 << 4, /* the ring a link-bound message left, by formulas */
    MODEL_ACCEL_SERIAL = 1 << 5, /* a window of one batch in closed form */
    MODEL_ACCEL_ALL = (1 << 6) - 1
};

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

/* The size ranges of pts[0..n) (sizes ascending) over which the BW path beats the LL path:
 * its latency lower (MODEL_CURVE_LAT: ll_lat_us > bw_lat_us * (1 + rel)) or its stream
 * faster (MODEL_CURVE_STREAM: bw_gbps > ll_gbps * (1 + rel)); at most max [lo, hi] pairs
 * into r (consecutive sizes form one range); returns how many. */
typedef enum { MODEL_CURVE_LAT, MODEL_CURVE_STREAM } model_curve_metric_t;
size_t model_curve_ranges(const model_curve_pt_t *pts, size_t n, model_curve_metric_t m,
                          double rel, uint64_t (*r)[2], size_t max);
/* Ranges as people read them: "256B - 1M", "8M", "1K - 4K, 8M" ("" when nr is 0). */
void model_curve_ranges_text(const uint64_t (*r)[2], size_t nr, char *buf, size_t len);

/* Offered load of a trace against the modelled link, for the open-loop overload check. */
typedef struct {
    double bytes;         /* every record's payload */
    double span_us;       /* last post - first post */
    double link_busy_us;  /* link time the payload needs (serialisation + packets) */
    double offered_gbps;  /* bytes * 8 / span (0 when span is 0) */
    double capacity_gbps; /* what the modelled link carries for this size mix */
    int overloaded;       /* link_busy_us > span_us (more than one record) */
} model_load_t;

/* Fill *out for tr under p (nothing allocated). */
void model_offered_load(const trace_t *tr, const profile_t *p, model_load_t *out);
/* When l is overloaded, write the user-facing warning into buf and return 1; else 0. */
int model_load_warning(const model_load_t *l, char *buf, size_t len);

#endif
