/* cap_validate.h - `hintsim validate`: replay a trace's message sequence on a live device
 * with each candidate hint and set what was measured beside what the model predicted.
 *
 * Candidates (auto): the recommended hint, the runner-up, 0 (no hint) and everything-LL
 * (the trace's largest size). Each is replayed R times, the order shuffled every round, in
 * open loop (the trace's post times) or closed loop (post when the previous message is
 * known complete, plus the trace's think time). Measured latencies go through the same
 * summariser as predictions (pred_summarize). The summary gives the regret of the
 * recommendation against the best measured hint, the rank correlation of predicted and
 * measured objective, and the median |error|; when the hints' measured results cannot be
 * told apart within the repeat-to-repeat spread while the predictions differ, it says the
 * hint does not take effect here (seed 000, pitfall 2).
 */
#ifndef HS_CAP_VALIDATE_H
#define HS_CAP_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "capture/cap_live.h"
#include "model/predict.h"

typedef enum { CAP_OBJ_P99 = 0, CAP_OBJ_P50, CAP_OBJ_MEAN, CAP_OBJ_THROUGHPUT } cap_obj_t;

typedef struct {
    cap_live_opts_t live;
    const char *trace_path;
    const uint64_t *hints;   /* NULL = auto */
    size_t nhints;
    uint64_t repeat;         /* R >= 1 */
    pred_mode_t mode;
    cap_obj_t objective;
    uint64_t limit;          /* replay only the first N messages (0 = all) */
    uint64_t seed;           /* shuffle seed */
} cap_validate_opts_t;

/* Run validate per o. Client/loopback: *report gets the JSON of CLI.md (caller owns).
 * Server: answers the client until it is done; *report = {"role": "server"}. */
hs_status_t cap_validate_run(const cap_validate_opts_t *o, cJSON **report);
void cap_validate_print(const cJSON *report, FILE *fp);

/* ---- the arithmetic of the summary (unit tested) ---------------------------------- */

/* Value of the objective in a result; lower is better (throughput is negated). */
double cap_obj_value(cap_obj_t obj, const pred_result_t *r);
/* Parse "p99" | "p50" | "mean" | "throughput". */
hs_status_t cap_obj_parse(const char *s, cap_obj_t *out);
/* Spearman rank correlation of x and y (n >= 2; ties get average ranks); 0 when a side is
 * constant. */
double cap_rank_correlation(const double *x, const double *y, size_t n);
/* Median of v[0..n) (v is sorted in place). */
double cap_median(double *v, size_t n);
/* What validate can say of the measured medians meas[i] against the per-hint spreads
 * spread[i] (max - min over the repeats) and the predictions pred[i]: when the range of
 * the measured medians is within the largest spread, the hint does not take effect if the
 * predictions' range is more than 5% of their mean, else it is a tie. */
typedef enum {
    CAP_VERDICT_DIFFER = 0,  /* measured results differ beyond the largest spread */
    CAP_VERDICT_NO_EFFECT,   /* measured tie while the predictions differ by > 5% */
    CAP_VERDICT_TIE,         /* measured tie and the predictions agree within 5% too */
} cap_verdict_t;
cap_verdict_t cap_hint_verdict(const double *meas, const double *spread, const double *pred,
                               size_t n);
/* Whether an open-loop replay saturated the device: the trace offers offered_gbps (its
 * payload over its span) and a hint's measured throughput meas_gbps[i] fell below 90% of
 * it, so the device ran behind the trace and the latencies measure that backlog, not the
 * hint. Writes the warning into buf (len bytes) and returns 1; else 0. */
int cap_saturation_warning(double offered_gbps, const double *meas_gbps, size_t n, char *buf,
                           size_t len);
/* Fisher-Yates shuffle of idx[0..n) with a xorshift generator seeded by *seed. */
void cap_shuffle(size_t *idx, size_t n, uint64_t *seed);

#endif
