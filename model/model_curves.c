/* model_curves.c - the isolated per-size cost curve of each path: latency of one message
 * and throughput of a back-to-back stream, each path alone, and where they cross. */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/recommend/recommend.h"

#define CURVE_STREAM 256

static hs_status_t run_stream(const profile_t *p, uint64_t size, uint64_t hint, size_t n,
                              pred_result_t *r)
{
    trace_t *tr = NULL;
    pred_opts_t o = {.mode = PRED_OPEN};
    hs_status_t st = trace_new(&tr);

    for (size_t i = 0; st == HS_OK && i < n; i++) {
        trace_rec_t rec = {.t_post_ns = 0, .t_done_ns = TRACE_TIME_UNKNOWN, .size_bytes = size};
        st = trace_push(tr, &rec);
    }
    if (st != HS_OK)
        goto free_trace;
    st = pred_run(&(pred_ctx_t){&model_engine_ops, tr, p, &o}, hint, 1, r);
free_trace:
    trace_free(tr);
    return st;
}

/* Latency: one message on an idle system (its batch closes by timer or poll); throughput:
 * CURVE_STREAM back-to-back messages. */
static hs_status_t one_point(const profile_t *p, uint64_t size, uint64_t hint, double *lat_us,
                             double *gbps)
{
    pred_result_t r;
    hs_status_t st = run_stream(p, size, hint, 1, &r);

    if (st != HS_OK)
        return st;
    *lat_us = r.lat_us[0];
    pred_result_release(&r);
    st = run_stream(p, size, hint, CURVE_STREAM, &r);
    if (st != HS_OK)
        return st;
    *gbps = r.throughput_gbps;
    pred_result_release(&r);
    return HS_OK;
}

size_t model_curve_ranges(const model_curve_pt_t *pts, size_t n, model_curve_metric_t m,
                          double rel, uint64_t (*r)[2], size_t max)
{
    size_t nr = 0;
    int in = 0;

    for (size_t i = 0; i < n; i++) {
        const model_curve_pt_t *p = &pts[i];
        int bw_beats = m == MODEL_CURVE_LAT ? p->ll_lat_us > p->bw_lat_us * (1 + rel)
                                            : p->bw_gbps > p->ll_gbps * (1 + rel);
        if (!bw_beats) {
            in = 0;
        } else if (in) {
            r[nr - 1][1] = p->size_bytes;
        } else if (nr < max) {
            r[nr][0] = r[nr][1] = p->size_bytes;
            nr++;
            in = 1;
        }
    }
    return nr;
}

void model_curve_ranges_text(const uint64_t (*r)[2], size_t nr, char *buf, size_t len)
{
    size_t off = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < nr && off < len; i++) {
        char lo[32], hi[32];
        rec_format_hint(r[i][0], lo, sizeof(lo));
        rec_format_hint(r[i][1], hi, sizeof(hi));
        int k = r[i][0] == r[i][1] ? snprintf(buf + off, len - off, "%s%s", i ? ", " : "", lo)
                                   : snprintf(buf + off, len - off, "%s%s - %s", i ? ", " : "",
                                              lo, hi);
        off += k > 0 ? (size_t)k : 0;
    }
}

hs_status_t model_curves(const profile_t *p, uint64_t max_bytes, model_curve_pt_t **out,
                         size_t *n_out, uint64_t *crossover_bytes)
{
    size_t n = 0, cap = 65;
    model_curve_pt_t *pts = calloc(cap, sizeof(*pts));
    hs_status_t st;

    if (!pts)
        return HS_ERR_NOMEM;
    *crossover_bytes = 0;
    for (uint64_t s = 1; n < cap; s <<= 1) {
        model_curve_pt_t *pt = &pts[n++];
        pt->size_bytes = s;
        st = one_point(p, s, UINT64_MAX, &pt->ll_lat_us, &pt->ll_gbps);
        if (st != HS_OK)
            goto free_pts;
        st = one_point(p, s, 0, &pt->bw_lat_us, &pt->bw_gbps);
        if (st != HS_OK)
            goto free_pts;
        if (!*crossover_bytes && pt->bw_lat_us < pt->ll_lat_us)
            *crossover_bytes = s;
        if (s >= max_bytes || s > (UINT64_MAX >> 1))
            break;
    }
    *out = pts;
    *n_out = n;
    return HS_OK;

free_pts:
    free(pts);
    return st;
}
