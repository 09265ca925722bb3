/* rec_report.c - the recommendation as report.json and report.md (written atomically). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/hs_util.h"
#include "model/recommend/recommend.h"

static cJSON *pick_json(const rec_report_t *r, size_t i)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "hint", (double)r->results[i].hint_bytes);
    cJSON_AddNumberToObject(o, "value", obj_value(r->objective, &r->results[i]));
    return o;
}

static cJSON *recommended_json(const rec_report_t *r)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "hint", (double)r->results[r->winner].hint_bytes);
    cJSON_AddStringToObject(o, "objective", obj_name(r->objective));
    cJSON_AddNumberToObject(o, "value", obj_value(r->objective,
                                                            &r->results[r->winner]));
    cJSON_AddItemToObject(o, "runner_up", r->runner_up != r->winner ? pick_json(r, r->runner_up)
                                                                    : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "baseline", pick_json(r, r->baseline));
    cJSON_AddItemToObject(o, "best", pick_json(r, r->best));
    cJSON_AddNumberToObject(o, "margin", r->margin);
    cJSON_AddStringToObject(o, "policy", r->policy);
    cJSON_AddStringToObject(o, "why", r->why);
    cJSON_AddStringToObject(o, "why_term", r->why_term ? r->why_term : "");
    return o;
}

/* One saturated path of one candidate: what it sustains, what the trace offers it. */
static cJSON *path_load_json(const rec_path_load_t *l)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "hint", (double)l->hint_bytes);
    cJSON_AddStringToObject(o, "path", l->path == 0 ? "LL" : "BW");
    cJSON_AddNumberToObject(o, "messages", (double)l->count);
    cJSON_AddNumberToObject(o, "sustained_gbps", l->sustained_gbps);
    cJSON_AddNumberToObject(o, "offered_gbps", l->offered_gbps);
    cJSON_AddStringToObject(o, "bound", l->bound);
    cJSON_AddNumberToObject(o, "window_wrs", l->window);
    return o;
}

cJSON *rec_report_to_json(const rec_report_t *r, const pred_engine_ops_t *eng, const profile_t *p,
                          const char *trace_path, const trace_t *tr)
{
    cJSON *root = cJSON_CreateObject(), *arr, *w, *ev;

    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "engine", eng->name);
    if (r->engine_detail)
        cJSON_AddStringToObject(root, "engine_detail", r->engine_detail);
    cJSON_AddStringToObject(root, "provenance", pred_engine_figures(eng));
    cJSON_AddStringToObject(root, "hintsim_version", HINTSIM_VERSION);
    cJSON_AddItemToObject(root, "profile", pred_profile_json(p));
    cJSON_AddItemToObject(root, "trace", pred_trace_json(trace_path, tr));
    cJSON_AddStringToObject(root, "objective", obj_name(r->objective));
    arr = cJSON_AddArrayToObject(root, "results");
    for (size_t i = 0; arr && i < r->n; i++)
        cJSON_AddItemToArray(arr, pred_result_to_json(&r->results[i]));
    cJSON_AddItemToObject(root, "recommended", recommended_json(r));
    if (r->load.span_us > 0 || r->load.link_busy_us > 0) {
        cJSON *ld = cJSON_AddObjectToObject(root, "offered_load");
        cJSON_AddNumberToObject(ld, "offered_gbps", r->load.offered_gbps);
        cJSON_AddNumberToObject(ld, "link_gbps", r->load.capacity_gbps);
        cJSON_AddNumberToObject(ld, "span_us", r->load.span_us);
        cJSON_AddNumberToObject(ld, "link_busy_us", r->load.link_busy_us);
        cJSON_AddBoolToObject(ld, "overloaded", r->overloaded);
    }
    cJSON *pl = cJSON_AddArrayToObject(root, "path_load");
    for (size_t i = 0; pl && i < r->npath_load; i++)
        cJSON_AddItemToArray(pl, path_load_json(&r->path_load[i]));
    w = cJSON_AddArrayToObject(root, "warnings");
    for (size_t i = 0; w && i < r->nwarnings; i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(r->warnings[i]));
    ev = cJSON_AddObjectToObject(root, "evaluation");
    if (ev) {
        cJSON_AddNumberToObject(ev, "candidates", (double)r->n);
        cJSON_AddNumberToObject(ev, "threads", r->threads_used);
        cJSON_AddNumberToObject(ev, "wall_s", r->wall_s);
    }
    return root;
}

static void md_side_by_side(FILE *f, const rec_report_t *r)
{
    const size_t idx[3] = {r->winner, r->runner_up, r->baseline};
    const char *label[3] = {"recommended", "runner-up", "no hint"};
    char h[48];

    fprintf(f, "| | hint | p50 us | p99 us | p99.9 us | mean us | Gb/s | LL | switches | "
               "stalls |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < 3; k++) {
        const pred_result_t *x = &r->results[idx[k]];
        if (k == 1 && r->runner_up == r->winner) /* one candidate: no runner-up */
            continue;
        rec_label_hint(x->hint_bytes, h, sizeof(h));
        fprintf(f, "| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.0f%% | %llu | %llu |\n",
                label[k], h, x->p50_us, x->p99_us, x->p999_us, x->mean_us, x->throughput_gbps,
                100 * x->ll_fraction, (unsigned long long)x->switches,
                (unsigned long long)x->sq_full_stalls);
    }
}

static void md_all(FILE *f, const rec_report_t *r, size_t nmsg)
{
    char h[48];

    fprintf(f, "\n## Every candidate (cost terms in us per message)\n\n| hint | %s | p99 us | "
               "Gb/s | queue | drain | coalesce | L1 | base |\n|---|---|---|---|---|---|---|"
               "---|---|\n", obj_name(r->objective));
    for (size_t i = 0; i < r->n; i++) {
        const pred_result_t *x = &r->results[i];
        const pred_costs_t *c = &x->costs;
        double n = (double)(nmsg ? nmsg : 1);
        rec_label_hint(x->hint_bytes, h, sizeof(h));
        fprintf(f, "| %s%s | %.4g | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", h,
                i == r->winner ? " (rec.)" : "", obj_value(r->objective, x),
                x->p99_us, x->throughput_gbps, c->queue_us / n, c->drain_us / n,
                c->coalesce_us / n, c->l1_us / n, c->base_us / n);
    }
}

static hs_status_t write_md(const rec_report_t *r, const pred_engine_ops_t *eng, const profile_t *p,
                            const char *trace_path, const trace_t *tr, const char *path)
{
    hs_afile_t *af = NULL;
    hs_status_t st = hs_afile_open(path, &af);
    char h[48];

    if (st != HS_OK)
        return st;
    FILE *f = hs_afile_stream(af);
    rec_label_hint(r->results[r->winner].hint_bytes, h, sizeof(h));
    fprintf(f, "# hintsim recommendation: hint %s\n\n", h);
    fprintf(f, "Set `RDMA_LOW_LATENCY_HINT=%llu` (bytes).\n\n",
            (unsigned long long)r->results[r->winner].hint_bytes);
    fprintf(f, "All figures below are **%s** (engine `%s`), not measured. Profile `%s` (%s, "
               "hash %016llx); trace `%s` (%zu records); objective **%s**; hintsim %s.\n\n",
            pred_engine_figures(eng), eng->name, p->name, p->origin,
            (unsigned long long)profile_hash(p),
            trace_path, tr->n, obj_name(r->objective), HINTSIM_VERSION);
    if (rec_profile_caveat(p))
        fprintf(f, "> **Profile `%s`:** %s.\n\n", p->name, rec_profile_caveat(p));
    if (r->engine_detail)
        fprintf(f, "Simulator network model: %s.\n\n", r->engine_detail);
    if (r->overloaded) /* the first warning */
        fprintf(f, "> **Overload:** %s.\n\n", r->warnings[0]);
    if (r->nwarnings > (size_t)r->overloaded) {
        fprintf(f, "**Warnings** (read these before the figures):\n\n");
        for (size_t i = (size_t)r->overloaded; i < r->nwarnings; i++)
            fprintf(f, "- %s\n", r->warnings[i]);
        fputc('\n', f);
    }
    md_side_by_side(f, r);
    fprintf(f, "\n**Policy:** %s.\n\n**Why:** %s.\n", r->policy, r->why);
    md_all(f, r, tr->n);
    fprintf(f, "\n%zu candidate%s evaluated on %u threads in %.2f s.\n", r->n,
            r->n == 1 ? "" : "s", r->threads_used,
            r->wall_s);
    if (ferror(f)) {
        hs_log_error("%s: write failed", path);
        hs_afile_abort(af);
        return HS_ERR_IO;
    }
    return hs_afile_commit(af);
}

hs_status_t rec_report_write(const rec_report_t *r, const pred_engine_ops_t *eng,
                             const profile_t *p, const char *trace_path, const trace_t *tr,
                             const char *dir)
{
    char path[4096];
    cJSON *j;
    char *text;
    hs_status_t st = hs_mkdir_p(dir);

    if (st != HS_OK)
        return st;
    j = rec_report_to_json(r, eng, p, trace_path, tr);
    text = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    if (!text)
        return HS_ERR_NOMEM;
    snprintf(path, sizeof(path), "%s/report.json", dir);
    st = hs_write_file_atomic(path, text);
    free(text);
    if (st != HS_OK)
        return st;
    snprintf(path, sizeof(path), "%s/report.md", dir);
    return write_md(r, eng, p, trace_path, tr, path);
}
