/* calib_run.h - the measurements of `hintsim calibrate`: synthetic traces replayed through
 * validate's own live replay.
 *
 * Every figure comes from a synthetic trace replayed by cap_replay_run on a connection from
 * cap_live_connect, exactly as `validate` replays a user's trace (loopback, or --server /
 * --connect: two processes, as the user runs validate). The traces (calib_plan):
 *   single_ll / single_bw   closed-loop ping-pong (one message in flight), a row of
 *                           messages per size, on each path (hint = largest size; hint 0);
 *   stream_ll / stream_bw   open-loop streams: a burst of back-to-back messages of one size
 *                           at one path depth (ll.depth / bw.depth), replayed several times;
 *   mixed                   a paced open-loop replay of mixed sizes across the hint (with
 *                           path switches), offered below what the streams sustained;
 *   switch                  sizes alternating across the hint: the drain per forced switch.
 * Each figure is the median latency of the warm messages, and becomes one calib_obs_t that
 * carries the trace, mode, hint and override it ran with, so the fit replays exactly what
 * was measured. Figures of held-out sizes and depths, and the mixed replays, are measured
 * the same way but kept out of the fit.
 *
 * What replays a bench is a callback (calib_exec_t): the live device, or (tests) the model
 * engine with known parameters, so the whole measurement-to-fit path is tested.
 */
#ifndef HS_CALIB_RUN_H
#define HS_CALIB_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "calib/calib_fit.h"
#include "capture/cap_live.h"
#include "capture/cap_replay.h"
#include "common/hs_progress.h"

typedef struct {
    cap_live_opts_t live;     /* device, role, profile and --set (the path settings) */
    const uint64_t *sizes;    /* single-message sizes to fit (borrowed) */
    size_t nsizes;
    const uint64_t *holdout;  /* single-message sizes held out (borrowed; may be empty) */
    size_t nholdout;
    const uint64_t *ssizes;   /* stream sizes to fit */
    size_t nssizes;
    const uint64_t *sholdout; /* stream sizes held out (at every depth) */
    size_t nsholdout;
    const uint64_t *depths;   /* stream depths to fit */
    size_t ndepths;
    const uint64_t *dholdout; /* stream depths held out (at every stream size) */
    size_t ndholdout;
    uint64_t iters, warmup;   /* single: measured and warm-up messages per size */
    uint64_t stream_len;      /* messages per stream burst */
    uint64_t stream_reps;     /* measured replays of each burst (after one warm-up replay) */
    uint64_t mixed_len;       /* messages of the mixed trace (0: no mixed replay) */
    double mixed_load;        /* its load: messages arrive this fraction as often as the
                               * streams sustained messages of its sizes */
    uint64_t seed;            /* the mixed trace's generator */
    uint64_t jitter_len;      /* closed-loop messages of the smallest size whose spread
                               * gives the jitter.* quantiles (0: not measured) */
    uint64_t jitter_long_bytes; /* the jitter.long_* set's message size (0, or not above the
                                 * smallest size: not measured) */
} calib_run_opts_t;

/* One jitter set (MODEL.md section 8): n warm closed-loop messages of `bytes`, back to back
 * (the reach run: think_us apart); their latency beyond their median at the 90th, 99th and
 * 99.9th percentile (us) and the median itself (back to back: the cycle they were measured
 * at). n 0: not measured. */
typedef struct {
    double p90_us, p99_us, p999_us, cycle_us;
    size_t n;
    uint64_t bytes;
    double think_us; /* the time between a completion and the next post (0: back to back) */
} calib_jitter_t;

/* The reach run's think time, in cycles of the first jitter set (MODEL.md section 8). */
#define CALIB_REACH_CYCLES 2.0

/* jitter.think_reach from one pair of the reach run (MODEL.md section 8): j back to back, r
 * r->think_us apart. The share in [0, 1] of r's think time for which the model's p99 beyond
 * the median of r's messages (of j's cycle, with j's jitter) is the one r measured. NAN when
 * the pair cannot determine it: either block not measured, or j's tail too flat for a
 * longer cycle to move its p99 (1% of it or less between the shares 0 and 1). */
double calib_think_reach(const calib_jitter_t *j, const calib_jitter_t *r);

/* One replay job: a synthetic trace, how to replay it, what it is for. */
typedef struct {
    const char *group;        /* "single_ll", "stream_bw", "mixed", "switch" */
    calib_class_t cls;
    trace_t *tr;              /* owned */
    uint64_t hint;
    pred_mode_t mode;
    char set[48];             /* override for the connection and the replay ("" none) */
    uint64_t depth;           /* streams: the depth set says */
    uint64_t reps;            /* replays of tr */
    uint64_t skip;            /* of those, the first ones are a warm-up: not measured */
    int held;                 /* streams: kept out of the fit */
} calib_bench_t;

/* Replays b->tr (b->reps + 1 times: the first is the warm-up) into raw[0..reps], each with
 * lat_us and path of b->tr->n entries (allocated by the caller); last: no bench follows. */
typedef hs_status_t (*calib_exec_fn_t)(void *ctx, const calib_bench_t *b, int last,
                                       pred_raw_t *raw);

typedef struct {
    calib_obs_t *fit;       /* owned array */
    size_t nfit;
    calib_obs_t *held;      /* owned array */
    size_t nheld;
    trace_t **subs;         /* owned: the traces the observations point to */
    size_t nsubs;
    char **strs;            /* owned: the overrides the observations point to */
    size_t nstrs;
    double stream_gbps;     /* the highest rate a measured stream reached */
    double mixed_gap_us;    /* the mixed replay's mean gap between messages */
    double drain_us_median; /* measured drain per forced switch (median over replays) */
    calib_jitter_t jitter[2]; /* the smallest size (jitter.*), the long one (jitter.long_*) */
    calib_jitter_t reach;     /* jitter[0]'s messages with think time: the think blocks of
                               * the reach run, each figure the median over the pairs */
    double reach_share;       /* jitter.think_reach: the median of the pairs' (NAN: none) */
    size_t reach_pairs;       /* the pairs that determined a share */
    double drain_us_mad;    /* its median absolute deviation */
    size_t nswitches;
    char device[64], firmware[64], host[64];
    char peer[64];          /* the --server end's address as measured against; "" loopback */
    /* The paths as the device applied the profile (cap_conn_make_cfg of a connection at
     * the profile's own depths): the fit predicts what they run (cap_profile_effective),
     * as validate does. have_cfg 0: no such connection (the model executor). */
    cap_path_cfg_t cfg[CAP_NPATHS];
    int have_cfg;
    /* the live replay's own cost over each class's replays (cap_replay_overhead_merge):
     * how late it stamped completions and posted, beside what it measured */
    cap_replay_overhead_t overhead[CALIB_NCLASSES];
} calib_meas_t;

/* Run every measurement per o on the live device (progress on pb, which the caller started
 * with calib_run_steps(o) units). Logs errors; HS_ERR_ENV when the device is missing. */
hs_status_t calib_measure(const calib_run_opts_t *o, hs_progress_t *pb, calib_meas_t *out);
/* The same through exec (tests: the model engine standing for the device). */
hs_status_t calib_measure_with(const calib_run_opts_t *o, calib_exec_fn_t exec, void *ctx,
                               hs_progress_t *pb, calib_meas_t *out);
/* How many progress units calib_measure reports. */
uint64_t calib_run_steps(const calib_run_opts_t *o);
/* --server: answer a calibrate client's connections (validate's server loop). */
hs_status_t calib_serve(const calib_run_opts_t *o);
void calib_meas_release(calib_meas_t *m);

/* An executor that replays through a prediction engine (ctx: calib_model_exec_t): what a
 * device described by prof would measure. */
typedef struct {
    const pred_engine_ops_t *eng;
    const profile_t *prof;
} calib_model_exec_t;
hs_status_t calib_exec_model(void *ctx, const calib_bench_t *b, int last, pred_raw_t *raw);

#endif
