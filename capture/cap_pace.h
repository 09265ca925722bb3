/* cap_pace.h - the progress loop that paces a live run: wait until a time while polling
 * the send CQs of both paths of an endpoint, reading the clock sparingly, and keep the time
 * between two polls. The live replay (cap_replay.c) waits for its post times with it and
 * capture bench (cap_bench.c) for its --gap-us pacing: the same passes and the same clock
 * reads, so the two load the device alike, and their figures of the time between polls say
 * how fast the host ran each of them (a CPU-bound device such as soft-RoCE slows with it).
 *
 * The clock is read after a batch of passes sized to end about half-way to the time waited
 * for (from the last interval's mean pass, at most CAP_PACE_MAX_PASSES), so a long wait
 * reads it a few times per halving and the last passes before the time read it every pass:
 * in an emulated guest a clock read can be a device access that stalls the other vCPUs
 * (the soft-RoCE VM's HPET), and a run that read it every pass would measure its own clock.
 * The time between polls is sampled per interval between two clock reads: the interval's
 * length over the passes in it.
 *
 *   cap_pace_t *w = ...;
 *   cap_pace_init(w, ep);             // ep->progress: every wait of cap_path.c is a pass
 *   st = cap_pace_until(w, t_ns);     // passes (at least one) until the clock reads t_ns
 *   uint64_t now = cap_pace_clock(w); // a clock read that closes an interval
 *   cap_pace_fini(w);                 // ep->progress cleared
 *   cap_hist_pctl_us(&w->gap, 0.50);  // the time between polls, us
 */
#ifndef HS_CAP_PACE_H
#define HS_CAP_PACE_H

#include <stdint.h>

#include "capture/cap_hist.h"
#include "capture/cap_path.h"

/* The most passes between two clock reads while waiting. */
#define CAP_PACE_MAX_PASSES 256u

typedef struct {
    cap_ep_t *ep;
    uint64_t clock_ns; /* the last clock read (0: none yet) */
    uint64_t passes;   /* passes since it */
    uint64_t pass_ns;  /* the mean pass of the last interval (>= 1) */
    uint64_t polls;    /* passes in all */
    cap_hist_t gap;    /* per interval: its length over its passes, ns */
} cap_pace_t;

/* w zeroed and bound to ep; ep->progress (and its argument) set to w's pass. */
void cap_pace_init(cap_pace_t *w, cap_ep_t *ep);
/* ep->progress cleared; w's figures stay. */
void cap_pace_fini(cap_pace_t *w);
/* One pass (a cap_progress_fn, arg = the cap_pace_t): both paths' send CQs polled. */
hs_status_t cap_pace_progress(void *arg);
/* Read the clock (CLOCK_MONOTONIC ns); closes the interval of passes since the last read. */
uint64_t cap_pace_clock(cap_pace_t *w);
/* Passes until the clock reads t_ns or later, at least one; HS_OK or a poll's error. The
 * read that ended it is w->clock_ns. */
hs_status_t cap_pace_until(cap_pace_t *w, uint64_t t_ns);

#endif
