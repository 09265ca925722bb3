/* cmd_calibrate.c - `hintsim calibrate`: measure a live device and fit a profile to it.
 *
 * Replays synthetic traces through validate's own live replay (calib/calib_run.h: single
 * messages, streams at several depths and sizes, forced switches, a mixed replay), fits
 * the profile's link and path costs by least squares on relative error with the model
 * engine replaying each trace as it was replayed (calib/calib_fit.h), sets the switch drain
 * from the measured forced switches, checks the fitted profile on the held-out figures per
 * class (single, stream, mixed) against documented bounds (exit 1 naming the term when one
 * is over), and writes the profile JSON with a "meta" block recording device, firmware,
 * host, peer (the --server end; null in loopback), date and every figure.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib/calib_forward.h"
#include "calib/calib_run.h"
#include "capture/cap_bench.h"
#include "capture/cap_policy.h"
#include "cli/cli.h"
#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/model.h"

struct calib_opts {
    const char *device;
    uint64_t gid_index;
    int server;
    const char *connect;
    uint64_t port;
    const char *bind;
    const char *token;
    double timeout_s;
    const char *profile;
    hs_strlist_t set;
    const char *sizes;
    const char *holdout;
    const char *ssizes;
    const char *sholdout;
    const char *depths;
    const char *dholdout;
    uint64_t iters;
    uint64_t warmup;
    uint64_t stream_len;
    uint64_t stream_reps;
    uint64_t mixed;
    double mixed_load;
    uint64_t seed;
    const char *out;
    int json;
    int quiet;
};

#define O(f) offsetof(struct calib_opts, f)
static const hs_opt_t g_calib_opts[] = {
    {"device", 'd', HS_OPT_STR, O(device), "DEV", NULL, "verbs device (ibv_devices lists them)"},
    {"gid-index", 'x', HS_OPT_U64, O(gid_index), "N", "0", "GID index of port 1 (RoCE)"},
    {"server", 0, HS_OPT_FLAG, O(server), NULL, NULL, "answer a calibrate --connect peer"},
    {"connect", 0, HS_OPT_STR, O(connect), "HOST", NULL, "measure against a --server on HOST"},
    {"port", 'P', HS_OPT_U64, O(port), "N", "18515", "TCP port of the QP exchange"},
    {"bind", 0, HS_OPT_STR, O(bind), "ADDR", NULL,
     "--server: address to listen on (default: the device's; 0.0.0.0: all)"},
    {"token", 0, HS_OPT_STR, O(token), "TOKEN", NULL,
     "--server/--connect: shared token (default: HINTSIM_TOKEN; a server makes one)"},
    {"timeout", 0, HS_OPT_DOUBLE, O(timeout_s), "SEC", "10", "bound of every wait"},
    {"profile", 'p', HS_OPT_STR, O(profile), "P", "generic", "starting profile (path settings)"},
    {"set", 0, HS_OPT_LIST, O(set), "KEY=VALUE", NULL, "override one starting parameter"},
    {"sizes", 's', HS_OPT_STR, O(sizes), "LIST", "8,64,512,4K,32K,256K",
     "single-message sizes to fit"},
    {"holdout", 0, HS_OPT_STR, O(holdout), "LIST", "16,128,1K,8K,64K",
     "single-message sizes measured but kept out of the fit ('none' for none)"},
    {"stream-sizes", 0, HS_OPT_STR, O(ssizes), "LIST", "64,4K,32K", "stream sizes to fit"},
    {"stream-holdout", 0, HS_OPT_STR, O(sholdout), "LIST", "512,16K",
     "stream sizes held out, at every depth ('none' for none)"},
    {"depths", 0, HS_OPT_STR, O(depths), "LIST", "16,64",
     "stream depths (WRs) to fit (each at least the path's signalling interval)"},
    {"depth-holdout", 0, HS_OPT_STR, O(dholdout), "LIST", "32",
     "stream depths held out, at every stream size ('none' for none)"},
    {"iters", 'n', HS_OPT_U64, O(iters), "N", "200", "measured single messages per size"},
    {"warmup", 0, HS_OPT_U64, O(warmup), "N", "20", "warm-up messages per size (not fitted)"},
    {"stream-len", 0, HS_OPT_U64, O(stream_len), "N", "128", "messages per stream burst"},
    {"stream-reps", 0, HS_OPT_U64, O(stream_reps), "N", "3",
     "measured replays of each burst (after a warm-up one)"},
    {"mixed", 0, HS_OPT_U64, O(mixed), "N", "400",
     "messages of the held-out mixed replay (0: none)"},
    {"mixed-load", 0, HS_OPT_DOUBLE, O(mixed_load), "F", "0.5",
     "the mixed replay's load: messages arrive this fraction as often as the streams "
     "sustained them"},
    {"seed", 0, HS_OPT_U64, O(seed), "N", "1", "the mixed trace's generator seed"},
    {"output", 'o', HS_OPT_STR, O(out), "PROFILE.json", NULL, "the fitted profile to write"},
    {"json", 0, HS_OPT_FLAG, O(json), NULL, NULL, "print the fit as JSON"},
    {"quiet", 'q', HS_OPT_FLAG, O(quiet), NULL, NULL, "no progress bar"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef O

static const hs_cmd_spec_t g_calib_spec = {
    "hintsim calibrate --device DEV [--server | --connect HOST] -o PROFILE.json",
    "measure a live device and fit a profile to it",
    g_calib_opts, 0, 0,
    "Replays synthetic traces through validate's live replay, on the connection validate\n"
    "uses (loopback, or --server/--connect: two processes): closed-loop single messages by\n"
    "size on both paths, open-loop back-to-back streams by size and depth on both paths,\n"
    "forced switches, and a paced mixed replay across the hint. Fits link.base_lat_ns (wire\n"
    "latency), link.gbps (link rate), host.post_ns (per-WR cost), bw.fixed_ns and the\n"
    "completion report cost (host.poll_ns, or host.interrupt_ns where a path takes\n"
    "interrupts: what each coalesced batch costs), and link.pkt_ns (per-packet link cost)\n"
    "only where the data separate it from those, least squares on relative error, the model\n"
    "replaying each trace as it was replayed; where the device has no CQ moderation the\n"
    "profile records the emulation the replays ran with; sets switch.drain_fixed_us from\n"
    "the measured switches. A parameter the data do not determine keeps the starting\n"
    "profile's value, said in its source: no figure depends on it, or its std err is over\n"
    CALIB_STR(CALIB_STDERR_MAX_PCT) "% (warned); the others are then fitted again without it.\n"
    "Prints the held-out error (figures not fitted) for single messages, streams and the\n"
    "mixed replay, each against its bound: a base (calib/README.md) plus the device's own\n"
    "replay-to-replay noise measured for that class; exit 1 naming the term that explains\n"
    "most of the error when one is over (the profile is written all the same).\n"
    "Exit 3: no such device.",
};

#define NFIT_PARAMS CALIB_NTERMS

typedef struct {
    calib_param_t params[NFIT_PARAMS];
    calib_result_t res;
    double held_median, *held_err, *fit_err;
    calib_held_class_t cls[CALIB_NCLASSES];
    size_t nover;
    profile_t *start, *fitted;
    calib_meas_t meas;
    char date[32];
    char eff_changes[512]; /* what apply_effective moved, "key old->new; ..." */
    uint64_t seed;
} calib_outcome_t;

static double pval(const profile_t *p, const char *key)
{
    return *(const double *)((const char *)p + profile_param_find(key)->offset);
}

static cJSON *params_json(const calib_outcome_t *c)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t j = 0; j < NFIT_PARAMS; j++) {
        const prof_param_info_t *pi = profile_param_find(c->params[j].key);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "key", c->params[j].key);
        cJSON_AddNumberToObject(p, "start", pval(c->start, c->params[j].key));
        cJSON_AddNumberToObject(p, "value", pval(c->fitted, c->params[j].key));
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

static cJSON *outcome_json(const calib_outcome_t *c)
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
    cJSON_AddItemToObject(meta, "calibration", outcome_json(c));
    text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text)
        return HS_ERR_NOMEM;
    st = hs_write_file_atomic(path, text);
    free(text);
    return st;
}

/* Name, notes and the drain measured directly from the forced switches. */
static hs_status_t finish_profile(calib_outcome_t *c)
{
    char notes[1024], src[160];
    profile_t *p = c->fitted;

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

    for (size_t j = 0; j < NFIT_PARAMS; j++) {
        if (pval(c->start, c->params[j].key) > 0)
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
    double orig[NFIT_PARAMS];
    hs_status_t st = apply_effective(c);

    calib_terms(c->start, c->params);
    for (size_t j = 0; j < NFIT_PARAMS; j++)
        orig[j] = pval(c->start, c->params[j].key);
    /* what is allocated here is c's, released by outcome_release: nothing to undo */
    if (st != HS_OK || (st = seed_absent(c)) != HS_OK)
        return st;
    /* a parameter the data do not determine keeps the start profile's value (orig: as it
     * had it before seed_absent), and the others are fitted again without it; from the
     * start profile and from the singles' line, the better fit kept */
    st = calib_fit_two_starts(c->start, c->params, NFIT_PARAMS, c->meas.fit, c->meas.nfit,
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
    st = calib_held_check(c->fitted, c->params, NFIT_PARAMS, c->meas.held, c->held_err,
                          c->meas.nheld, calib_predict_replay, eng, c->cls, &c->nover);
    return st != HS_OK ? st : finish_profile(c);
}

/* Each figure, measured against what the fitted profile predicts. */
static void print_figures(const char *what, const calib_obs_t *obs, const double *err,
                          size_t n, FILE *fp)
{
    fprintf(fp, "\n  %-8s %-7s %-10s %9s %6s %6s %12s %12s %8s %7s\n", what, "class", "replay",
            "size B", "hint", "depth", "measured us", "predicted us", "error", "noise");
    for (size_t i = 0; err && i < n; i++) {
        char depth[24] = "-";
        if (obs[i].depth)
            snprintf(depth, sizeof(depth), "%llu", (unsigned long long)obs[i].depth);
        fprintf(fp, "  %-8s %-7s %-10s %9llu %6llu %6s %12.1f %12.1f %7.1f%% %6.1f%%\n", "",
                calib_class_name(obs[i].cls), obs[i].group,
                (unsigned long long)obs[i].size_bytes, (unsigned long long)obs[i].hint_bytes,
                depth, obs[i].meas_us, obs[i].meas_us * (1 + err[i]), 100 * err[i],
                100 * obs[i].noise_rel);
    }
}

static void print_params(const calib_outcome_t *c, FILE *fp)
{
    fprintf(fp, "  %-21s %12s %12s %-5s %9s %9s\n", "parameter", "start", "fitted", "unit",
            "std err", "residual");
    for (size_t j = 0; j < NFIT_PARAMS; j++) {
        const prof_param_info_t *pi = profile_param_find(c->params[j].key);
        fprintf(fp, "  %-21s %12.4g %12.4g %-5s ", c->params[j].key,
                pval(c->start, c->params[j].key), pval(c->fitted, c->params[j].key), pi->unit);
        if (!c->res.determined[j])
            fprintf(fp, "%9s %9s\n", "-", "(no data)");
        else if (!(c->res.stderr_rel[j] <= CALIB_STDERR_MAX_REL)) /* the data cannot */
            fprintf(fp, "%9s %8.1f%%", ">" CALIB_STR(CALIB_STDERR_MAX_PCT) "%", /* separate it */
                    100 * c->res.resid_rel[j]);
        else
            fprintf(fp, "%8.1f%% %8.1f%%", 100 * c->res.stderr_rel[j],
                    100 * c->res.resid_rel[j]);
        if (c->res.determined[j]) /* start kept: std err over CALIB_STDERR_MAX_REL */
            fprintf(fp, "%s\n", calib_param_kept(&c->res, j) ? "  (not fitted: start kept)" : "");
    }
    fprintf(fp, "  %-21s %12.4g %12.4g %-5s (median over replays of %zu forced switches)\n",
            "switch.drain_fixed_us", c->start->switch_drain_fixed_us,
            c->fitted->switch_drain_fixed_us, "us", c->meas.nswitches);
    if (c->eff_changes[0])
        fprintf(fp, "  the live paths' effective configuration (model/MODEL.md 7b): %s\n",
                c->eff_changes);
}

/* One line per class: "held-out CLASS: N figures, median error E% (bound B%): ok|OVER". */
static void print_held_classes(const calib_outcome_t *c, FILE *fp)
{
    for (int k = 0; k < CALIB_NCLASSES; k++) {
        const calib_held_class_t *h = &c->cls[k];
        fprintf(fp, "held-out %-6s %3zu figures, ", calib_class_name((calib_class_t)k), h->n);
        if (h->n == 0) {
            fprintf(fp, "none measured\n");
            continue;
        }
        fprintf(fp, "median error %.1f%% (bound %.1f%% = %.0f%% + noise %.1f%%): %s",
                100 * h->median_abs_rel, 100 * h->bound, 100 * (h->bound - h->noise_rel),
                100 * h->noise_rel, h->over ? "OVER" : "ok");
        if (h->term >= 0)
            fprintf(fp, ", term %s (%.0f%% of the error along it%s)", c->params[h->term].key,
                    100 * h->term_share,
                    calib_param_kept(&c->res, (size_t)h->term) ? "; not fitted" : "");
        fprintf(fp, "\n");
    }
}

static void print_outcome(const calib_outcome_t *c, const char *path, FILE *fp)
{
    fprintf(fp, "calibrated %s (firmware %s) on %s, %s, %s%s\n\n", c->meas.device,
            c->meas.firmware[0] ? c->meas.firmware : "unknown", c->meas.host, c->date,
            c->meas.peer[0] ? "against the server at " : "loopback", c->meas.peer);
    print_params(c, fp);
    print_figures("fit", c->meas.fit, c->fit_err, c->meas.nfit, fp);
    print_figures("held-out", c->meas.held, c->held_err, c->meas.nheld, fp);
    fprintf(fp, "\nfit: %zu figures, median error %.1f%%, rms %.1f%%, %u iterations; best "
            "stream rate %.3f Gb/s; mixed seed %llu, mean gap %.1f us\n", c->res.nobs,
            100 * c->res.median_abs_rel, 100 * c->res.rms_rel, c->res.iters,
            c->meas.stream_gbps, (unsigned long long)c->seed, c->meas.mixed_gap_us);
    print_held_classes(c, fp);
    for (int k = 0; k < CALIB_NCLASSES; k++) {
        const cap_replay_overhead_t *o = &c->meas.overhead[k];
        if (!o->posts)
            continue;
        fprintf(fp, "replay's own cost, %-6s poll gap p99 %.1f us (max %.1f), post late p99 "
                "%.1f us, post to completion p50 %.1f us\n", calib_class_name((calib_class_t)k),
                o->poll_gap_p99_us, o->poll_gap_max_us, o->post_late_p99_us,
                o->post_to_completion_p50_us);
    }
    fprintf(fp, "wrote %s\n", path);
}

/* Exit 1's message: each class over its bound, with the term that explains most of it. */
static void report_over(const calib_outcome_t *c)
{
    for (int k = 0; k < CALIB_NCLASSES; k++) {
        const calib_held_class_t *h = &c->cls[k];
        if (!h->over)
            continue;
        fprintf(stderr, "hintsim: calibrate: held-out %s error %.1f%% is over its bound "
                "%.1f%%: term %s%s\n", calib_class_name((calib_class_t)k),
                100 * h->median_abs_rel, 100 * h->bound,
                h->term >= 0 ? c->params[h->term].key : "(none of the fitted terms moves "
                "these figures: the model's structure)",
                h->term < 0 ? ""
                : calib_param_kept(&c->res, (size_t)h->term)
                    ? " (the term whose effect the error follows most; the data did not "
                      "determine it: the start profile's value)"
                    : " (the fitted term whose effect the error follows most)");
    }
}

static int parse_list(const char *opt, const char *text, uint64_t **v, size_t *n)
{
    if (strstr(opt, "holdout") && strcmp(text, "none") == 0) {
        *v = NULL;
        *n = 0;
        return 0;
    }
    if (hs_parse_size_list(text, v, n) != HS_OK) {
        fprintf(stderr, "hintsim: calibrate: --%s '%s': not a list of sizes\n", opt, text);
        return 2;
    }
    return 0;
}

/* The fit needs distinct values, and a held-out one must not be one of them (it would check
 * the fit on a figure the fit used): 0, or 2 with the value named. what: "size", "depth". */
static int check_list(const char *what, const char *opt, const char *hopt, const uint64_t *v,
                      size_t n, const uint64_t *held, size_t nh, size_t min)
{
    for (size_t i = 0; i < n + nh; i++) {
        uint64_t a = i < n ? v[i] : held[i - n];
        if (strcmp(what, "depth") == 0 && a == 0) {
            fprintf(stderr, "hintsim: calibrate: a depth of 0 WRs (--%s)\n", i < n ? opt : hopt);
            return 2;
        }
        for (size_t j = 0; j < i; j++) {
            uint64_t b = j < n ? v[j] : held[j - n];
            if (a != b)
                continue;
            fprintf(stderr, "hintsim: calibrate: %s %llu is given twice %s--%s%s%s%s: the "
                    "fit needs distinct %ss and checks itself on %ss it did not use\n", what,
                    (unsigned long long)a, i >= n && j < n ? "(in " : "in ",
                    j < n ? opt : hopt, i >= n && j < n ? " and --" : "",
                    i >= n && j < n ? hopt : "", i >= n && j < n ? ")" : "", what, what);
            return 2;
        }
    }
    if (n < min || n + nh > 256) {
        fprintf(stderr, "hintsim: calibrate: --%s needs %zu..256 distinct %ss (with --%s), got "
                "%zu and %zu\n", opt, min, what, hopt, n, nh);
        return 2;
    }
    return 0;
}

static hs_status_t calibrate(const struct calib_opts *a, const calib_run_opts_t *o,
                             calib_outcome_t *c)
{
    hs_progress_t pb;
    struct tm tm;
    time_t now = time(NULL);
    hs_status_t st = profile_load(a->profile, &c->start);

    if (st != HS_OK)
        return st;
    for (size_t i = 0; i < a->set.n; i++)
        if ((st = profile_set(c->start, a->set.v[i])) != HS_OK)
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
    return st != HS_OK ? st : write_profile(a->out, c);
}

static void outcome_release(calib_outcome_t *c)
{
    calib_meas_release(&c->meas);
    profile_free(c->start);
    profile_free(c->fitted);
    free(c->held_err);
    free(c->fit_err);
}

typedef struct {
    uint64_t *sizes, *held, *ssizes, *sheld, *depths, *dheld;
} calib_lists_t;

static int parse_lists(const struct calib_opts *a, calib_lists_t *l, calib_run_opts_t *o)
{
    int rc = parse_list("sizes", a->sizes, &l->sizes, &o->nsizes) ||
             parse_list("holdout", a->holdout, &l->held, &o->nholdout) ||
             parse_list("stream-sizes", a->ssizes, &l->ssizes, &o->nssizes) ||
             parse_list("stream-holdout", a->sholdout, &l->sheld, &o->nsholdout) ||
             parse_list("depths", a->depths, &l->depths, &o->ndepths) ||
             parse_list("depth-holdout", a->dholdout, &l->dheld, &o->ndholdout);

    if (rc || check_list("size", "sizes", "holdout", l->sizes, o->nsizes, l->held,
                         o->nholdout, 2) ||
        check_list("size", "stream-sizes", "stream-holdout", l->ssizes, o->nssizes, l->sheld,
                   o->nsholdout, 1) ||
        check_list("depth", "depths", "depth-holdout", l->depths, o->ndepths, l->dheld,
                   o->ndholdout, 1))
        return 2;
    if (a->iters == 0 || a->stream_len == 0 || a->stream_reps == 0) {
        fprintf(stderr, "hintsim: calibrate: --%s must be at least 1\n",
                a->iters == 0 ? "iters" : a->stream_len == 0 ? "stream-len" : "stream-reps");
        return 2;
    }
    if (!(a->mixed_load > 0 && a->mixed_load <= 1)) {
        fprintf(stderr, "hintsim: calibrate: --mixed-load %g: must be in (0, 1]\n",
                a->mixed_load);
        return 2;
    }
    o->sizes = l->sizes;
    o->holdout = l->held;
    o->ssizes = l->ssizes;
    o->sholdout = l->sheld;
    o->depths = l->depths;
    o->dholdout = l->dheld;
    o->iters = a->iters;
    o->warmup = a->warmup;
    o->stream_len = a->stream_len;
    o->stream_reps = a->stream_reps;
    o->mixed_len = a->mixed;
    o->mixed_load = a->mixed_load;
    o->seed = a->seed;
    return 0;
}

static void lists_free(calib_lists_t *l)
{
    free(l->sizes);
    free(l->held);
    free(l->ssizes);
    free(l->sheld);
    free(l->depths);
    free(l->dheld);
}

static void print_json(const calib_outcome_t *c, const char *out)
{
    cJSON *j = outcome_json(c);
    char *txt;

    cJSON_AddStringToObject(j, "profile", out);
    txt = cJSON_Print(j);
    printf("%s\n", txt ? txt : "{}");
    free(txt);
    cJSON_Delete(j);
}

int cmd_calibrate(int argc, char **argv)
{
    struct calib_opts a = {0};
    calib_run_opts_t o = {0};
    calib_outcome_t c = {0};
    calib_lists_t lists = {0};
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_calib_spec, argc, argv, &a, &pos, &npos);
    hs_status_t st;

    if (rc >= 0)
        goto out;
    rc = 2;
    if (!a.device || (!a.server && !a.out)) {
        fprintf(stderr, "hintsim: calibrate: --device and -o PROFILE.json are required\n");
        goto out;
    }
    if (!a.server && parse_lists(&a, &lists, &o))
        goto out;
    /* the profile is written after every measurement: a wrong path fails now */
    if (!a.server && a.out && hs_check_out_path(a.out) != HS_OK) {
        rc = 1;
        goto out;
    }
    hs_log_set_quiet(a.quiet || a.json);
    o.live = (cap_live_opts_t){a.device, a.gid_index, a.server, a.connect, a.port,
                               a.timeout_s, "host", a.profile, &a.set,
                               a.bind, a.token};
    st = a.server ? calib_serve(&o) : calibrate(&a, &o, &c);
    if ((rc = hs_status_exit_code(st)) != 0 || a.server)
        goto out;
    if (a.json)
        print_json(&c, a.out);
    else
        print_outcome(&c, a.out, stdout);
    if (c.nover) {
        report_over(&c);
        rc = 1;
    }
out:
    outcome_release(&c);
    lists_free(&lists);
    hs_opt_free(&g_calib_spec, &a, pos);
    return rc;
}
