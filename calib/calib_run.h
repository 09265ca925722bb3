/* calib_run.h - the microbenchmarks of `hintsim calibrate`, run through capture bench.
 *
 * On a live device it measures, each as post-to-completion latency of every message
 * (capture bench's latency phase, which also writes every message into a trace):
 *   lat_ll / lat_bw       latency by size on each path (hint = largest size, hint 0);
 *   lat_ll_noinline       the LL path with inline off (ll.inline_bytes=0): the DMA read;
 *   lat_ll_sig4, lat_ll_depth4   the LL path signalling every 4th WR, and at depth 4;
 *   switch                a forced-switch sequence (sizes alternating across the hint):
 *                         the measured drain of each switch.
 * Each figure becomes one calib_obs_t carrying the benchmark's own messages (a sub-trace)
 * and the override it ran with, so the fit replays exactly what was measured. Sizes in
 * holdout are measured the same way but kept out of the fit, to test the fitted profile.
 */
#ifndef HS_CALIB_RUN_H
#define HS_CALIB_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "calib/calib_fit.h"
#include "capture/cap_live.h"
#include "common/hs_progress.h"

typedef struct {
    cap_live_opts_t live;   /* device, role, profile and --set (the path settings) */
    const uint64_t *sizes;  /* fit sizes (borrowed) */
    size_t nsizes;
    const uint64_t *holdout; /* held-out sizes (borrowed; may be empty) */
    size_t nholdout;
    uint64_t iters, warmup;
} calib_run_opts_t;

typedef struct {
    calib_obs_t *fit;       /* owned array */
    size_t nfit;
    calib_obs_t *held;      /* owned array */
    size_t nheld;
    trace_t **subs;         /* owned: the sub-traces the observations point to */
    size_t nsubs;
    double drain_us_median; /* measured drain per forced switch */
    double drain_us_mad;    /* its median absolute deviation */
    size_t nswitches;
    char device[64], firmware[64], host[64];
    char peer[64];          /* the --server end's address as measured against; "" loopback */
    /* What the device did where the profile asked for more than it has: a path whose CQ
     * moderation capture bench emulated (no ibv_modify_cq) signals every N WRs and has no
     * timer. "KEY=VALUE" overrides the fit must replay with (count nemulated). */
    char emulated[6][48];
    size_t nemulated;
} calib_meas_t;

/* Run every microbenchmark per o (progress on pb, which the caller started with
 * calib_run_steps(o) units). Logs errors; HS_ERR_ENV when the device is missing. */
hs_status_t calib_measure(const calib_run_opts_t *o, hs_progress_t *pb, calib_meas_t *out);
/* How many progress units calib_measure reports. */
uint64_t calib_run_steps(const calib_run_opts_t *o);
void calib_meas_release(calib_meas_t *m);

/* From a capture bench report (its "config"."paths"): for each path whose CQ moderation was
 * emulated, add "P.coal_count=1", "P.coal_period_us=0", "P.signal_every=N" to m->emulated
 * (once each; at most 6). The report stays the caller's. */
void calib_note_emulated(const cJSON *rep, calib_meas_t *m);

/* Split a benchmark trace into its rows (consecutive records of one size and path, a row
 * starting with its cold warm-up) and append one observation per row to *obs (grown with
 * realloc), owning each row's sub-trace through m. hint_ll: the hint the LL rows ran with.
 * Rows whose size is in keep[0..nkeep) only (all when nkeep == 0). */
hs_status_t calib_obs_from_trace(const trace_t *tr, const char *group_ll, const char *group_bw,
                                 uint64_t hint_ll, const char *set, const uint64_t *keep,
                                 size_t nkeep, calib_meas_t *m, calib_obs_t **obs, size_t *n);

#endif
