/* calib_job.c - one calibration (see calib_job.h): measure, fit, check on the held-out
 * figures, write the profile with its "meta" block. */
#include "calib/calib_job.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib/calib_forward.h"
#include "capture/cap_policy.h"
#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/model.h"

double calib_param_value(const profile_t *p, const char *key)
{
    return *(const double *)((const char *)p + profile_param_find(key)->offset);
}

static cJSON *params_json(const calib_outcome_t *c)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t j = 0; j < CALIB_NTERMS; j++) {
        const prof_param_info_t *pi = profile_param_find(c->params[j].key);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "key", c->params[j].key);
        cJSON_AddNumberToObject(p, "start", calib_param_value(c->start, c->params[j].key));
        cJSON_AddNumberToObject(p, "value", calib_param_value(c->fitted, c->params[j].key));
        cJSON_AddStringToObject(p, "unit", pi->unit);
        cJSON_AddBoolToObject(p, "determined", c->res.determined[j]);
        cJSON_AddBoolToObject(p, "fitted", !calib_param_kept(&c->res, j)); /* else start's */
        if (isfinite(c->res.stderr_rel[j]))
            cJSON_AddNumberToObject(p, "stderr_pct", 100 * c->res.stderr_rel[j]);
        cJSON_AddNumberToObject(p, "residual_pct", 100 * c->res.resid_rel[j]);
        cJSON_AddItemToArray(arr, p);
    }
    return arr;
}

/* One entry per measured figure: what was measured, what the fitted profile predicts. */
static cJSON *obs_json(const calib_obs_t *obs, const double *err, size_t n)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; err && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "class", calib_class_name(obs[i].cls));
        cJSON_AddStringToObject(o, "group", obs[i].group);
        cJSON_AddNumberToObject(o, "size_bytes", (double)obs[i].size_bytes);
        cJSON_AddNumberToObject(o, "hint", (double)obs[i].hint_bytes);
        if (obs[i].depth)
            cJSON_AddNumberToObject(o, "depth", (double)obs[i].depth);
        cJSON_AddStringToObject(o, "mode", obs[i].mode == PRED_CLOSED ? "closed" : "open");
        cJSON_AddNumberToObject(o, "messages", obs[i].trace ? (double)obs[i].trace->n : 0);
        cJSON_AddNumberToObject(o, "measured_us", obs[i].meas_us);
        cJSON_AddNumberToObject(o, "predicted_us", obs[i].meas_us * (1 + err[i]));
        cJSON_AddNumberToObject(o, "error_pct", 100 * err[i]);
        cJSON_AddNumberToObject(o, "noise_pct", 100 * obs[i].noise_rel);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *classes_json(const calib_outcome_t *c)
{
    cJSON *j = cJSON_CreateObject();

    for (int k = 0; k < CALIB_NCLASSES; k++) {
        const calib_held_class_t *h = &c->cls[k];
        cJSON *o = cJSON_AddObjectToObject(j, calib_class_name((calib_class_t)k));
        cJSON_AddNumberToObject(o, "observations", (double)h->n);
        if (h->n)
            cJSON_AddNumberToObject(o, "median_error_pct", 100 * h->median_abs_rel);
        cJSON_AddNumberToObject(o, "noise_pct", 100 * h->noise_rel);
        cJSON_AddNumberToObject(o, "bound_pct", 100 * h->bound);
        cJSON_AddBoolToObject(o, "over", h->over);
        if (h->term >= 0)
            cJSON_AddStringToObject(o, "term", c->params[h->term].key);
        else
            cJSON_AddNullToObject(o, "term");
        cJSON_AddNumberToObject(o, "term_share_pct", 100 * h->term_share);
    }
    return j;
}

cJSON *calib_outcome_json(const calib_outcome_t *c)
{
    cJSON *j = cJSON_CreateObject(), *fit, *held, *sw, *ov;

    cJSON_AddStringToObject(j, "device", c->meas.device);
    cJSON_AddStringToObject(j, "firmware", c->meas.firmware);
    cJSON_AddStringToObject(j, "host", c->meas.host);
    if (c->meas.peer[0])
        cJSON_AddStringToObject(j, "peer", c->meas.peer);
    else
        cJSON_AddNullToObject(j, "peer");
    cJSON_AddStringToObject(j, "date", c->date);
    cJSON_AddStringToObject(j, "tool", "hintsim calibrate " HINTSIM_VERSION);
    cJSON_AddStringToObject(j, "engine", model_engine_ops.name);
    cJSON_AddStringToObject(j, "replay", "cap_replay_run (validate's live replay)");
    cJSON_AddStringToObject(j, "start_profile", c->start->name);
    cJSON_AddItemToObject(j, "params", params_json(c));
    fit = cJSON_AddObjectToObject(j, "fit");
    cJSON_AddNumberToObject(fit, "observations", (double)c->res.nobs);
    cJSON_AddNumberToObject(fit, "iterations", c->res.iters);
    cJSON_AddNumberToObject(fit, "rms_error_pct", 100 * c->res.rms_rel);
    cJSON_AddNumberToObject(fit, "median_error_pct", 100 * c->res.median_abs_rel);
    cJSON_AddNumberToObject(fit, "stream_gbps_best", c->meas.stream_gbps);
    cJSON_AddItemToObject(fit, "figures", obs_json(c->meas.fit, c->fit_err, c->meas.nfit));
    held = cJSON_AddObjectToObject(j, "holdout");
    cJSON_AddNumberToObject(held, "observations", (double)c->meas.nheld);
    if (c->meas.nheld)
        cJSON_AddNumberToObject(held, "median_error_pct", 100 * c->held_median);
    cJSON_AddNumberToObject(held, "mixed_seed", (double)c->seed);
    cJSON_AddNumberToObject(held, "mixed_gap_us", c->meas.mixed_gap_us);
    cJSON_AddBoolToObject(held, "ok", c->nover == 0);
    cJSON_AddItemToObject(held, "classes", classes_json(c));
    cJSON_AddItemToObject(held, "figures", obs_json(c->meas.held, c->held_err, c->meas.nheld));
    ov = cJSON_AddObjectToObject(j, "replay_overhead");
    for (int k = 0; k < CALIB_NCLASSES; k++)
        if (c->meas.overhead[k].posts)
            cJSON_AddItemToObject(ov, calib_class_name((calib_class_t)k),
                                  cap_replay_overhead_json(&c->meas.overhead[k]));
    sw = cJSON_AddObjectToObject(j, "switch");
    cJSON_AddNumberToObject(sw, "switches", (double)c->meas.nswitches);
    cJSON_AddNumberToObject(sw, "drain_us_median", c->meas.drain_us_median);
    cJSON_AddNumberToObject(sw, "drain_us_mad", c->meas.drain_us_mad);
    return j;
}

static hs_status_t write_profile(const char *path, calib_outcome_t *c)
{
    cJSON *root = profile_to_json(c->fitted), *meta;
    char *text;
    hs_status_t st;

    if (!root)
        return HS_ERR_NOMEM;
    meta = cJSON_AddObjectToObject(root, "meta");
    cJSON_AddItemToObject(meta, "calibration", calib_outcome_json(c));
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return HS_ERR_NOMEM;
    st = hs_write_file_atomic(path, text);
    free(text);
    return st;
}

/* jitter.think_reach from the reach run, when it determines it (else the default stays). */
static hs_status_t set_reach(calib_outcome_t *c)
{
    const calib_meas_t *m = &c->meas;
    char src[240];

    if (isnan(m->reach_share))
        return HS_OK;
    snprintf(src, sizeof(src), "calibrate: measured, the median of %zu pairs' shares: blocks "
             "of closed-loop messages of %llu B, back to back and %.1f us of think time apart "
             "(%zu warm messages with the think time)", m->reach_pairs,
             (unsigned long long)m->reach.bytes, m->reach.think_us, m->reach.n);
    return profile_set_value(c->fitted, "jitter.think_reach", m->reach_share, src);
}

/* The jitter sets measured directly (calib_run.c: measure_jitter), and the reach. */
static hs_status_t set_jitter(calib_outcome_t *c)
{
    static const char *const key[2][4] = {
        {"jitter.p90_us", "jitter.p99_us", "jitter.p999_us", "jitter.cycle_us"},
        {"jitter.long_p90_us", "jitter.long_p99_us", "jitter.long_p999_us",
         "jitter.long_cycle_us"}};
    hs_status_t st = HS_OK;

    for (int s = 0; st == HS_OK && s < 2; s++) {
        const calib_jitter_t *j = &c->meas.jitter[s];
        const double v[4] = {j->p90_us, j->p99_us, j->p999_us, j->cycle_us};
        char src[160];

        snprintf(src, sizeof(src), "calibrate: measured, %zu closed-loop messages of %llu B "
                 "beyond their median", j->n, (unsigned long long)j->bytes);
        for (int k = 0; st == HS_OK && j->n && k < 4; k++)
            st = profile_set_value(c->fitted, key[s][k], v[k] > 0 ? v[k] : 0, src);
    }
    return st == HS_OK ? set_reach(c) : st;
}

/* Name, notes, the jitter and the drain measured directly from the forced switches. */
static hs_status_t finish_profile(calib_outcome_t *c)
{
    char notes[1024], src[160];
    profile_t *p = c->fitted;
    hs_status_t st = set_jitter(c);

    if (st != HS_OK)
        return st;
    snprintf(p->name, sizeof(p->name), "calibrated-%.48s", c->meas.device);
    snprintf(notes, sizeof(notes), "Fitted by hintsim calibrate %s on device %s (firmware %s) "
             "at host %s, %s%s, %s, from profile %s, with validate's live replay: fit median "
             "error %.1f%% over %zu figures; held-out median error single %.1f%% (%zu), "
             "stream %.1f%% (%zu), mixed %.1f%% (%zu)%s.", HINTSIM_VERSION, c->meas.device,
             c->meas.firmware[0] ? c->meas.firmware : "unknown", c->meas.host,
             c->meas.peer[0] ? "against the server at " : "both ends in this process (loopback)",
             c->meas.peer, c->date, c->start->name, 100 * c->res.median_abs_rel, c->res.nobs,
             100 * c->cls[CALIB_SINGLE].median_abs_rel, c->cls[CALIB_SINGLE].n,
             100 * c->cls[CALIB_STREAM].median_abs_rel, c->cls[CALIB_STREAM].n,
             100 * c->cls[CALIB_MIXED].median_abs_rel, c->cls[CALIB_MIXED].n,
             c->nover ? "; OVER a held-out bound: do not trust it (calib/README.md)" : "");
    free(p->notes);
    p->notes = strdup(notes);
    if (!p->notes)
        return HS_ERR_NOMEM;
    if (c->meas.nswitches == 0 || !(c->meas.drain_us_median > 0))
        return HS_OK;
    snprintf(src, sizeof(src), "calibrate: measured, median over replays of %zu forced "
             "switches (MAD %.2f us)", c->meas.nswitches, c->meas.drain_us_mad);
    return profile_set_value(p, "switch.drain_fixed_us", c->meas.drain_us_median, src);
}

/* The fit predicts what the replays ran: the paths as the device applied the profile
 * (signalling without moderation, no timer, the QP's MTU), as validate predicts them. */
static hs_status_t apply_effective(calib_outcome_t *c)
{
    hs_status_t st = HS_OK;

    if (c->meas.have_cfg)
        st = cap_profile_effective(c->start, c->meas.cfg, c->eff_changes,
                                   sizeof(c->eff_changes));
    return st;
}

/* The fit moves parameters in log space by relative steps: a cost that starts at 0 (absent
 * from the start profile) would start at its lower bound, where no step changes any figure.
 * Such a parameter starts at the geometric middle of its bounds instead. */
static hs_status_t seed_absent(calib_outcome_t *c)
{
    hs_status_t st;

    for (size_t j = 0; j < CALIB_NTERMS; j++) {
        if (calib_param_value(c->start, c->params[j].key) > 0)
            continue;
        st = profile_set_value(c->start, c->params[j].key,
                               sqrt(c->params[j].lo * c->params[j].hi),
                               "calibrate: fit start (absent from the start profile)");
        if (st != HS_OK)
            return st;
    }
    return HS_OK;
}

static hs_status_t run_fit(calib_outcome_t *c)
{
    void *eng = (void *)&model_engine_ops;
    double orig[CALIB_NTERMS];
    hs_status_t st = apply_effective(c);

    calib_terms(c->start, c->params);
    for (size_t j = 0; j < CALIB_NTERMS; j++)
        orig[j] = calib_param_value(c->start, c->params[j].key);
    /* what is allocated here is c's, released by calib_outcome_release: nothing to undo */
    if (st != HS_OK || (st = seed_absent(c)) != HS_OK)
        return st;
    /* a parameter the data do not determine keeps the start profile's value (orig: as it
     * had it before seed_absent), and the others are fitted again without it; from the
     * start profile and from the singles' line, the better fit kept */
    st = calib_fit_two_starts(c->start, c->params, CALIB_NTERMS, c->meas.fit, c->meas.nfit,
                              calib_predict_replay, eng, orig, &c->fitted, &c->res);
    if (st != HS_OK)
        return st;
    if (!(c->fit_err = calloc(c->meas.nfit, sizeof(*c->fit_err))))
        return HS_ERR_NOMEM;
    st = calib_errors(c->fitted, c->meas.fit, c->meas.nfit, calib_predict_replay, eng,
                      c->fit_err, NULL);
    if (st != HS_OK)
        return st;
    if (c->meas.nheld) {
        if (!(c->held_err = calloc(c->meas.nheld, sizeof(*c->held_err))))
            return HS_ERR_NOMEM;
        st = calib_errors(c->fitted, c->meas.held, c->meas.nheld, calib_predict_replay, eng,
                          c->held_err, &c->held_median);
        if (st != HS_OK)
            return st;
    }
    st = calib_held_check(c->fitted, c->params, CALIB_NTERMS, c->meas.held, c->held_err,
                          c->meas.nheld, calib_predict_replay, eng, c->cls, &c->nover);
    return st != HS_OK ? st : finish_profile(c);
}

hs_status_t calib_calibrate(const calib_run_opts_t *o, const char *profile,
                            const hs_strlist_t *set, const char *out, calib_outcome_t *c)
{
    hs_progress_t pb;
    struct tm tm;
    time_t now = time(NULL);
    hs_status_t st = profile_load(profile, &c->start);

    if (st != HS_OK)
        return st;
    for (size_t i = 0; i < set->n; i++)
        if ((st = profile_set(c->start, set->v[i])) != HS_OK)
            return st;
    c->seed = o->seed;
    strftime(c->date, sizeof(c->date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    hs_progress_start(&pb, "calibrate", calib_run_steps(o) + 1);
    if ((st = calib_measure(o, &pb, &c->meas)) != HS_OK)
        goto finish_bar;
    st = run_fit(c);
finish_bar:
    hs_progress_update(&pb, calib_run_steps(o) + 1);
    hs_progress_finish(&pb);
    return st != HS_OK ? st : write_profile(out, c);
}

void calib_outcome_release(calib_outcome_t *c)
{
    calib_meas_release(&c->meas);
    profile_free(c->start);
    profile_free(c->fitted);
    free(c->held_err);
    free(c->fit_err);
}
