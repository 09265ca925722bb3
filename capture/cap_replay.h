/* cap_replay.h - the live replay: one trace's message sequence posted on a connected
 * two-path endpoint under one hint, per-message latencies measured as the model defines
 * them (model/MODEL.md section 7; what the live replay does, rule by rule: section 7b,
 * "Live replay").
 *
 * Whenever it is not posting (waiting for a post time, a send-queue slot, a drain or, in
 * closed loop, a message's completion) the replay runs a progress loop that polls the send
 * CQs of both paths, so a completion is stamped when it is first polled, whichever path
 * the replay is busy with. It measures its own overhead: the time between two progress
 * passes (how late a completion can be stamped) and how far posts ran behind their
 * schedule.
 */
#ifndef HS_CAP_REPLAY_H
#define HS_CAP_REPLAY_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "capture/cap_conn.h"
#include "model/predict/predict.h"
#include "traces/trace.h"

/* The replay's own cost, in us. Percentiles come from a log-linear histogram (32 bins per
 * octave: within 3%); max is exact. The replay reads the clock sparingly (a clock read in an
 * emulated guest can stall the device being measured), so the time between polls is
 * sampled per interval between two of its clock reads: the interval's length over the
 * progress passes in it (every pass near a post time, up to 256 passes far from one). */
typedef struct {
    uint64_t polls;           /* progress passes (each polls both paths' send CQs) */
    double poll_gap_p50_us;   /* the mean time from one pass to the next, per interval, */
    double poll_gap_p99_us;   /* over the whole replay (posts included): how late a */
    double poll_gap_max_us;   /* completion's stamp can be after its CQE could be polled */
    uint64_t posts;           /* messages posted */
    double post_late_p50_us;  /* per message: when its post began minus its scheduled */
    double post_late_p99_us;  /* time (open: the trace's; closed: the previous message's */
    double post_late_max_us;  /* completion plus think time) */
    double post_to_completion_p50_us; /* per message: completion minus when its post */
    double post_to_completion_p99_us; /* began, capture bench's definition of latency: */
    double post_to_completion_max_us; /* the measured latency less the late post */
    uint64_t fences; /* zero-byte WRs posted to close an unsignalled batch (cap_qp_t) */
} cap_replay_overhead_t;

typedef struct {
    const trace_t *tr;
    uint64_t hint;        /* 0 = no hint: everything on BW */
    uint64_t hysteresis;  /* switch.hysteresis of the profile */
    pred_mode_t mode;     /* open: the trace's post times; closed: after the previous one */
    cap_replay_overhead_t *overhead; /* out, may be NULL: the replay's own cost */
} cap_replay_opts_t;

/* Replay o->tr on c; raw->lat_us and raw->path (n entries each, caller's) get the per-
 * message latency (us) and path; switches, drain and stalls are counted in raw;
 * *o->overhead (when set) gets the replay's own cost. c's endpoint is left as it was (its
 * completion callbacks and progress hook are cleared). */
hs_status_t cap_replay_run(cap_conn_t *c, const cap_replay_opts_t *o, pred_raw_t *raw);

/* Warm c up for a replay of o->tr: CAP_REPLAY_WARMUP_SMALL messages of the trace's smallest
 * size then CAP_REPLAY_WARMUP_LARGE of its largest, closed loop, under o's hint (so the
 * paths the trace starts on and ends up on have both carried traffic), their latencies
 * discarded. A fresh connection's first messages are slow (on the soft-RoCE guest,
 * back-to-back 8 B messages had a p99 of 211-231 us over five fresh connections of 200
 * each, against 118 us over 1000 on one connection, in one boot): without this, a trace's
 * p99 over a few hundred messages would measure the connection's start, which the model
 * does not describe. */
#define CAP_REPLAY_WARMUP_SMALL 200
#define CAP_REPLAY_WARMUP_LARGE 2
hs_status_t cap_replay_warmup(cap_conn_t *c, const cap_replay_opts_t *o);

/* Fold one run's overhead into acc (start with {0}): the largest of each figure, the
 * counts summed; what validate reports per candidate over its rounds. */
void cap_replay_overhead_merge(cap_replay_overhead_t *acc, const cap_replay_overhead_t *run);
/* {"polls", "poll_gap_us": {"p50", "p99", "max"}, "posts", "post_late_us": {...},
 * "post_to_completion_us": {...}, "fences"}; caller owns the result (NULL when out of
 * memory). */
cJSON *cap_replay_overhead_json(const cap_replay_overhead_t *ov);

#endif
