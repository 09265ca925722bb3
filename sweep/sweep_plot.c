/* sweep_plot.c - heatmap and best-hint plots of a sweep (see sweep_plot.h).
 *
 * Axis values can be spaced unevenly (16, 32, 64, 512), so the plots place them at their
 * index and label the tics with the values. gnuplot writes to a temporary name that is
 * renamed once it exits 0, so an image is never half-written.
 */
#include "sweep/sweep_plot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "sweep/sweep_out.h"
#include "sweep/sweep_report.h"

/* Point index with the given values on axes a and b, every other dimension at 0, and the
 * best hint. */
static size_t slice_point(const sweep_grid_t *g, const sweep_plan_t *plan,
                          const sweep_result_t *res, size_t a, size_t va, size_t b, size_t vb)
{
    size_t idx = 0;

    for (size_t k = 0; k < g->naxes; k++) {
        size_t v = k == a ? va : (k == b ? vb : 0);
        idx = idx * g->axes[k].n + v;
    }
    return sweep_out_best_hint(g, plan, res, idx * g->nhints);
}

static void gp_tics(FILE *fp, const char *which, const sweep_axis_t *ax)
{
    fprintf(fp, "set %stics (", which);
    for (size_t v = 0; v < ax->n; v++)
        fprintf(fp, "%s\"%s\" %zu", v ? ", " : "", sweep_axis_value(ax, v), v);
    fprintf(fp, ")\n");
}

/* Run gnuplot on script (in dir); rename dir/tmp to final on success. */
static hs_status_t gp_run(const char *dir, const char *script, const char *tmp,
                          const char *final)
{
    char tmp_path[4096 + 384];
    pid_t pid;
    int ws;

    snprintf(tmp_path, sizeof(tmp_path), "%s/%s", dir, tmp);
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        hs_log_error("sweep: fork for gnuplot: %s", strerror(errno));
        return HS_ERR_IO;
    }
    if (pid == 0) {
        if (chdir(dir) == 0)
            execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(errno == ENOENT ? 127 : 126);
    }
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(ws) && WEXITSTATUS(ws) == 127) {
        hs_log_error("gnuplot not found: install it (apt-get install gnuplot-nox) to draw "
                     "the sweep's plots; their data and scripts are in %s", dir);
        return HS_ERR_ENV;
    }
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || rename(tmp_path, final) != 0) {
        hs_log_error("%s/%s: gnuplot failed; the image was not written", dir, script);
        unlink(tmp_path);
        return HS_ERR_IO;
    }
    return HS_OK;
}

/* dir/name for writing, as an hs_afile: it appears whole when committed, or not at all. */
static FILE *open_in(const char *dir, const char *name, hs_afile_t **af)
{
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/%s", dir, name);

    *af = NULL;
    if (n < 0 || (size_t)n >= sizeof(path)) {
        hs_log_error("%s/%s: path too long", dir, name);
        return NULL;
    }
    return hs_afile_open(path, af) == HS_OK ? hs_afile_stream(*af) : NULL;
}

static hs_status_t plot_heatmap(const sweep_grid_t *g, const sweep_plan_t *plan,
                                const sweep_result_t *res, const char *pdir)
{
    hs_afile_t *af;
    FILE *dat = open_in(pdir, "heatmap.dat", &af), *gp = NULL;
    char tmp[64], final[4096 + 64];
    hs_status_t st;

    if (!dat)
        return HS_ERR_IO;
    fprintf(dat, "# x_index y_index %s (best over hints)  x=%s y=%s\n", g->objective,
            g->axes[0].key, g->axes[1].key);
    for (size_t x = 0; x < g->axes[0].n; x++) {
        for (size_t y = 0; y < g->axes[1].n; y++)
            fprintf(dat, "%zu %zu %.9g\n", x, y, res[slice_point(g, plan, res, 0, x, 1, y)].value);
        fprintf(dat, "\n");
    }
    if ((st = hs_afile_commit(af)) != HS_OK)
        return st;
    if (!(gp = open_in(pdir, "heatmap.gp", &af)))
        return HS_ERR_IO;
    snprintf(tmp, sizeof(tmp), "heatmap.png.tmp.%ld", (long)getpid());
    /* Colour: how much worse than the best cell, in %, on a scale of 0 to the spread, at
     * least 10% (auto-ranged absolute values made a 2% spread fill the whole palette, with
     * no unit) and at most 100% (one cell 1000x worse made every other cell the palest
     * shade; cells past 100% take the darkest). Each cell's own value, in a humanised unit,
     * on an opaque white box that reads on dark cells too. Plain text: a key's "_n" is not a
     * subscript. */
    fprintf(gp, "# hintsim sweep: %s over %s and %s (best over hints; other dimensions at "
                "their first value)\nset terminal pngcairo size 900,700 noenhanced\n"
                "set output '%s'\nset title '%s (%s) by %s and %s'\nset xlabel '%s'\n"
                "set ylabel '%s'\nset cblabel '%% worse than the best cell (100: 100%% or more)'\n"
                "set palette defined (0 '#f7fbff', 0.5 '#6baed6', 1 '#08306b')\n"
                "set style textbox opaque noborder\nset view map\nunset key\n"
                "stats 'heatmap.dat' using 3 nooutput\nhigher_better = %d\n"
                "best = higher_better ? STATS_max : STATS_min\n"
                "worse(v) = best == 0 ? 0 : (higher_better ? 1 - v / best : v / best - 1) * 100\n"
                "spread = worse(higher_better ? STATS_min : STATS_max)\n"
                "set cbrange [0:(spread < 10 ? 10 : (spread > 100 ? 100 : spread))]\n",
            g->objective, g->axes[0].key, g->axes[1].key, tmp, g->objective, g->engine,
            g->axes[0].key, g->axes[1].key, g->axes[0].key, g->axes[1].key,
            strcmp(g->objective, "throughput") == 0);
    if (strcmp(g->objective, "throughput") == 0)
        fprintf(gp, "label(v) = sprintf('%%.4g Gb/s', v)\n");
    else
        fprintf(gp, "label(v) = abs(v) >= 1e6 ? sprintf('%%.4g s', v / 1e6) : abs(v) >= 1e3 ? "
                    "sprintf('%%.4g ms', v / 1e3) : sprintf('%%.4g us', v)\n");
    gp_tics(gp, "x", &g->axes[0]);
    gp_tics(gp, "y", &g->axes[1]);
    fprintf(gp, "plot 'heatmap.dat' using 1:2:(worse($3)) with image, \\\n"
                "     '' using 1:2:(label($3)) with labels boxed\n");
    if ((st = hs_afile_commit(af)) != HS_OK)
        return st;
    snprintf(final, sizeof(final), "%s/heatmap.png", pdir);
    return gp_run(pdir, "heatmap.gp", tmp, final);
}

static hs_status_t plot_best(const sweep_grid_t *g, const sweep_plan_t *plan,
                             const sweep_result_t *res, const char *pdir, size_t a)
{
    char name[256], tmp[320], final[4096 + 512];
    const char *key = g->axes[a].key;
    hs_afile_t *af;
    FILE *dat, *gp;
    hs_status_t st;

    snprintf(name, sizeof(name), "best_hint_%s.dat", key);
    if (!(dat = open_in(pdir, name, &af)))
        return HS_ERR_IO;
    fprintf(dat, "# index %s best_hint_bytes %s\n", key, g->objective);
    for (size_t v = 0; v < g->axes[a].n; v++) {
        const sweep_result_t *r = &res[slice_point(g, plan, res, a, v, a, v)];
        fprintf(dat, "%zu %s %llu %.9g\n", v, sweep_axis_value(&g->axes[a], v),
                (unsigned long long)r->hint_bytes, r->value);
    }
    if ((st = hs_afile_commit(af)) != HS_OK)
        return st;
    snprintf(name, sizeof(name), "best_hint_%s.gp", key);
    if (!(gp = open_in(pdir, name, &af)))
        return HS_ERR_IO;
    snprintf(tmp, sizeof(tmp), "best_hint_%s.png.tmp.%ld", key, (long)getpid());
    fprintf(gp, "# hintsim sweep: best hint (by %s) against %s, other dimensions at their "
                "first value\nset terminal pngcairo size 900,600 noenhanced\nset output '%s'\n"
                "set title 'best hint by %s (%s) against %s'\nset xlabel '%s'\n"
                "set ylabel 'best hint (bytes)'\nset grid\nunset key\nset offsets 0.3,0.3,0,0\n"
                "set yrange [0:*]\n",
            g->objective, key, tmp, g->objective, g->engine, key, key);
    gp_tics(gp, "x", &g->axes[a]);
    fprintf(gp, "plot 'best_hint_%s.dat' using 1:3 with linespoints pt 7 ps 1.5, \\\n"
                "     '' using 1:3:(sprintf('%%d', $3)) with labels offset 0,1\n", key);
    if ((st = hs_afile_commit(af)) != HS_OK)
        return st;
    snprintf(name, sizeof(name), "best_hint_%s.gp", key);
    snprintf(final, sizeof(final), "%s/best_hint_%s.png", pdir, key);
    return gp_run(pdir, name, tmp, final);
}

/* The images, into DIR/plots. */
static hs_status_t draw_all(const sweep_grid_t *g, const sweep_plan_t *plan,
                            const sweep_result_t *res, const char *pdir, int *nplots)
{
    hs_status_t st;

    if (g->naxes >= 2) {
        if ((st = plot_heatmap(g, plan, res, pdir)) != HS_OK)
            return st;
        (*nplots)++;
    }
    for (size_t a = 0; a < g->naxes; a++) {
        if ((st = plot_best(g, plan, res, pdir, a)) != HS_OK)
            return st;
        (*nplots)++;
    }
    return HS_OK;
}

hs_status_t sweep_plot_all(const sweep_grid_t *g, const sweep_plan_t *plan,
                           const sweep_result_t *res, const char *dir, int *nplots)
{
    char pdir[4096];
    hs_status_t st = HS_OK, rep_st;

    *nplots = 0;
    if (g->naxes > 0) {
        snprintf(pdir, sizeof(pdir), "%s/plots", dir);
        st = hs_mkdir_p(pdir); /* never HS_ERR_ENV: that is a missing gnuplot's */
        if (st != HS_OK)
            return st;
        st = draw_all(g, plan, res, pdir, nplots);
    }
    if (st != HS_OK && st != HS_ERR_ENV) /* a failed gnuplot: no page with holes */
        return st;
    /* without gnuplot the page has the tables and says why there is no figure */
    rep_st = sweep_report_write(g, plan, res, dir, st == HS_OK);
    return rep_st != HS_OK ? rep_st : st;
}
