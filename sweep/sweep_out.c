/* sweep_out.c - merged CSV and JSON of a sweep (see sweep_out.h).
 *
 * Numbers are printed with %.17g so a value read back is the value computed; nothing that
 * depends on who computed a point or when (pid, time) goes into these files.
 */
#include "sweep/sweep_out.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "sweep/sweep_point.h"

hs_status_t sweep_out_collect(const sweep_plan_t *plan, const char *dir, sweep_result_t **res,
                              size_t *nmissing)
{
    sweep_result_t *r = calloc(plan->n ? plan->n : 1, sizeof(*r));
    size_t miss = 0;

    if (!r)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < plan->n; i++)
        if (sweep_point_load(dir, plan->pts[i].key, &r[i]) != HS_OK)
            miss++;
    *res = r;
    *nmissing = miss;
    return HS_OK;
}

static int better(const sweep_grid_t *g, double a, double b)
{
    return sweep_objective_lower_better(g->objective) ? a < b : a > b;
}

size_t sweep_out_best_hint(const sweep_grid_t *g, const sweep_plan_t *plan,
                           const sweep_result_t *res, size_t pt)
{
    /* Hints are the innermost dimension: the block of nhints points holding pt. */
    size_t first = pt - plan->pts[pt].hint, best = first;

    for (size_t h = 1; h < g->nhints; h++)
        if (better(g, res[first + h].value, res[best].value))
            best = first + h;
    return best;
}

/* A CSV field, quoted when it needs to be (RFC 4180). */
static void csv_field(FILE *fp, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

static void csv_header(FILE *fp, const sweep_grid_t *g)
{
    fputs("index,key,trace,profile", fp);
    for (size_t a = 0; a < g->naxes; a++) {
        fputc(',', fp);
        csv_field(fp, g->axes[a].key);
    }
    fputs(",hint,objective,engine,mode,hint_bytes,value,p50_us,p99_us,mean_us,"
          "throughput_gbps,ll_fraction,switches,best_over_hints\n", fp);
}

static void csv_row(FILE *fp, const sweep_grid_t *g, const sweep_plan_t *plan,
                    const sweep_result_t *res, size_t i)
{
    const sweep_point_t *pt = &plan->pts[i];
    const sweep_result_t *r = &res[i];
    char hint[32];

    fprintf(fp, "%zu,%016" PRIx64 ",", i, pt->key);
    csv_field(fp, g->traces[pt->trace].label);
    fputc(',', fp);
    csv_field(fp, g->profiles[pt->profile]);
    for (size_t a = 0; a < g->naxes; a++)
        fprintf(fp, ",%s", sweep_axis_value(&g->axes[a], pt->ax[a]));
    sweep_hint_text(&g->hints[pt->hint], hint, sizeof(hint));
    fprintf(fp, ",%s,%s,%s,%s,%" PRIu64 ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%" PRIu64 ",%d\n",
            hint, g->objective, g->engine, g->mode, r->hint_bytes, r->value, r->p50_us,
            r->p99_us, r->mean_us, r->throughput_gbps, r->ll_fraction, r->switches,
            sweep_out_best_hint(g, plan, res, i) == i);
}

static hs_status_t write_csv(const sweep_grid_t *g, const sweep_plan_t *plan,
                             const sweep_result_t *res, const char *path)
{
    hs_afile_t *af;
    hs_status_t st = hs_afile_open(path, &af);

    if (st != HS_OK)
        return st;
    csv_header(hs_afile_stream(af), g);
    for (size_t i = 0; i < plan->n; i++)
        csv_row(hs_afile_stream(af), g, plan, res, i);
    return hs_afile_commit(af);
}

static cJSON *point_json(const sweep_grid_t *g, const sweep_plan_t *plan,
                         const sweep_result_t *res, size_t i)
{
    const sweep_point_t *pt = &plan->pts[i];
    const sweep_result_t *r = &res[i];
    cJSON *o = cJSON_CreateObject(), *set = cJSON_CreateObject();
    char buf[64];

    if (!o || !set || !cJSON_AddItemToObject(o, "set", set)) {
        cJSON_Delete(o);
        cJSON_Delete(set);
        return NULL;
    }
    cJSON_AddNumberToObject(o, "index", (double)i);
    snprintf(buf, sizeof(buf), "%016" PRIx64, pt->key);
    cJSON_AddStringToObject(o, "key", buf);
    cJSON_AddStringToObject(o, "trace", g->traces[pt->trace].label);
    cJSON_AddStringToObject(o, "profile", g->profiles[pt->profile]);
    for (size_t a = 0; a < g->naxes; a++)
        cJSON_AddNumberToObject(set, g->axes[a].key,
                                strtod(sweep_axis_value(&g->axes[a], pt->ax[a]), NULL));
    sweep_hint_text(&g->hints[pt->hint], buf, sizeof(buf));
    cJSON_AddStringToObject(o, "hint", buf);
    cJSON_AddNumberToObject(o, "hint_bytes", (double)r->hint_bytes);
    cJSON_AddNumberToObject(o, "value", r->value);
    cJSON_AddNumberToObject(o, "p50_us", r->p50_us);
    cJSON_AddNumberToObject(o, "p99_us", r->p99_us);
    cJSON_AddNumberToObject(o, "mean_us", r->mean_us);
    cJSON_AddNumberToObject(o, "throughput_gbps", r->throughput_gbps);
    cJSON_AddNumberToObject(o, "ll_fraction", r->ll_fraction);
    cJSON_AddNumberToObject(o, "switches", (double)r->switches);
    cJSON_AddBoolToObject(o, "best_over_hints", sweep_out_best_hint(g, plan, res, i) == i);
    return o;
}

static cJSON *axes_json(const sweep_grid_t *g)
{
    cJSON *axes = cJSON_CreateArray();

    for (size_t a = 0; axes && a < g->naxes; a++) {
        cJSON *ax = cJSON_CreateObject(), *vals = cJSON_CreateArray();
        cJSON_AddStringToObject(ax, "key", g->axes[a].key);
        for (size_t v = 0; v < g->axes[a].n; v++)
            cJSON_AddItemToArray(vals, cJSON_CreateNumber(
                                           strtod(sweep_axis_value(&g->axes[a], v), NULL)));
        cJSON_AddItemToObject(ax, "values", vals);
        cJSON_AddItemToArray(axes, ax);
    }
    return axes;
}

static cJSON *sweep_json(const sweep_grid_t *g, const sweep_plan_t *plan,
                         const sweep_result_t *res)
{
    cJSON *root = cJSON_CreateObject(), *pts = cJSON_CreateArray(), *fixed;

    if (!root || !pts || !cJSON_AddItemToObject(root, "format", cJSON_CreateString("hintsim-sweep"))) {
        cJSON_Delete(pts);
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "hintsim", HINTSIM_VERSION);
    cJSON_AddStringToObject(root, "grid", g->path);
    cJSON_AddStringToObject(root, "objective", g->objective);
    cJSON_AddBoolToObject(root, "lower_is_better", sweep_objective_lower_better(g->objective));
    cJSON_AddStringToObject(root, "engine", g->engine);
    cJSON_AddStringToObject(root, "mode", g->mode);
    fixed = cJSON_AddArrayToObject(root, "fixed");
    for (size_t i = 0; fixed && i < g->nfixed; i++)
        cJSON_AddItemToArray(fixed, cJSON_CreateString(g->fixed[i]));
    cJSON_AddItemToObject(root, "axes", axes_json(g));
    cJSON_AddNumberToObject(root, "count", (double)plan->n);
    for (size_t i = 0; i < plan->n; i++)
        cJSON_AddItemToArray(pts, point_json(g, plan, res, i));
    cJSON_AddItemToObject(root, "points", pts);
    return root;
}

hs_status_t sweep_out_write(const sweep_grid_t *g, const sweep_plan_t *plan,
                            const sweep_result_t *res, const char *dir)
{
    char path[4096], *text = NULL;
    cJSON *root;
    hs_status_t st;

    snprintf(path, sizeof(path), "%s/sweep.csv", dir);
    if ((st = write_csv(g, plan, res, path)) != HS_OK)
        return st;
    root = sweep_json(g, plan, res);
    text = root ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!text)
        return HS_ERR_NOMEM;
    snprintf(path, sizeof(path), "%s/sweep.json", dir);
    st = hs_write_file_atomic(path, text);
    free(text);
    return st;
}
