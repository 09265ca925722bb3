/* cap_replay.h - the live replay: one trace's message sequence posted on a connected
 * two-path endpoint under one hint, per-message latencies measured as the model defines
 * them (model/MODEL.md section 7).
 */
#ifndef HS_CAP_REPLAY_H
#define HS_CAP_REPLAY_H

#include <stdint.h>

#include "capture/cap_conn.h"
#include "model/predict.h"
#include "traces/trace.h"

typedef struct {
    const trace_t *tr;
    uint64_t hint;        /* 0 = no hint: everything on BW */
    uint64_t hysteresis;  /* switch.hysteresis of the profile */
    pred_mode_t mode;     /* open: the trace's post times; closed: after the previous one */
} cap_replay_opts_t;

/* Replay o->tr on c; raw->lat_us and raw->path (n entries each, caller's) get the per-
 * message latency (us) and path; switches, drain and stalls are counted in raw. */
hs_status_t cap_replay_run(cap_conn_t *c, const cap_replay_opts_t *o, pred_raw_t *raw);

#endif
