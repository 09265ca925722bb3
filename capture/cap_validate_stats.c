/* cap_validate_stats.c - what validate can say from its rounds (cap_validate.h): per-class
 * medians, a paired bootstrap over rounds (each resample draws R round numbers with
 * replacement and takes them for every class, since one round measures every class back to
 * back) for the intervals of regret, the recommended-vs-best difference, rank correlation and
 * median |error|; a permutation test of whether the classes differ at all (within each
 * round the classes' values are shuffled among them: under "no class differs" any order is
 * as likely); the pairs the device tells apart and whether the predictions order them alike;
 * the verdicts; and the noise of the same classes replayed against themselves
 * (even rounds against odd ones). */
#include "capture/cap_validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"

#define CAP_LEVEL_LO 0.025
#define CAP_LEVEL_HI 0.975

/* Median of v[0..n) without touching v (n <= CAP_MAX_ROUNDS_SORT is not assumed). */
static double median_copy(const double *v, size_t n, double *tmp)
{
    memcpy(tmp, v, n * sizeof(*v));
    return cap_median(tmp, n);
}

/* 100 * (a - b) / |b|, 0 where b is 0 (lower is better: positive = a is worse). */
static double rel_pct(double a, double b)
{
    return b != 0 ? (a - b) / fabs(b) * 100.0 : 0;
}

int cap_rounds_apart(const double *a, const double *b, size_t rounds)
{
    double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;

    if (rounds == 0)
        return 0;
    for (size_t r = 0; r < rounds; r++) {
        amin = fmin(amin, a[r]);
        amax = fmax(amax, a[r]);
        bmin = fmin(bmin, b[r]);
        bmax = fmax(bmax, b[r]);
    }
    return amax < bmin || bmax < amin;
}

void cap_quantile_interval(double *v, size_t n, double q, double *lo, double *hi)
{
    double mid = (double)n * q, half = 1.96 * sqrt((double)n * q * (1 - q));
    double rlo = floor(mid - half), rhi = ceil(mid + half);

    if (n == 0) {
        *lo = *hi = NAN;
        return;
    }
    qsort(v, n, sizeof(*v), hs_cmp_double);
    rlo = rlo < 1 ? 1 : rlo > (double)n ? (double)n : rlo;
    rhi = rhi < 1 ? 1 : rhi > (double)n ? (double)n : rhi;
    *lo = v[(size_t)rlo - 1];
    *hi = v[(size_t)rhi - 1];
}

/* Whether v[0..n) has at least two different values. */
static int varies(const double *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i] != v[0])
            return 1;
    return 0;
}

/* Median |pred - meas| / |meas| in percent over the n classes. */
static double mae_pct(const double *pred, const double *meas, size_t n)
{
    double err[CAP_MAX_CANDIDATES];

    for (size_t k = 0; k < n; k++)
        err[k] = meas[k] != 0 ? fabs(pred[k] - meas[k]) / fabs(meas[k]) * 100.0 : 0;
    return cap_median(err, n);
}

static size_t argmin(const double *v, size_t n)
{
    size_t b = 0;

    for (size_t k = 1; k < n; k++)
        if (v[k] < v[b])
            b = k;
    return b;
}

static size_t argmax(const double *v, size_t n)
{
    size_t w = 0;

    for (size_t k = 1; k < n; k++)
        if (v[k] > v[w])
            w = k;
    return w;
}

/* The figures of one resample (or of the data itself). */
typedef struct {
    double regret, diff, spread, rank, mae;
} boot_fig_t;

static void figures(const cap_stats_in_t *in, const cap_stats_t *s, const double *med,
                    boot_fig_t *f)
{
    size_t b = argmin(med, in->n);

    f->regret = rel_pct(med[in->rec], med[b]);
    f->diff = rel_pct(med[in->rec], med[s->best]);
    f->spread = rel_pct(med[s->worst], med[s->best]);
    f->rank = cap_rank_correlation(in->pred, med, in->n);
    f->mae = mae_pct(in->pred, med, in->n);
}

/* The 95% percentile interval of v[0..n) (v sorted in place). */
static cap_ci_t interval(double *v, size_t n)
{
    size_t lo = (size_t)floor(CAP_LEVEL_LO * (double)(n - 1));
    size_t hi = (size_t)ceil(CAP_LEVEL_HI * (double)(n - 1));

    qsort(v, n, sizeof(*v), hs_cmp_double);
    return (cap_ci_t){v[lo], v[hi]};
}

/* One resample's per-class medians: the same drawn rounds for every class. */
static void resample_medians(const cap_stats_in_t *in, uint64_t *seed, size_t *pick,
                             double *med, double *tmp)
{
    for (size_t r = 0; r < in->rounds; r++)
        pick[r] = (size_t)(hs_xorshift64(seed) % in->rounds);
    for (size_t k = 0; k < in->n; k++) {
        for (size_t r = 0; r < in->rounds; r++)
            tmp[r] = in->obj[k * in->rounds + pick[r]];
        med[k] = cap_median(tmp, in->rounds);
    }
}

/* The bootstrap: every interval of out. */
static hs_status_t bootstrap(const cap_stats_in_t *in, cap_stats_t *out)
{
    size_t B = CAP_BOOT_RESAMPLES, n = in->n;
    double *fig = malloc(5 * B * sizeof(double)), *cls = malloc(n * B * sizeof(double));
    double *tmp = malloc(in->rounds * sizeof(double)), med[CAP_MAX_CANDIDATES];
    size_t *pick = malloc(in->rounds * sizeof(size_t));
    uint64_t seed = in->seed ? in->seed : 0x9E3779B97F4A7C15ULL;
    hs_status_t st = fig && cls && tmp && pick ? HS_OK : HS_ERR_NOMEM;

    if (st != HS_OK)
        goto free_bufs;
    for (size_t b = 0; b < B; b++) {
        boot_fig_t f;
        resample_medians(in, &seed, pick, med, tmp);
        figures(in, out, med, &f);
        fig[0 * B + b] = f.regret;
        fig[1 * B + b] = f.diff;
        fig[2 * B + b] = f.spread;
        fig[3 * B + b] = f.rank;
        fig[4 * B + b] = f.mae;
        for (size_t k = 0; k < n; k++)
            cls[k * B + b] = med[k];
    }
    out->regret_ci = interval(fig, B);
    out->diff_ci = interval(fig + B, B);
    out->spread_ci = interval(fig + 2 * B, B);
    out->rank_ci = interval(fig + 3 * B, B);
    out->mae_ci = interval(fig + 4 * B, B);
    for (size_t k = 0; k < n; k++)
        out->median_ci[k] = interval(cls + k * B, B);
free_bufs:
    free(fig);
    free(cls);
    free(tmp);
    free(pick);
    return st;
}

/* Why there is no rank correlation, or NULL when there is one. */
static const char *rank_note(const cap_stats_in_t *in, const double *med)
{
    if (in->n < 4)
        return "fewer than 4 classes measured: a rank correlation over 2 is +-1 and over 3 "
               "one of four values by construction";
    if (!varies(in->pred, in->n))
        return "the model predicts the same objective for every class: no order to compare";
    if (!varies(med, in->n))
        return "every class measured the same objective: no order to compare";
    return NULL;
}

/* The same classes replayed against themselves: even rounds' medians against odd ones'. */
static void noise(const cap_stats_in_t *in, cap_stats_t *out, double *tmp)
{
    double ev[CAP_MAX_CANDIDATES], od[CAP_MAX_CANDIDATES], d[CAP_MAX_CANDIDATES];
    size_t ne = (in->rounds + 1) / 2, no = in->rounds / 2;

    out->noise_defined = in->rounds >= 2;
    if (!out->noise_defined)
        return;
    for (size_t k = 0; k < in->n; k++) {
        const double *o = in->obj + k * in->rounds;
        for (size_t r = 0; r < ne; r++)
            tmp[r] = o[2 * r];
        ev[k] = cap_median(tmp, ne);
        for (size_t r = 0; r < no; r++)
            tmp[r] = o[2 * r + 1];
        od[k] = cap_median(tmp, no);
        d[k] = fabs(rel_pct(fmax(ev[k], od[k]), fmin(ev[k], od[k])));
    }
    out->noise_rec_pct = d[in->rec];
    out->noise_regret_pct = d[in->rec] + (out->best != in->rec ? d[out->best] : 0);
    out->noise_diff_pct = cap_median(d, in->n);
    out->noise_rank_defined = in->n >= 4 && varies(ev, in->n) && varies(od, in->n);
    out->noise_rank = out->noise_rank_defined ? cap_rank_correlation(ev, od, in->n) : 0;
}

/* Range (highest - lowest) of the classes' medians of obj (n classes x rounds). */
static double median_range(const double *obj, size_t n, size_t rounds, double *tmp)
{
    double lo = INFINITY, hi = -INFINITY;

    for (size_t k = 0; k < n; k++) {
        double m = median_copy(obj + k * rounds, rounds, tmp);
        lo = fmin(lo, m);
        hi = fmax(hi, m);
    }
    return hi - lo;
}

/* p-value of the medians' range under "no class differs": the share of CAP_BOOT_RESAMPLES
 * within-round shuffles of the classes whose range is at least the observed one. */
static hs_status_t permutation_p(const cap_stats_in_t *in, cap_stats_t *out)
{
    size_t n = in->n, R = in->rounds, idx[CAP_MAX_CANDIDATES], hits = 0;
    double *perm = malloc(n * R * sizeof(*perm)), *tmp = malloc(R * sizeof(*tmp)), seen;
    uint64_t seed = (in->seed ? in->seed : 1) ^ 0xA5A5A5A55A5A5A5AULL;

    if (!perm || !tmp) {
        free(perm);
        free(tmp);
        return HS_ERR_NOMEM;
    }
    seen = median_range(in->obj, n, R, tmp);
    for (size_t b = 0; b < CAP_BOOT_RESAMPLES; b++) {
        for (size_t r = 0; r < R; r++) {
            for (size_t k = 0; k < n; k++)
                idx[k] = k;
            cap_shuffle(idx, n, &seed);
            for (size_t k = 0; k < n; k++)
                perm[k * R + r] = in->obj[idx[k] * R + r];
        }
        hits += median_range(perm, n, R, tmp) >= seen * (1 - 1e-12);
    }
    out->differ_p = (double)(hits + 1) / (double)(CAP_BOOT_RESAMPLES + 1);
    free(perm);
    free(tmp);
    return HS_OK;
}

/* Whether the model tells classes a and b apart: their predictions' intervals do not
 * overlap (point predictions: they differ). */
static int model_apart(const cap_stats_in_t *in, size_t a, size_t b)
{
    if (!in->pred_lo || !in->pred_hi)
        return in->pred[a] != in->pred[b];
    return in->pred_hi[a] < in->pred_lo[b] || in->pred_hi[b] < in->pred_lo[a];
}

/* The pairs of classes whose rounds do not overlap, and of those the ones the predictions
 * order the other way round where the model tells them apart too (a tie in the
 * predictions, or a difference within their own sampling spread, is not an order). */
static void pairs(const cap_stats_in_t *in, cap_stats_t *out)
{
    if (in->rounds < 2) /* one round apart from another says nothing */
        return;
    for (size_t a = 0; a < in->n; a++)
        for (size_t b = a + 1; b < in->n; b++) {
            if (!cap_rounds_apart(in->obj + a * in->rounds, in->obj + b * in->rounds,
                                  in->rounds))
                continue;
            out->pairs_apart++;
            if (!model_apart(in, a, b)) {
                out->pairs_model_tied++;
                continue;
            }
            double meas = out->median[a] - out->median[b], pred = in->pred[a] - in->pred[b];
            out->pairs_discordant += (meas < 0 && pred > 0) || (meas > 0 && pred < 0);
        }
}

static void verdicts(const cap_stats_in_t *in, cap_stats_t *out)
{
    const double *ro = in->obj + in->rec * in->rounds, *bo = in->obj + out->best * in->rounds;
    double plo = INFINITY, phi = -INFINITY, pmean = 0;

    int differ = out->pairs_apart > 0 || out->differ_p < 0.05;

    out->rec_apart = cap_rounds_apart(ro, bo, in->rounds);
    if (in->rounds < 2)
        out->rec_verdict = CAP_REC_UNDECIDED;
    else if (in->rec == out->best)
        out->rec_verdict = CAP_REC_BEST;
    else if (out->rec_apart || (differ && out->diff_ci.lo > 0))
        out->rec_verdict = CAP_REC_WORSE;
    else
        out->rec_verdict = CAP_REC_TIED;
    for (size_t k = 0; k < in->n; k++) {
        plo = fmin(plo, in->pred[k]);
        phi = fmax(phi, in->pred[k]);
        pmean += fabs(in->pred[k]) / (double)in->n;
    }
    if (in->n < 2)
        out->verdict = CAP_VERDICT_DIFFER;
    else if (in->rounds < 2)
        out->verdict = CAP_VERDICT_UNDECIDED;
    else if (differ)
        out->verdict = CAP_VERDICT_DIFFER;
    else
        out->verdict = phi - plo > 0.05 * pmean ? CAP_VERDICT_NO_EFFECT : CAP_VERDICT_TIE;
}

hs_status_t cap_stats_run(const cap_stats_in_t *in, cap_stats_t *out)
{
    double *tmp;
    boot_fig_t f;
    hs_status_t st;

    memset(out, 0, sizeof(*out));
    if (in->n == 0 || in->n > CAP_MAX_CANDIDATES || in->rounds == 0 || in->rec >= in->n)
        return HS_ERR_INVALID;
    tmp = malloc(in->rounds * sizeof(*tmp));
    if (!tmp)
        return HS_ERR_NOMEM;
    for (size_t k = 0; k < in->n; k++)
        out->median[k] = median_copy(in->obj + k * in->rounds, in->rounds, tmp);
    out->best = argmin(out->median, in->n);
    out->worst = argmax(out->median, in->n);
    figures(in, out, out->median, &f);
    out->regret_pct = f.regret;
    out->diff_pct = f.diff;
    out->spread_pct = f.spread;
    out->mae_pct = f.mae;
    out->rank_note = rank_note(in, out->median);
    out->rank = out->rank_note ? 0 : f.rank;
    noise(in, out, tmp);
    pairs(in, out);
    free(tmp);
    st = bootstrap(in, out);
    if (st != HS_OK)
        return st;
    st = permutation_p(in, out);
    if (st != HS_OK)
        return st;
    verdicts(in, out);
    return HS_OK;
}
