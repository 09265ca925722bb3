/* calib_fit.h - fit profile parameters to measurements: least squares on relative error.
 *
 * The forward model is a callback (normally the prediction engine replaying what the
 * benchmark did), so the fit knows nothing of the model's formulas: it moves the chosen
 * profile parameters (in log space, within bounds) with Levenberg-Marquardt until the
 * relative residuals (predicted - measured) / measured, each weighted by how well the
 * device repeated its figure (calib_obs_weight), stop shrinking. Each fitted value is
 * reported with its standard error, its own residual (the RMS relative residual of the
 * observations it influences, weighted by that influence) and whether the data could
 * determine it at all; the fit reports its overall RMS and median absolute relative error.
 */
#ifndef HS_CALIB_FIT_H
#define HS_CALIB_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"
#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "traces/trace.h"

/* What kind of traffic a figure comes from: the held-out error is reported per class. */
typedef enum {
    CALIB_SINGLE = 0, /* closed-loop ping-pong: one message in flight */
    CALIB_STREAM = 1, /* open-loop back-to-back stream at one depth */
    CALIB_MIXED = 2,  /* a paced replay of mixed sizes across the hint (held out) */
} calib_class_t;
#define CALIB_NCLASSES 3
/* "single", "stream", "mixed". */
const char *calib_class_name(calib_class_t c);

/* One measured figure and what the benchmark did to get it. */
typedef struct {
    const char *group;   /* "single_ll", "stream_bw", ... (borrowed) */
    uint64_t size_bytes; /* the messages' size (mixed: the largest) */
    uint64_t hint_bytes; /* the hint in effect (0 = none: BW path) */
    double meas_us;      /* measured median latency of the warm messages (> 0) */
    const trace_t *trace; /* the benchmark's own messages behind meas_us, or NULL (borrowed) */
    const char *set;     /* "KEY=VALUE" the benchmark ran with (e.g. a depth), or NULL */
    pred_mode_t mode;    /* how trace was replayed (open: its post times; closed) */
    calib_class_t cls;
    uint64_t depth;      /* streams: the path's depth (0: the profile's) */
    double noise_rel;    /* the device's own spread: (max - min) / median of the medians of
                          * the figure's replays (0: replayed once) */
} calib_obs_t;

/* The weight of obs in the fit: 1, or CALIB_NOISE_FLOOR / obs->noise_rel when its replays
 * disagreed by more than that (a figure the device cannot repeat says less about it: a
 * stream whose replays' medians differ by 100% weighs a tenth). */
#define CALIB_NOISE_FLOOR 0.10
double calib_obs_weight(const calib_obs_t *o);

/* Predict obs under p (the fit's current profile) into *pred_us. */
typedef hs_status_t (*calib_predict_fn_t)(void *ctx, const profile_t *p, const calib_obs_t *obs,
                                          double *pred_us);

/* A parameter to fit: a profile key and its bounds (in the key's unit, lo > 0). A
 * refinement (calib_fit_keeping) is fitted only where the data determine it beside the
 * others: after them, from their fit, and kept at the start profile's value otherwise. */
typedef struct {
    const char *key;
    double lo, hi;
    int refine;
} calib_param_t;

#define CALIB_MAX_PARAMS 12

typedef struct {
    size_t np;
    double value[CALIB_MAX_PARAMS];     /* fitted value */
    double stderr_rel[CALIB_MAX_PARAMS]; /* standard error, relative to the value */
    double resid_rel[CALIB_MAX_PARAMS]; /* influence-weighted RMS relative residual */
    int determined[CALIB_MAX_PARAMS];   /* 0: no observation depends on it (left unchanged) */
    double rms_rel;                     /* overall RMS relative error */
    double median_abs_rel;              /* overall median |relative error| */
    size_t nobs;
    unsigned iters;
} calib_result_t;

/* Fit params[0..np) of a copy of start to obs through predict; on success *fitted (caller
 * frees with profile_free) holds the fitted values with source strings naming the fit, and
 * *res the figures. Logs and fails on bad input (unknown key, bad bounds, meas <= 0) and
 * on a forward-model error. */
hs_status_t calib_fit(const profile_t *start, const calib_param_t *params, size_t np,
                      const calib_obs_t *obs, size_t nobs, calib_predict_fn_t predict,
                      void *ctx, profile_t **fitted, calib_result_t *res);

/* A fitted value whose standard error is over this fraction of it (1000%, or not finite)
 * is not determined by the data (calib/README.md): the start profile's value is kept. Not
 * 100%: on soft-RoCE a sound six-size fit gives bw.fixed_ns 55-104% run to run, and two
 * sizes give link.gbps 95-101%, whose start value (generic: 100 Gb/s) is 100 times off. */
#define CALIB_STDERR_MAX_PCT 1000 /* the same in %, for texts (calibrate --help) */
#define CALIB_STDERR_MAX_REL (CALIB_STDERR_MAX_PCT / 100.0)
#define CALIB_STR_(x) #x
#define CALIB_STR(x) CALIB_STR_(x)

/* Whether parameter j keeps the start profile's value: no measured figure depends on it
 * (res->determined[j] == 0), or its standard error is over CALIB_STDERR_MAX_REL. */
int calib_param_kept(const calib_result_t *res, size_t j);

/* Whether v lies at one of p's bounds (where the fit's step clamps it): the figures want
 * the term beyond what its bounds allow. Such a term has no standard error (it is not at
 * an optimum of its own) and, kept, keeps the bound, not the start profile's value: the
 * figures have said which side of the bound it lies on (soft-RoCE's wire latency, a few ns
 * beside its 30 us per WR, at 10 ns; at the start's 1000 ns every other term moves). */
int calib_param_at_bound(const calib_param_t *p, double v);
/* Whether parameter j (params[j], its figures in res) is kept at the bound of its fit:
 * calib_param_kept, a figure depends on it, and its value is at a bound. */
int calib_param_pinned(const calib_result_t *res, const calib_param_t *params, size_t j);

/* Set every parameter calib_param_kept says the fit did not determine back to orig[j] in
 * fitted, its source saying it was not fitted and why (no data, or the standard error in
 * %): the fit's steps may have moved one with no data while an earlier iteration saw a
 * dependence (it was written as, for instance, bw.fixed_ns 1.08 ns "fit start"), and one
 * with a huge standard error (bw.fixed_ns 1 ns from two sizes) was written as fitted. Each
 * of the latter is warned about, naming it and its standard error. */
hs_status_t calib_keep_undetermined(profile_t *fitted, const calib_param_t *params, size_t np,
                                    const calib_result_t *res, const double *orig);

/* calib_fit, then, while it leaves parameters the data do not determine (calib_param_kept),
 * those set back to orig[j] (every one no figure depends on at once, else the one with the
 * largest standard error: of two collinear terms one is kept, the other carries what they
 * share) and the others fitted again from where the last fit left them,
 * so that every fitted value is fitted for the values the profile keeps (a fitted value
 * is otherwise the fit's partner of a kept one's meaningless value); then
 * calib_keep_undetermined. *res holds the last fit's figures for the parameters it fitted,
 * the fit that dropped a kept one's for that one (what its warning quotes); res->rms_rel,
 * median_abs_rel and iters are the last fit's (iters summed). *fitted as calib_fit's.
 * Refinements (calib_param_t.refine) are held at orig[j] while the others are fitted so;
 * then one fit of the others not kept and the refinements, from that result (each
 * refinement at start's value): it stands when it determines every one of its parameters,
 * else the first result stands and the refinements are kept, *res saying the largest
 * standard error of that fit for each (a refinement collinear with a term fitted without it
 * makes one of the two undetermined). */
hs_status_t calib_fit_keeping(const profile_t *start, const calib_param_t *params, size_t np,
                              const calib_obs_t *obs, size_t nobs, calib_predict_fn_t predict,
                              void *ctx, const double *orig, profile_t **fitted,
                              calib_result_t *res);

/* Relative errors (pred - meas) / meas of obs under p, into err[0..nobs); plus their median
 * absolute value in *median_abs (may be NULL). */
hs_status_t calib_errors(const profile_t *p, const calib_obs_t *obs, size_t nobs,
                         calib_predict_fn_t predict, void *ctx, double *err,
                         double *median_abs);

/* The terms calibrate fits (cmd_calibrate.c), in this order: link.base_lat_ns (wire
 * latency), link.gbps (link rate), host.post_ns (per-WR cost on the CPU), bw.fixed_ns, the
 * cost of one completion report (coalescing: host.poll_ns, or host.interrupt_ns where start
 * has a path take interrupts), link.pkt_ns (the link's per-packet occupancy, a refinement:
 * a per-packet cost of every message is otherwise the same constant as the per-WR cost, and
 * per packet of an MTU the same slope as the link rate) and link.wr_ns (the link's
 * occupancy per WR: the device's message rate, serial with the link where host.post_ns
 * overlaps it), each with its bounds. Returns how many (CALIB_NTERMS). */
#define CALIB_NTERMS 7
size_t calib_terms(const profile_t *start, calib_param_t out[CALIB_NTERMS]);

/* Start values the single-message figures suggest, written into start (calib/README.md,
 * "Start values"): a least-squares line latency = a + b x bytes + c x packets (packets of
 * start's link.mtu_bytes) through obs's CALIB_SINGLE figures gives link.gbps = 8 / b and
 * link.pkt_ns = c where each is positive, and link.wr_ns = a / 2 (the per-message constant
 * shared between the link and the rest, split evenly; the streams tell them apart). A
 * term without support in the figures (fewer than three sizes, a singular system, a
 * coefficient <= 0 or outside its bounds in params) keeps start's value. Returns how many
 * start values it set. */
size_t calib_seed_from_singles(profile_t *start, const calib_param_t *params, size_t np,
                               const calib_obs_t *obs, size_t nobs);

/* calib_fit_keeping from start, and again from a copy of start that calib_seed_from_singles
 * moved (when it moved anything); *fitted and *res are those of the fit with the lower RMS
 * relative error (the first on a tie). The fit is local (Levenberg-Marquardt in log space):
 * from a start a factor of hundreds away in some term it can settle where one term carries
 * another's slope, and from the singles' line it can settle where the line's split of the
 * per-message constant misled it; the two starts cover each other. orig as
 * calib_fit_keeping's, for both. */
hs_status_t calib_fit_two_starts(const profile_t *start, const calib_param_t *params,
                                 size_t np, const calib_obs_t *obs, size_t nobs,
                                 calib_predict_fn_t predict, void *ctx, const double *orig,
                                 profile_t **fitted, calib_result_t *res);

/* Held-out error bounds by class (calib/README.md says why): a class fails calibrate (exit
 * 1, naming the term) when the median |relative error| of its held-out figures is over
 * CALIB_HELD_BASE_* plus the class's measured noise (the median noise_rel of those figures:
 * how far the device disagrees with itself replaying the same trace, which no profile can
 * predict). */
#define CALIB_HELD_BASE_SINGLE 0.15
#define CALIB_HELD_BASE_STREAM 0.15
#define CALIB_HELD_BASE_MIXED 0.25

/* The held-out figures of one class under the fitted profile. */
typedef struct {
    size_t n;              /* figures of the class */
    double median_abs_rel; /* their median |relative error| (0 when n == 0) */
    double noise_rel;      /* their median noise_rel */
    double bound;          /* CALIB_HELD_BASE_* + noise_rel */
    int over;              /* n > 0 and median_abs_rel > bound */
    int term;              /* the fitted parameter that explains most of the class's error
                            * (index into params), -1 when no fitted one moves its figures */
    double term_share;     /* the part of the class's error vector along that term (0..1) */
} calib_held_class_t;

/* err[i] (calib_errors of held[i] under fitted) grouped by class into out[CALIB_NCLASSES];
 * for each class, the term: the parameter j whose sensitivity vector d ln pred / d ln p_j
 * over the class's figures has the largest projection of the error vector (what moving
 * p_j alone could take away). Returns the number of classes over their bound. */
hs_status_t calib_held_check(const profile_t *fitted, const calib_param_t *params, size_t np,
                             const calib_obs_t *held, const double *err, size_t n,
                             calib_predict_fn_t predict, void *ctx,
                             calib_held_class_t out[CALIB_NCLASSES], size_t *nover);

/* Solve the n x n system a x = b in place (Gaussian elimination, partial pivoting); b
 * becomes x. Returns -1 when a is singular. */
int calib_solve(double *a, double *b, size_t n);

#endif
