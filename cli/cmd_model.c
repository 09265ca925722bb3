/* cmd_model.c - `hintsim model` and, through cli_predict_main, `hintsim sim`: predict the
 * figures of CLI.md per hint with one engine; --curves adds each path's isolated cost
 * curve and the size where they cross. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/model.h"
#include "model/recommend.h"

struct pred_cli_opts {
    const char *profile;
    hs_strlist_t hint;
    const char *mode;
    int json;
    hs_strlist_t set;
    int include_cold;
    int curves;
    int quiet;
    uint64_t flows;
    const char *platform;
    uint64_t threads;
};

#define PRED_COMMON_OPTS                                                                    \
    {"profile", 'p', HS_OPT_STR, offsetof(struct pred_cli_opts, profile), "P", "generic",  \
     "built-in profile name or JSON file"},                                                 \
    {"hint", 0, HS_OPT_LIST, offsetof(struct pred_cli_opts, hint), "H[,H..]", NULL,          \
     "hint in bytes (K/M/G), repeatable; 0 = no hint (default: 0)"},                        \
    {"mode", 0, HS_OPT_STR, offsetof(struct pred_cli_opts, mode), "open|closed", "open",    \
     "open: the trace's post times; closed: after the previous completion + think time"},   \
    {"json", 0, HS_OPT_FLAG, offsetof(struct pred_cli_opts, json), NULL, NULL, "JSON output"}, \
    {"set", 0, HS_OPT_LIST, offsetof(struct pred_cli_opts, set), "KEY=VALUE", NULL,         \
     "override one profile parameter (repeatable)"},                                        \
    {"include-cold", 0, HS_OPT_FLAG, offsetof(struct pred_cli_opts, include_cold), NULL,    \
     NULL, "count cold-start messages in the figures (default: reported apart)"},         \
    {"quiet", 'q', HS_OPT_FLAG, offsetof(struct pred_cli_opts, quiet), NULL, NULL,          \
     "no progress bar or notes on stderr (errors and warnings still print)"}

static const hs_opt_t g_model_opts[] = {
    PRED_COMMON_OPTS,
    {"curves", 0, HS_OPT_FLAG, offsetof(struct pred_cli_opts, curves), NULL, NULL,
     "also print each path's isolated per-size latency/throughput and the crossover"},
    {"threads", 0, HS_OPT_U64, offsetof(struct pred_cli_opts, threads), "N", "0",
     "hints replayed in parallel (0 = one per online CPU)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_opt_t g_sim_opts[] = {
    PRED_COMMON_OPTS,
    {"flows", 0, HS_OPT_U64, offsetof(struct pred_cli_opts, flows), "N", "1",
     "senders replaying the trace into one receiver"},
    {"platform", 0, HS_OPT_STR, offsetof(struct pred_cli_opts, platform), "FILE", NULL,
     "SimGrid platform XML (default: generated from the profile)"},
    {"threads", 0, HS_OPT_U64, offsetof(struct pred_cli_opts, threads), "N", "0",
     "hints simulated in parallel, a process each (0 = one per online CPU; with --flows, "
     "one at a time)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_model_spec = {
    "hintsim model TRACE --profile P [--hint H ...] [--mode open|closed] [--json] "
    "[--set K=V ...] [--curves] [--threads N]",
    "predict latency/throughput per hint with the analytical model (model/MODEL.md)",
    g_model_opts, 1, 1,
    "Latency = completion seen by the poster - the trace's post time (open) or the replayed "
    "post time (closed). Figures are modelled, not measured."};

static const hs_cmd_spec_t g_sim_spec = {
    "hintsim sim TRACE --profile P [--hint H ...] [--mode open|closed] [--json] "
    "[--set K=V ...] [--flows N] [--platform FILE] [--threads N]",
    "predict per hint with the SimGrid discrete-event simulator", g_sim_opts, 1, 1,
    "Same semantics as `hintsim model` (model/MODEL.md); figures are simulated."};

int cli_trace_open(const char *path, trace_t **out)
{
    trace_t *tr = NULL;
    hs_status_t st = trace_load_posts(path, 1, &tr);

    if (st != HS_OK)
        return hs_status_exit_code(st);
    if (tr->n == 0) {
        hs_log_error("%s: the trace has no records", path);
        trace_free(tr);
        return 1;
    }
    *out = tr;
    return 0;
}

/* Every --hint value, comma lists expanded; default {0}. */
static int parse_hints(const hs_strlist_t *in, uint64_t **out, size_t *n_out)
{
    uint64_t *all = NULL;
    size_t n = 0;

    for (size_t i = 0; i < in->n; i++) {
        uint64_t *v = NULL;
        size_t nv = 0;
        if (hs_parse_size_list(in->v[i], &v, &nv) != HS_OK) {
            fprintf(stderr, "hintsim: --hint '%s': expected sizes like 0,8K,64K\n", in->v[i]);
            free(all);
            return 2;
        }
        uint64_t *grown = realloc(all, (n + nv) * sizeof(*all));
        if (!grown) {
            free(v);
            free(all);
            return 1;
        }
        all = grown;
        memcpy(all + n, v, nv * sizeof(*v));
        n += nv;
        free(v);
    }
    if (n == 0) {
        all = calloc(1, sizeof(*all));
        if (!all)
            return 1;
        n = 1;
    }
    /* a hint asked twice (--hint 4K --hint 4K,0) is replayed and shown once, where first asked */
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < u && all[j] != all[i])
            j++;
        if (j == u)
            all[u++] = all[i];
    }
    n = u;
    *out = all;
    *n_out = n;
    return 0;
}

/* One row; flow names the flow ("flow 1", "all flows") with --flows, else NULL. */
static void print_result_text(const pred_result_t *r, const char *flow)
{
    char h[48];

    rec_label_hint(r->hint_bytes, h, sizeof(h));
    if (flow)
        printf("%-10s ", flow);
    printf("%-16s %9.3f %9.3f %9.3f %9.3f %10.3f %9.3f %8.3f %5.1f%% %8llu %10.1f %8llu\n", h,
           r->p50_us, r->p90_us, r->p99_us, r->p999_us, r->max_us, r->mean_us,
           r->throughput_gbps, 100 * r->ll_fraction, (unsigned long long)r->switches,
           r->drain_us_total, (unsigned long long)r->sq_full_stalls);
}

static void print_classes_text(const pred_result_t *r, unsigned flows)
{
    char h[48], lo[32], hi[32];

    rec_label_hint(r->hint_bytes, h, sizeof(h));
    printf("\nby size class, hint %s%s:        count     p50_us     p99_us\n", h,
           flows > 1 ? ", all flows together" : "");
    for (size_t i = 0; i < r->nclasses; i++) {
        const pred_class_t *c = &r->classes[i];
        rec_format_hint(c->min_bytes, lo, sizeof(lo));
        rec_format_hint(c->max_bytes, hi, sizeof(hi));
        printf("  %8s - %-8s %14llu %10.3f %10.3f\n", lo, hi, (unsigned long long)c->count,
               c->p50_us, c->p99_us);
    }
    if (r->cold_count)
        printf("  cold start (apart): %llu messages, p50 %.3f us, p99 %.3f us, max %.3f us\n",
               (unsigned long long)r->cold_count, r->cold_p50_us, r->cold_p99_us,
               r->cold_max_us);
}

static void print_header_text(const pred_engine_ops_t *eng, const profile_t *p,
                              const char *path, const trace_t *tr, const pred_opts_t *po)
{
    const char *detail = cli_engine_detail(eng);

    printf("engine %s (figures are %s), profile %s (%s, hash %016llx)\n", eng->name,
           strcmp(eng->name, "sim") == 0 ? "simulated" : "modelled", p->name, p->origin,
           (unsigned long long)profile_hash(p));
    if (detail)
        printf("network model: %s\n", detail);
    if (po->platform) { /* it changes the figures and not the profile's hash */
        uint64_t h = 0;
        size_t len = 0;
        if (hs_hash_file(po->platform, 0, &h, &len) == HS_OK)
            printf("platform %s (%zu bytes, hash %016llx), not generated from the profile\n",
                   po->platform, len, (unsigned long long)h);
    }
    printf("trace %s: %zu records, mode %s", path, tr->n,
           po->mode == PRED_OPEN ? "open" : "closed");
    if (po->flows > 1)
        printf(", %u flows into one receiver (per flow, then all flows together)", po->flows);
    printf("\n\n");
    if (po->flows > 1)
        printf("%-10s ", "flow");
    printf("%-16s %9s %9s %9s %9s %10s %9s %8s %6s %8s %10s %8s\n", "hint", "p50_us",
           "p90_us", "p99_us", "p999_us", "max_us", "mean_us", "Gb/s", "LL", "switches",
           "drain_us", "stalls");
}

static uint64_t trace_max_size(const trace_t *tr)
{
    uint64_t m = 1;

    for (size_t i = 0; i < tr->n; i++)
        if (tr->recs[i].size_bytes > m)
            m = tr->recs[i].size_bytes;
    return m;
}

#define CURVE_RANGES 16       /* size ranges listed at most */
#define CURVE_TPUT_REL 0.001  /* a stream "beats" another by more than this (not rounding) */

/* key: [[lo, hi], ...] in o. */
static void add_ranges(cJSON *o, const char *key, const uint64_t (*r)[2], size_t nr)
{
    cJSON *arr = cJSON_AddArrayToObject(o, key);

    for (size_t i = 0; arr && i < nr; i++) {
        cJSON *pair = cJSON_CreateArray();
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)r[i][0]));
        cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)r[i][1]));
        cJSON_AddItemToArray(arr, pair);
    }
}

/* Curves: text table or a "curves" member of root. */
static int emit_curves(const profile_t *p, const trace_t *tr, cJSON *root)
{
    model_curve_pt_t *pts = NULL;
    size_t n = 0;
    uint64_t cross = 0;
    uint64_t max = trace_max_size(tr);
    hs_status_t st = model_curves(p, max > (1u << 20) ? max : (1u << 20), &pts, &n, &cross);

    if (st != HS_OK)
        return hs_status_exit_code(st);
    uint64_t bw_lo = 0, bw_hi = 0; /* sizes at which a BW stream beats an LL stream */
    uint64_t lat_r[CURVE_RANGES][2], tput_r[CURVE_RANGES][2];
    /* BW's latency lower at all; its stream faster by more than 0.1% (not a rounding) */
    size_t nlat = model_curve_ranges(pts, n, MODEL_CURVE_LAT, 0, lat_r, CURVE_RANGES);
    size_t ntput = model_curve_ranges(pts, n, MODEL_CURVE_STREAM, CURVE_TPUT_REL, tput_r,
                                      CURVE_RANGES);
    if (ntput) {
        bw_lo = tput_r[0][0];
        bw_hi = tput_r[ntput - 1][1];
    }
    if (root) {
        cJSON *c = cJSON_AddObjectToObject(root, "curves");
        cJSON *arr = c ? cJSON_AddArrayToObject(c, "points") : NULL;
        for (size_t i = 0; arr && i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "size_bytes", (double)pts[i].size_bytes);
            cJSON_AddNumberToObject(o, "ll_lat_us", pts[i].ll_lat_us);
            cJSON_AddNumberToObject(o, "bw_lat_us", pts[i].bw_lat_us);
            cJSON_AddNumberToObject(o, "ll_gbps", pts[i].ll_gbps);
            cJSON_AddNumberToObject(o, "bw_gbps", pts[i].bw_gbps);
            cJSON_AddItemToArray(arr, o);
        }
        if (c) {
            cJSON_AddNumberToObject(c, "crossover_bytes", (double)cross);
            cJSON_AddNumberToObject(c, "bw_faster_stream_min_bytes", (double)bw_lo);
            cJSON_AddNumberToObject(c, "bw_faster_stream_max_bytes", (double)bw_hi);
            add_ranges(c, "bw_lower_latency_ranges", lat_r, nlat);
            add_ranges(c, "bw_faster_stream_ranges", tput_r, ntput);
        }
    } else {
        char s[32];
        printf("\nisolated cost per path (one message alone; stream of one size):\n");
        printf("%8s %12s %12s %10s %10s\n", "size", "LL_lat_us", "BW_lat_us", "LL_Gb/s",
               "BW_Gb/s");
        for (size_t i = 0; i < n; i++) {
            rec_format_hint(pts[i].size_bytes, s, sizeof(s));
            printf("%8s %12.3f %12.3f %10.3f %10.3f\n", s, pts[i].ll_lat_us, pts[i].bw_lat_us,
                   pts[i].ll_gbps, pts[i].bw_gbps);
        }
        char txt[512];
        model_curve_ranges_text(lat_r, nlat, txt, sizeof(txt));
        if (nlat)
            printf("crossover: the BW path has the lower latency at %s\n", txt);
        else
            printf("crossover: none (the LL path is as fast or faster at every size)\n");
        model_curve_ranges_text(tput_r, ntput, txt, sizeof(txt));
        if (ntput)
            printf("throughput: a BW stream beats an LL stream by more than 0.1%% at %s\n", txt);
        else
            printf("throughput: the LL path streams within 0.1%% of the BW path or faster at "
                   "every size\n");
    }
    free(pts);
    return 0;
}

typedef struct {
    const pred_engine_ops_t *eng;
    const char *path;
    trace_t *tr;
    profile_t *p;
    pred_opts_t po;
    uint64_t *hints;
    size_t nhints;
    int quiet;
    unsigned threads; /* hints in parallel (one flow) */
} pred_job_t;

/* One hint's figures: res (one flow, or flow 0 of several), flows[] and agg with --flows. */
typedef struct {
    pred_result_t res;
    pred_result_t *flows; /* po.flows entries when po.flows > 1, else NULL */
    pred_result_t agg;
} pred_hint_out_t;

static void hint_out_release(pred_hint_out_t *h, unsigned nflows)
{
    if (h->flows) {
        for (unsigned f = 0; f < nflows; f++)
            pred_result_release(&h->flows[f]);
        free(h->flows);
        pred_result_release(&h->agg);
    } else {
        pred_result_release(&h->res);
    }
}

/* One hint of several flows (the sim engine). */
static hs_status_t run_flows(const pred_job_t *j, uint64_t hint, pred_hint_out_t *h)
{
    hs_status_t st;

    h->flows = calloc(j->po.flows, sizeof(*h->flows));
    if (!h->flows)
        return HS_ERR_NOMEM;
    st = cli_sim_flows(j->tr, j->p, &j->po, hint, j->po.flows, h->flows, &h->agg);
    if (st != HS_OK) {
        free(h->flows);
        h->flows = NULL;
        return st;
    }
    h->res = h->flows[0]; /* borrowed: released through flows */
    return HS_OK;
}

/* Every hint's figures before anything is printed; *ndone of them are to be released. One
 * flow: the hints at once (pred_run_hints: on j->threads threads, each replaying into
 * arrays of its own); several: one after the other. */
static int run_all(const pred_job_t *job, pred_hint_out_t *out, size_t *ndone)
{
    hs_progress_t bar, msgs;
    hs_status_t st = HS_OK;
    pred_job_t one = *job, *j = &one;

    *ndone = 0;
    hs_progress_start(&bar, "hints", j->nhints);
    bar.enabled = bar.enabled && !j->quiet && j->nhints > 1;
    /* one hint: a bar over its messages instead, where the engine draws one (sim) */
    hs_progress_start(&msgs, "messages", j->tr->n * (j->po.flows > 1 ? j->po.flows : 1));
    msgs.enabled = msgs.enabled && !j->quiet && j->nhints == 1;
    one.po.progress = msgs.enabled ? &msgs : NULL;
    if (j->po.flows <= 1) {
        pred_result_t *res = calloc(j->nhints, sizeof(*res));
        if (res) {
            st = pred_run_hints(j->eng, j->tr, j->p, &j->po, j->hints, j->nhints, j->threads,
                                res, &bar);
            for (size_t i = 0; i < j->nhints; i++)
                out[i].res = res[i];
            *ndone = j->nhints;
            free(res);
        } else {
            st = HS_ERR_NOMEM;
        }
    } else {
        for (; *ndone < j->nhints && st == HS_OK; (*ndone)++) {
            st = run_flows(j, j->hints[*ndone], &out[*ndone]);
            hs_progress_update(&bar, *ndone + 1);
        }
    }
    hs_progress_finish(&bar);
    hs_progress_finish(&msgs);
    return st == HS_OK ? 0 : hs_status_exit_code(st);
}

static cJSON *hint_json(const pred_job_t *j, const pred_hint_out_t *h)
{
    cJSON *o = pred_result_to_json(&h->res);

    if (!o || !h->flows)
        return o;
    cJSON *arr = cJSON_AddArrayToObject(o, "flows");
    for (unsigned f = 0; arr && f < j->po.flows; f++) {
        cJSON *x = pred_result_to_json(&h->flows[f]);
        cJSON_AddNumberToObject(x, "flow", f);
        cJSON_AddItemToArray(arr, x);
    }
    cJSON_AddItemToObject(o, "aggregate", pred_result_to_json(&h->agg));
    return o;
}

static int emit_json(const pred_job_t *j, const pred_hint_out_t *out, const char *warning,
                     int curves)
{
    cJSON *root = cJSON_CreateObject(), *arr;
    const char *detail = cli_engine_detail(j->eng);
    int rc = 0;

    cJSON_AddStringToObject(root, "engine", j->eng->name);
    if (detail)
        cJSON_AddStringToObject(root, "engine_detail", detail);
    cJSON_AddItemToObject(root, "profile", pred_profile_json(j->p));
    if (j->po.platform) { /* null: generated from the profile */
        cJSON *pl = cJSON_AddObjectToObject(root, "platform");
        uint64_t h = 0;
        size_t len = 0;
        char hx[32];
        if (pl && hs_hash_file(j->po.platform, 0, &h, &len) == HS_OK) {
            snprintf(hx, sizeof(hx), "%016llx", (unsigned long long)h);
            cJSON_AddStringToObject(pl, "path", j->po.platform);
            cJSON_AddStringToObject(pl, "hash", hx);
            cJSON_AddNumberToObject(pl, "bytes", (double)len);
        }
    } else if (strcmp(j->eng->name, "sim") == 0) {
        cJSON_AddNullToObject(root, "platform");
    }
    cJSON_AddItemToObject(root, "trace", pred_trace_json(j->path, j->tr));
    cJSON_AddStringToObject(root, "mode", j->po.mode == PRED_OPEN ? "open" : "closed");
    if (j->po.flows > 1)
        cJSON_AddNumberToObject(root, "flows", j->po.flows);
    arr = cJSON_AddArrayToObject(root, "results");
    for (size_t i = 0; i < j->nhints; i++)
        cJSON_AddItemToArray(arr, hint_json(j, &out[i]));
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    if (warning)
        cJSON_AddItemToArray(w, cJSON_CreateString(warning));
    if (curves)
        rc = emit_curves(j->p, j->tr, root);
    if (rc == 0) {
        char *text = cJSON_Print(root);
        printf("%s\n", text ? text : "{}");
        free(text);
    }
    cJSON_Delete(root);
    return rc;
}

static int emit_text(const pred_job_t *j, const pred_hint_out_t *out, const char *warning,
                     int curves)
{
    print_header_text(j->eng, j->p, j->path, j->tr, &j->po);
    for (size_t i = 0; i < j->nhints; i++) {
        if (!out[i].flows) {
            print_result_text(&out[i].res, NULL);
            continue;
        }
        for (unsigned f = 0; f < j->po.flows; f++) {
            char lbl[16];
            snprintf(lbl, sizeof(lbl), "flow %u", f);
            print_result_text(&out[i].flows[f], lbl);
        }
        print_result_text(&out[i].agg, "all flows");
    }
    for (size_t i = 0; i < j->nhints; i++)
        print_classes_text(out[i].flows ? &out[i].agg : &out[i].res, out[i].flows ? j->po.flows : 1);
    if (warning)
        printf("\nwarning: %s\n", warning);
    return curves ? emit_curves(j->p, j->tr, NULL) : 0;
}

/* Nothing reaches stdout until every hint's figures exist (an engine error leaves it empty). */
static int run_predict(const pred_job_t *j, int json, int curves)
{
    pred_hint_out_t *out = calloc(j->nhints, sizeof(*out));
    model_load_t load;
    char warning[480];
    size_t done = 0;
    int rc;

    if (!out)
        return 1;
    rc = run_all(j, out, &done);
    if (rc == 0) {
        model_offered_load(j->tr, j->p, &load);
        if (j->po.flows > 1) { /* N copies of the trace share the port to the receiver */
            double f = (double)j->po.flows;
            load.bytes *= f;
            load.link_busy_us *= f;
            load.offered_gbps *= f;
            load.overloaded = j->tr->n > 1 && load.link_busy_us > load.span_us;
        }
        int off = j->po.flows > 1 ? snprintf(warning, sizeof(warning), "%u flows into one "
                                             "port: ", j->po.flows) : 0;
        int warn = j->po.mode == PRED_OPEN &&
                   model_load_warning(&load, warning + off, sizeof(warning) - (size_t)off);
        rc = json ? emit_json(j, out, warn ? warning : NULL, curves)
                  : emit_text(j, out, warn ? warning : NULL, curves);
    }
    for (size_t i = 0; i < done; i++)
        hint_out_release(&out[i], j->po.flows);
    free(out);
    return rc;
}

int cli_predict_main(const pred_engine_ops_t *eng, int is_sim, int argc, char **argv)
{
    const hs_cmd_spec_t *spec = is_sim ? &g_sim_spec : &g_model_spec;
    struct pred_cli_opts o = {0};
    pred_job_t j = {.eng = eng};
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(spec, argc, argv, &o, &pos, &npos);

    if (rc >= 0) {
        hs_opt_free(spec, &o, pos);
        return rc;
    }
    if (pred_mode_parse(o.mode, &j.po.mode) != HS_OK) {
        fprintf(stderr, "hintsim: --mode '%s': expected open or closed\n", o.mode);
        rc = 2;
        goto out;
    }
    if (is_sim && o.flows < 1) {
        fprintf(stderr, "hintsim: --flows must be at least 1\n");
        rc = 2;
        goto out;
    }
    j.po.include_cold = o.include_cold;
    j.po.flows = is_sim ? (unsigned)o.flows : 1;
    j.po.platform = o.platform;
    j.po.trace_name = pos[0];
    j.path = pos[0];
    hs_log_set_quiet(o.quiet);
    if ((rc = parse_hints(&o.hint, &j.hints, &j.nhints)) != 0 ||
        (rc = cli_profile_open(o.profile, &o.set, &j.p)) != 0 ||
        (rc = cli_trace_open(pos[0], &j.tr)) != 0)
        goto out;
    j.quiet = o.quiet;
    if (!j.po.include_cold && pred_all_cold(j.tr)) /* pred_summarize counts them in */
        hs_log_warn("%s: every one of the %zu messages is flagged cold-start: counted in the "
                    "figures, as with --include-cold", pos[0], j.tr->n);
    j.threads = pred_threads((unsigned)o.threads);
    rc = run_predict(&j, o.json, o.curves);
out:
    free(j.hints);
    profile_free(j.p);
    trace_free(j.tr);
    hs_opt_free(spec, &o, pos);
    return rc;
}

int cmd_model(int argc, char **argv)
{
    return cli_predict_main(&model_engine_ops, 0, argc, argv);
}
