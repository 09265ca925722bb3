/* cap_hist.h - a log-linear histogram of durations in ns, for the figures a live run keeps
 * of itself (the time between polls, how late posts were, post to completion): 32 bins per
 * octave, so a percentile is within 3% of the exact one; the max is exact. Fixed size, no
 * allocation: an add is a bin index and three stores.
 *
 *   cap_hist_t h = {0};
 *   cap_hist_add(&h, ns);
 *   double p50 = cap_hist_pctl_us(&h, 0.50), max = cap_hist_max_us(&h);
 *   cJSON *j = cap_hist_json(&h);  // {"p50", "p99", "max"}
 */
#ifndef HS_CAP_HIST_H
#define HS_CAP_HIST_H

#include <stdint.h>

#include <cjson/cJSON.h>

#define CAP_HIST_SUB_BITS 5u
#define CAP_HIST_SUB (1u << CAP_HIST_SUB_BITS)
#define CAP_HIST_BINS (CAP_HIST_SUB * (64u - CAP_HIST_SUB_BITS + 1u))

typedef struct {
    uint64_t n, max_ns;
    uint32_t bin[CAP_HIST_BINS];
} cap_hist_t;

void cap_hist_add(cap_hist_t *h, uint64_t ns);
/* Nearest-rank percentile q in (0, 1], in us: the middle of its bin, never above the max
 * (0 when empty). */
double cap_hist_pctl_us(const cap_hist_t *h, double q);
double cap_hist_max_us(const cap_hist_t *h);
/* {"p50", "p99", "max"} (us): how a live run's duration figures are written, from h or from
 * figures already taken from one (cap_replay_overhead_t); NULL when out of memory. */
cJSON *cap_hist_json(const cap_hist_t *h);
cJSON *cap_hist_triple_json(double p50_us, double p99_us, double max_us);

#endif
