/* cmd_calibrate.c - `hintsim calibrate`: measure a live device and fit a profile to it.
 *
 * Runs calibrate's microbenchmarks (calib/calib_run.h), fits the profile's link and path
 * costs by least squares on relative error with the model engine replaying each
 * benchmark's own messages (calib/calib_fit.h), sets the switch drain from the measured
 * forced switches, checks the fitted profile on held-out sizes, and writes the profile JSON
 * with a "meta" block recording device, firmware, host, peer (the --server end; null in
 * loopback), date and every fit figure.
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
    double timeout_s;
    const char *profile;
    hs_strlist_t set;
    const char *sizes;
    const char *holdout;
    uint64_t iters;
    uint64_t warmup;
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
    {"port", 'p', HS_OPT_U64, O(port), "N", "18515", "TCP port of the QP exchange"},
    {"timeout", 0, HS_OPT_DOUBLE, O(timeout_s), "SEC", "10", "bound of every wait"},
    {"profile", 0, HS_OPT_STR, O(profile), "P", "generic", "starting profile (path settings)"},
    {"set", 0, HS_OPT_LIST, O(set), "KEY=VALUE", NULL, "override one starting parameter"},
    {"sizes", 's', HS_OPT_STR, O(sizes), "LIST", "8,64,512,4K,32K,256K", "sizes to fit"},
    {"holdout", 0, HS_OPT_STR, O(holdout), "LIST", "16,128,1K,8K,64K",
     "sizes measured but kept out of the fit, to check it ('none' for none)"},
    {"iters", 'n', HS_OPT_U64, O(iters), "N", "200", "measured messages per size"},
    {"warmup", 0, HS_OPT_U64, O(warmup), "N", "20", "warm-up messages per size (not fitted)"},
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
    "Measures latency by size on both paths, the LL path with inline off, signalling every\n"
    "4th WR, the BW path at depth 16, and a forced-switch sequence; fits link.base_lat_ns,\n"
    "link.gbps and bw.fixed_ns (least squares on relative error, the model\n"
    "replaying each benchmark's own messages); where the device has no CQ moderation the\n"
    "profile records the emulation the benchmarks ran with; sets switch.drain_fixed_us from\n"
    "the measured switches; reports the error on the held-out sizes. A parameter the data\n"
    "do not determine keeps the starting profile's value, said in its source: no figure\n"
    "depends on it, or its std err is over " CALIB_STR(CALIB_STDERR_MAX_PCT)
    "% (warned); the others are\n"
    "then fitted again without it. Exit 3: no such device.",
};

/* Only parameters the benchmarks can tell apart: one constant (link.base_lat_ns; host.post_ns
 * and link.dma_ns add the same constant to every figure and stay as the start profile has
 * them), the per-byte cost and the BW path's own constant. (bw.split_ns is left out: one
 * figure only, the largest BW size, depends on it, and on soft-RoCE it ran to its bound.) */
static const calib_param_t g_fit_params[] = {
    {"link.base_lat_ns", 10, 1e7},
    {"link.gbps", 0.01, 1000},
    {"bw.fixed_ns", 1, 1e7},
};
#define NFIT_PARAMS (sizeof(g_fit_params) / sizeof(g_fit_params[0]))

typedef struct {
    calib_result_t res;
    double held_median, *held_err, *fit_err;
    profile_t *start, *fitted;
    calib_meas_t meas;
    char date[32];
} calib_outcome_t;

static cJSON *params_json(const calib_outcome_t *c)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t j = 0; j < NFIT_PARAMS; j++) {
        const prof_param_info_t *pi = profile_param_find(g_fit_params[j].key);
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "key", g_fit_params[j].key);
        cJSON_AddNumberToObject(p, "start", *(const double *)((const char *)c->start + pi->offset));
        cJSON_AddNumberToObject(p, "value", *(const double *)((const char *)c->fitted + pi->offset));
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
        cJSON_AddStringToObject(o, "group", obs[i].group);
        cJSON_AddNumberToObject(o, "size_bytes", (double)obs[i].size_bytes);
        cJSON_AddNumberToObject(o, "hint", (double)obs[i].hint_bytes);
        cJSON_AddNumberToObject(o, "measured_us", obs[i].meas_us);
        cJSON_AddNumberToObject(o, "predicted_us", obs[i].meas_us * (1 + err[i]));
        cJSON_AddNumberToObject(o, "error_pct", 100 * err[i]);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *outcome_json(const calib_outcome_t *c)
{
    cJSON *j = cJSON_CreateObject(), *fit, *held, *sw;

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
    cJSON_AddStringToObject(j, "start_profile", c->start->name);
    cJSON_AddItemToObject(j, "params", params_json(c));
    fit = cJSON_AddObjectToObject(j, "fit");
    cJSON_AddNumberToObject(fit, "observations", (double)c->res.nobs);
    cJSON_AddNumberToObject(fit, "iterations", c->res.iters);
    cJSON_AddNumberToObject(fit, "rms_error_pct", 100 * c->res.rms_rel);
    cJSON_AddNumberToObject(fit, "median_error_pct", 100 * c->res.median_abs_rel);
    cJSON_AddItemToObject(fit, "figures", obs_json(c->meas.fit, c->fit_err, c->meas.nfit));
    held = cJSON_AddObjectToObject(j, "holdout");
    cJSON_AddNumberToObject(held, "observations", (double)c->meas.nheld);
    if (c->meas.nheld)
        cJSON_AddNumberToObject(held, "median_error_pct", 100 * c->held_median);
    cJSON_AddItemToObject(held, "figures", obs_json(c->meas.held, c->held_err, c->meas.nheld));
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
    char notes[768], src[160];
    profile_t *p = c->fitted;

    snprintf(p->name, sizeof(p->name), "calibrated-%.48s", c->meas.device);
    snprintf(notes, sizeof(notes), "Fitted by hintsim calibrate %s on device %s (firmware %s) "
             "at host %s, %s%s, %s, from profile %s: fit median error %.1f%% over %zu "
             "figures; held-out median error %.1f%% over %zu.", HINTSIM_VERSION, c->meas.device,
             c->meas.firmware[0] ? c->meas.firmware : "unknown", c->meas.host,
             c->meas.peer[0] ? "against the server at " : "both ends in this process (loopback)",
             c->meas.peer, c->date, c->start->name, 100 * c->res.median_abs_rel, c->res.nobs,
             100 * c->held_median, c->meas.nheld);
    free(p->notes);
    p->notes = strdup(notes);
    if (!p->notes)
        return HS_ERR_NOMEM;
    if (c->meas.nswitches == 0 || !(c->meas.drain_us_median > 0))
        return HS_OK;
    snprintf(src, sizeof(src), "calibrate: measured, median of %zu forced switches "
             "(MAD %.2f us)", c->meas.nswitches, c->meas.drain_us_mad);
    return profile_set_value(p, "switch.drain_fixed_us", c->meas.drain_us_median, src);
}

/* The moderation the benchmarks really ran with (emulated: signalling only, no timer). */
static hs_status_t apply_emulated(calib_outcome_t *c)
{
    hs_status_t st = HS_OK;

    for (size_t i = 0; st == HS_OK && i < c->meas.nemulated; i++) {
        char key[48], src[200];
        const char *kv = c->meas.emulated[i], *eq = strchr(kv, '=');
        double v = 0;
        if (!eq || hs_parse_double(eq + 1, &v) != HS_OK)
            return HS_ERR_INTERNAL;
        snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
        snprintf(src, sizeof(src), "calibrate: device %s has no CQ moderation; capture "
                 "emulated it (signalling only)", c->meas.device);
        st = profile_set_value(c->start, key, v, src);
    }
    return st;
}

/* The fit moves parameters in log space by relative steps: a cost that starts at 0 (absent
 * from the start profile) would start at its lower bound, where no step changes any figure.
 * Such a parameter starts at the geometric middle of its bounds instead. */
static hs_status_t seed_absent(profile_t *p)
{
    hs_status_t st = HS_OK;

    for (size_t j = 0; st == HS_OK && j < NFIT_PARAMS; j++) {
        const prof_param_info_t *pi = profile_param_find(g_fit_params[j].key);
        if (*(const double *)((const char *)p + pi->offset) > 0)
            continue;
        st = profile_set_value(p, g_fit_params[j].key,
                               sqrt(g_fit_params[j].lo * g_fit_params[j].hi),
                               "calibrate: fit start (absent from the start profile)");
    }
    return st;
}

static hs_status_t run_fit(calib_outcome_t *c)
{
    void *eng = (void *)&model_engine_ops;
    double orig[NFIT_PARAMS];
    hs_status_t st = apply_emulated(c);

    for (size_t j = 0; j < NFIT_PARAMS; j++)
        orig[j] = *(const double *)((const char *)c->start +
                                    profile_param_find(g_fit_params[j].key)->offset);
    if (st == HS_OK)
        st = seed_absent(c->start);

    /* a parameter the data do not determine keeps the start profile's value (orig: as it
     * had it before seed_absent), and the others are fitted again without it */
    if (st == HS_OK)
        st = calib_fit_keeping(c->start, g_fit_params, NFIT_PARAMS, c->meas.fit, c->meas.nfit,
                               calib_predict_replay, eng, orig, &c->fitted, &c->res);

    if (st == HS_OK) {
        c->fit_err = calloc(c->meas.nfit, sizeof(*c->fit_err));
        st = c->fit_err ? calib_errors(c->fitted, c->meas.fit, c->meas.nfit,
                                       calib_predict_replay, eng, c->fit_err, NULL)
                        : HS_ERR_NOMEM;
    }
    if (st == HS_OK && c->meas.nheld) {
        c->held_err = calloc(c->meas.nheld, sizeof(*c->held_err));
        st = c->held_err ? calib_errors(c->fitted, c->meas.held, c->meas.nheld,
                                        calib_predict_replay, eng, c->held_err,
                                        &c->held_median)
                         : HS_ERR_NOMEM;
    }
    if (st == HS_OK)
        st = finish_profile(c);
    return st;
}

/* Each figure, measured against what the fitted profile predicts. */
static void print_figures(const char *what, const calib_obs_t *obs, const double *err,
                          size_t n, FILE *fp)
{
    fprintf(fp, "\n  %-8s %-16s %9s %12s %12s %8s\n", what, "benchmark", "size B",
            "measured us", "predicted us", "error");
    for (size_t i = 0; err && i < n; i++)
        fprintf(fp, "  %-8s %-16s %9llu %12.1f %12.1f %7.1f%%\n", "", obs[i].group,
                (unsigned long long)obs[i].size_bytes, obs[i].meas_us,
                obs[i].meas_us * (1 + err[i]), 100 * err[i]);
}

static void print_outcome(const calib_outcome_t *c, const char *path, FILE *fp)
{
    fprintf(fp, "calibrated %s (firmware %s) on %s, %s\n\n", c->meas.device,
            c->meas.firmware[0] ? c->meas.firmware : "unknown", c->meas.host, c->date);
    fprintf(fp, "  %-18s %12s %12s %-5s %9s %9s\n", "parameter", "start", "fitted", "unit",
            "std err", "residual");
    for (size_t j = 0; j < NFIT_PARAMS; j++) {
        const prof_param_info_t *pi = profile_param_find(g_fit_params[j].key);
        fprintf(fp, "  %-18s %12.4g %12.4g %-5s ", g_fit_params[j].key,
                *(const double *)((const char *)c->start + pi->offset),
                *(const double *)((const char *)c->fitted + pi->offset), pi->unit);
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
    fprintf(fp, "  %-18s %12.4g %12.4g %-5s (median of %zu forced switches)\n",
            "switch.drain_fixed_us", c->start->switch_drain_fixed_us,
            c->fitted->switch_drain_fixed_us, "us", c->meas.nswitches);
    for (size_t i = 0; i < c->meas.nemulated; i++)
        fprintf(fp, "  %-21s (device has no CQ moderation: emulated)\n",
                c->meas.emulated[i]);
    print_figures("fit", c->meas.fit, c->fit_err, c->meas.nfit, fp);
    print_figures("held-out", c->meas.held, c->held_err, c->meas.nheld, fp);
    fprintf(fp, "\nfit: %zu figures, median error %.1f%%, rms %.1f%%, %u iterations\n",
            c->res.nobs, 100 * c->res.median_abs_rel, 100 * c->res.rms_rel, c->res.iters);
    if (c->meas.nheld)
        fprintf(fp, "held-out sizes: %zu figures, median error %.1f%%\n", c->meas.nheld,
                100 * c->held_median);
    fprintf(fp, "wrote %s\n", path);
}

static int parse_sizes(const char *opt, const char *text, uint64_t **v, size_t *n)
{
    if (strcmp(opt, "holdout") == 0 && strcmp(text, "none") == 0) {
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

/* The fit needs distinct sizes, and a held-out size must not be one of them (it would check
 * the fit on a figure the fit used): 0, or 2 with the size named. */
static int check_sizes(const uint64_t *sizes, size_t n, const uint64_t *held, size_t nh)
{
    for (size_t i = 0; i < n + nh; i++) {
        uint64_t v = i < n ? sizes[i] : held[i - n];
        for (size_t j = 0; j < i; j++) {
            uint64_t w = j < n ? sizes[j] : held[j - n];
            if (v != w)
                continue;
            fprintf(stderr, "hintsim: calibrate: size %llu is given twice%s: the fit needs "
                    "distinct sizes and checks itself on sizes it did not use\n",
                    (unsigned long long)v, i >= n && j < n ? " (in --sizes and --holdout)" :
                    i >= n ? " in --holdout" : " in --sizes");
            return 2;
        }
    }
    if (n < 2 || n + nh > 128) {
        fprintf(stderr, "hintsim: calibrate: --sizes needs 2..128 distinct sizes (with "
                "--holdout), got %zu and %zu\n", n, nh);
        return 2;
    }
    return 0;
}

/* --server: answer the client's benchmarks (calib_run_steps of them) one after another. */
static hs_status_t serve(const calib_run_opts_t *o)
{
    hs_status_t st = HS_OK;

    for (uint64_t i = 0; st == HS_OK && i < calib_run_steps(o); i++) {
        cap_bench_opts_t b = {.live = o->live};
        cJSON *rep = NULL;
        st = cap_bench_run(&b, &rep);
        cJSON_Delete(rep);
    }
    return st;
}

static hs_status_t calibrate(const struct calib_opts *a, const calib_run_opts_t *o,
                             calib_outcome_t *c)
{
    hs_progress_t pb;
    struct tm tm;
    time_t now = time(NULL);
    hs_status_t st = profile_load(a->profile, &c->start);

    for (size_t i = 0; st == HS_OK && i < a->set.n; i++)
        st = profile_set(c->start, a->set.v[i]);
    if (st != HS_OK)
        return st;
    strftime(c->date, sizeof(c->date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    hs_progress_start(&pb, "calibrate", calib_run_steps(o) + 1);
    st = calib_measure(o, &pb, &c->meas);
    if (st == HS_OK)
        st = run_fit(c);
    hs_progress_update(&pb, calib_run_steps(o) + 1);
    hs_progress_finish(&pb);
    if (st == HS_OK)
        st = write_profile(a->out, c);
    return st;
}

static void outcome_release(calib_outcome_t *c)
{
    calib_meas_release(&c->meas);
    profile_free(c->start);
    profile_free(c->fitted);
    free(c->held_err);
    free(c->fit_err);
}

int cmd_calibrate(int argc, char **argv)
{
    struct calib_opts a = {0};
    calib_run_opts_t o = {0};
    calib_outcome_t c = {0};
    uint64_t *sizes = NULL, *held = NULL;
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
    if (parse_sizes("sizes", a.sizes, &sizes, &o.nsizes) ||
        parse_sizes("holdout", a.holdout, &held, &o.nholdout) ||
        check_sizes(sizes, o.nsizes, held, o.nholdout))
        goto out;
    if (a.iters == 0) { /* said in capture bench's words otherwise */
        fprintf(stderr, "hintsim: calibrate: --iters must be at least 1\n");
        goto out;
    }
    /* the profile is written after every measurement: a wrong path fails now */
    if (a.out && hs_check_out_path(a.out) != HS_OK) {
        rc = 1;
        goto out;
    }
    hs_log_set_quiet(a.quiet || a.json);
    o.live = (cap_live_opts_t){a.device, a.gid_index, a.server, a.connect, a.port,
                               a.timeout_s, "host", a.profile, &a.set};
    o.sizes = sizes;
    o.holdout = held;
    o.iters = a.iters;
    o.warmup = a.warmup;
    st = a.server ? serve(&o) : calibrate(&a, &o, &c);
    rc = hs_status_exit_code(st);
    if (st == HS_OK && !a.server && a.json) {
        cJSON *j = outcome_json(&c);
        char *txt;
        cJSON_AddStringToObject(j, "profile", a.out);
        txt = cJSON_Print(j);
        printf("%s\n", txt ? txt : "{}");
        free(txt);
        cJSON_Delete(j);
    } else if (st == HS_OK && !a.server) {
        print_outcome(&c, a.out, stdout);
    }
out:
    outcome_release(&c);
    free(sizes);
    free(held);
    hs_opt_free(&g_calib_spec, &a, pos);
    return rc;
}
