/* cap_validate.h - `hintsim validate`: replay a trace's message sequence on a live device
 * with each candidate hint and set what was measured beside what the model predicted.
 *
 * Candidates are classes of hints (model/recommend/hint_class.h: hints that route every message of
 * the trace alike are one configuration, measured once and reported as a range). Auto: the
 * recommended hint, the runner-up, 0 (no hint), everything-LL (the trace's largest size)
 * and classes spread between by quantiles of the trace's distinct sizes, `classes` in all
 * (all of them where the trace has fewer). Each is replayed R times, the order shuffled
 * every round, in open loop (the trace's post times) or closed loop (post when the previous
 * message is known complete, plus the trace's think time). Measured latencies go through
 * the same summariser as predictions (pred_summarize). The summary weighs the rounds, not
 * only their medians: regret of the recommendation against the best measured class,
 * Spearman rank correlation of predicted and measured objective (from 4 classes up) and the
 * median |error|, each with a 95% bootstrap interval over rounds; whether the
 * recommendation is worse than the best beyond the noise; whether the hint takes effect at
 * all (seed 000, pitfall 2); and the noise of the same classes against themselves.
 */
#ifndef HS_CAP_VALIDATE_H
#define HS_CAP_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "capture/cap_live.h"
#include "model/predict/objective.h"
#include "model/predict/predict.h"

typedef struct {
    cap_live_opts_t live;
    const char *trace_path;
    const uint64_t *hints;   /* NULL = auto */
    size_t nhints;
    uint64_t repeat;         /* R >= 1 */
    pred_mode_t mode;
    obj_t objective;         /* a figure (obj_is_figure): ranked lower-better by obj_cost */
    uint64_t limit;          /* replay only the first N messages (0 = all) */
    uint64_t seed;           /* shuffle and bootstrap seed */
    size_t classes;          /* auto: classes to measure (0 = CAP_DEFAULT_CLASSES) */
    const char *messages;    /* NULL, or a CSV file of every measured message:
                              * CAP_MESSAGES_HEADER, one row per candidate, round and message;
                              * written whole or not at all */
} cap_validate_opts_t;

/* The columns of validate's per-message CSV: the class's hint, the round (from 0), the
 * message's index in the trace, its size and trace post time, the path it took, the
 * model's latency for it (jitter included, as in the figures) and the measured one. */
#define CAP_MESSAGES_HEADER "hint,round,index,size_bytes,t_post_us,path,predicted_us,measured_us"


#define CAP_DEFAULT_CLASSES 6
#define CAP_DEFAULT_REPEAT 5

/* Run validate per o. Client/loopback: *report gets the JSON of CLI.md (caller owns).
 * Server: answers the client until it is done; *report = {"role": "server"}. */
hs_status_t cap_validate_run(const cap_validate_opts_t *o, cJSON **report);
void cap_validate_print(const cJSON *report, FILE *fp);

/* ---- the arithmetic of the summary (unit tested) ---------------------------------- */

/* Spearman rank correlation of x and y (2 <= n <= CAP_MAX_CANDIDATES; ties get average
 * ranks); 0 when a side is constant (cap_stats_t says when it means nothing). */
double cap_rank_correlation(const double *x, const double *y, size_t n);
/* Median of v[0..n) (v is sorted in place). */
double cap_median(double *v, size_t n);
/* ---- what validate can say from its rounds (cap_validate_stats.c) ------------------ */

#define CAP_MAX_CANDIDATES 16
#define CAP_BOOT_RESAMPLES 2000 /* of the bootstrap over rounds; intervals are 95% */

typedef struct {
    double lo, hi;
} cap_ci_t;

typedef enum {
    CAP_VERDICT_DIFFER = 0,  /* some classes differ beyond the round-to-round noise: two
                              * classes' rounds do not overlap at all, or the range of the
                              * medians is beyond 95% of within-round shuffles (p < 0.05) */
    CAP_VERDICT_NO_EFFECT,   /* measured alike while the predictions differ by > 5% */
    CAP_VERDICT_TIE,         /* measured alike and the predictions agree within 5% too */
    CAP_VERDICT_UNDECIDED,   /* one round: nothing to weigh a difference against */
} cap_verdict_t;

typedef enum {
    CAP_REC_BEST = 0,   /* the recommended class measured best */
    CAP_REC_WORSE,      /* worse than the best beyond the noise: their rounds apart, or
                         * the interval of the difference above 0 where the classes differ
                         * at all (CAP_VERDICT_DIFFER; the best is picked after the fact
                         * among them, so a lone interval says "worse" of equal classes) */
    CAP_REC_TIED,       /* the two cannot be told apart over these rounds */
    CAP_REC_UNDECIDED,  /* one round */
} cap_rec_verdict_t;

typedef struct {
    const double *obj;   /* obj[k * rounds + r]: class k's objective in round r (lower is
                          * better: throughput negated) */
    const double *pred;  /* pred[k]: class k's predicted objective */
    size_t n;            /* classes, 1..CAP_MAX_CANDIDATES */
    size_t rounds;       /* >= 1 */
    size_t rec;          /* the recommended class */
    uint64_t seed;       /* of the bootstrap (0: a fixed one) */
    /* pred_lo[k] <= pred[k] <= pred_hi[k]: the interval the prediction's own sampling gives
     * it (cap_quantile_interval over the predicted latencies); NULL: point predictions */
    const double *pred_lo, *pred_hi;
} cap_stats_in_t;

typedef struct {
    double median[CAP_MAX_CANDIDATES];   /* per class, over its rounds */
    cap_ci_t median_ci[CAP_MAX_CANDIDATES];
    size_t best, worst;                  /* lowest and highest median */
    double regret_pct;                   /* 100 (rec - best) / |best|, >= 0 */
    cap_ci_t regret_ci;                  /* best chosen anew in every resample */
    double diff_pct;                     /* the same against this best, fixed: the */
    cap_ci_t diff_ci;                    /* recommendation verdict's interval */
    int rec_apart;                       /* rec's and best's rounds do not overlap */
    cap_rec_verdict_t rec_verdict;
    double spread_pct;                   /* 100 (worst - best) / |best| */
    cap_ci_t spread_ci;
    double differ_p;                     /* permutation p-value of the medians' range */
    cap_verdict_t verdict;               /* do the classes differ at all */
    const char *rank_note;               /* NULL: rank is defined; else why not */
    double rank;                         /* Spearman, predicted vs measured medians */
    cap_ci_t rank_ci;
    double mae_pct;                      /* median over classes of |pred - meas| / |meas| */
    cap_ci_t mae_ci;
    /* noise: the same classes replayed against themselves, even rounds against odd ones
     * (rounds >= 2): what regret, |error| and rank correlation show with no difference */
    int noise_defined;
    double noise_rec_pct;                /* |even - odd| / min of the recommended class */
    double noise_diff_pct;               /* median of that over the classes */
    double noise_regret_pct;             /* the regret's own: the recommended and the best
                                          * class's, summed (a difference of the two) */
    int noise_rank_defined;              /* >= 4 classes and both halves vary */
    double noise_rank;                   /* Spearman of even against odd medians */
    /* the order, pair by pair: pairs of classes whose rounds do not overlap (the device
     * tells them apart: p = 2 / C(2R, R) for one pair of equal classes, 0.8% at R = 5),
     * and of those the pairs the predictions order the other way round, where the model
     * tells them apart too (their pred_lo..pred_hi do not overlap); pairs_model_tied: the
     * pairs apart that the model does not tell apart (no order claimed, none counted) */
    size_t pairs_apart, pairs_discordant, pairs_model_tied;
} cap_stats_t;

/* Everything above from in (HS_ERR_INVALID for n or rec out of range or no rounds). */
hs_status_t cap_stats_run(const cap_stats_in_t *in, cap_stats_t *out);
/* Whether a[0..rounds) and b[0..rounds) do not overlap (every a below every b, or above). */
int cap_rounds_apart(const double *a, const double *b, size_t rounds);
/* The 95% interval of the q-quantile of the distribution v[0..n) is drawn from (order
 * statistics: the values at ranks n q -+ 1.96 sqrt(n q (1 - q)), clamped to 1..n); v is
 * sorted in place. For p99 of 600 messages: ranks 589 and 599. n 0: NAN. */
void cap_quantile_interval(double *v, size_t n, double q, double *lo, double *hi);
/* Whether an open-loop replay saturated the device: the trace offers offered_gbps (its
 * payload over its span) and a hint's measured throughput meas_gbps[i] fell below 90% of
 * it, so the device ran behind the trace and the latencies measure that backlog, not the
 * hint. Writes the warning into buf (len bytes) and returns 1; else 0. */
int cap_saturation_warning(double offered_gbps, const double *meas_gbps, size_t n, char *buf,
                           size_t len);
/* Fisher-Yates shuffle of idx[0..n) with a xorshift generator seeded by *seed. */
void cap_shuffle(size_t *idx, size_t n, uint64_t *seed);

#endif
