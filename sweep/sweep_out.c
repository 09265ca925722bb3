/* sweep_out.c - merged CSV and JSON of a sweep (see sweep_out.h).
 *
 * Numbers are printed with %.17g so a value read back is the value computed; nothing that
 * depends on who computed a point or when (pid, time) goes into these files.
 */
#include "sweep/sweep_out.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "sweep/sweep_file.h"
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
    fputs(",hint,objective,engine,mode,hint_bytes,value", fp);
#define SWEEP_CSV_NAME_(member, kind) fputs("," #member, fp);
    SWEEP_RESULT_FIGURES(SWEEP_CSV_NAME_)
#undef SWEEP_CSV_NAME_
#define SWEEP_CSV_COST_NAME_(member, key) fputs(",cost_" key "_us", fp);
    PRED_COSTS(SWEEP_CSV_COST_NAME_)
#undef SWEEP_CSV_COST_NAME_
    fputs(",best_over_hints\n", fp);
}

/* The columns that say which point a row is, up to and including the comma after mode. */
static void csv_row_id(FILE *fp, const sweep_grid_t *g, const sweep_plan_t *plan, size_t i)
{
    const sweep_point_t *pt = &plan->pts[i];
    char hint[32];

    fprintf(fp, "%zu,%016" PRIx64 ",", i, pt->key);
    csv_field(fp, g->traces[pt->trace].label);
    fputc(',', fp);
    csv_field(fp, g->profiles[pt->profile]);
    for (size_t a = 0; a < g->naxes; a++)
        fprintf(fp, ",%s", sweep_axis_value(&g->axes[a], pt->ax[a]));
    sweep_hint_text(&g->hints[pt->hint], hint, sizeof(hint));
    fprintf(fp, ",%s,%s,%s,%s,", hint, g->objective, g->engine, g->mode);
}

static void csv_row(FILE *fp, const sweep_grid_t *g, const sweep_plan_t *plan,
                    const sweep_result_t *res, size_t i)
{
    const sweep_result_t *r = &res[i];

    csv_row_id(fp, g, plan, i);
    fprintf(fp, "%" PRIu64 ",%.17g", r->hint_bytes, r->value);
#define SWEEP_CSV_VALUE_(member, kind) fprintf(fp, "," HS_FIELD_FMT_##kind, r->member);
    SWEEP_RESULT_FIGURES(SWEEP_CSV_VALUE_)
#undef SWEEP_CSV_VALUE_
#define SWEEP_CSV_COST_(member, key) fprintf(fp, ",%.17g", r->costs.member);
    PRED_COSTS(SWEEP_CSV_COST_)
#undef SWEEP_CSV_COST_
    fprintf(fp, ",%d\n", sweep_out_best_hint(g, plan, res, i) == i);
}

static hs_status_t write_csv(const sweep_grid_t *g, const sweep_plan_t *plan,
                             const sweep_result_t *res, const char *path)
{
    hs_afile_t *af;
    hs_status_t st = sweep_afile_open(path, &af);

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
    sweep_result_figures_json(o, r);
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
    cJSON_AddStringToObject(root, "grid", g->canon);
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
    st = sweep_file_write(path, text);
    free(text);
    return st;
}

/* ---- stale merged outputs ------------------------------------------------------------ */

/* *ok = 1 when the CSV text has this plan's header and exactly its rows, in order. */
static hs_status_t csv_belongs(const sweep_grid_t *g, const sweep_plan_t *plan,
                               const char *text, int *ok)
{
    char *want = NULL;
    size_t wlen = 0;
    FILE *fp = open_memstream(&want, &wlen);
    const char *w, *a = text;

    if (!fp)
        return HS_ERR_NOMEM;
    csv_header(fp, g);
    for (size_t i = 0; i < plan->n; i++) {
        csv_row_id(fp, g, plan, i);
        fputc('\n', fp);
    }
    if (fclose(fp) != 0) {
        free(want);
        return HS_ERR_NOMEM;
    }
    /* Each wanted line (the whole header, a row's identifying columns) starts its line. */
    *ok = 1;
    for (w = want; *ok && *w; w = strchr(w, '\n') + 1) {
        const char *ae = strchr(a, '\n');
        size_t n = (size_t)(strchr(w, '\n') - w);
        *ok = ae && (size_t)(ae - a) >= n && memcmp(a, w, n) == 0 &&
              (w != want || (size_t)(ae - a) == n);
        a = ae ? ae + 1 : a;
    }
    *ok = *ok && *a == '\0';
    free(want);
    return HS_OK;
}

static int json_str_is(const cJSON *o, const char *name, const char *want)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

    return cJSON_IsString(v) && strcmp(v->valuestring, want) == 0;
}

/* 1 when the sweep.json point p is plan point i of g. */
static int json_point_is(const sweep_grid_t *g, const sweep_plan_t *plan, const cJSON *p,
                         size_t i)
{
    const sweep_point_t *pt = &plan->pts[i];
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(p, "index");
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(p, "set");
    char buf[64];

    snprintf(buf, sizeof(buf), "%016" PRIx64, pt->key);
    if (!cJSON_IsNumber(idx) || idx->valuedouble != (double)i || !json_str_is(p, "key", buf) ||
        !json_str_is(p, "trace", g->traces[pt->trace].label) ||
        !json_str_is(p, "profile", g->profiles[pt->profile]))
        return 0;
    sweep_hint_text(&g->hints[pt->hint], buf, sizeof(buf));
    if (!json_str_is(p, "hint", buf) || cJSON_GetArraySize(set) != (int)g->naxes)
        return 0;
    for (size_t a = 0; a < g->naxes; a++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(set, g->axes[a].key);
        if (!cJSON_IsNumber(v) ||
            v->valuedouble != strtod(sweep_axis_value(&g->axes[a], pt->ax[a]), NULL))
            return 0;
    }
    return 1;
}

/* *ok = 1 when the sweep.json text is this plan's: objective, engine, mode and every point. */
static hs_status_t json_belongs(const sweep_grid_t *g, const sweep_plan_t *plan,
                                const char *text, int *ok)
{
    cJSON *root = cJSON_Parse(text);
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(root, "points"), *p;
    size_t i = 0;

    *ok = root && json_str_is(root, "format", "hintsim-sweep") &&
          json_str_is(root, "objective", g->objective) &&
          json_str_is(root, "engine", g->engine) && json_str_is(root, "mode", g->mode) &&
          cJSON_IsArray(pts) && (size_t)cJSON_GetArraySize(pts) == plan->n;
    if (*ok) {
        cJSON_ArrayForEach(p, pts) {
            if (!(*ok = json_point_is(g, plan, p, i++)))
                break;
        }
    }
    cJSON_Delete(root);
    return HS_OK;
}

typedef hs_status_t (*belongs_fn)(const sweep_grid_t *g, const sweep_plan_t *plan,
                                  const char *text, int *ok);

/* Move DIR/name aside, check it there, then put it back (it is this plan's: maybe a merge
 * another process just committed) or delete it. *removed += 1 when deleted. */
static hs_status_t drop_one(const sweep_grid_t *g, const sweep_plan_t *plan, const char *dir,
                            const char *name, belongs_fn belongs, int *removed)
{
    char path[4096], owner[512], aside[4700], *text = NULL;
    int ok = 0;
    hs_status_t st;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    sweep_file_owner(owner, sizeof(owner)); /* unique across the hosts sharing DIR */
    snprintf(aside, sizeof(aside), "%s.stale.%s", path, owner);
    if (rename(path, aside) != 0) {
        if (errno == ENOENT)
            return HS_OK;
        hs_log_error("%s: cannot move it aside to check it: %s", path, strerror(errno));
        return HS_ERR_IO;
    }
    st = hs_read_file(aside, &text, NULL);
    if (st != HS_OK)
        goto put_back;
    st = belongs(g, plan, text, &ok);
    free(text);
    if (st != HS_OK || ok)
        goto put_back;
    if (unlink(aside) != 0) {
        hs_log_error("%s: cannot remove it: %s", aside, strerror(errno));
        return HS_ERR_IO;
    }
    hs_log_info("%s: removed: it was not this grid's merged output (another grid's or "
                "damaged)", path);
    (*removed)++;
    return HS_OK;

put_back: /* this plan's, or it could not be checked: undo the move aside */
    if (rename(aside, path) == 0)
        return st;
    hs_log_error("%s: cannot put it back from %s: %s", path, aside, strerror(errno));
    return HS_ERR_IO;
}

/* Whether name is one of the files sweep_plot_all writes (heatmap.{dat,gp,png} and
 * best_hint_KEY.{dat,gp,png}) and, with keep, not one it writes for keep. */
static int is_stale_plot(const char *name, const sweep_grid_t *keep)
{
    static const char *const ext[] = {".dat", ".gp", ".png"};
    size_t n = strlen(name);

    for (size_t e = 0; e < 3; e++) {
        size_t k = strlen(ext[e]);
        if (n <= k || strcmp(name + n - k, ext[e]) != 0)
            continue;
        if (n == k + 7 && strncmp(name, "heatmap", 7) == 0)
            return !keep || keep->naxes < 2;
        if (n <= k + 10 || strncmp(name, "best_hint_", 10) != 0)
            return 0;
        for (size_t a = 0; keep && a < keep->naxes; a++)
            if (strlen(keep->axes[a].key) == n - k - 10 &&
                strncmp(name + 10, keep->axes[a].key, n - k - 10) == 0)
                return 0;
        return 1;
    }
    return 0;
}

/* Remove the plots in DIR/plots that are stale for keep (all with NULL), and the folder
 * when nothing else is in it. */
static hs_status_t drop_plots(const char *dir, const sweep_grid_t *keep)
{
    char pdir[4096], path[4400];
    DIR *d;
    struct dirent *e;
    hs_status_t st = HS_OK;
    int n = 0;

    snprintf(pdir, sizeof(pdir), "%s/plots", dir);
    if (!(d = opendir(pdir)))
        return HS_OK; /* none */
    while ((e = readdir(d)) != NULL) {
        if (!is_stale_plot(e->d_name, keep))
            continue;
        snprintf(path, sizeof(path), "%s/%s", pdir, e->d_name);
        if (unlink(path) != 0 && errno != ENOENT) {
            hs_log_error("%s: cannot remove it: %s", path, strerror(errno));
            st = HS_ERR_IO;
            break;
        }
        n++;
    }
    closedir(d);
    if (st == HS_OK && n) {
        hs_log_info("%s: removed %d plot file%s of an earlier merged output", pdir, n,
                    n == 1 ? "" : "s");
        if (rmdir(pdir) != 0 && errno != ENOTEMPTY && errno != EEXIST)
            hs_log_info("%s: left in place: %s", pdir, strerror(errno));
    }
    return st;
}

hs_status_t sweep_out_drop_views(const char *dir, const sweep_grid_t *keep)
{
    char path[4400];
    hs_status_t st = drop_plots(dir, keep);

    if (st != HS_OK)
        return st;
    snprintf(path, sizeof(path), "%s/report.html", dir);
    if (unlink(path) == 0) {
        if (!keep) /* else the merge writes its own in its place */
            hs_log_info("%s: removed: the report of an earlier merged output", path);
        return HS_OK;
    }
    if (errno == ENOENT)
        return HS_OK;
    hs_log_error("%s: cannot remove it: %s", path, strerror(errno));
    return HS_ERR_IO;
}

hs_status_t sweep_out_drop_stale(const sweep_grid_t *g, const sweep_plan_t *plan,
                                 const char *dir, int *removed)
{
    hs_status_t st;

    *removed = 0;
    if ((st = drop_one(g, plan, dir, "sweep.csv", csv_belongs, removed)) != HS_OK)
        return st;
    if ((st = drop_one(g, plan, dir, "sweep.json", json_belongs, removed)) != HS_OK)
        return st;
    return *removed ? sweep_out_drop_views(dir, NULL) : HS_OK;
}
