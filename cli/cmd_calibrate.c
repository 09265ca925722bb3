/* cmd_calibrate.c - `hintsim calibrate`: parse, calibrate one device (calib_calibrate,
 * calib/calib_job.h: measure, fit, check on held-out figures, write the profile) or serve
 * the other end (calib_serve), and print what was fitted and how well; exit 1 naming the
 * term when a held-out class is over its bound.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib/calib_job.h"
#include "capture/cap_bench.h"
#include "cli/cli.h"
#include "cli/cli_live.h"
#include "common/hs_util.h"

struct calib_opts {
    cli_live_args_t live;
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
    uint64_t jitter, jitter_long;
    const char *out;
    int json;
    int quiet;
};

#define O(f) offsetof(struct calib_opts, f)
static const hs_opt_t g_calib_opts[] = {
    CLI_LIVE_CONN_OPTS(struct calib_opts, "answer a calibrate --connect peer",
                       "measure against a --server on HOST"),
    CLI_LIVE_TIMEOUT_OPT(struct calib_opts),
    {"profile", 'p', HS_OPT_STR, O(live.profile), "P", "generic",
     "starting profile (path settings)"},
    {"set", 0, HS_OPT_LIST, O(live.set), "KEY=VALUE", NULL, "override one starting parameter"},
    {"sizes", 's', HS_OPT_STR, O(sizes), "LIST", "8,64,512,4K,32K,256K",
     "single-message sizes to fit"},
    {"holdout", 0, HS_OPT_STR, O(holdout), "LIST", "16,128,1K,8K,64K",
     "single-message sizes measured but kept out of the fit ('none' for none)"},
    {"stream-sizes", 0, HS_OPT_STR, O(ssizes), "LIST", "64,700,3000,32K", "stream sizes to fit"},
    {"stream-holdout", 0, HS_OPT_STR, O(sholdout), "LIST", "512,1536,16K",
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
    {"jitter", 0, HS_OPT_U64, O(jitter), "N", "2000",
     "closed-loop messages of the smallest size whose spread sets jitter.*, then as many in "
     "blocks with think time for jitter.think_reach (0: neither)"},
    {"jitter-long", 0, HS_OPT_U64, O(jitter_long), "BYTES", "4096",
     "the same again with messages of BYTES, setting jitter.long_* (0: none)"},
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
    CALIB_STR(CALIB_STDERR_MAX_PCT) "% (warned); one pinned at a bound of its fit keeps the\n"
    "bound; the others are then fitted again without it.\n"
    "Prints the held-out error (figures not fitted) for single messages, streams and the\n"
    "mixed replay, each against its bound: a base (calib/README.md) plus the device's own\n"
    "replay-to-replay noise measured for that class; exit 1 naming the term that explains\n"
    "most of the error when one is over (the profile is written all the same).\n"
    "Exit 3: no such device.",
};

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
    for (size_t j = 0; j < CALIB_NTERMS; j++) {
        const prof_param_info_t *pi = profile_param_find(c->params[j].key);
        fprintf(fp, "  %-21s %12.4g %12.4g %-5s ", c->params[j].key,
                calib_param_value(c->start, c->params[j].key),
                calib_param_value(c->fitted, c->params[j].key), pi->unit);
        if (!c->res.determined[j])
            fprintf(fp, "%9s %9s\n", "-", "(no data)");
        else if (!(c->res.stderr_rel[j] <= CALIB_STDERR_MAX_REL)) /* the data cannot */
            fprintf(fp, "%9s %8.1f%%", ">" CALIB_STR(CALIB_STDERR_MAX_PCT) "%", /* separate it */
                    100 * c->res.resid_rel[j]);
        else
            fprintf(fp, "%8.1f%% %8.1f%%", 100 * c->res.stderr_rel[j],
                    100 * c->res.resid_rel[j]);
        if (c->res.determined[j]) /* start kept: std err over CALIB_STDERR_MAX_REL */
            fprintf(fp, "%s\n", !calib_param_kept(&c->res, j) ? ""
                    : calib_param_pinned(&c->res, c->params, j) ? "  (at the bound of its fit)"
                                                                 : "  (not fitted: start kept)");
    }
    fprintf(fp, "  %-21s %12.4g %12.4g %-5s (median over replays of %zu forced switches)\n",
            "switch.drain_fixed_us", c->start->switch_drain_fixed_us,
            c->fitted->switch_drain_fixed_us, "us", c->meas.nswitches);
    if (c->eff_changes[0])
        fprintf(fp, "  the live paths' effective configuration (model/MODEL.md 7b): %s\n",
                c->eff_changes);
}

/* How term j ended, as the held-out lines say it after its share: "" when fitted. */
static const char *term_state(const calib_outcome_t *c, size_t j)
{
    if (!calib_param_kept(&c->res, j))
        return "";
    return calib_param_pinned(&c->res, c->params, j) ? "; at the bound of its fit"
                                                     : "; not fitted";
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
                    100 * h->term_share, term_state(c, (size_t)h->term));
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
    for (int s = 0; s < 2; s++) {
        const calib_jitter_t *j = &c->meas.jitter[s];
        if (j->n)
            fprintf(fp, "jitter: %zu closed-loop messages of %llu B beyond their median: p90 "
                    "%.1f us, p99 %.1f us, p99.9 %.1f us, at a cycle of %.1f us (jitter.%s*)\n",
                    j->n, (unsigned long long)j->bytes, j->p90_us, j->p99_us, j->p999_us,
                    j->cycle_us, s ? "long_" : "");
    }
    if (c->meas.reach.n) {
        const calib_meas_t *m = &c->meas;
        fprintf(fp, "jitter: the same %llu B messages in blocks, back to back and %.1f us of "
                "think time apart: p99 %.1f us beyond their median with the think time; ",
                (unsigned long long)m->reach.bytes, m->reach.think_us, m->reach.p99_us);
        if (isnan(m->reach_share))
            fprintf(fp, "the tail is too flat to tell how far a stall reaches: "
                    "jitter.think_reach kept at %g\n", c->fitted->jitter_think_reach);
        else
            fprintf(fp, "a stall reaches across %.0f%% of the think time, the median of %zu "
                    "pairs (jitter.think_reach)\n", 100 * m->reach_share, m->reach_pairs);
    }
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
    o->jitter_len = a->jitter;
    o->jitter_long_bytes = a->jitter_long;
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

static void print_json(const calib_outcome_t *c, const char *out, FILE *fp)
{
    cJSON *j = calib_outcome_json(c);
    char *txt;

    cJSON_AddStringToObject(j, "profile", out);
    txt = cJSON_Print(j);
    fprintf(fp, "%s\n", txt ? txt : "{}");
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
    if (!a.live.device || (!a.live.server && !a.out)) {
        fprintf(stderr, "hintsim: calibrate: --device and -o PROFILE.json are required\n");
        goto out;
    }
    if (!a.live.server && parse_lists(&a, &lists, &o))
        goto out;
    /* the profile is written after every measurement: a wrong path fails now */
    if (!a.live.server && a.out && hs_check_out_path(a.out) != HS_OK) {
        rc = 1;
        goto out;
    }
    hs_log_set_quiet(a.quiet || a.json);
    o.live = cli_live_opts(&a.live); /* no --mem: host memory */
    st = a.live.server ? calib_serve(&o)
                       : calib_calibrate(&o, a.live.profile, &a.live.set, a.out, &c);
    if ((rc = hs_status_exit_code(st)) != 0 || a.live.server)
        goto out;
    /* -o -: the profile went to stdout, so the report goes to stderr */
    FILE *rep = strcmp(a.out, "-") == 0 ? stderr : stdout;
    if (a.json)
        print_json(&c, a.out, rep);
    else
        print_outcome(&c, a.out, rep);
    if (c.nover) {
        report_over(&c);
        rc = 1;
    }
out:
    calib_outcome_release(&c);
    lists_free(&lists);
    hs_opt_free(&g_calib_spec, &a, pos);
    return rc;
}
