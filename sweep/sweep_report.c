/* sweep_report.c - DIR/report.html of a sweep; see sweep_report.h. */
#include "sweep/sweep_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "model/predict/objective.h"
#include "model/profile/profile.h"
#include "model/recommend/recommend.h"
#include "plots/report_html.h"
#include "sweep/sweep_out.h"

/* What the page is drawn from, borrowed. */
typedef struct {
    const sweep_grid_t *g;
    const sweep_plan_t *plan;
    const sweep_result_t *res;
    const char *dir;
    const char *unit; /* the objective's: "us" or "Gb/s" */
    int lower_better;
} srep_t;

/* The best point of each cell (trace, profile, axis values; hints are the innermost
 * dimension of the plan), into best[] (plan->n / nhints of them); returns how many. */
static size_t cell_bests(const srep_t *s, size_t *best)
{
    size_t ncells = s->g->nhints ? s->plan->n / s->g->nhints : 0;

    for (size_t c = 0; c < ncells; c++)
        best[c] = sweep_out_best_hint(s->g, s->plan, s->res, c * s->g->nhints);
    return ncells;
}

/* Sort best[] (point indices) best first, ties in plan order: insertion sort of indices,
 * small grids' cells; for large ones only the first SWEEP_REPORT_TOP are placed. */
static void rank_top(const srep_t *s, size_t *best, size_t n)
{
    size_t top = n < SWEEP_REPORT_TOP ? n : SWEEP_REPORT_TOP;

    for (size_t i = 0; i < top; i++) {
        size_t k = i;
        for (size_t j = i + 1; j < n; j++) {
            double vj = s->res[best[j]].value, vk = s->res[best[k]].value;
            if (s->lower_better ? vj < vk : vj > vk)
                k = j;
        }
        size_t t = best[i];
        best[i] = best[k];
        best[k] = t;
    }
}

static void cell(FILE *fp, const char *cls, const char *text)
{
    fprintf(fp, "<td%s>", cls);
    rep_html_esc(fp, text);
    fputs("</td>", fp);
}

/* How much worse v is than the best value b, in %. */
static double worse_pct(const srep_t *s, double v, double b)
{
    if (b == 0)
        return 0;
    return (s->lower_better ? v / b - 1 : 1 - v / b) * 100;
}

static void write_best_row(FILE *fp, const srep_t *s, size_t rank, size_t pi, double bestv)
{
    const sweep_point_t *pt = &s->plan->pts[pi];
    const sweep_result_t *r = &s->res[pi];
    char buf[96], hint[48];

    fprintf(fp, "<tr%s><td>%zu</td>", rank == 1 ? " class=\"best\"" : "", rank);
    cell(fp, " class=\"l\"", s->g->traces[pt->trace].label);
    cell(fp, " class=\"l\"", s->g->profiles[pt->profile]);
    for (size_t a = 0; a < s->g->naxes; a++)
        cell(fp, "", sweep_axis_value(&s->g->axes[a], pt->ax[a]));
    rec_label_hint(r->hint_bytes, hint, sizeof(hint));
    snprintf(buf, sizeof(buf), "%s%s", hint, s->g->hints[pt->hint].is_auto ? " (auto)" : "");
    cell(fp, "", buf);
    cell(fp, "", rep_fmt_quantity(r->value, s->unit, buf, sizeof(buf)));
    snprintf(buf, sizeof(buf), "%.2f%%", worse_pct(s, r->value, bestv));
    cell(fp, "", buf);
    fputs("</tr>\n", fp);
}

static hs_status_t write_best(FILE *fp, const srep_t *s)
{
    size_t *best = malloc((s->plan->n + 1) * sizeof(*best));
    size_t n;

    if (!best)
        return HS_ERR_NOMEM;
    n = cell_bests(s, best);
    rank_top(s, best, n);
    fprintf(fp, "<h2>Best points</h2>\n<p class=\"src\">The %zu best of %zu cell%s (a trace, a "
            "profile and one value of each varied parameter), each at its best hint; %s is "
            "%s better. Every figure is %s.</p>\n<table>\n<tr><th>#</th><th class=\"l\">trace"
            "</th><th class=\"l\">profile</th>", n < SWEEP_REPORT_TOP ? n : SWEEP_REPORT_TOP, n,
            n == 1 ? "" : "s", s->g->objective, s->lower_better ? "lower" : "higher",
            strcmp(s->g->engine, "sim") == 0 ? "simulated" : "modelled");
    for (size_t a = 0; a < s->g->naxes; a++) {
        fputs("<th>", fp);
        rep_html_esc(fp, s->g->axes[a].key);
        fputs("</th>", fp);
    }
    fprintf(fp, "<th>best hint</th><th>%s</th><th>worse than #1</th></tr>\n", s->g->objective);
    for (size_t i = 0; i < n && i < SWEEP_REPORT_TOP; i++)
        write_best_row(fp, s, i + 1, best[i], s->res[best[0]].value);
    fputs("</table>\n", fp);
    free(best);
    return HS_OK;
}

static void grid_row(FILE *fp, const char *key, const char *val)
{
    fprintf(fp, "<tr><th class=\"l\">%s</th><td class=\"l\">", key);
    rep_html_esc(fp, val);
    fputs("</td></tr>\n", fp);
}

/* "a, b, c" of n strings got by item(i), into buf (truncated with "..."). */
static const char *joined(char *buf, size_t len, size_t n, const char *(*item)(const void *,
                          size_t, char *, size_t), const void *ctx)
{
    size_t off = 0;
    char one[256];

    buf[0] = '\0';
    for (size_t i = 0; i < n && off + 4 < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", item(ctx, i, one,
                                                                              sizeof(one)));
        off += w > 0 ? (size_t)w : 0;
    }
    if (off + 4 >= len)
        snprintf(buf + len - 4, 4, "...");
    return buf;
}

static const char *trace_item(const void *ctx, size_t i, char *b, size_t n)
{
    (void)b;
    (void)n;
    return ((const sweep_grid_t *)ctx)->traces[i].label;
}

static const char *profile_item(const void *ctx, size_t i, char *b, size_t n)
{
    (void)b;
    (void)n;
    return ((const sweep_grid_t *)ctx)->profiles[i];
}

static const char *hint_item(const void *ctx, size_t i, char *b, size_t n)
{
    sweep_hint_text(&((const sweep_grid_t *)ctx)->hints[i], b, n);
    return b;
}

static const char *fixed_item(const void *ctx, size_t i, char *b, size_t n)
{
    (void)b;
    (void)n;
    return ((const sweep_grid_t *)ctx)->fixed[i];
}

static void write_grid(FILE *fp, const srep_t *s)
{
    const sweep_grid_t *g = s->g;
    char buf[1024], vals[768];

    fputs("<h2>The grid</h2>\n<table>\n", fp);
    grid_row(fp, "grid", g->path);
    snprintf(buf, sizeof(buf), "%s (%s better), engine %s, mode %s", g->objective,
             s->lower_better ? "lower" : "higher", g->engine, g->mode);
    grid_row(fp, "objective", buf);
    grid_row(fp, "traces", joined(buf, sizeof(buf), g->ntraces, trace_item, g));
    grid_row(fp, "profiles", joined(buf, sizeof(buf), g->nprofiles, profile_item, g));
    if (g->nfixed)
        grid_row(fp, "fixed", joined(buf, sizeof(buf), g->nfixed, fixed_item, g));
    for (size_t a = 0; a < g->naxes; a++) {
        size_t off = 0;
        vals[0] = '\0';
        for (size_t v = 0; v < g->axes[a].n && off + 8 < sizeof(vals); v++)
            off += (size_t)snprintf(vals + off, sizeof(vals) - off, "%s%s", v ? ", " : "",
                                    sweep_axis_value(&g->axes[a], v));
        snprintf(buf, sizeof(buf), "varied: %s", g->axes[a].key);
        grid_row(fp, buf, vals);
    }
    grid_row(fp, "hints", joined(buf, sizeof(buf), g->nhints, hint_item, g));
    snprintf(buf, sizeof(buf), "%zu", s->plan->n);
    grid_row(fp, "points", buf);
    fputs("</table>\n", fp);
}

/* The caveat of each profile of defaults only (model/recommend/recommend.h), above everything. */
static void write_cautions(FILE *fp, const srep_t *s)
{
    int open = 0;

    for (size_t i = 0; i < s->g->nprofiles; i++) {
        profile_t *p = NULL;
        hs_status_t st = profile_load(s->g->profiles[i], &p); /* loaded when the grid ran */
        const char *caveat = st == HS_OK ? rec_profile_caveat(p) : NULL;
        if (caveat) {
            if (!open++)
                fputs("<div class=\"warn\" id=\"cautions\">\n", fp);
            fputs("<p><b>Profile ", fp);
            rep_html_esc(fp, s->g->profiles[i]);
            fputs(":</b> ", fp);
            rep_html_esc(fp, caveat);
            fputs(".</p>\n", fp);
        }
        profile_free(p);
    }
    if (open)
        fputs("</div>\n", fp);
}

static hs_status_t write_figure(FILE *fp, const srep_t *s, const char *name,
                                const char *caption)
{
    char path[4096 + 256];

    snprintf(path, sizeof(path), "%s/plots/%s.png", s->dir, name);
    fprintf(fp, "<figure id=\"%s\">\n", name);
    hs_status_t st = rep_html_png(fp, path, caption);
    if (st != HS_OK)
        return st;
    fputs("<figcaption>", fp);
    rep_html_esc(fp, caption);
    fprintf(fp, "<br><span class=\"src\"><a href=\"plots/%s.dat\">data</a> &middot; <a "
            "href=\"plots/%s.gp\">gnuplot script</a></span></figcaption>\n</figure>\n", name,
            name);
    return HS_OK;
}

static hs_status_t write_figures(FILE *fp, const srep_t *s, int plots)
{
    const sweep_grid_t *g = s->g;
    char name[320], cap[1024];
    hs_status_t st = HS_OK;

    if (g->naxes == 0)
        return HS_OK;
    fputs("<h2>Figures</h2>\n", fp);
    if (!plots) {
        fputs("<p>No figure was drawn: gnuplot was not found (install the Debian package "
              "gnuplot-nox and merge again); the data and scripts are in plots/.</p>\n", fp);
        return HS_OK;
    }
    if (g->naxes >= 2) {
        snprintf(cap, sizeof(cap), "Heatmap of %s over %s and %s, each cell at its best hint, "
                 "every other dimension at its first value. The colour is how much worse "
                 "than the best cell the cell is, in %% (0 = the best; the scale spans at "
                 "least 0-10%%, so a 2%% spread stays pale, and at most 100%%: cells worse "
                 "still take the darkest colour); each cell is labelled with its own %s.", g->objective, g->axes[0].key, g->axes[1].key, g->objective);
        st = write_figure(fp, s, "heatmap", cap);
    }
    for (size_t a = 0; a < g->naxes && st == HS_OK; a++) {
        snprintf(name, sizeof(name), "best_hint_%s", g->axes[a].key);
        snprintf(cap, sizeof(cap), "The best hint (by %s) against %s, every other dimension "
                 "at its first value.", g->objective, g->axes[a].key);
        st = write_figure(fp, s, name, cap);
    }
    return st;
}

hs_status_t sweep_report_write(const sweep_grid_t *g, const sweep_plan_t *plan,
                               const sweep_result_t *res, const char *dir, int plots)
{
    char path[4096];
    obj_t obj = OBJ_P99;
    hs_afile_t *af = NULL;
    srep_t s = {g, plan, res, dir, "us", sweep_objective_lower_better(g->objective)};
    hs_status_t st;

    if (obj_parse(g->objective, &obj) == HS_OK)
        s.unit = obj_unit(obj);
    snprintf(path, sizeof(path), "%s/report.html", dir);
    if ((st = hs_afile_open(path, &af)) != HS_OK)
        return st;
    FILE *fp = hs_afile_stream(af);
    rep_html_head(fp, "hintsim sweep report");
    write_cautions(fp, &s);
    st = write_best(fp, &s);
    if (st != HS_OK)
        goto abort_file;
    write_grid(fp, &s);
    st = write_figures(fp, &s, plots);
    if (st != HS_OK)
        goto abort_file;
    fputs("</body>\n</html>\n", fp);
    return hs_afile_commit(af);

abort_file:
    hs_afile_abort(af);
    return st;
}
