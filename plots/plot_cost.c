/* plot_cost.c - per-size cost curves of the two paths and their crossover.
 *
 * The curves come from the prediction engine itself, not from a separate formula: for
 * each size a short trace of identical, well-spaced messages (no queueing, no switch) is
 * replayed in closed loop (each message waits for the previous one's completion, so no
 * two share a completion batch: with selective signalling and no moderation timer an
 * open-loop batch would hold them all until the trace ends) with hint = size (every
 * message on the LL path) and with hint 0 (BW path); the median latency is the cost of
 * one isolated message on that path, as `model --curves` gives it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "model/model.h"
#include "model/recommend/recommend.h"
#include "plots/plot_figs.h"
#include "plots/plot_gnuplot.h"

enum { COST_NMSG = 9 };
#define COST_GAP_NS 10000000ULL /* 10 ms between messages: each one is isolated */

static hs_status_t cost_trace(uint64_t size_bytes, trace_t **out)
{
    trace_t *tr;
    hs_status_t st = trace_new(&tr);

    for (unsigned i = 0; st == HS_OK && i < COST_NMSG; i++) {
        /* a completion 1 ns after its post: the closed-loop think time is the gap */
        trace_rec_t r = {.t_post_ns = (i + 1) * COST_GAP_NS,
                         .t_done_ns = (i + 1) * COST_GAP_NS + 1, .size_bytes = size_bytes,
                         .opcode = TRACE_OP_WRITE, .flags = TRACE_F_SIGNALED};
        st = trace_push(tr, &r);
    }
    if (st != HS_OK) {
        trace_free(tr);
        return st;
    }
    *out = tr;
    return HS_OK;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

hs_status_t plot_cost_at(const pred_engine_ops_t *eng, const profile_t *p, uint64_t size_bytes,
                         int ll, double *lat_us_out)
{
    float lat[COST_NMSG];
    uint8_t path[COST_NMSG];
    pred_opts_t o = {.mode = PRED_CLOSED, .include_cold = 1, .flows = 1};
    pred_raw_t raw;
    trace_t *tr = NULL;
    hs_status_t st = cost_trace(size_bytes, &tr);

    if (st != HS_OK)
        return st;
    memset(&raw, 0, sizeof(raw));
    raw.lat_us = lat;
    raw.path = path;
    st = eng->replay(tr, p, &o, ll ? (size_bytes ? size_bytes : 1) : 0, &raw);
    trace_free(tr);
    if (st != HS_OK)
        return st;
    qsort(lat, COST_NMSG, sizeof(lat[0]), cmp_float);
    if (!isfinite(lat[COST_NMSG / 2])) {
        hs_log_error("%s engine: non-finite latency for %llu B on the %s path", eng->name,
                     (unsigned long long)size_bytes, ll ? "LL" : "BW");
        return HS_ERR_INTERNAL;
    }
    *lat_us_out = lat[COST_NMSG / 2];
    return HS_OK;
}

uint64_t plot_cost_crossover(const uint64_t *sizes, const double *ll_us, const double *bw_us,
                             size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (bw_us[i] <= ll_us[i] && bw_us[i - 1] > ll_us[i - 1])
            return sizes[i];
    return 0;
}

/* Sizes 1 B .. max(1M, 2 x the trace's largest), powers of two, at most 2^26 (as model
 * --curves, which starts at 1 B too). */
static size_t cost_sizes(const trace_t *tr, uint64_t sizes[32])
{
    uint64_t top = 1ULL << 20;
    size_t n = 0;

    for (size_t i = 0; i < tr->n; i++)
        if (tr->recs[i].size_bytes * 2 > top)
            top = tr->recs[i].size_bytes * 2;
    if (top > (1ULL << 26))
        top = 1ULL << 26;
    for (uint64_t s = 1; s <= top && n < 32; s *= 2)
        sizes[n++] = s;
    return n;
}

static hs_status_t cost_write(const char *dir, const plot_input_t *in, const uint64_t *sizes,
                              size_t n, uint64_t *cross_out, char *ranges, size_t rlen)
{
    double ll[32], bw[32];
    char path[4096];
    hs_afile_t *af;
    hs_status_t st;

    for (size_t i = 0; i < n; i++) {
        st = plot_cost_at(in->cost_engine, in->profile, sizes[i], 1, &ll[i]);
        if (st != HS_OK)
            return st;
        st = plot_cost_at(in->cost_engine, in->profile, sizes[i], 0, &bw[i]);
        if (st != HS_OK)
            return st;
    }
    snprintf(path, sizeof(path), "%s/cost_curves.dat", dir);
    st = hs_afile_open(path, &af);
    if (st != HS_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        char lab[32];
        rec_format_hint(sizes[i], lab, sizeof(lab));
        fprintf(hs_afile_stream(af), "%llu %.6g %.6g %s\n", (unsigned long long)sizes[i],
                ll[i], bw[i], i % 2 ? "\"\"" : lab); /* every other size labelled */
    }
    *cross_out = plot_cost_crossover(sizes, ll, bw, n);
    model_curve_pt_t pts[32];
    uint64_t r[8][2];
    for (size_t i = 0; i < n; i++)
        pts[i] = (model_curve_pt_t){.size_bytes = sizes[i], .ll_lat_us = ll[i], .bw_lat_us = bw[i]};
    model_curve_ranges_text(r, model_curve_ranges(pts, n, MODEL_CURVE_LAT, 0, r, 8), ranges, rlen);
    return hs_afile_commit(af);
}

hs_status_t plot_cost_curves(const char *dir, const plot_input_t *in, plot_fig_t *fig)
{
    uint64_t sizes[32], cross = 0;
    size_t n = cost_sizes(in->trace, sizes);
    char extra[256], lab[32], ranges[256];
    plot_source_t src = plot_input_pred_source(in);
    hs_status_t st;

    memset(fig, 0, sizeof(*fig));
    snprintf(fig->name, sizeof(fig->name), "cost_curves");
    snprintf(fig->title, sizeof(fig->title), "Cost of one message on each path, by size");
    fig->source = src;
    if (!in->cost_engine) {
        snprintf(fig->caption, sizeof(fig->caption), "no engine given for the cost curves");
        return HS_ERR_UNSUPPORTED;
    }
    st = cost_write(dir, in, sizes, n, &cross, ranges, sizeof(ranges));
    if (st != HS_OK)
        return st;
    hs_format_size(cross, lab, sizeof(lab));
    snprintf(extra, sizeof(extra), "cross_x = %llu\ncross_label = 'crossover %s'\n",
             (unsigned long long)cross, lab);
    snprintf(fig->caption, sizeof(fig->caption),
             "Latency of one isolated message of each size on the low-latency path and on the "
             "bandwidth path (%s engine). %s%s%s", in->cost_engine->name,
             ranges[0] ? "The bandwidth path has the lower latency at " :
                         "The low-latency path is as fast or faster at every size shown",
             ranges, ".");
    return plot_fig_render(dir, in, fig, "cost_curves", extra);
}
