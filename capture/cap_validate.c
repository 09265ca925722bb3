/* cap_validate.c - live replay of a trace per candidate hint, predicted vs measured
 * (see cap_validate.h). The summary arithmetic is at the end of the file. */
#include "capture/cap_validate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_drift.h"
#include "capture/cap_replay.h"
#include "common/hs_mem.h"
#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/recommend/hint_class.h"
#include "model/model.h"
#include "model/recommend/recommend.h"

typedef struct {
    uint64_t hint;           /* the hint replayed: the class's canonical one, or as given */
    const char *role;        /* "recommended", "runner-up", "no hint", "everything LL",
                              * "between", "given" */
    rec_class_t cls;              /* its class over the trace */
    uint64_t merged[CAP_MAX_CANDIDATES]; /* --hints given for this class (one configuration) */
    size_t nmerged;
    pred_result_t pred;
    double pred_lo, pred_hi; /* the predicted objective's own sampling interval (NAN: none) */
    double *meas_obj;        /* per round */
    pred_result_t *meas;     /* per round (released after the summary) */
    double meas_median, meas_spread;
    cap_replay_overhead_t overhead; /* the live replay's own cost, the worst of its rounds */
} cand_t;

typedef struct {
    const cap_validate_opts_t *o;
    cap_live_t live;
    trace_t *tr;
    uint64_t max_msg;
    cand_t c[CAP_MAX_CANDIDATES];
    size_t nc;
    uint64_t recommended;
    const char *rec_source;
    rec_class_sizes_t sizes;      /* the trace's distinct sizes: its classes of hints */
    cap_stats_t stats;
    cap_drift_t drift;       /* the device against its profile, probed every round */
    profile_t *eff;          /* the profile the live replay runs (cap_profile_effective) */
    char eff_changes[512];   /* what differs from the profile given */
    hs_afile_t *msgs;        /* o->messages, a file: committed when the run succeeds */
    FILE *mfp;               /* where the per-message rows go (NULL: nowhere) */
} vctx_t;

/* Rows of one measured round of cd (o->messages): predicted beside measured, per message. */
static hs_status_t write_messages(vctx_t *v, const cand_t *cd, uint64_t round,
                                  const pred_raw_t *raw)
{
    for (size_t i = 0; i < v->tr->n; i++) {
        const trace_rec_t *r = &v->tr->recs[i];
        if (fprintf(v->mfp, "%llu,%llu,%zu,%llu,%.3f,%s,%.3f,%.3f\n",
                    (unsigned long long)cd->hint, (unsigned long long)round, i,
                    (unsigned long long)r->size_bytes,
                    (double)(r->t_post_ns - v->tr->recs[0].t_post_ns) / 1e3,
                    raw->path[i] == TRACE_F_PATH_LL ? "ll" : "bw", (double)cd->pred.lat_us[i],
                    (double)raw->lat_us[i]) < 0) {
            hs_log_error("%s: %s", v->o->messages, strerror(errno));
            return HS_ERR_IO;
        }
    }
    return HS_OK;
}

/* One live replay of the trace at cd's hint into raw, on a connection of its own (the hint
 * sets the BW depth; kept open for the next when more and this one succeeded). */
static hs_status_t replay_live(vctx_t *v, cand_t *cd, pred_raw_t *raw, int more)
{
    const cap_validate_opts_t *o = v->o;
    cap_replay_overhead_t ov = {0};
    cap_conn_t *c = NULL;
    hs_status_t st = cap_live_connect(&o->live, &v->live, v->max_msg, cd->hint, &c);

    if (st != HS_OK)
        return st;
    cap_replay_opts_t ro = {.tr = v->tr, .hint = cd->hint,
                            .hysteresis = (uint64_t)v->live.prof->switch_hysteresis,
                            .mode = o->mode, .overhead = &ov};

    st = cap_replay_warmup(c, &ro);
    if (st != HS_OK)
        goto close_conn;
    st = cap_replay_run(c, &ro, raw);
    if (st != HS_OK)
        goto close_conn;
    cap_replay_overhead_merge(&cd->overhead, &ov);
close_conn:
    cap_conn_close(c, more && st == HS_OK);
    return st;
}

/* One measured run of one candidate: replayed live, summarised into round's figures. */
static hs_status_t measure(vctx_t *v, cand_t *cd, uint64_t round, int more)
{
    const cap_validate_opts_t *o = v->o;
    pred_opts_t po = {.mode = o->mode, .flows = 1};
    pred_raw_t raw;
    hs_status_t st = HS_ERR_NOMEM;

    memset(&raw, 0, sizeof(raw));
    raw.lat_us = hs_alloc_big(v->tr->n * sizeof(*raw.lat_us));
    raw.path = calloc(v->tr->n, sizeof(*raw.path));
    if (!raw.lat_us || !raw.path)
        goto free_raw;
    st = replay_live(v, cd, &raw, more);
    if (st != HS_OK)
        goto free_raw;
    st = pred_summarize(v->tr, &po, &raw, cd->hint, &cd->meas[round]);
    if (st != HS_OK)
        goto free_raw;
    cd->meas_obj[round] = obj_cost(o->objective, &cd->meas[round]);
    if (v->mfp)
        st = write_messages(v, cd, round, &raw);
free_raw:
    free(raw.lat_us);
    free(raw.path);
    return st;
}

/* Round r's drift probe (cap_drift.h), before its classes. */
static hs_status_t probe_drift(vctx_t *v, uint64_t r)
{
    return cap_drift_measure(&v->drift, &(cap_drift_run_t){
                                 .o = &v->o->live, .live = &v->live, .max_msg = v->max_msg,
                                 .hysteresis = (uint64_t)v->live.prof->switch_hysteresis,
                                 .more = 1}, r);
}

static hs_status_t measure_all(vctx_t *v)
{
    size_t idx[CAP_MAX_CANDIDATES];
    uint64_t seed = v->o->seed ? v->o->seed : 1;
    hs_progress_t pb;
    hs_status_t st = HS_OK;

    for (size_t k = 0; k < v->nc; k++) {
        v->c[k].meas_obj = calloc(v->o->repeat, sizeof(double));
        v->c[k].meas = calloc(v->o->repeat, sizeof(pred_result_t));
        if (!v->c[k].meas_obj || !v->c[k].meas)
            return HS_ERR_NOMEM;
    }
    /* A bar on a terminal; otherwise one line per measurement (both silenced by --quiet). */
    hs_progress_start(&pb, "validate", v->o->repeat * v->nc);
    for (uint64_t r = 0; st == HS_OK && r < v->o->repeat; r++) {
        for (size_t k = 0; k < v->nc; k++)
            idx[k] = k;
        cap_shuffle(idx, v->nc, &seed);
        st = probe_drift(v, r);
        for (size_t k = 0; st == HS_OK && k < v->nc; k++) {
            int last = r + 1 == v->o->repeat && k + 1 == v->nc;
            if (!pb.enabled)
                hs_log_info("validate: round %llu/%llu, hint %llu", (unsigned long long)r + 1,
                            (unsigned long long)v->o->repeat,
                            (unsigned long long)v->c[idx[k]].hint);
            st = measure(v, &v->c[idx[k]], r, !last);
            hs_progress_update(&pb, r * v->nc + k + 1);
        }
    }
    hs_progress_finish(&pb);
    return st;
}

/* ---- candidates ----------------------------------------------------------------------- */

/* The candidate of hint h's class, or NULL. */
static cand_t *find_class(vctx_t *v, uint64_t h)
{
    size_t idx = rec_class_index(&v->sizes, h);

    for (size_t k = 0; k < v->nc; k++)
        if (v->c[k].cls.index == idx)
            return &v->c[k];
    return NULL;
}

/* Add hint h as a candidate unless its class is one already (then a given hint is noted
 * beside the one that stands for the class). */
static hs_status_t add_cand(vctx_t *v, uint64_t h, const char *role)
{
    cand_t *cd = find_class(v, h);

    if (!cd && v->nc == CAP_MAX_CANDIDATES) {
        hs_log_error("--hints: more than %d classes of hints over this trace",
                     CAP_MAX_CANDIDATES);
        return HS_ERR_USAGE;
    }
    if (!cd) {
        cd = &v->c[v->nc++];
        *cd = (cand_t){.hint = h, .role = role};
        rec_class_get(&v->sizes, rec_class_index(&v->sizes, h), &cd->cls);
    }
    if (strcmp(role, "given") == 0 && cd->nmerged < CAP_MAX_CANDIDATES)
        cd->merged[cd->nmerged++] = h;
    return HS_OK;
}

/* The recommendation and its runner-up, as `hintsim recommend` computes them (model). */
static hs_status_t recommend(vctx_t *v, uint64_t *best, uint64_t *second)
{
    rec_opts_t ro;
    rec_report_t rep;
    hs_status_t st;

    memset(&ro, 0, sizeof(ro));
    ro.objective = v->o->objective;
    ro.pred.mode = v->o->mode;
    ro.pred.flows = 1;
    st = rec_run(&model_engine_ops, v->tr, v->eff, &ro, &rep);
    if (st != HS_OK)
        return st;
    *best = rep.results[rep.winner].hint_bytes;
    *second = rep.results[rep.runner_up].hint_bytes;
    rec_report_release(&rep);
    return HS_OK;
}

/* Auto: the recommended class, the runner-up, hint 0, everything LL, then classes spread
 * between them by quantiles of the trace's distinct sizes, up to o->classes in all. */
static hs_status_t pick_auto(vctx_t *v)
{
    size_t count = rec_class_count(&v->sizes), want = v->o->classes ? v->o->classes
                                                              : CAP_DEFAULT_CLASSES;
    size_t must[4], idx[CAP_MAX_CANDIDATES + 4], n;
    uint64_t best = 0, second = 0;
    rec_class_t c;
    hs_status_t st = recommend(v, &best, &second);

    if (st != HS_OK)
        return st;
    v->recommended = best;
    v->rec_source = "hintsim recommend (model engine)";
    (void)add_cand(v, best, "recommended"); /* the first four never fill the list */
    (void)add_cand(v, second, "runner-up");
    (void)add_cand(v, 0, "no hint");
    rec_class_get(&v->sizes, count - 1, &c);
    (void)add_cand(v, c.canonical, "everything LL");
    for (size_t k = 0; k < v->nc; k++)
        must[k] = v->c[k].cls.index;
    n = rec_class_spread(&v->sizes, must, v->nc, want > CAP_MAX_CANDIDATES ? CAP_MAX_CANDIDATES
                                                                      : want, idx);
    for (size_t i = 0; i < n; i++) {
        rec_class_get(&v->sizes, idx[i], &c);
        if (v->nc < CAP_MAX_CANDIDATES)
            (void)add_cand(v, c.canonical, "between");
    }
    return HS_OK;
}

static hs_status_t pick_candidates(vctx_t *v)
{
    hs_status_t st = rec_class_scan(v->tr, &v->sizes);

    if (st != HS_OK || !v->o->hints)
        return st == HS_OK ? pick_auto(v) : st;
    for (size_t i = 0; st == HS_OK && i < v->o->nhints; i++)
        st = add_cand(v, v->o->hints[i], "given");
    v->recommended = v->o->hints[0];
    v->rec_source = "the first of --hints";
    return st;
}

/* The interval of cd's predicted objective from its own sampling: cap_quantile_interval
 * over the latencies its figures count (pred_in_figures), widened to hold the figure
 * itself (a histogram's); NAN when the objective is not a quantile of the latencies. */
static hs_status_t pred_interval(const vctx_t *v, const pred_opts_t *po, cand_t *cd)
{
    double q = obj_quantile(v->o->objective), *lat, f;
    int include_cold = po->include_cold || pred_all_cold(v->tr);
    size_t n = 0;

    cd->pred_lo = cd->pred_hi = NAN;
    if (!(q > 0) || !cd->pred.lat_us)
        return HS_OK;
    lat = malloc(v->tr->n * sizeof(*lat));
    if (!lat)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < v->tr->n; i++)
        if (pred_in_figures(&v->tr->recs[i], cd->pred.lat_us[i], include_cold))
            lat[n++] = cd->pred.lat_us[i];
    if (n > 0) {
        f = obj_value(v->o->objective, &cd->pred);
        cap_quantile_interval(lat, n, q, &cd->pred_lo, &cd->pred_hi);
        cd->pred_lo = fmin(cd->pred_lo, f);
        cd->pred_hi = fmax(cd->pred_hi, f);
    }
    free(lat);
    return HS_OK;
}

/* Every candidate's prediction and its interval; the per-message latencies are kept only
 * for --messages. */
static hs_status_t predict_all(vctx_t *v)
{
    pred_opts_t po = {.mode = v->o->mode, .flows = 1};
    hs_status_t st = HS_OK;

    for (size_t k = 0; st == HS_OK && k < v->nc; k++) {
        cand_t *cd = &v->c[k];
        st = pred_run(&(pred_ctx_t){&model_engine_ops, v->tr, v->eff, &po}, cd->hint, 1,
                      &cd->pred);
        if (st == HS_OK)
            st = pred_interval(v, &po, cd);
        if (!v->mfp) {
            free(cd->pred.lat_us);
            cd->pred.lat_us = NULL;
        }
    }
    return st == HS_OK ? cap_drift_init(&v->drift, v->eff, v->o->repeat) : st;
}

/* ---- summary -------------------------------------------------------------------------- */

static cJSON *result_json(const pred_result_t *r)
{
    cJSON *j = cJSON_CreateObject();

    if (j)
        pred_figures_to_json(j, r);
    return j;
}

/* The measured figures of a candidate: the round whose objective is the median. */
static const pred_result_t *median_round(const cand_t *cd, uint64_t rounds)
{
    size_t best = 0;

    for (size_t r = 0; r < rounds; r++)
        if (fabs(cd->meas_obj[r] - cd->meas_median) < fabs(cd->meas_obj[best] - cd->meas_median))
            best = r;
    return &cd->meas[best];
}

/* [lo, hi] of an objective's interval as printed: |value| (throughput is negated). */
static cJSON *ci_json(cap_ci_t ci, int absolute)
{
    double a = absolute ? fabs(ci.lo) : ci.lo, b = absolute ? fabs(ci.hi) : ci.hi;
    cJSON *j = cJSON_CreateArray();

    cJSON_AddItemToArray(j, cJSON_CreateNumber(fmin(a, b)));
    cJSON_AddItemToArray(j, cJSON_CreateNumber(fmax(a, b)));
    return j;
}

/* "class": the range of hints that are this configuration over the trace. */
static cJSON *class_json(const vctx_t *v, const cand_t *cd)
{
    cJSON *j = cJSON_CreateObject();

    cJSON_AddNumberToObject(j, "index", (double)cd->cls.index);
    cJSON_AddNumberToObject(j, "lo", (double)cd->cls.lo);
    if (cd->cls.hi == UINT64_MAX)
        cJSON_AddNullToObject(j, "hi"); /* no upper bound: everything on LL */
    else
        cJSON_AddNumberToObject(j, "hi", (double)cd->cls.hi);
    cJSON_AddNumberToObject(j, "canonical", (double)cd->cls.canonical);
    cJSON_AddNumberToObject(j, "ll_sizes", (double)cd->cls.ll_sizes);
    cJSON_AddNumberToObject(j, "ll_messages", (double)cd->cls.ll_msgs);
    cJSON_AddNumberToObject(j, "of_sizes", (double)v->sizes.n);
    return j;
}

static cJSON *cand_json(const vctx_t *v, size_t k)
{
    const cand_t *cd = &v->c[k];
    cJSON *j = cJSON_CreateObject(), *m, *p, *rounds;

    cJSON_AddNumberToObject(j, "hint", (double)cd->hint);
    cJSON_AddStringToObject(j, "candidate", cd->role);
    cJSON_AddItemToObject(j, "class", class_json(v, cd));
    if (cd->nmerged > 1) { /* given hints that are this one configuration */
        cJSON *h = cJSON_AddArrayToObject(j, "hints");
        for (size_t i = 0; i < cd->nmerged; i++)
            cJSON_AddItemToArray(h, cJSON_CreateNumber((double)cd->merged[i]));
    }
    cJSON_AddItemToObject(j, "predicted", p = result_json(&cd->pred));
    if (p && !isnan(cd->pred_lo)) /* the objective's interval (pairs.model_tied) */
        cJSON_AddItemToObject(p, "objective_interval",
                              cJSON_CreateDoubleArray((const double[]){cd->pred_lo,
                                                                       cd->pred_hi}, 2));
    m = result_json(median_round(cd, v->o->repeat));
    cJSON_AddNumberToObject(m, "objective_median", fabs(cd->meas_median));
    cJSON_AddItemToObject(m, "objective_ci", ci_json(v->stats.median_ci[k], 1));
    cJSON_AddNumberToObject(m, "objective_spread", cd->meas_spread);
    rounds = cJSON_AddArrayToObject(m, "objective_rounds");
    for (uint64_t r = 0; r < v->o->repeat; r++)
        cJSON_AddItemToArray(rounds, cJSON_CreateNumber(fabs(cd->meas_obj[r])));
    cJSON_AddItemToObject(m, "replay_overhead", cap_replay_overhead_json(&cd->overhead));
    cJSON_AddItemToObject(j, "measured", m);
    return j;
}

static void summarize_cand(cand_t *cd, uint64_t rounds)
{
    double *tmp = malloc(rounds * sizeof(*tmp)), lo = INFINITY, hi = -INFINITY;

    for (uint64_t r = 0; r < rounds; r++) {
        lo = fmin(lo, cd->meas_obj[r]);
        hi = fmax(hi, cd->meas_obj[r]);
        if (tmp)
            tmp[r] = cd->meas_obj[r];
    }
    cd->meas_median = tmp ? cap_median(tmp, rounds) : cd->meas_obj[0];
    cd->meas_spread = hi - lo;
    free(tmp);
}

/* The statistics over rounds (cap_stats_run) of every candidate. */
static hs_status_t summarize(vctx_t *v)
{
    size_t R = v->o->repeat, rec = 0;
    double *obj = malloc(v->nc * R * sizeof(*obj)), pred[CAP_MAX_CANDIDATES];
    double lo[CAP_MAX_CANDIDATES], hi[CAP_MAX_CANDIDATES];
    int intervals = 1;
    hs_status_t st;

    if (!obj)
        return HS_ERR_NOMEM;
    for (size_t k = 0; k < v->nc; k++) {
        summarize_cand(&v->c[k], R);
        memcpy(obj + k * R, v->c[k].meas_obj, R * sizeof(*obj));
        pred[k] = obj_cost(v->o->objective, &v->c[k].pred);
        lo[k] = v->c[k].pred_lo;
        hi[k] = v->c[k].pred_hi;
        intervals &= !isnan(lo[k]) && !isnan(hi[k]);
        if (rec_class_same(&v->sizes, v->c[k].hint, v->recommended))
            rec = k;
    }
    st = cap_stats_run(&(cap_stats_in_t){.obj = obj, .pred = pred, .n = v->nc, .rounds = R,
                                         .rec = rec, .seed = v->o->seed,
                                         .pred_lo = intervals ? lo : NULL,
                                         .pred_hi = intervals ? hi : NULL},
                       &v->stats);
    free(obj);
    return st;
}

static const char *verdict_text(cap_verdict_t v)
{
    switch (v) {
    case CAP_VERDICT_NO_EFFECT:
        return "the hint does not take effect here: no class's rounds differ from another's "
               "beyond the round-to-round noise (every two overlap, and shuffling the classes "
               "within rounds gives as wide a range of medians at p >= 0.05) while the "
               "predictions differ (seed 000, pitfall 2); this says nothing about the "
               "recommendation";
    case CAP_VERDICT_TIE:
        return "the classes' measured results cannot be told apart over these rounds, and the "
               "model predicted them within 5% of each other too: a tie, so regret and rank "
               "correlation only rank noise here";
    case CAP_VERDICT_UNDECIDED:
        return "one round: nothing to weigh the classes' differences against (use --repeat 5 "
               "or more)";
    case CAP_VERDICT_DIFFER:
    default:
        return "the classes' measured results differ beyond the round-to-round noise; compare "
               "regret and rank correlation";
    }
}

static const char *rec_verdict_name(cap_rec_verdict_t v)
{
    static const char *const names[] = {"best", "worse", "indistinguishable", "undecided"};

    return (unsigned)v < 4 ? names[v] : "unknown";
}

/* "recommendation": the recommended class against the best measured one. */
static cJSON *recommendation_json(const vctx_t *v)
{
    const cap_stats_t *s = &v->stats;
    cJSON *j = cJSON_CreateObject();

    cJSON_AddStringToObject(j, "verdict", rec_verdict_name(s->rec_verdict));
    cJSON_AddNumberToObject(j, "versus_hint", (double)v->c[s->best].hint);
    cJSON_AddNumberToObject(j, "difference_pct", s->diff_pct);
    cJSON_AddItemToObject(j, "difference_ci_pct", ci_json(s->diff_ci, 0));
    cJSON_AddBoolToObject(j, "rounds_apart", s->rec_apart);
    return j;
}

/* "noise": the same classes replayed against themselves (even rounds against odd). */
static cJSON *noise_json(const cap_stats_t *s)
{
    cJSON *j = cJSON_CreateObject();

    cJSON_AddStringToObject(j, "method", "even rounds against odd rounds: the same classes "
                            "replayed against themselves");
    if (!s->noise_defined) {
        cJSON_AddNullToObject(j, "recommended_pct");
        cJSON_AddNullToObject(j, "regret_pct");
        cJSON_AddNullToObject(j, "median_pct");
        cJSON_AddNullToObject(j, "rank_correlation");
        return j;
    }
    cJSON_AddNumberToObject(j, "recommended_pct", s->noise_rec_pct);
    cJSON_AddNumberToObject(j, "regret_pct", s->noise_regret_pct);
    cJSON_AddNumberToObject(j, "median_pct", s->noise_diff_pct);
    if (s->noise_rank_defined)
        cJSON_AddNumberToObject(j, "rank_correlation", s->noise_rank);
    else
        cJSON_AddNullToObject(j, "rank_correlation");
    return j;
}

/* The figures of the summary with their intervals (CLI.md's keys and the additions). */
static void figures_json(const vctx_t *v, cJSON *j)
{
    const cap_stats_t *s = &v->stats;
    cJSON *b;

    cJSON_AddNumberToObject(j, "recommended_hint", (double)v->recommended);
    cJSON_AddStringToObject(j, "recommended_by", v->rec_source);
    cJSON_AddNumberToObject(j, "best_measured_hint", (double)v->c[s->best].hint);
    cJSON_AddNumberToObject(j, "regret_pct", s->regret_pct);
    cJSON_AddItemToObject(j, "regret_ci_pct", ci_json(s->regret_ci, 0));
    if (s->rank_note) {
        cJSON_AddNullToObject(j, "rank_correlation");
        cJSON_AddNullToObject(j, "rank_correlation_ci");
        cJSON_AddStringToObject(j, "rank_correlation_note", s->rank_note);
    } else {
        cJSON_AddNumberToObject(j, "rank_correlation", s->rank);
        cJSON_AddItemToObject(j, "rank_correlation_ci", ci_json(s->rank_ci, 0));
    }
    b = cJSON_AddObjectToObject(j, "pairs");
    cJSON_AddNumberToObject(b, "apart", (double)s->pairs_apart);
    cJSON_AddNumberToObject(b, "ordered_otherwise", (double)s->pairs_discordant);
    cJSON_AddNumberToObject(b, "model_tied", (double)s->pairs_model_tied);
    cJSON_AddNumberToObject(j, "median_abs_error_pct", s->mae_pct);
    cJSON_AddItemToObject(j, "median_abs_error_ci_pct", ci_json(s->mae_ci, 0));
    cJSON_AddStringToObject(j, "objective", obj_name(v->o->objective));
    b = cJSON_AddObjectToObject(j, "classes");
    cJSON_AddNumberToObject(b, "measured", (double)v->nc);
    cJSON_AddNumberToObject(b, "in_trace", (double)rec_class_count(&v->sizes));
    cJSON_AddItemToObject(j, "recommendation", recommendation_json(v));
    cJSON_AddNumberToObject(j, "classes_differ_p", s->differ_p);
    cJSON_AddItemToObject(j, "noise", noise_json(s));
    b = cJSON_AddObjectToObject(j, "bootstrap");
    cJSON_AddNumberToObject(b, "resamples", CAP_BOOT_RESAMPLES);
    cJSON_AddNumberToObject(b, "level", 0.95);
    cJSON_AddStringToObject(b, "over", "rounds, the same rounds for every class");
}

/* The recommendation verdict in words, into buf. */
static void rec_text(const vctx_t *v, char *buf, size_t len)
{
    const cap_stats_t *s = &v->stats;
    char hb[48];

    rec_label_hint(v->c[s->best].hint, hb, sizeof(hb));
    switch (s->rec_verdict) {
    case CAP_REC_BEST:
        snprintf(buf, len, "the recommended class measured best");
        break;
    case CAP_REC_WORSE:
        snprintf(buf, len, "the recommended class measured %.1f%% [%.1f, %.1f] worse than "
                 "hint %s, beyond the round-to-round noise%s", s->diff_pct, s->diff_ci.lo,
                 s->diff_ci.hi, hb, s->rec_apart ? " (their rounds do not overlap)" : "");
        break;
    case CAP_REC_TIED:
        snprintf(buf, len, "the recommended class and the best measured, hint %s, cannot be "
                 "told apart over %llu rounds (difference %.1f%% [%.1f, %.1f])", hb,
                 (unsigned long long)v->o->repeat, s->diff_pct, s->diff_ci.lo, s->diff_ci.hi);
        break;
    default:
        snprintf(buf, len, "one round: the recommendation cannot be weighed against the noise");
    }
}

static cJSON *validation_json(vctx_t *v)
{
    cap_verdict_t verdict = v->stats.verdict;
    cJSON *j = cJSON_CreateObject();
    char sat[400], rtext[400];
    int saturated = 0;

    /* open loop on a device slower than the trace: the latencies are its backlog */
    if (v->o->mode == PRED_OPEN) {
        double gbps[CAP_MAX_CANDIDATES];
        model_load_t load;
        model_offered_load(v->tr, v->eff, &load);
        for (size_t k = 0; k < v->nc; k++)
            gbps[k] = median_round(&v->c[k], v->o->repeat)->throughput_gbps;
        saturated = cap_saturation_warning(load.offered_gbps, gbps, v->nc, sat, sizeof(sat));
    }
    figures_json(v, j);
    cJSON_AddItemToObject(j, "drift", cap_drift_json(&v->drift));
    if ((saturated && verdict == CAP_VERDICT_NO_EFFECT) || verdict == CAP_VERDICT_UNDECIDED)
        cJSON_AddNullToObject(j, "hint_takes_effect"); /* unknown: backlog, or one round */
    else
        cJSON_AddBoolToObject(j, "hint_takes_effect", verdict != CAP_VERDICT_NO_EFFECT);
    cJSON_AddBoolToObject(j, "saturated", saturated);
    if (saturated && verdict == CAP_VERDICT_NO_EFFECT) /* not pitfall 2: the backlog */
        cJSON_AddStringToObject(j, "verdict", "the classes' measured results cannot be told "
                                "apart, but the device could not keep up with the trace "
                                "(saturated), so this says nothing about whether the hint "
                                "takes effect");
    else
        cJSON_AddStringToObject(j, "verdict", verdict_text(verdict));
    rec_text(v, rtext, sizeof(rtext));
    cJSON_AddStringToObject(j, "recommendation_verdict", rtext);
    cJSON *w = cJSON_AddArrayToObject(j, "warnings");
    if (saturated && w)
        cJSON_AddItemToArray(w, cJSON_CreateString(sat));
    return j;
}

static cJSON *report_json(vctx_t *v)
{
    cJSON *j = cJSON_CreateObject(), *t, *res;
    char hash[32];

    cJSON_AddStringToObject(j, "engine", "model");
    cJSON_AddStringToObject(j, "measured_on", v->live.dev->name);
    cJSON_AddItemToObject(j, "config", cap_live_config_json(&v->live, NULL));
    t = cJSON_AddObjectToObject(j, "profile");
    cJSON_AddStringToObject(t, "name", v->live.prof->name);
    snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)profile_hash(v->live.prof));
    cJSON_AddStringToObject(t, "hash", hash);
    snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)profile_hash(v->eff));
    cJSON_AddStringToObject(t, "effective_hash", hash);
    cJSON_AddStringToObject(t, "effective_changes", v->eff_changes);
    t = cJSON_AddObjectToObject(j, "trace");
    cJSON_AddStringToObject(t, "path", v->o->trace_path);
    cJSON_AddNumberToObject(t, "records", (double)v->tr->n);
    cJSON_AddStringToObject(j, "mode", v->o->mode == PRED_OPEN ? "open" : "closed");
    cJSON_AddNumberToObject(j, "repeat", (double)v->o->repeat);
    cJSON_AddItemToObject(j, "validation", validation_json(v));
    res = cJSON_AddArrayToObject(j, "results");
    for (size_t k = 0; k < v->nc; k++)
        cJSON_AddItemToArray(res, cand_json(v, k));
    return j;
}

/* Open o->messages and write its header; nothing when not asked. */
static hs_status_t open_messages(vctx_t *v)
{
    hs_status_t st;

    if (!v->o->messages)
        return HS_OK;
    if ((st = hs_afile_open(v->o->messages, &v->msgs)) != HS_OK)
        return st;
    v->mfp = hs_afile_stream(v->msgs);
    if (fprintf(v->mfp, "%s\n", CAP_MESSAGES_HEADER) < 0) {
        hs_log_error("%s: %s", v->o->messages, strerror(errno));
        return HS_ERR_IO;
    }
    return HS_OK;
}

/* Commit o->messages when everything succeeded; else remove what was written. */
static hs_status_t close_messages(vctx_t *v, hs_status_t st)
{
    hs_afile_t *af = v->msgs;

    v->msgs = NULL;
    v->mfp = NULL;
    if (!af)
        return st;
    if (st != HS_OK) {
        hs_afile_abort(af);
        return st;
    }
    return hs_afile_commit(af);
}

static hs_status_t load_trace(vctx_t *v)
{
    hs_status_t st = trace_load_posts(v->o->trace_path, 1, &v->tr);

    if (st != HS_OK)
        return st;
    if (v->o->limit && v->o->limit < v->tr->n)
        v->tr->n = v->o->limit;
    if (v->tr->n == 0) {
        hs_log_error("%s: the trace has no records to replay", v->o->trace_path);
        return HS_ERR_INVALID;
    }
    for (size_t i = 0; i < v->tr->n; i++) {
        const trace_rec_t *r = &v->tr->recs[i];
        if (r->size_bytes > ((uint64_t)1 << 30)) {
            hs_log_error("%s: record %zu: size_bytes %llu is above the 1G replay limit",
                         v->o->trace_path, i, (unsigned long long)r->size_bytes);
            return HS_ERR_INVALID;
        }
        if (i > 0 && r->t_post_ns < v->tr->recs[i - 1].t_post_ns && v->o->mode == PRED_OPEN) {
            hs_log_error("%s: record %zu: t_post_ns goes backwards; open-loop replay needs "
                         "ordered post times", v->o->trace_path, i);
            return HS_ERR_INVALID;
        }
        if (r->size_bytes > v->max_msg)
            v->max_msg = r->size_bytes;
    }
    if (v->max_msg == 0)
        v->max_msg = 1;
    return HS_OK;
}

static void vctx_release(vctx_t *v)
{
    for (size_t k = 0; k < v->nc; k++) {
        pred_result_release(&v->c[k].pred);
        for (uint64_t r = 0; v->c[k].meas && r < v->o->repeat; r++)
            pred_result_release(&v->c[k].meas[r]);
        free(v->c[k].meas);
        free(v->c[k].meas_obj);
    }
    if (v->tr)
        trace_free(v->tr);
    rec_class_release(&v->sizes);
    cap_drift_release(&v->drift);
    profile_free(v->eff);
    cap_live_close(&v->live);
}

/* The model predicts what the live replay runs: the profile as the device's paths apply it
 * (model/MODEL.md 7b), not the moderation or drain cost the replay cannot reproduce. */
static hs_status_t make_effective(vctx_t *v)
{
    cap_path_cfg_t cfg[CAP_NPATHS];
    hs_status_t st = cap_conn_make_cfg(v->live.prof, 0, v->live.dev, cfg);

    if (st != HS_OK)
        return st;
    st = profile_clone(v->live.prof, &v->eff);
    if (st != HS_OK)
        return st;
    st = cap_profile_effective(v->eff, cfg, v->eff_changes, sizeof(v->eff_changes));
    if (st != HS_OK)
        return st;
    if (v->eff_changes[0])
        hs_log_info("validate: predicting the live paths' effective configuration: %s",
                    v->eff_changes);
    return HS_OK;
}

/* --server: answer the client's validation. */
static hs_status_t serve_peer(vctx_t *v, cJSON **report)
{
    hs_status_t st = cap_live_serve(&v->o->live, &v->live);

    if (st != HS_OK)
        return st;
    *report = cJSON_CreateObject();
    cJSON_AddStringToObject(*report, "role", "server");
    return HS_OK;
}

/* The candidates picked, predicted, measured live and compared, o->messages written
 * alongside (committed only when all of it succeeded). */
static hs_status_t validate_client(vctx_t *v, cJSON **report)
{
    hs_status_t st = make_effective(v);

    if (st != HS_OK)
        return st;
    st = open_messages(v);
    if (st != HS_OK)
        goto close_msgs;
    st = pick_candidates(v);
    if (st != HS_OK)
        goto close_msgs;
    st = predict_all(v);
    if (st != HS_OK)
        goto close_msgs;
    st = measure_all(v);
    if (st != HS_OK)
        goto close_msgs;
    st = summarize(v);
close_msgs:
    st = close_messages(v, st);
    if (st != HS_OK)
        return st;
    *report = report_json(v);
    return HS_OK;
}

hs_status_t cap_validate_run(const cap_validate_opts_t *o, cJSON **report)
{
    vctx_t v;
    hs_status_t st;

    memset(&v, 0, sizeof(v));
    v.live.listen_fd = -1;
    v.o = o;
    if (o->repeat == 0) {
        hs_log_error("--repeat must be >= 1");
        return HS_ERR_USAGE;
    }
    if (o->classes > CAP_MAX_CANDIDATES) {
        hs_log_error("--classes %zu: at most %d", o->classes, CAP_MAX_CANDIDATES);
        return HS_ERR_USAGE;
    }
    st = o->live.server ? HS_OK : load_trace(&v);
    if (st != HS_OK)
        goto release_ctx;
    st = cap_live_open(&o->live, &v.live);
    if (st != HS_OK)
        goto release_ctx;
    st = v.live.role == CAP_ROLE_SERVER ? serve_peer(&v, report) : validate_client(&v, report);
release_ctx:
    vctx_release(&v);
    return st;
}

static double jget(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItem(o, a);

    x = x && b ? cJSON_GetObjectItem(x, b) : x;
    return cJSON_IsNumber(x) ? x->valuedouble : 0;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItem(o, key);

    return cJSON_IsString(x) ? x->valuestring : "";
}

/* "[a, b]" of a two-number array at o.key into buf ("" when absent). */
static const char *jci(const cJSON *o, const char *key, int prec, char *buf, size_t len)
{
    const cJSON *a = cJSON_GetObjectItem(o, key);

    buf[0] = 0;
    if (cJSON_GetArraySize(a) == 2)
        snprintf(buf, len, "[%.*f, %.*f]", prec, cJSON_GetArrayItem(a, 0)->valuedouble, prec,
                 cJSON_GetArrayItem(a, 1)->valuedouble);
    return buf;
}

/* The class column: "lo-hi", ">=lo" (no upper bound), "lo" (one hint), "0". */
static void class_text(const cJSON *r, char *buf, size_t len)
{
    const cJSON *c = cJSON_GetObjectItem(r, "class"), *hi = cJSON_GetObjectItem(c, "hi");
    char a[24], b[24];

    if (!c) {
        snprintf(buf, len, "-");
        return;
    }
    hs_format_size((uint64_t)jget(c, "lo", NULL), a, sizeof(a));
    if (jget(c, "lo", NULL) == 0)
        snprintf(buf, len, "0");
    else if (!cJSON_IsNumber(hi))
        snprintf(buf, len, ">=%s", a);
    else if (hi->valuedouble == jget(c, "lo", NULL))
        snprintf(buf, len, "%s", a);
    else {
        hs_format_size((uint64_t)hi->valuedouble, b, sizeof(b));
        snprintf(buf, len, "%s-%s", a, b);
    }
}

static void print_rows(const cJSON *res, FILE *fp)
{
    const cJSON *r;
    char hb[32], cb[64], ib[64];

    fprintf(fp, "%8s %-15s %-14s | %21s | %21s | %s\n", "hint", "class", "candidate",
            "predicted (model) us", "measured (median) us", "objective, measured");
    fprintf(fp, "%8s %-15s %-14s | %10s %10s | %10s %10s | %s\n", "", "", "", "p50", "p99",
            "p50", "p99", "median [95% interval]");
    cJSON_ArrayForEach(r, res) {
        const cJSON *m = cJSON_GetObjectItem(r, "measured");
        hs_format_size((uint64_t)jget(r, "hint", NULL), hb, sizeof(hb));
        class_text(r, cb, sizeof(cb));
        fprintf(fp, "%8s %-15s %-14s | %10.2f %10.2f | %10.2f %10.2f | %.2f %s\n",
                jget(r, "hint", NULL) ? hb : "0", cb, jstr(r, "candidate"),
                jget(r, "predicted", "p50_us"), jget(r, "predicted", "p99_us"),
                jget(m, "p50_us", NULL), jget(m, "p99_us", NULL),
                jget(m, "objective_median", NULL), jci(m, "objective_ci", 2, ib, sizeof(ib)));
    }
}

static void print_summary(const cJSON *val, FILE *fp)
{
    const cJSON *rc = cJSON_GetObjectItem(val, "rank_correlation");
    const cJSON *nz = cJSON_GetObjectItem(val, "noise");
    const cJSON *nr = cJSON_GetObjectItem(nz, "rank_correlation");
    char a[64], b[64], c[64];

    fprintf(fp, "\nobjective %s: recommended %llu (%s), best measured %llu\n",
            jstr(val, "objective"), (unsigned long long)jget(val, "recommended_hint", NULL),
            jstr(val, "recommended_by"),
            (unsigned long long)jget(val, "best_measured_hint", NULL));
    fprintf(fp, "regret %.1f%% %s, median |error| %.1f%% %s, ", jget(val, "regret_pct", NULL),
            jci(val, "regret_ci_pct", 1, a, sizeof(a)), jget(val, "median_abs_error_pct", NULL),
            jci(val, "median_abs_error_ci_pct", 1, b, sizeof(b)));
    if (cJSON_IsNumber(rc))
        fprintf(fp, "rank correlation %.2f %s over %.0f classes\n", rc->valuedouble,
                jci(val, "rank_correlation_ci", 2, c, sizeof(c)),
                jget(val, "classes", "measured"));
    else
        fprintf(fp, "rank correlation n/a: %s\n", jstr(val, "rank_correlation_note"));
    if (cJSON_IsNumber(cJSON_GetObjectItem(nz, "median_pct"))) {
        fprintf(fp, "noise (even against odd rounds): recommended class %.1f%%, regret %.1f%%, "
                "median class %.1f%%", jget(nz, "recommended_pct", NULL),
                jget(nz, "regret_pct", NULL), jget(nz, "median_pct", NULL));
        if (cJSON_IsNumber(nr))
            fprintf(fp, ", rank correlation %.2f", nr->valuedouble);
        fprintf(fp, "\n");
    }
    if (cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(val, "drift"), "drift_pct")))
        fprintf(fp, "device drift (%s): p50 measured %.2f us, predicted %.2f us: %+.1f%%; "
                "p99 measured %.2f us, predicted %.2f us: %+.1f%%\n",
                jstr(cJSON_GetObjectItem(val, "drift"), "probe"),
                jget(val, "drift", "measured_p50_us"), jget(val, "drift", "predicted_p50_us"),
                jget(val, "drift", "drift_pct"), jget(val, "drift", "measured_p99_us"),
                jget(val, "drift", "predicted_p99_us"), jget(val, "drift", "tail_drift_pct"));
    fprintf(fp, "pairs of classes the device tells apart (rounds do not overlap): %.0f, of "
            "which the model orders %.0f the other way round\n", jget(val, "pairs", "apart"),
            jget(val, "pairs", "ordered_otherwise"));
    fprintf(fp, "%s\n%s\n", jstr(val, "recommendation_verdict"), jstr(val, "verdict"));
}

void cap_validate_print(const cJSON *rep, FILE *fp)
{
    const cJSON *res = cJSON_GetObjectItem(rep, "results");
    const cJSON *val = cJSON_GetObjectItem(rep, "validation");

    if (!res || !val) {
        fprintf(fp, "server: the client's run is over\n");
        return;
    }
    print_rows(res, fp);
    print_summary(val, fp);
    const cJSON *w, *ws = cJSON_GetObjectItem(val, "warnings");
    cJSON_ArrayForEach(w, ws)
        if (cJSON_IsString(w))
            fprintf(fp, "warning: %s\n", w->valuestring);
}

/* ---- arithmetic --------------------------------------------------------------------------- */

int cap_saturation_warning(double offered_gbps, const double *meas_gbps, size_t n, char *buf,
                           size_t len)
{
    double lo = INFINITY;

    for (size_t i = 0; i < n; i++)
        lo = fmin(lo, meas_gbps[i]);
    if (!(offered_gbps > 0) || n == 0 || !(lo < 0.9 * offered_gbps))
        return 0;
    snprintf(buf, len, "the trace offers %.3g Gb/s and the device carried %.3g Gb/s: in open "
             "loop the posts ran behind the trace, so the measured latencies are mostly that "
             "backlog, whatever the hint; use --mode closed (or --limit on a quieter part)",
             offered_gbps, lo);
    return 1;
}

static void ranks(const double *x, size_t n, double *rk)
{
    for (size_t i = 0; i < n; i++) {
        double less = 0, equal = 0;
        for (size_t j = 0; j < n; j++) {
            less += x[j] < x[i];
            equal += x[j] == x[i];
        }
        rk[i] = less + (equal + 1) / 2.0; /* average rank of a tie group, 1-based */
    }
}

double cap_rank_correlation(const double *x, const double *y, size_t n)
{
    double rx[CAP_MAX_CANDIDATES], ry[CAP_MAX_CANDIDATES], mx = 0, my = 0;
    double sxy = 0, sxx = 0, syy = 0;

    if (n < 2 || n > CAP_MAX_CANDIDATES)
        return 0;
    ranks(x, n, rx);
    ranks(y, n, ry);
    for (size_t i = 0; i < n; i++) {
        mx += rx[i] / (double)n;
        my += ry[i] / (double)n;
    }
    for (size_t i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    return (sxx > 0 && syy > 0) ? sxy / sqrt(sxx * syy) : 0;
}

double cap_median(double *v, size_t n)
{
    return n ? hs_median_double(v, n) : 0;
}

void cap_shuffle(size_t *idx, size_t n, uint64_t *seed)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(hs_xorshift64(seed) % i), t = idx[i - 1];

        idx[i - 1] = idx[j];
        idx[j] = t;
    }
}
