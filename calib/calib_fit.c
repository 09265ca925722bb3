/* calib_fit.c - Levenberg-Marquardt on relative residuals; see calib_fit.h.
 *
 * Parameters move in log space (theta = ln value): values stay positive, and a step means
 * the same relative change at any magnitude. The Jacobian is by forward differences of 2%,
 * coarse on purpose: the engine rounds some quantities (packets, WQE blocks), and a tiny
 * step would see only that rounding. Each residual is weighted by calib_obs_weight: a figure
 * the device could not repeat counts for less.
 */
#include "calib/calib_fit.h"
#include "common/hs_util.h"
#include "model/path_rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIT_STEP 0.02
#define FIT_MAX_ITERS 80

typedef struct {
    const calib_param_t *params;
    size_t np;
    const prof_param_info_t *info[CALIB_MAX_PARAMS];
    const calib_obs_t *obs;
    size_t nobs;
    calib_predict_fn_t predict;
    void *ctx;
    profile_t *cur;
} fit_t;

int calib_solve(double *a, double *b, size_t n)
{
    for (size_t c = 0; c < n; c++) {
        size_t piv = c;
        for (size_t r = c + 1; r < n; r++)
            if (fabs(a[r * n + c]) > fabs(a[piv * n + c]))
                piv = r;
        if (fabs(a[piv * n + c]) < 1e-300)
            return -1;
        for (size_t k = 0; k < n && piv != c; k++) {
            double t = a[c * n + k];
            a[c * n + k] = a[piv * n + k];
            a[piv * n + k] = t;
        }
        if (piv != c) {
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (size_t r = c + 1; r < n; r++) {
            double f = a[r * n + c] / a[c * n + c];
            for (size_t k = c; k < n; k++)
                a[r * n + k] -= f * a[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (size_t c = n; c-- > 0;) {
        for (size_t k = c + 1; k < n; k++)
            b[c] -= a[c * n + k] * b[k];
        b[c] /= a[c * n + c];
    }
    return 0;
}

static double *param_field(profile_t *p, const prof_param_info_t *info)
{
    return (double *)((char *)p + info->offset);
}

/* Clamp theta into the bounds and write the values into the current profile. */
static void fit_set(fit_t *f, double *theta)
{
    for (size_t j = 0; j < f->np; j++) {
        double lo = log(f->params[j].lo), hi = log(f->params[j].hi);
        theta[j] = theta[j] < lo ? lo : theta[j] > hi ? hi : theta[j];
        *param_field(f->cur, f->info[j]) = exp(theta[j]);
    }
}

double calib_obs_weight(const calib_obs_t *o)
{
    double n = isfinite(o->noise_rel) ? o->noise_rel : 0;

    return n > CALIB_NOISE_FLOOR ? CALIB_NOISE_FLOOR / n : 1;
}

/* Weighted residuals: the relative error times calib_obs_weight. */
static hs_status_t fit_resid(fit_t *f, double *r, double *cost)
{
    double c = 0;

    for (size_t i = 0; i < f->nobs; i++) {
        double pred = 0;
        hs_status_t st = f->predict(f->ctx, f->cur, &f->obs[i], &pred);
        if (st != HS_OK)
            return st;
        r[i] = calib_obs_weight(&f->obs[i]) * (pred - f->obs[i].meas_us) / f->obs[i].meas_us;
        c += r[i] * r[i];
    }
    *cost = c;
    return HS_OK;
}

/* J (nobs x np, row-major) at theta, whose residuals are r. */
static hs_status_t fit_jacobian(fit_t *f, double *theta, double *J, double *rtmp)
{
    double cost;
    hs_status_t st = HS_OK;

    for (size_t j = 0; j < f->np && st == HS_OK; j++) {
        double save = theta[j], h = theta[j] + FIT_STEP > log(f->params[j].hi) ? -FIT_STEP
                                                                                : FIT_STEP;
        theta[j] = save + h;
        fit_set(f, theta);
        st = fit_resid(f, rtmp, &cost);
        for (size_t i = 0; i < f->nobs && st == HS_OK; i++)
            J[i * f->np + j] = rtmp[i]; /* differenced below */
        theta[j] = save;
    }
    fit_set(f, theta);
    return st;
}

/* A = J^T J, g = J^T r (with J holding perturbed residuals, differenced here). */
static void fit_normal(const fit_t *f, double *J, const double *r, double *A, double *g)
{
    size_t np = f->np;

    for (size_t i = 0; i < f->nobs; i++)
        for (size_t j = 0; j < np; j++)
            J[i * np + j] = (J[i * np + j] - r[i]) / FIT_STEP;
    memset(A, 0, np * np * sizeof(*A));
    memset(g, 0, np * sizeof(*g));
    for (size_t i = 0; i < f->nobs; i++)
        for (size_t j = 0; j < np; j++) {
            g[j] += J[i * np + j] * r[i];
            for (size_t k = 0; k < np; k++)
                A[j * np + k] += J[i * np + j] * J[i * np + k];
        }
}

/* Solve (A + lambda diag A) d = -g; parameters nothing depends on get d = 0. */
static int fit_step(size_t np, const double *A, const double *g, double lambda,
                    const int *det, double *d)
{
    double M[CALIB_MAX_PARAMS * CALIB_MAX_PARAMS];

    for (size_t j = 0; j < np; j++) {
        for (size_t k = 0; k < np; k++)
            M[j * np + k] = det[j] && det[k] ? A[j * np + k] : 0;
        M[j * np + j] = det[j] ? A[j * np + j] * (1 + lambda) + 1e-12 : 1;
        d[j] = det[j] ? -g[j] : 0;
    }
    return calib_solve(M, d, np);
}

static void fit_determined(size_t np, const double *A, int *det)
{
    double mx = 0;

    for (size_t j = 0; j < np; j++)
        mx = A[j * np + j] > mx ? A[j * np + j] : mx;
    for (size_t j = 0; j < np; j++)
        det[j] = A[j * np + j] > 1e-10 * mx && A[j * np + j] > 1e-14;
}

static double median_abs(const double *r, size_t n)
{
    double *s = malloc(n * sizeof(*s)), m;

    if (!s)
        return NAN;
    for (size_t i = 0; i < n; i++)
        s[i] = fabs(r[i]);
    m = hs_median_double(s, n);
    free(s);
    return m;
}

#define FIT_COV_RIDGE 1e-9 /* relative, on the diagonal of the covariance's matrix */

int calib_param_at_bound(const calib_param_t *p, double v)
{
    return v <= p->lo * (1 + 1e-6) || v >= p->hi * (1 - 1e-6);
}

int calib_param_pinned(const calib_result_t *res, const calib_param_t *params, size_t j)
{
    return calib_param_kept(res, j) && res->determined[j] &&
           calib_param_at_bound(&params[j], res->value[j]);
}

/* Whether parameter j of the fit sits at one of its bounds (the step clamps it there). */
static int fit_at_bound(const fit_t *f, size_t j)
{
    return calib_param_at_bound(&f->params[j], *param_field(f->cur, f->info[j]));
}

/* Per-parameter figures at the optimum: standard error, weighted residual. r: the weighted
 * residuals (the figures reported are of the relative errors, unweighted: u). */
static void fit_report(const fit_t *f, const double *J, const double *A, const double *rw,
                       double cost, const int *det, calib_result_t *res)
{
    size_t np = f->np, ndet = 0;
    double s2, *r = malloc(f->nobs * sizeof(*r)), usum = 0;
    int free_[CALIB_MAX_PARAMS];

    if (!r) { /* the figures only: without memory, the weighted ones */
        r = (double *)rw;
        for (size_t i = 0; i < f->nobs; i++)
            usum += rw[i] * rw[i];
    }
    for (size_t i = 0; r != rw && i < f->nobs; i++) {
        r[i] = rw[i] / calib_obs_weight(&f->obs[i]);
        usum += r[i] * r[i];
    }

    /* the covariance of the free parameters: one pinned at a bound is not at an optimum
     * of its own (no standard error) and is held fixed for the others', as a figure-less
     * one is; left in, its column makes the matrix singular and takes every other
     * parameter's standard error with it */
    for (size_t j = 0; j < np; j++) {
        free_[j] = det[j] && !fit_at_bound(f, j);
        ndet += free_[j] != 0;
    }
    s2 = f->nobs > ndet ? cost / (double)(f->nobs - ndet) : 0;
    for (size_t j = 0; j < np; j++) {
        double M[CALIB_MAX_PARAMS * CALIB_MAX_PARAMS], e[CALIB_MAX_PARAMS] = {0}, wsum = 0,
               wr = 0;
        for (size_t a = 0; a < np; a++)
            for (size_t b = 0; b < np; b++)
                M[a * np + b] = free_[a] && free_[b] ? A[a * np + b] : (a == b);
        /* a relative ridge: two terms that are one column (host.post_ns and host.poll_ns
         * where every WR is signalled) get the huge standard error of their difference
         * instead of a singular matrix that leaves every term without one */
        for (size_t a = 0; a < np; a++)
            M[a * np + a] *= 1 + FIT_COV_RIDGE;
        e[j] = 1;
        res->stderr_rel[j] =
            free_[j] && calib_solve(M, e, np) == 0 ? sqrt(s2 * e[j]) : INFINITY;
        for (size_t i = 0; i < f->nobs; i++) {
            wsum += fabs(J[i * np + j]);
            wr += fabs(J[i * np + j]) * r[i] * r[i];
        }
        res->resid_rel[j] = wsum > 0 ? sqrt(wr / wsum) : 0;
        res->determined[j] = det[j];
        res->value[j] = *param_field(f->cur, f->info[j]);
    }
    res->np = np;
    res->nobs = f->nobs;
    res->rms_rel = sqrt(usum / (double)f->nobs);
    res->median_abs_rel = median_abs(r, f->nobs);
    if (r != rw)
        free(r);
}

static hs_status_t fit_check(fit_t *f)
{
    if (f->np == 0 || f->np > CALIB_MAX_PARAMS || f->nobs < f->np) {
        hs_log_error("calibrate: %zu parameters from %zu observations (need 1..%d parameters "
                     "and at least as many observations)", f->np, f->nobs, CALIB_MAX_PARAMS);
        return HS_ERR_INVALID;
    }
    for (size_t j = 0; j < f->np; j++) {
        f->info[j] = profile_param_find(f->params[j].key);
        if (!f->info[j] || !(f->params[j].lo > 0) || !(f->params[j].hi >= f->params[j].lo)) {
            hs_log_error("calibrate: parameter '%s': %s", f->params[j].key,
                         f->info[j] ? "bounds must satisfy 0 < lo <= hi" : "unknown key");
            return HS_ERR_INVALID;
        }
    }
    for (size_t i = 0; i < f->nobs; i++) {
        if (!(f->obs[i].meas_us > 0) || !isfinite(f->obs[i].meas_us)) {
            hs_log_error("calibrate: observation %zu (%s, %llu B): measured latency %g is not "
                         "a positive number", i, f->obs[i].group ? f->obs[i].group : "?",
                         (unsigned long long)f->obs[i].size_bytes, f->obs[i].meas_us);
            return HS_ERR_INVALID;
        }
    }
    return HS_OK;
}

/* Levenberg-Marquardt iterations from theta; leaves the optimum in f->cur and theta. */
static hs_status_t fit_iterate(fit_t *f, double *theta, double *J, double *r, double *rtmp,
                               double *A, double *g, int *det, double *cost, unsigned *iters)
{
    double lambda = 1e-2, d[CALIB_MAX_PARAMS], trial[CALIB_MAX_PARAMS], c_new;
    hs_status_t st = fit_resid(f, r, cost);

    for (*iters = 0; st == HS_OK && *iters < FIT_MAX_ITERS; (*iters)++) {
        int improved = 0;
        st = fit_jacobian(f, theta, J, rtmp);
        if (st != HS_OK)
            break;
        fit_normal(f, J, r, A, g);
        fit_determined(f->np, A, det);
        while (!improved && lambda < 1e10 && st == HS_OK) {
            if (fit_step(f->np, A, g, lambda, det, d) != 0) {
                lambda *= 10;
                continue;
            }
            for (size_t j = 0; j < f->np; j++)
                trial[j] = theta[j] + d[j];
            fit_set(f, trial);
            st = fit_resid(f, rtmp, &c_new);
            if (st == HS_OK && c_new < *cost) {
                improved = 1;
                lambda = lambda / 3 > 1e-9 ? lambda / 3 : 1e-9;
            } else {
                lambda *= 4;
            }
        }
        if (!improved || st != HS_OK)
            break;
        memcpy(theta, trial, f->np * sizeof(*theta));
        memcpy(r, rtmp, f->nobs * sizeof(*r));
        if (*cost - c_new < 1e-10 * (*cost + 1e-30)) {
            *cost = c_new;
            break;
        }
        *cost = c_new;
    }
    fit_set(f, theta);
    if (st != HS_OK)
        return st;
    st = fit_resid(f, r, cost);
    if (st != HS_OK)
        return st;
    st = fit_jacobian(f, theta, J, rtmp);
    if (st != HS_OK)
        return st;
    fit_normal(f, J, r, A, g);
    fit_determined(f->np, A, det);
    return HS_OK;
}

/* Record the fitted values through profile_set_value so each carries its source. */
static hs_status_t fit_commit(fit_t *f, const calib_result_t *res)
{
    hs_status_t st = HS_OK;
    char src[224], from[96];
    size_t cnt[CALIB_NCLASSES] = {0};

    for (size_t i = 0; i < f->nobs; i++)
        if ((unsigned)f->obs[i].cls < CALIB_NCLASSES)
            cnt[f->obs[i].cls]++;
    snprintf(from, sizeof(from), "%zu figures (%zu single-message, %zu stream, %zu mixed)",
             f->nobs, cnt[CALIB_SINGLE], cnt[CALIB_STREAM], cnt[CALIB_MIXED]);

    for (size_t j = 0; j < f->np && st == HS_OK; j++) {
        double v = res->value[j];
        if (!res->determined[j])
            continue;
        if (f->info[j]->kind == PROF_INT)
            v = floor(v + 0.5);
        snprintf(src, sizeof(src), "calibrate: fitted from %s, std err %.1f%%, residual "
                 "%.1f%% (median error %.1f%%)", from, 100 * res->stderr_rel[j],
                 100 * res->resid_rel[j], 100 * res->median_abs_rel);
        st = profile_set_value(f->cur, f->params[j].key, v, src);
    }
    return st;
}

hs_status_t calib_fit(const profile_t *start, const calib_param_t *params, size_t np,
                      const calib_obs_t *obs, size_t nobs, calib_predict_fn_t predict,
                      void *ctx, profile_t **fitted, calib_result_t *res)
{
    fit_t f = {.params = params, .np = np, .obs = obs, .nobs = nobs, .predict = predict,
               .ctx = ctx};
    double theta[CALIB_MAX_PARAMS], g[CALIB_MAX_PARAMS], cost = 0;
    double *J = NULL, *r = NULL, *rtmp = NULL, *A = NULL;
    int det[CALIB_MAX_PARAMS];
    calib_result_t out = {0};
    hs_status_t st = fit_check(&f);

    if (st != HS_OK)
        return st;
    st = profile_clone(start, &f.cur);
    if (st != HS_OK)
        return st;
    J = malloc(nobs * np * sizeof(*J));
    r = malloc(nobs * sizeof(*r));
    rtmp = malloc(nobs * sizeof(*rtmp));
    A = malloc(np * np * sizeof(*A));
    if (!J || !r || !rtmp || !A) {
        st = HS_ERR_NOMEM;
        goto out;
    }
    for (size_t j = 0; j < np; j++) {
        double v = *param_field(f.cur, f.info[j]);
        theta[j] = log(v > 0 ? v : params[j].lo);
    }
    fit_set(&f, theta);
    st = fit_iterate(&f, theta, J, r, rtmp, A, g, det, &cost, &out.iters);
    if (st != HS_OK)
        goto out;
    fit_report(&f, J, A, r, cost, det, &out);
    st = fit_commit(&f, &out);
out:
    free(J);
    free(r);
    free(rtmp);
    free(A);
    if (st != HS_OK) {
        profile_free(f.cur);
        return st;
    }
    *fitted = f.cur;
    *res = out;
    return HS_OK;
}

hs_status_t calib_errors(const profile_t *p, const calib_obs_t *obs, size_t nobs,
                         calib_predict_fn_t predict, void *ctx, double *err,
                         double *median_abs_out)
{
    for (size_t i = 0; i < nobs; i++) {
        double pred = 0;
        hs_status_t st = predict(ctx, p, &obs[i], &pred);
        if (st != HS_OK)
            return st;
        err[i] = (pred - obs[i].meas_us) / obs[i].meas_us;
    }
    if (median_abs_out)
        *median_abs_out = nobs ? median_abs(err, nobs) : 0;
    return HS_OK;
}

int calib_param_kept(const calib_result_t *res, size_t j)
{
    return !res->determined[j] || !(res->stderr_rel[j] <= CALIB_STDERR_MAX_REL);
}

/* The start profile's value back for key, whose fitted value's standard error is over
 * CALIB_STDERR_MAX_REL: warned, and said in its source. */
static hs_status_t keep_uncertain(profile_t *fitted, const char *key, double value,
                                  double stderr_rel, double orig)
{
    const prof_param_info_t *pi = profile_param_find(key);
    const char *unit = pi ? pi->unit : "";
    char src[200], err[32];

    if (isfinite(stderr_rel))
        snprintf(err, sizeof(err), "%.1f%%", 100 * stderr_rel);
    else
        snprintf(err, sizeof(err), "not finite");
    hs_log_warn("calibrate: %s: std err %s of the fitted %.4g %s (over %.0f%%): the data do "
                "not determine it; the start profile's %.4g %s is kept", key, err, value, unit,
                100 * CALIB_STDERR_MAX_REL, orig, unit);
    snprintf(src, sizeof(src), "calibrate: not fitted (the fit could not determine it: std err "
             "%s, over %.0f%%): as in the start profile", err, 100 * CALIB_STDERR_MAX_REL);
    return profile_set_value(fitted, key, orig, src);
}

hs_status_t calib_keep_undetermined(profile_t *fitted, const calib_param_t *params, size_t np,
                                    const calib_result_t *res, const double *orig)
{
    hs_status_t st = HS_OK;

    for (size_t j = 0; st == HS_OK && j < np; j++) {
        if (!calib_param_kept(res, j))
            continue;
        if (calib_param_pinned(res, params, j))
            st = profile_set_value(fitted, params[j].key, res->value[j],
                                   "calibrate: at the bound of its fit (the figures want it "
                                   "beyond; no standard error there)");
        else if (res->determined[j])
            st = keep_uncertain(fitted, params[j].key, res->value[j], res->stderr_rel[j],
                                orig[j]);
        else
            st = profile_set_value(fitted, params[j].key, orig[j],
                                   "calibrate: not fitted (no measured figure depends on it): "
                                   "as in the start profile");
    }
    return st;
}

/* The parameters the next fit leaves out (kept[] set): every one no figure depends on, else
 * the one calib_param_kept says is least determined (the largest standard error), one at a
 * time: two collinear terms (host.post_ns and host.poll_ns where every WR is signalled) both
 * have a huge standard error, and leaving both out would leave nothing to carry what they
 * share. res is of the fit of the parameters idx[0..n). Returns how many more. */
static size_t mark_kept(const calib_result_t *res, const size_t *idx, size_t n, int *kept)
{
    size_t more = 0, worst = n;

    for (size_t j = 0; j < n; j++)
        if (!res->determined[j] && !kept[idx[j]]) {
            kept[idx[j]] = 1;
            more++;
        }
    if (more)
        return more;
    for (size_t j = 0; j < n; j++)
        if (calib_param_kept(res, j) && !kept[idx[j]] &&
            (worst == n || !(res->stderr_rel[j] <= res->stderr_rel[worst])))
            worst = j;
    if (worst == n)
        return 0;
    kept[idx[worst]] = 1;
    return 1;
}

/* calib_fit_keeping without its last step (calib_keep_undetermined): each round fits the
 * parameters not kept from where the last round left them; *out the last profile, *all the
 * figures per parameter (of the fit that last had it). */
static hs_status_t keeping_rounds(const profile_t *start, const calib_param_t *params,
                                  size_t np, const calib_obs_t *obs, size_t nobs,
                                  calib_predict_fn_t predict, void *ctx, const double *orig,
                                  profile_t **out, calib_result_t *all)
{
    calib_param_t sub[CALIB_MAX_PARAMS];
    size_t idx[CALIB_MAX_PARAMS], n = np;
    int kept[CALIB_MAX_PARAMS] = {0};
    calib_result_t r;
    profile_t *cur = NULL, *next = NULL;
    hs_status_t st;

    memset(all, 0, sizeof(*all));
    for (size_t j = 0; j < np; j++) {
        idx[j] = j;
        sub[j] = params[j];
    }
    st = profile_clone(start, &cur);
    /* each round fits sub (the parameters not kept) from cur; at most np rounds */
    while (st == HS_OK) {
        st = calib_fit(cur, sub, n, obs, nobs, predict, ctx, &next, &r);
        if (st != HS_OK)
            break;
        profile_free(cur);
        cur = next;
        all->iters += r.iters;
        for (size_t j = 0; j < n; j++) {
            all->value[idx[j]] = r.value[j];
            all->stderr_rel[idx[j]] = r.stderr_rel[j];
            all->resid_rel[idx[j]] = r.resid_rel[j];
            all->determined[idx[j]] = r.determined[j];
        }
        all->rms_rel = r.rms_rel;
        all->median_abs_rel = r.median_abs_rel;
        all->nobs = r.nobs;
        if (mark_kept(&r, idx, n, kept) == 0)
            break;
        /* the kept ones back to the start profile's values, the others fitted again */
        n = 0;
        for (size_t j = 0; st == HS_OK && j < np; j++) {
            if (kept[j] && calib_param_pinned(all, params, j))
                st = profile_set_value(cur, params[j].key, all->value[j], "calibrate: at bound");
            else if (kept[j])
                st = profile_set_value(cur, params[j].key, orig[j], "calibrate: kept");
            else
                idx[n++] = j;
        }
        for (size_t j = 0; j < n; j++)
            sub[j] = params[idx[j]];
        if (n == 0)
            break;
    }
    all->np = np;
    if (st != HS_OK) {
        profile_free(cur);
        return st;
    }
    *out = cur;
    return HS_OK;
}

static double prof_value(const profile_t *p, const char *key)
{
    const prof_param_info_t *pi = profile_param_find(key);

    return pi ? *(const double *)((const char *)p + pi->offset) : 0;
}

/* The refinement stage: params[base[0..nb)] fitted into *cur (their figures in *all, over
 * all np), the refinements params[ref[0..nr)] at orig there. The base ones not kept and the
 * refinements (at start's values) fitted again from *cur, in keeping rounds: when no
 * refinement is left undetermined, the result replaces *cur and their figures in *all;
 * else the refinements' figures say the largest standard error of that fit, so that they
 * are kept. With fewer figures than those terms no
 * such fit exists: the refinements are kept (an infinite standard error). */
typedef struct {
    const profile_t *start;
    const calib_param_t *params;
    const calib_obs_t *obs;
    size_t nobs;
    calib_predict_fn_t predict;
    void *ctx;
    const double *orig; /* calib_fit_keeping's, over all params */
} refine_ctx_t;

static hs_status_t refine_stage(const refine_ctx_t *rc, const size_t *ref, size_t nr,
                                profile_t **cur, calib_result_t *all)
{
    calib_param_t sub[CALIB_MAX_PARAMS];
    size_t idx[CALIB_MAX_PARAMS], n = 0;
    double worst = 0, sub_orig[CALIB_MAX_PARAMS];
    int ok = 1;
    calib_result_t r;
    profile_t *from = NULL, *next = NULL;
    hs_status_t st = profile_clone(*cur, &from);

    if (st != HS_OK)
        return st;
    for (size_t j = 0; j < all->np; j++)
        if (!rc->params[j].refine && !calib_param_kept(all, j))
            idx[n++] = j;
    for (size_t k = 0; k < nr; k++) {
        idx[n++] = ref[k];
        st = profile_set_value(from, rc->params[ref[k]].key,
                               prof_value(rc->start, rc->params[ref[k]].key),
                               "calibrate: fit start (refinement)");
        if (st != HS_OK)
            goto free_from;
    }
    if (n > rc->nobs) { /* fewer figures than terms: none can be refined */
        for (size_t k = 0; k < nr; k++) {
            all->value[ref[k]] = prof_value(*cur, rc->params[ref[k]].key);
            all->stderr_rel[ref[k]] = INFINITY; /* so calib_keep_undetermined keeps it */
            all->determined[ref[k]] = 1;
        }
        profile_free(from);
        return HS_OK;
    }
    for (size_t j = 0; j < n; j++) {
        sub[j] = rc->params[idx[j]];
        sub_orig[j] = rc->orig[idx[j]];
    }
    /* in rounds, as the base fit: a base term the refinement leaves undetermined (pinned at
     * a bound, say) goes back to orig and the rest is fitted again; the refinement stands
     * when no refinement term is left undetermined */
    st = keeping_rounds(from, sub, n, rc->obs, rc->nobs, rc->predict, rc->ctx, sub_orig,
                        &next, &r);
free_from:
    profile_free(from);
    if (st != HS_OK)
        return st;
    all->iters += r.iters;
    for (size_t j = 0; j < n; j++) {
        ok = ok && !(sub[j].refine && calib_param_kept(&r, j));
        worst = !(r.stderr_rel[j] <= worst) ? r.stderr_rel[j] : worst;
    }
    for (size_t j = 0; j < n; j++) {
        if (!ok && !rc->params[idx[j]].refine)
            continue;
        all->value[idx[j]] = r.value[j];
        all->stderr_rel[idx[j]] = ok || !r.determined[j] ? r.stderr_rel[j] : worst;
        all->resid_rel[idx[j]] = r.resid_rel[j];
        all->determined[idx[j]] = r.determined[j];
    }
    if (!ok) {
        profile_free(next);
        return HS_OK;
    }
    all->rms_rel = r.rms_rel;
    all->median_abs_rel = r.median_abs_rel;
    profile_free(*cur);
    *cur = next;
    return HS_OK;
}

hs_status_t calib_fit_keeping(const profile_t *start, const calib_param_t *params, size_t np,
                              const calib_obs_t *obs, size_t nobs, calib_predict_fn_t predict,
                              void *ctx, const double *orig, profile_t **fitted,
                              calib_result_t *res)
{
    refine_ctx_t rc = {start, params, obs, nobs, predict, ctx, orig};
    calib_param_t sub[CALIB_MAX_PARAMS];
    size_t base[CALIB_MAX_PARAMS], ref[CALIB_MAX_PARAMS], nb = 0, nr = 0;
    double sub_orig[CALIB_MAX_PARAMS];
    calib_result_t part, all = {0};
    profile_t *held = NULL, *cur = NULL;
    hs_status_t st;

    if (np > CALIB_MAX_PARAMS)
        return calib_fit(start, params, np, obs, nobs, predict, ctx, fitted, res);
    for (size_t j = 0; j < np; j++) {
        if (params[j].refine)
            ref[nr++] = j;
        else
            base[nb++] = j;
    }
    if (nr == 0 || nb == 0) { /* nothing to refine, or nothing to refine it from */
        st = keeping_rounds(start, params, np, obs, nobs, predict, ctx, orig, &cur, &all);
        goto keep;
    }
    /* the others first, each refinement held at orig */
    st = profile_clone(start, &held);
    if (st != HS_OK)
        return st;
    for (size_t k = 0; k < nr; k++) {
        st = profile_set_value(held, params[ref[k]].key, orig[ref[k]], "calibrate: kept");
        if (st != HS_OK)
            goto free_held;
    }
    for (size_t j = 0; j < nb; j++) {
        sub[j] = params[base[j]];
        sub_orig[j] = orig[base[j]];
    }
    st = keeping_rounds(held, sub, nb, obs, nobs, predict, ctx, sub_orig, &cur, &part);
free_held:
    profile_free(held);
    if (st != HS_OK)
        return st;
    all.np = np;
    all.iters = part.iters;
    all.rms_rel = part.rms_rel;
    all.median_abs_rel = part.median_abs_rel;
    all.nobs = part.nobs;
    for (size_t j = 0; j < nb; j++) {
        all.value[base[j]] = part.value[j];
        all.stderr_rel[base[j]] = part.stderr_rel[j];
        all.resid_rel[base[j]] = part.resid_rel[j];
        all.determined[base[j]] = part.determined[j];
    }
    st = refine_stage(&rc, ref, nr, &cur, &all);
keep:
    if (st != HS_OK)
        goto free_cur;
    st = calib_keep_undetermined(cur, params, np, &all, orig);
    if (st != HS_OK)
        goto free_cur;
    *fitted = cur;
    *res = all;
    return HS_OK;

free_cur:
    profile_free(cur);
    return st;
}

const char *calib_class_name(calib_class_t c)
{
    static const char *const names[CALIB_NCLASSES] = {"single", "stream", "mixed"};

    return (unsigned)c < CALIB_NCLASSES ? names[c] : "?";
}

static double held_base(calib_class_t c)
{
    return c == CALIB_SINGLE ? CALIB_HELD_BASE_SINGLE
           : c == CALIB_STREAM ? CALIB_HELD_BASE_STREAM : CALIB_HELD_BASE_MIXED;
}

/* d ln pred_i / d ln p_j of held[i] under fitted, by a 2% step of p_j (as the fit's). */
static hs_status_t held_sens(const profile_t *fitted, const calib_param_t *par,
                             const calib_obs_t *o, calib_predict_fn_t predict, void *ctx,
                             double *s)
{
    const prof_param_info_t *pi = profile_param_find(par->key);
    profile_t *q = NULL;
    double base = 0, moved = 0, *field;
    hs_status_t st;

    if (!pi)
        return HS_ERR_INVALID;
    st = profile_clone(fitted, &q);
    if (st != HS_OK)
        return st;
    st = predict(ctx, q, o, &base);
    if (st != HS_OK)
        goto free_profile;
    field = (double *)((char *)q + pi->offset);
    *field = *field > 0 ? *field * exp(FIT_STEP) : par->lo;
    st = predict(ctx, q, o, &moved);
    if (st != HS_OK)
        goto free_profile;
    *s = base > 0 && moved > 0 ? (log(moved) - log(base)) / FIT_STEP : 0;
free_profile:
    profile_free(q);
    return st;
}

/* Class c's term: the parameter whose sensitivity vector the error vector leans on most. */
static hs_status_t held_term(const profile_t *fitted, const calib_param_t *params, size_t np,
                             const calib_obs_t *held, const double *err, size_t n,
                             calib_predict_fn_t predict, void *ctx, calib_class_t c,
                             calib_held_class_t *out)
{
    double enorm = 0, best = 0;
    hs_status_t st = HS_OK;

    out->term = -1;
    out->term_share = 0;
    for (size_t i = 0; i < n; i++)
        if (held[i].cls == c)
            enorm += err[i] * err[i];
    for (size_t j = 0; st == HS_OK && j < np; j++) {
        double dot = 0, snorm = 0, s = 0;
        for (size_t i = 0; st == HS_OK && i < n; i++) {
            if (held[i].cls != c)
                continue;
            st = held_sens(fitted, &params[j], &held[i], predict, ctx, &s);
            dot += s * err[i];
            snorm += s * s;
        }
        if (st == HS_OK && snorm > 1e-12 && fabs(dot) / sqrt(snorm) > best) {
            best = fabs(dot) / sqrt(snorm);
            out->term = (int)j;
        }
    }
    out->term_share = enorm > 0 ? best / sqrt(enorm) : 0;
    return st;
}

hs_status_t calib_held_check(const profile_t *fitted, const calib_param_t *params, size_t np,
                             const calib_obs_t *held, const double *err, size_t n,
                             calib_predict_fn_t predict, void *ctx,
                             calib_held_class_t out[CALIB_NCLASSES], size_t *nover)
{
    double *e = malloc((n ? n : 1) * sizeof(*e)), *noise = malloc((n ? n : 1) * sizeof(*e));
    hs_status_t st = e && noise ? HS_OK : HS_ERR_NOMEM;

    *nover = 0;
    for (int c = 0; st == HS_OK && c < CALIB_NCLASSES; c++) {
        calib_held_class_t *h = &out[c];
        memset(h, 0, sizeof(*h));
        h->bound = held_base((calib_class_t)c);
        h->term = -1;
        for (size_t i = 0; i < n; i++)
            if (held[i].cls == (calib_class_t)c) {
                noise[h->n] = isfinite(held[i].noise_rel) ? held[i].noise_rel : 0;
                e[h->n++] = err[i];
            }
        if (h->n == 0)
            continue;
        h->median_abs_rel = median_abs(e, h->n);
        h->noise_rel = median_abs(noise, h->n);
        h->bound += h->noise_rel;
        h->over = h->median_abs_rel > h->bound;
        *nover += (size_t)h->over;
        st = held_term(fitted, params, np, held, err, n, predict, ctx, (calib_class_t)c, h);
    }
    free(e);
    free(noise);
    return st;
}

/* Single messages see one constant (link.base_lat_ns; link.dma_ns adds the same constant to
 * every non-inline figure and stays as the start profile has it) and the per-byte cost;
 * streams add what limits a sustained rate: the per-WR cost on the CPU (host.post_ns), the
 * link's occupancy per message (per byte: link.gbps; per packet: link.pkt_ns, which is also
 * part of a single message's latency but, unlike the wire latency, serialises the messages
 * of a stream), and the cost of each reported batch (what coalescing saves). bw.fixed_ns is
 * the BW path's own constant. (bw.split_ns is left out: only the largest BW messages depend
 * on it, and on soft-RoCE it ran to its bound.) */
size_t calib_terms(const profile_t *start, calib_param_t out[CALIB_NTERMS])
{
    out[0] = (calib_param_t){"link.base_lat_ns", 10, 1e7, 0};
    out[1] = (calib_param_t){"link.gbps", 0.01, 1000, 0};
    out[2] = (calib_param_t){"host.post_ns", 1, 1e7, 0};
    out[3] = (calib_param_t){"bw.fixed_ns", 1, 1e7, 0};
    out[4] = (calib_param_t){start->ll_irq || start->bw_irq ? "host.interrupt_ns"
                                                            : "host.poll_ns", 1, 1e7, 0};
    out[5] = (calib_param_t){"link.pkt_ns", 1, 1e7, 1};
    out[6] = (calib_param_t){"link.wr_ns", 1, 1e7, 0};
    return CALIB_NTERMS;
}

/* Set key to v on start when params has it and v lies within its bounds. */
static size_t seed_one(profile_t *start, const calib_param_t *params, size_t np,
                       const char *key, double v)
{
    for (size_t j = 0; j < np; j++) {
        if (strcmp(params[j].key, key) != 0)
            continue;
        if (!(v >= params[j].lo && v <= params[j].hi))
            return 0;
        return profile_set_value(start, key, v, "calibrate: fit start (single messages' "
                                 "line)") == HS_OK;
    }
    return 0;
}

/* Whether obs[i] is the first single-message figure of its size. */
static int distinct_single(const calib_obs_t *obs, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (obs[k].cls == CALIB_SINGLE && obs[k].meas_us > 0 &&
            obs[k].size_bytes == obs[i].size_bytes)
            return 0;
    return 1;
}

size_t calib_seed_from_singles(profile_t *start, const calib_param_t *params, size_t np,
                               const calib_obs_t *obs, size_t nobs)
{
    uint64_t mtu = start->link_mtu_bytes > 0 ? (uint64_t)start->link_mtu_bytes : 1;
    double M[9] = {0}, v[3] = {0};
    size_t n = 0, nsizes = 0, set = 0;

    for (size_t i = 0; i < nobs; i++) {
        const calib_obs_t *o = &obs[i];
        double x[3] = {1, (double)o->size_bytes,
                       prules_npkt(mtu, prules_log2_exact(mtu), o->size_bytes)};
        if (o->cls != CALIB_SINGLE || !(o->meas_us > 0))
            continue;
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                M[r * 3 + c] += x[r] * x[c];
            v[r] += x[r] * o->meas_us * 1e3; /* ns */
        }
        nsizes += distinct_single(obs, i);
        n++;
    }
    if (n < 3 || nsizes < 3 || calib_solve(M, v, 3) != 0)
        return 0;
    if (v[1] > 0)
        set += seed_one(start, params, np, "link.gbps", 8.0 / v[1]);
    if (v[2] > 0)
        set += seed_one(start, params, np, "link.pkt_ns", v[2]);
    if (v[0] > 0)
        set += seed_one(start, params, np, "link.wr_ns", v[0] / 2);
    return set;
}

hs_status_t calib_fit_two_starts(const profile_t *start, const calib_param_t *params,
                                 size_t np, const calib_obs_t *obs, size_t nobs,
                                 calib_predict_fn_t predict, void *ctx, const double *orig,
                                 profile_t **fitted, calib_result_t *res)
{
    profile_t *seeded = NULL, *other = NULL;
    calib_result_t ores;
    hs_status_t st = calib_fit_keeping(start, params, np, obs, nobs, predict, ctx, orig,
                                       fitted, res);

    if (st != HS_OK)
        return st;
    st = profile_clone(start, &seeded);
    if (st != HS_OK)
        goto free_fitted;
    if (calib_seed_from_singles(seeded, params, np, obs, nobs) == 0)
        goto free_seeded; /* the same start: the same fit */
    st = calib_fit_keeping(seeded, params, np, obs, nobs, predict, ctx, orig, &other, &ores);
    if (st != HS_OK)
        goto free_seeded;
    if (ores.rms_rel < res->rms_rel) {
        profile_free(*fitted);
        *fitted = other;
        *res = ores;
    } else {
        profile_free(other);
    }
free_seeded:
    profile_free(seeded);
    if (st == HS_OK)
        return HS_OK;
free_fitted:
    profile_free(*fitted);
    *fitted = NULL;
    return st;
}
