/* sim_actors.h - the actors of one simulated replay and the state they share.
 *
 * Per flow (one sender replaying the trace): a poster actor (the application thread:
 * post times, routing with hysteresis, switch drain, send-queue slot windows, post CPU
 * cost), one NIC send-engine actor (FIFO over both paths' WRs, DMA, per-packet cost, link
 * pacing, then the wire as a SimGrid communication to the receiver host), one completion
 * actor (in-order hardware completion, batches closed by count; a batch's moderation timer
 * is no actor: the next look at its path closes it at its time). Actors run cooperatively
 * in one thread (SimGrid), so the shared state needs no locks. Used only inside a SimGrid
 * engine (sim.c runs it in a child).
 */
#ifndef HS_SIM_ACTORS_H
#define HS_SIM_ACTORS_H

#include <stddef.h>
#include <stdint.h>

#include "model/predict/predict.h"
#include "sim/sim_policy.h"
#include "traces/trace.h"

/* What one flow produces; lat_us and path point into caller memory (n entries each). */
typedef struct {
    double t_first_post_s, t_last_done_s; /* simulated seconds since the trace's first post */
    uint64_t switches, sq_full_stalls, nseen;
    double drain_total_s;                  /* drain_us_total of MODEL.md (from ready) */
    double drain_s, queue_s, coalesce_s, l1_s; /* summed cost terms, seconds */
    double lat_sum_s;
    float *lat_us;
    uint8_t *path;
} sim_flow_out_t;

/* Everything a run needs; lives in the child process for the duration of simgrid_run. */
typedef struct {
    const trace_t *tr;
    const sim_cfg_t *cfg;
    pred_mode_t mode;
    unsigned nflows;
    sim_flow_out_t *out; /* nflows entries */
} sim_run_args_t;

typedef struct sim_world sim_world_t;

/* Prefix of the marks the child writes to stderr around SimGrid calls that may crash on a
 * bad platform: "<mark>what" before, "<mark>" after. If the child dies between the two,
 * the parent names the step; the marks never reach the user. */
#define SIM_STAGE_MARK "hintsim-stage: "


/* Create the actors of every flow on the loaded platform (*out owned by the caller, free
 * with sim_world_destroy after simgrid_run returned). Returns HS_ERR_INVALID, logged naming
 * platform_name, when a host is missing. */
hs_status_t sim_world_create(const sim_run_args_t *args, const char *platform_name,
                             sim_world_t **out);
/* Check that every flow completed every message (logs what is missing). */
hs_status_t sim_world_check(const sim_world_t *w);
void sim_world_destroy(sim_world_t *w);

#endif
