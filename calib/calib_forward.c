/* calib_forward.c - isolated-message latency from a prediction engine; see calib_forward.h.
 *
 * The benchmark posts one message, waits for its completion, then posts the next; the
 * engine sees that as messages far enough apart (10 ms) that none queues behind another.
 */
#include "calib/calib_forward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { FWD_NMSG = 7 };
#define FWD_GAP_NS 10000000ULL

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

hs_status_t calib_predict_isolated(void *ctx, const profile_t *p, const calib_obs_t *obs,
                                   double *pred_us)
{
    const pred_engine_ops_t *eng = ctx;
    trace_rec_t recs[FWD_NMSG];
    trace_t tr = {.recs = recs, .n = FWD_NMSG, .cap = FWD_NMSG};
    float lat[FWD_NMSG];
    uint8_t path[FWD_NMSG];
    pred_opts_t o = {.mode = PRED_OPEN, .include_cold = 1, .flows = 1};
    pred_raw_t raw;
    hs_status_t st;

    trace_hdr_init(&tr.hdr);
    for (unsigned i = 0; i < FWD_NMSG; i++)
        recs[i] = (trace_rec_t){.t_post_ns = (i + 1) * FWD_GAP_NS,
                                .t_done_ns = TRACE_TIME_UNKNOWN, .size_bytes = obs->size_bytes,
                                .opcode = TRACE_OP_WRITE, .flags = TRACE_F_SIGNALED};
    memset(&raw, 0, sizeof(raw));
    raw.lat_us = lat;
    raw.path = path;
    st = eng->replay(&tr, p, &o, obs->hint_bytes, &raw);
    trace_hdr_release(&tr.hdr);
    if (st != HS_OK)
        return st;
    qsort(lat, FWD_NMSG, sizeof(lat[0]), cmp_float);
    if (!isfinite(lat[FWD_NMSG / 2])) {
        hs_log_error("calibrate: %s engine gave a non-finite latency for %llu B", eng->name,
                     (unsigned long long)obs->size_bytes);
        return HS_ERR_INTERNAL;
    }
    *pred_us = lat[FWD_NMSG / 2];
    return HS_OK;
}
