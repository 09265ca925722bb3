/* cap_drift.h - has the device drifted since it was calibrated? validate replays a probe
 * beside its classes once per round: CAP_DRIFT_MSGS messages of CAP_DRIFT_BYTES on the LL
 * path, closed loop with no think time, which is what calibrate fits its single messages
 * from. Its measured p50 beside the model's says how far the device runs from its profile
 * now. A device slower than when it was calibrated shows as drift, apart from the classes'
 * error, so that a reader (and bench_truth) can tell the two apart.
 *
 *   cap_drift_t d;
 *   cap_drift_init(&d, profile, rounds);                 // the probe and its prediction
 *   cap_drift_measure(&d, &(cap_drift_run_t){...}, r);   // once per round, live
 *   cJSON *j = cap_drift_json(&d);                       // validate's "drift"
 *   cap_drift_release(&d);
 */
#ifndef HS_CAP_DRIFT_H
#define HS_CAP_DRIFT_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "capture/cap_live.h"
#include "model/profile/profile.h"
#include "traces/trace.h"

#define CAP_DRIFT_MSGS 200
#define CAP_DRIFT_PRED_MSGS 2000 /* predicted on 10x the messages: the model's p99, not a
                                  * draw of 200 */
#define CAP_DRIFT_BYTES 8

typedef struct {
    trace_t *tr;          /* the probe, CAP_DRIFT_PRED_MSGS long; CAP_DRIFT_MSGS replayed */
    double pred_p50_us;   /* the model's p50 and p99 of it (jitter included, as validate's */
    double pred_p99_us;   /* figures) */
    double *meas_p50_us;  /* per round: the probe's measured p50 */
    float *meas_lat_us;   /* every round's messages: the tail, pooled over the rounds */
    uint64_t rounds, measured;
} cap_drift_t;

/* Where one round's probe runs: the live session and its connection's message bound. */
typedef struct {
    const cap_live_opts_t *o;
    cap_live_t *live;
    uint64_t max_msg;   /* the connection's buffers, as the classes' (the server's too) */
    uint64_t hysteresis;
    int more;           /* another connection follows this one */
} cap_drift_run_t;

/* Build the probe and predict it on prof (the effective profile validate predicts with). */
hs_status_t cap_drift_init(cap_drift_t *d, const profile_t *prof, uint64_t rounds);
/* Replay the probe live once, as round r's measurement. */
hs_status_t cap_drift_measure(cap_drift_t *d, const cap_drift_run_t *run, uint64_t r);
/* {"probe", "predicted_p50_us", "measured_p50_us" (the median over the rounds),
 * "rounds_p50_us", "drift_pct", "predicted_p99_us", "measured_p99_us" (the rounds'
 * messages pooled: the tail now against the profile's jitter; on this guest the stalls
 * come and go for seconds at a time), "tail_drift_pct"}; each drift is 100 (measured -
 * predicted) / predicted, null before a round was measured. Caller owns it. */
cJSON *cap_drift_json(const cap_drift_t *d);
void cap_drift_release(cap_drift_t *d);

#endif
