/* report_val.c - plot_input_t from validate's JSON report; see report_val.h. */
#include "plots/report_val.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "model/model.h"

static double num(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

void rep_result_from_json(const cJSON *j, uint64_t hint, pred_result_t *r)
{
    memset(r, 0, sizeof(*r));
    r->hint_bytes = hint;
    r->p50_us = num(j, "p50_us");
    r->p90_us = num(j, "p90_us");
    r->p99_us = num(j, "p99_us");
    r->p999_us = num(j, "p999_us");
    r->max_us = num(j, "max_us");
    r->mean_us = num(j, "mean_us");
    r->throughput_gbps = num(j, "throughput_gbps");
    r->ll_fraction = num(j, "ll_fraction");
    r->switches = (uint64_t)num(j, "switches");
    r->drain_us_total = num(j, "drain_us_total");
    r->sq_full_stalls = (uint64_t)num(j, "sq_full_stalls");
}

typedef struct {
    pred_result_t *pred, *meas;
    size_t n;
    int rec, runner;
} val_rows_t;

/* The candidates, sorted by hint (insertion sort: a handful of rows). */
static hs_status_t parse_rows(const cJSON *results, uint64_t rec_hint, val_rows_t *v)
{
    size_t n = (size_t)cJSON_GetArraySize(results);
    const cJSON *c;

    v->pred = calloc(n ? n : 1, sizeof(*v->pred));
    v->meas = calloc(n ? n : 1, sizeof(*v->meas));
    if (!v->pred || !v->meas)
        return HS_ERR_NOMEM;
    v->rec = v->runner = -1;
    cJSON_ArrayForEach(c, results) {
        uint64_t h = (uint64_t)num(c, "hint");
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(c, "candidate");
        size_t k = v->n++;
        while (k > 0 && v->pred[k - 1].hint_bytes > h) {
            v->pred[k] = v->pred[k - 1];
            v->meas[k] = v->meas[k - 1];
            k--;
        }
        rep_result_from_json(cJSON_GetObjectItemCaseSensitive(c, "predicted"), h, &v->pred[k]);
        rep_result_from_json(cJSON_GetObjectItemCaseSensitive(c, "measured"), h, &v->meas[k]);
        v->pred[k].count = cJSON_IsString(role) && strcmp(role->valuestring, "runner-up") == 0;
    }
    for (size_t k = 0; k < v->n; k++) {
        if (v->pred[k].hint_bytes == rec_hint && v->rec < 0)
            v->rec = (int)k;
        if (v->pred[k].count == 1 && v->runner < 0)
            v->runner = (int)k;
        v->pred[k].count = 0;
    }
    return HS_OK;
}

static hs_status_t load_inputs(const cJSON *report, const char *profile,
                               const hs_strlist_t *sets, profile_t **p, trace_t **tr,
                               const char **path)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(report, "trace");
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(t, "path");
    hs_status_t st;

    if (!cJSON_IsString(tp)) {
        hs_log_error("validate report: no \"trace\".\"path\" string");
        return HS_ERR_INVALID;
    }
    *path = tp->valuestring;
    st = profile_load(profile ? profile : "generic", p);
    if (st != HS_OK)
        return st;
    for (size_t i = 0; sets && i < sets->n; i++) {
        st = profile_set(*p, sets->v[i]);
        if (st != HS_OK)
            return st;
    }
    /* in the order validate replayed it (it said so then) */
    return trace_load_posts(*path, 0, tr);
}

/* The string at config.OBJ.KEY of the report, or NULL. */
static const char *config_str(const cJSON *report, const char *obj, const char *key)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(report, "config");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, obj),
                                                      key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Where it was measured: "measured on DEV (GID G) against ADDR (GID P)", "... in loopback"
 * (the config of validate's JSON), or "measured" where the report has no config. */
static void where_text(const cJSON *report, char *buf, size_t len)
{
    const char *dev = config_str(report, "device", "name"), *gid = config_str(report, "device", "gid");
    const char *peer = config_str(report, "peer", "address"), *pgid = config_str(report, "peer", "gid");
    int n;

    if (!dev) {
        snprintf(buf, len, "measured");
        return;
    }
    n = snprintf(buf, len, "measured on %s", dev);
    if (gid && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " (GID %s)", gid);
    if (n >= 0 && (size_t)n < len) {
        if (peer)
            snprintf(buf + n, len - (size_t)n, " against %s (GID %s)", peer, pgid ? pgid : "?");
        else
            snprintf(buf + n, len - (size_t)n, " in loopback");
    }
}

static void why_text(const cJSON *report, const cJSON *val, char *buf, size_t len)
{
    const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(val, "verdict");
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(val, "rank_correlation");
    char where[256], rank[32];

    where_text(report, where, sizeof(where));
    if (cJSON_IsNumber(rc)) /* null below 4 classes (capture/README.md) */
        snprintf(rank, sizeof(rank), "%.2f", rc->valuedouble);
    else
        snprintf(rank, sizeof(rank), "n/a");
    snprintf(buf, len, "%s: best hint %.0f B, regret %.1f%%, rank correlation %s, "
             "median |error| %.1f%%. %s", where, num(val, "best_measured_hint"),
             num(val, "regret_pct"), rank, num(val, "median_abs_error_pct"),
             cJSON_IsString(verdict) ? verdict->valuestring : "");
}

hs_status_t rep_write_validate(const char *dir, const cJSON *report, const char *profile,
                               const hs_strlist_t *sets)
{
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(report, "validation");
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(report, "results");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(val, "objective");
    val_rows_t v = {0};
    profile_t *p = NULL;
    trace_t *tr = NULL;
    const char *path = NULL;
    char why[1024];
    plot_input_t in;
    hs_status_t st;

    if (!cJSON_IsObject(val) || !cJSON_IsArray(results) || cJSON_GetArraySize(results) == 0) {
        hs_log_error("validate report: no \"validation\" object or empty \"results\"");
        return HS_ERR_INVALID;
    }
    st = parse_rows(results, (uint64_t)num(val, "recommended_hint"), &v);
    if (st != HS_OK)
        goto free_inputs;
    st = load_inputs(report, profile, sets, &p, &tr, &path);
    if (st != HS_OK)
        goto free_inputs;
    in = (plot_input_t){.command = "validate", .engine = model_engine_ops.name,
                        .profile = p, .profile_hash = profile_hash(p), .trace = tr,
                        .trace_path = path, .pred = v.pred, .npred = v.n, .meas = v.meas,
                        .rec_idx = v.rec, .runner_idx = v.runner,
                        .objective = cJSON_IsString(obj) ? obj->valuestring : NULL,
                        .why = why, .cost_engine = &model_engine_ops};
    why_text(report, val, why, sizeof(why));
    st = rep_write_report(dir, &in);
    if (st == HS_ERR_ENV) /* warned; see report_val.h */
        st = HS_OK;
free_inputs:
    free(v.pred);
    free(v.meas);
    profile_free(p);
    trace_free(tr);
    return st;
}

int rep_validate_owns(const char *name)
{
    return !strcmp(name, "validate.json") || !strcmp(name, "report.html") ||
           plot_fig_owns(name);
}

hs_status_t rep_write_validate_dir(const char *dir, const char *json_text, const cJSON *report,
                                   const char *profile, const hs_strlist_t *sets)
{
    char stage[4200] = "", path[4400];
    hs_status_t st = hs_stage_open(dir, stage, sizeof(stage));

    if (st != HS_OK)
        goto abort_stage;
    snprintf(path, sizeof(path), "%s/validate.json", stage);
    st = hs_write_file_atomic(path, json_text);
    if (st != HS_OK)
        goto abort_stage;
    st = rep_write_validate(stage, report, profile, sets);
    if (st != HS_OK)
        goto abort_stage;
    return hs_stage_commit(stage, dir, rep_validate_owns);

abort_stage:
    if (stage[0]) {
        hs_stage_abort(stage);
        hs_log_error("%s: validate's files not written; an earlier run's there are left as "
                     "they were", dir);
    }
    return st;
}
