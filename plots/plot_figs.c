/* plot_figs.c - the report's figures from a plot_input_t; see plot_figs.h.
 *
 * Each figure writes its numbers as a whitespace-separated .dat file (atomically) and a
 * gnuplot program whose prelude carries the titles; plot_gnuplot_render draws it.
 */
#include "plots/plot_figs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_mem.h"
#include "common/hs_util.h"
#include "plots/plot_gnuplot.h"

void plot_subtitle(const plot_input_t *in, plot_source_t src, char *buf, size_t len)
{
    snprintf(buf, len, "%s | profile %s (hash %016llx) | trace %s (%zu messages)",
             plot_source_str(src), in->profile->name,
             (unsigned long long)in->profile_hash,
             in->trace_path ? in->trace_path : "(in memory)", in->trace->n);
}

static void hint_label(uint64_t hint, char *buf, size_t len)
{
    if (hint == 0) {
        snprintf(buf, len, "0 (none)");
        return;
    }
    plot_size_label(hint, buf, len);
}

static void fig_init(plot_fig_t *fig, const char *name, plot_source_t src, const char *title)
{
    memset(fig, 0, sizeof(*fig));
    snprintf(fig->name, sizeof(fig->name), "%s", name);
    snprintf(fig->title, sizeof(fig->title), "%s", title);
    fig->source = src;
}

static hs_status_t dat_open(const char *dir, const char *name, hs_afile_t **af)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s.dat", dir, name);
    return hs_afile_open(path, af);
}

/* Build the prelude (file names, titles, extra variables) and render. */
hs_status_t plot_fig_render(const char *dir, const plot_input_t *in, const plot_fig_t *fig,
                              const char *script, const char *extra)
{
    char buf[512], *prelude = NULL;
    size_t plen = 0;
    FILE *fp = open_memstream(&prelude, &plen);
    hs_status_t st;

    if (!fp)
        return HS_ERR_NOMEM;
    snprintf(buf, sizeof(buf), "%s.dat", fig->name);
    plot_gp_set_str(fp, "data", buf);
    /* NAME.png when a user reruns `gnuplot NAME.gp` to restyle; hintsim's own run sets
     * hs_out_suffix ".tmp" on gnuplot's command line and renames (plot_gnuplot_render) */
    fputs("hs_sfx = exists(\"hs_out_suffix\") ? hs_out_suffix : \"\"\n", fp);
    snprintf(buf, sizeof(buf), "%s.png", fig->name);
    plot_gp_set_str(fp, "png_out", buf);
    fputs("png_out = png_out . hs_sfx\n", fp);
    snprintf(buf, sizeof(buf), "%s.svg", fig->name);
    plot_gp_set_str(fp, "svg_out", buf);
    fputs("svg_out = svg_out . hs_sfx\n", fp);
    plot_gp_set_str(fp, "title_text", fig->title);
    plot_subtitle(in, fig->source, buf, sizeof(buf));
    plot_gp_set_str(fp, "subtitle", buf);
    fputs(extra ? extra : "", fp);
    fclose(fp);
    st = plot_gnuplot_render(dir, fig->name, script, prelude);
    free(prelude);
    return st;
}

static unsigned size_class(uint64_t size_bytes)
{
    unsigned k = 0;

    while (k < 63 && (1ULL << k) < size_bytes)
        k++;
    return k;
}

hs_status_t plot_size_hist(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    uint64_t counts[64] = {0}, hint = in->rec_idx >= 0 ? in->pred[in->rec_idx].hint_bytes : 0;
    unsigned lo = 63, hi = 0;
    char lab[32], extra[256];
    hs_afile_t *af;
    hs_status_t st;

    fig_init(fig, "size_hist", plot_input_trace_source(in), "Message sizes of the trace");
    for (size_t i = 0; i < in->trace->n; i++) {
        unsigned k = size_class(in->trace->recs[i].size_bytes);
        counts[k]++;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    if (hint > 0) {
        unsigned kh = size_class(hint);
        lo = kh < lo ? kh : lo;
        hi = kh + 1 > hi ? (kh + 1 < 63 ? kh + 1 : 63) : hi;
    }
    if (lo > hi)
        lo = hi = 0;
    st = dat_open(dir, fig->name, &af);
    if (st != HS_OK)
        return st;
    for (unsigned k = lo; k <= hi; k++) {
        hs_format_size(1ULL << k, lab, sizeof(lab));
        fprintf(hs_afile_stream(af), "%u \"%s\" %llu\n", k, lab, (unsigned long long)counts[k]);
    }
    st = hs_afile_commit(af);
    if (st != HS_OK)
        return st;
    hint_label(hint, lab, sizeof(lab));
    snprintf(extra, sizeof(extra), "hint_x = %.3f\nhint_label = 'recommended hint %s'\n",
             hint > 0 ? log2((double)hint) + 0.5 : -1.0, lab);
    snprintf(fig->caption, sizeof(fig->caption),
             "How many messages of each power-of-two size class the trace holds. The dashed "
             "line is the recommended hint (%s): messages at or below it take the "
             "low-latency path, larger ones the bandwidth path.", lab);
    return plot_fig_render(dir, in, fig, "size_hist", extra);
}

static hs_status_t write_per_hint(const char *dir, const char *name, const plot_input_t *in)
{
    hs_afile_t *af;
    char lab[32];
    hs_status_t st = dat_open(dir, name, &af);

    if (st != HS_OK)
        return st;
    for (size_t i = 0; i < in->npred; i++) {
        const pred_result_t *r = &in->pred[i];
        hint_label(r->hint_bytes, lab, sizeof(lab));
        fprintf(hs_afile_stream(af), "%zu \"%s\" %.6g %.6g %.6g\n", i, lab, r->p50_us,
                r->p99_us, r->throughput_gbps);
    }
    return hs_afile_commit(af);
}

hs_status_t plot_pct_vs_hint(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    char extra[64];
    hs_status_t st;

    fig_init(fig, "pct_vs_hint", plot_input_pred_source(in), "p50 and p99 latency per hint");
    st = write_per_hint(dir, fig->name, in);
    if (st != HS_OK)
        return st;
    snprintf(extra, sizeof(extra), "rec_x = %d\nnbars = %zu\n", in->rec_idx, in->npred);
    snprintf(fig->caption, sizeof(fig->caption),
             "Median and 99th-percentile latency of the trace's messages for every candidate "
             "hint (%s engine); the dashed line marks the recommendation.",
             in->engine ? in->engine : "?");
    return plot_fig_render(dir, in, fig, "pct_vs_hint", extra);
}

hs_status_t plot_throughput(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    char extra[64];
    hs_status_t st;

    fig_init(fig, "throughput", plot_input_pred_source(in), "Throughput per hint");
    st = write_per_hint(dir, fig->name, in);
    if (st != HS_OK)
        return st;
    snprintf(extra, sizeof(extra), "rec_x = %d\nnbars = %zu\n", in->rec_idx, in->npred);
    snprintf(fig->caption, sizeof(fig->caption),
             "Bytes delivered per second over the replay of the whole trace for every "
             "candidate hint (%s engine); the recommended hint's bar is red.",
             in->engine ? in->engine : "?");
    return plot_fig_render(dir, in, fig, "throughput", extra);
}

/* The CDF's points: at most 2000, evenly spaced in rank. */
static void cdf_points(FILE *fp, const float *s, size_t m)
{
    size_t npts = m < 2000 ? m : 2000;

    for (size_t j = 0; j < npts; j++) {
        size_t i = npts > 1 ? j * (m - 1) / (npts - 1) : 0;
        fprintf(fp, "%.6g %.6g\n", s[i], (double)(i + 1) / (double)m);
    }
}

hs_status_t plot_cost_terms(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    double n = (double)(in->trace && in->trace->n ? in->trace->n : 1), any = 0;
    char extra[64], lab[32];
    hs_afile_t *af;
    hs_status_t st;

    fig_init(fig, "cost_terms", plot_input_pred_source(in), "Where the time goes, per hint");
    for (size_t i = 0; i < in->npred; i++) {
        const pred_costs_t *c = &in->pred[i].costs;
        any += c->queue_us + c->drain_us + c->coalesce_us + c->l1_us + c->base_us;
    }
    if (!(any > 0)) {
        snprintf(fig->caption, sizeof(fig->caption), "no cost terms (the engine reported none)");
        return HS_ERR_UNSUPPORTED;
    }
    if ((st = dat_open(dir, fig->name, &af)) != HS_OK)
        return st;
    for (size_t i = 0; i < in->npred; i++) {
        const pred_costs_t *c = &in->pred[i].costs;
        hint_label(in->pred[i].hint_bytes, lab, sizeof(lab));
        fprintf(hs_afile_stream(af), "%zu \"%s\" %.6g %.6g %.6g %.6g %.6g\n", i, lab,
                c->queue_us / n, c->drain_us / n, c->coalesce_us / n, c->l1_us / n,
                c->base_us / n);
    }
    if ((st = hs_afile_commit(af)) != HS_OK)
        return st;
    snprintf(extra, sizeof(extra), "rec_x = %d\nnbars = %zu\n", in->rec_idx, in->npred);
    snprintf(fig->caption, sizeof(fig->caption),
             "The %s engine's cost terms per message for every candidate hint, stacked: queue "
             "(waiting for a send-queue slot), drain (path switches), coalesce (completions "
             "reported late), L1 (send queue beyond L1d), base (everything else). The term "
             "that differs most between two hints is why one is recommended over the other.",
             in->engine ? in->engine : "?");
    return plot_fig_render(dir, in, fig, "cost_terms", extra);
}

#define TIMELINE_BUCKETS 4000

/* One class's block of the timeline: in each bucket of `bucket` consecutive messages, the
 * slowest of the class (ll: size <= hint), at its post time. Returns the points written. */
static size_t timeline_block(FILE *fp, const trace_t *tr, const float *lat, uint64_t hint,
                             int ll, size_t bucket)
{
    uint64_t t0 = tr->n ? tr->recs[0].t_post_ns : 0;
    size_t npts = 0;

    for (size_t b = 0; b < tr->n; b += bucket) {
        size_t end = b + bucket < tr->n ? b + bucket : tr->n, worst = SIZE_MAX;
        for (size_t i = b; i < end; i++) {
            int is_ll = hint > 0 && tr->recs[i].size_bytes <= hint;
            if (is_ll == ll && isfinite(lat[i]) && lat[i] > 0 &&
                (worst == SIZE_MAX || lat[i] > lat[worst]))
                worst = i;
        }
        if (worst != SIZE_MAX && ++npts)
            fprintf(fp, "%.6f %.6g\n", (double)(tr->recs[worst].t_post_ns - t0) / 1e6,
                    lat[worst]);
    }
    fputs(ll ? "\n\n" : "", fp);
    return npts;
}

hs_status_t plot_timeline(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    const pred_result_t *r = in->rec_idx >= 0 ? &in->pred[in->rec_idx] : NULL;
    size_t bucket, npts;
    char lab[32], extra[128];
    hs_afile_t *af;
    hs_status_t st;

    fig_init(fig, "timeline", plot_input_pred_source(in), "Latency over time, by path");
    if (!r || !r->lat_us || !in->trace || in->trace->n == 0 ||
        trace_unordered(in->trace) != 0) {
        snprintf(fig->caption, sizeof(fig->caption), "no per-message latencies of the "
                 "recommended hint over a trace in post order");
        return HS_ERR_UNSUPPORTED;
    }
    bucket = (in->trace->n + TIMELINE_BUCKETS - 1) / TIMELINE_BUCKETS;
    if ((st = dat_open(dir, fig->name, &af)) != HS_OK)
        return st;
    npts = timeline_block(hs_afile_stream(af), in->trace, r->lat_us, r->hint_bytes, 1, bucket);
    npts += timeline_block(hs_afile_stream(af), in->trace, r->lat_us, r->hint_bytes, 0, bucket);
    if (npts == 0) { /* gnuplot fails on a plot without a point */
        hs_afile_abort(af);
        snprintf(fig->caption, sizeof(fig->caption), "no message of the recommended hint's "
                 "replay has a positive latency");
        return HS_ERR_UNSUPPORTED;
    }
    if ((st = hs_afile_commit(af)) != HS_OK)
        return st;
    hint_label(r->hint_bytes, lab, sizeof(lab));
    snprintf(extra, sizeof(extra), "bucket = %zu\n", bucket);
    if (bucket > 1)
        snprintf(fig->caption, sizeof(fig->caption),
                 "Each message's latency at the recommended hint %s against its post time, red "
                 "if its size takes the low-latency path; each point is the slowest message of "
                 "its path among %zu consecutive messages (%s engine).", lab, bucket,
                 in->engine ? in->engine : "?");
    else
        snprintf(fig->caption, sizeof(fig->caption),
                 "Each message's latency at the recommended hint %s against its post time, red "
                 "if its size takes the low-latency path (%s engine).", lab,
                 in->engine ? in->engine : "?");
    return plot_fig_render(dir, in, fig, "timeline", extra);
}

/* The tail's points (1 - CDF): 100 per decade of the fraction above, from all messages to
 * the slowest but one, so p99.9 of a 10,000-message trace is drawn from its own samples. */
static void ccdf_points(FILE *fp, const float *s, size_t m)
{
    size_t last = SIZE_MAX;

    for (double t = 0; m > 1; t += 0.01) {
        double above = ceil((double)m * pow(10.0, -t));
        size_t i;

        if (above < 1.0)
            break;
        i = m - (size_t)above; /* s[i] has m - 1 - i messages above it */
        if (i != last && m - 1 - i > 0)
            fprintf(fp, "%.6g %.6g\n", s[i], (double)(m - 1 - i) / (double)m);
        last = i;
    }
}

typedef void (*dist_points_fn)(FILE *, const float *, size_t);

/* One block of a distribution figure from a replay's per-message latencies. */
static hs_status_t write_dist_block(FILE *fp, const float *lat, size_t n, dist_points_fn pts)
{
    float *s = hs_alloc_big(n * sizeof(*s));
    size_t m = 0;

    if (!s)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        if (isfinite(lat[i]) && lat[i] > 0)
            s[m++] = lat[i];
    if (hs_sort_pos_floats(s, m) != HS_OK) {
        free(s);
        return HS_ERR_NOMEM;
    }
    pts(fp, s, m);
    fputs("\n\n", fp);
    free(s);
    return HS_OK;
}

#define CDF_MAX_CURVES 6

/* Which curves the CDF has: recommended, runner-up, hint 0, then any other candidate with
 * per-message latencies in table order (distinct, at most CDF_MAX_CURVES). */
static size_t cdf_curves(const plot_input_t *in, int idx[CDF_MAX_CURVES],
                         const char *role[CDF_MAX_CURVES])
{
    int cand[3] = {in->rec_idx, in->runner_idx, plot_input_hint0_idx(in)};
    const char *roles[3] = {"recommended", "runner-up", "baseline"};
    size_t n = 0;

    for (int c = 0; c < 3 + (int)in->npred && n < CDF_MAX_CURVES; c++) {
        int i = c < 3 ? cand[c] : c - 3, dup = 0;
        if (i < 0 || !in->pred[i].lat_us)
            continue;
        for (size_t j = 0; j < n; j++)
            dup |= idx[j] == i;
        if (dup)
            continue;
        idx[n] = i;
        role[n++] = c < 3 ? roles[c] : "candidate";
    }
    return n;
}

/* The CDF (tail 0) or the tail CCDF (tail 1) of the cdf_curves replays. */
static hs_status_t plot_latency_dist(const char *dir, const plot_input_t *in, plot_fig_t *fig,
                                     int tail)
{
    int idx[CDF_MAX_CURVES];
    const char *role[CDF_MAX_CURVES];
    size_t n = cdf_curves(in, idx, role);
    char extra[1024], lab[32];
    size_t off;
    hs_afile_t *af;
    hs_status_t st = HS_OK;

    if (tail)
        fig_init(fig, "latency_ccdf", plot_input_pred_source(in),
                 "Latency tail (fraction slower than x)");
    else
        fig_init(fig, "latency_cdf", plot_input_pred_source(in), "Latency CDF");
    if (n == 0) {
        snprintf(fig->caption, sizeof(fig->caption),
                 "no per-message latencies were kept for the recommended, runner-up or "
                 "no-hint replay");
        return HS_ERR_UNSUPPORTED;
    }
    st = dat_open(dir, fig->name, &af);
    for (size_t c = 0; c < n && st == HS_OK; c++)
        st = write_dist_block(hs_afile_stream(af), in->pred[idx[c]].lat_us, in->trace->n,
                              tail ? ccdf_points : cdf_points);
    if (st != HS_OK) {
        hs_afile_abort(af);
        return st;
    }
    st = hs_afile_commit(af);
    if (st != HS_OK)
        return st;
    off = (size_t)snprintf(extra, sizeof(extra), "ncurves = %zu\n", n);
    for (size_t c = 0; c < n && off < sizeof(extra); c++) {
        hint_label(in->pred[idx[c]].hint_bytes, lab, sizeof(lab));
        off += (size_t)snprintf(extra + off, sizeof(extra) - off,
                                "title%zu = 'hint %s (%s)'\n", c, lab, role[c]);
    }
    if (tail)
        snprintf(fig->caption, sizeof(fig->caption),
                 "Fraction of the trace's messages slower than a given latency (1 - CDF, log "
                 "axes): where a curve crosses the dotted lines is its p99 and p99.9; for the "
                 "recommended hint, the runner-up, no hint and the next best candidates "
                 "(%s engine, per-message replay).",
                 in->engine ? in->engine : "?");
    else
        snprintf(fig->caption, sizeof(fig->caption),
                 "Fraction of the trace's messages that complete within a given latency, for the "
                 "recommended hint, the runner-up, no hint and the next best candidates "
                 "(%s engine, per-message replay).",
                 in->engine ? in->engine : "?");
    return plot_fig_render(dir, in, fig, tail ? "ccdf" : "cdf", extra);
}

hs_status_t plot_latency_cdf(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    return plot_latency_dist(dir, in, fig, 0);
}

hs_status_t plot_latency_ccdf(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    return plot_latency_dist(dir, in, fig, 1);
}

hs_status_t plot_pred_vs_meas(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    hs_afile_t *af;
    char lab[32];
    size_t npts = 0;
    hs_status_t st;

    fig_init(fig, "pred_vs_meas", PLOT_SRC_MEASURED, "Predicted against measured latency");
    if (!in->meas) {
        snprintf(fig->caption, sizeof(fig->caption), "no measured figures (validate only)");
        return HS_ERR_UNSUPPORTED;
    }
    for (size_t i = 0; i < in->npred; i++)
        npts += in->meas[i].p50_us > 0 && in->pred[i].p50_us > 0 && in->meas[i].p99_us > 0 &&
                in->pred[i].p99_us > 0;
    if (npts == 0) {
        snprintf(fig->caption, sizeof(fig->caption), "no hint has positive measured and "
                 "predicted latencies");
        return HS_ERR_UNSUPPORTED;
    }
    st = dat_open(dir, fig->name, &af);
    if (st != HS_OK)
        return st;
    for (size_t i = 0; i < in->npred; i++) {
        const pred_result_t *m = &in->meas[i], *p = &in->pred[i];
        if (!(m->p50_us > 0 && p->p50_us > 0 && m->p99_us > 0 && p->p99_us > 0))
            continue;
        hint_label(p->hint_bytes, lab, sizeof(lab));
        fprintf(hs_afile_stream(af), "\"%s\" %.6g %.6g %.6g %.6g\n", lab, m->p50_us,
                p->p50_us, m->p99_us, p->p99_us);
    }
    st = hs_afile_commit(af);
    if (st != HS_OK)
        return st;
    snprintf(fig->caption, sizeof(fig->caption),
             "Each point is one hint: x measured on the live device, y %s by the %s engine. "
             "Points on the dashed diagonal were predicted exactly.",
             plot_source_str(plot_input_pred_source(in)), in->engine ? in->engine : "?");
    return plot_fig_render(dir, in, fig, "pred_meas", NULL);
}

int plot_fig_owns(const char *name)
{
    static const char *const figs[] = {"size_hist", "pct_vs_hint", "throughput", "latency_cdf",
                                       "latency_ccdf", "timeline", "cost_terms",
                                       "cost_curves", "pred_vs_meas"};
    static const char *const ext[] = {"png", "svg", "dat", "gp", "log"};

    for (size_t f = 0; f < sizeof(figs) / sizeof(figs[0]); f++) {
        size_t n = strlen(figs[f]);
        if (strncmp(name, figs[f], n) != 0 || name[n] != '.')
            continue;
        for (size_t e = 0; e < sizeof(ext) / sizeof(ext[0]); e++)
            if (!strcmp(name + n + 1, ext[e]))
                return 1;
    }
    return 0;
}

int plot_report_owns(const char *name)
{
    return !strcmp(name, "report.json") || !strcmp(name, "report.md") ||
           !strcmp(name, "report.html") || plot_fig_owns(name);
}

typedef hs_status_t (*plot_fn_t)(const char *, const plot_input_t *, plot_fig_t *);

hs_status_t plot_report_figures(const char *dir, const plot_input_t *in, plot_figset_t *out)
{
    static const plot_fn_t fns[] = {plot_size_hist, plot_pct_vs_hint, plot_latency_cdf,
                                    plot_latency_ccdf, plot_timeline, plot_throughput,
                                    plot_cost_terms, plot_cost_curves, plot_pred_vs_meas};
    char gp[4096];
    hs_status_t st = plot_input_check(in);

    memset(out, 0, sizeof(*out));
    if (st != HS_OK)
        return st;
    if (plot_gnuplot_find(gp, sizeof(gp)) != HS_OK)
        return HS_ERR_ENV; /* the caller says so: see rep_write_report */
    st = hs_mkdir_p(dir);
    if (st != HS_OK)
        return st;
    for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
        plot_fig_t fig;

        st = fns[i](dir, in, &fig);
        if (st == HS_ERR_UNSUPPORTED) {
            snprintf(out->skipped[out->nskipped++], sizeof(out->skipped[0]), "%s: %s",
                     fig.title, fig.caption);
            continue;
        }
        if (st != HS_OK)
            return st;
        out->figs[out->n++] = fig;
    }
    return HS_OK;
}
