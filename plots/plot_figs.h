/* plot_figs.h - the figures of a recommend/validate report, each as PNG + SVG.
 *
 * Each plot_* function writes DIR/NAME.dat (the numbers), DIR/NAME.gp (the program) and
 * renders DIR/NAME.png and DIR/NAME.svg with gnuplot. Every figure's title says what it
 * shows; its subtitle says whether the numbers are measured, simulated or modelled and
 * which profile (name, hash) and trace (path, records) they came from. A figure whose data
 * the input lacks (no per-message latencies, no measured figures) returns
 * HS_ERR_UNSUPPORTED without logging and without writing anything.
 */
#ifndef HS_PLOT_FIGS_H
#define HS_PLOT_FIGS_H

#include <stddef.h>

#include "plots/plot_input.h"

typedef struct {
    char name[32];      /* file base name: DIR/NAME.png, DIR/NAME.svg */
    char title[160];
    char caption[640];  /* what is shown and where the numbers come from */
    plot_source_t source;
} plot_fig_t;

#define PLOT_MAX_FIGS 12

typedef struct {
    plot_fig_t figs[PLOT_MAX_FIGS];
    size_t n;
    char skipped[PLOT_MAX_FIGS][832]; /* "NAME: reason" for each figure not drawn */
    size_t nskipped;
} plot_figset_t;

/* The trace's size histogram (power-of-two classes) with the recommended hint marked. */
hs_status_t plot_size_hist(const char *dir, const plot_input_t *in, plot_fig_t *fig);
/* p50 and p99 of every candidate hint. */
hs_status_t plot_pct_vs_hint(const char *dir, const plot_input_t *in, plot_fig_t *fig);
/* Throughput of every candidate hint. */
hs_status_t plot_throughput(const char *dir, const plot_input_t *in, plot_fig_t *fig);
/* Latency CDF of the recommended hint, the runner-up and hint 0 (needs pred[].lat_us). */
hs_status_t plot_latency_cdf(const char *dir, const plot_input_t *in, plot_fig_t *fig);
/* The same replays' tail: 1 - CDF on log axes, p99 and p99.9 marked. */
hs_status_t plot_latency_ccdf(const char *dir, const plot_input_t *in, plot_fig_t *fig);
/* Latency of the recommended hint's messages against their post time, by path (size <= hint:
 * LL), downsampled to the slowest message of each path per bucket (at most 4000 buckets). */
hs_status_t plot_timeline(const char *dir, const plot_input_t *in, plot_fig_t *fig);
/* The engine's cost terms per message of every candidate, stacked (skipped when none). */
hs_status_t plot_cost_terms(const char *dir, const plot_input_t *in, plot_fig_t *fig);
/* Predicted against measured p50/p99 per hint (needs in->meas). */
hs_status_t plot_pred_vs_meas(const char *dir, const plot_input_t *in, plot_fig_t *fig);

/* Whether a file name is one of a figure's (its .png, .svg, .dat, .gp and gnuplot .log). */
int plot_fig_owns(const char *name);
/* Whether a file name is one recommend's report writes (report.json, report.md,
 * report.html and the figures' files), for hs_stage_commit. */
int plot_report_owns(const char *name);

/* Per-size latency of one isolated message on the LL path and on the BW path, computed by
 * replaying single-message-size traces through in->cost_engine; marks the crossover. */
hs_status_t plot_cost_curves(const char *dir, const plot_input_t *in, plot_fig_t *fig);

/* The isolated-message latency (median of a few well-spaced messages) of size_bytes on the
 * LL path (ll = 1: hint = size) or the BW path (ll = 0: hint 0), from engine eng. */
hs_status_t plot_cost_at(const pred_engine_ops_t *eng, const profile_t *p, uint64_t size_bytes,
                         int ll, double *lat_us_out);
/* The first size in sizes[] (ascending) from which the BW path is no slower than the LL
 * path, having been slower before it; 0 when the curves do not cross that way. */
uint64_t plot_cost_crossover(const uint64_t *sizes, const double *ll_us, const double *bw_us,
                             size_t n);

/* Every figure the input allows, into dir (created). Figures without data are listed in
 * out->skipped with the reason. Fails on the first rendering error; HS_ERR_ENV, without
 * logging and before writing anything, when gnuplot is missing. */
hs_status_t plot_report_figures(const char *dir, const plot_input_t *in, plot_figset_t *out);

/* Internal to plots/: the subtitle line of a figure (source, profile, trace) into buf. */
void plot_subtitle(const plot_input_t *in, plot_source_t src, char *buf, size_t len);
/* Internal to plots/: render fig from DIR/NAME.dat with gp/SCRIPT.gp and extra prelude. */
hs_status_t plot_fig_render(const char *dir, const plot_input_t *in, const plot_fig_t *fig,
                            const char *script, const char *extra);

#endif
