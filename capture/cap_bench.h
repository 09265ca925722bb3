/* cap_bench.h - `hintsim capture bench`: the active benchmark on a live device.
 *
 * For each hint and each size: a ping-pong phase (round trip / 2, as perftest's
 * ib_write_lat reports it; write-with-immediate when GPU memory is involved), a
 * post-to-completion phase (each message posted on its path; the poster waits only where
 * the path signals, so selective signalling and moderation show in the figures), and a
 * stream phase (the queue kept full: throughput, as ib_write_bw). Warm-up messages come
 * first and are flagged cold in the trace. A path change between sizes drains the old path
 * first; the drain time is recorded.
 */
#ifndef HS_CAP_BENCH_H
#define HS_CAP_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "capture/cap_live.h"

typedef struct {
    cap_live_opts_t live;
    const uint64_t *sizes;   /* borrowed */
    size_t nsizes;
    const uint64_t *hints;   /* borrowed; 0 = no hint */
    size_t nhints;
    uint64_t iters;          /* measured iterations per phase */
    uint64_t warmup;         /* warm-up iterations (cold) before each phase */
    const char *out_path;    /* trace file (client/loopback); NULL = none; "-": stdout */
    int out_fmt;             /* trace_fmt_t to write out_path in; 0: by its extension */
    unsigned phases;         /* CAP_PHASE_* bits; 0 = all */
    double gap_us;           /* latency phase: post interval (0: when the previous is done) */
} cap_bench_opts_t;

enum { CAP_PHASE_PINGPONG = 1, CAP_PHASE_LATENCY = 2, CAP_PHASE_STREAM = 4, CAP_PHASE_ALL = 7 };

/* Parse "pingpong,latency,stream" (any subset, "all") into CAP_PHASE_* bits. */
hs_status_t cap_bench_parse_phases(const char *text, unsigned *out);

/* Run the bench per o. Client/loopback: *report gets the results as JSON (caller owns),
 * and the trace is written to o->out_path atomically. Server: answers the client until it
 * is done; *report gets {"role": "server"}. */
hs_status_t cap_bench_run(const cap_bench_opts_t *o, cJSON **report);
/* The human-readable table of a report. */
void cap_bench_print(const cJSON *report, FILE *fp);

/* Nearest-rank percentile (q in [0,1]) of v[0..n) (sorted in place); 0 when n == 0. */
double cap_pctl(double *v, size_t n, double q);

#endif
