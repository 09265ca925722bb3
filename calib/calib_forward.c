/* calib_forward.c - what a prediction engine says a calibration figure should be; see
 * calib_forward.h.
 *
 * The benchmark posts one message, waits for its completion, then posts the next; the
 * engine sees that as messages far enough apart (10 ms) that none queues behind another.
 */
#include "calib/calib_forward.h"

#include "common/hs_mem.h"
#include "common/hs_util.h"

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

/* Apply "KEY=VALUE" to p in place, saving the old value; HS_ERR_INVALID if malformed. */
static hs_status_t set_apply(profile_t *p, const char *set, double **field, double *old)
{
    char key[128];
    const char *eq = strchr(set, '=');
    const prof_param_info_t *info;
    double v;

    if (!eq || (size_t)(eq - set) >= sizeof(key))
        goto bad;
    snprintf(key, sizeof(key), "%.*s", (int)(eq - set), set);
    info = profile_param_find(key);
    if (!info || hs_parse_double(eq + 1, &v) != HS_OK)
        goto bad;
    *field = (double *)((char *)p + info->offset);
    *old = **field;
    **field = v;
    return HS_OK;
bad:
    hs_log_error("calibrate: bad override '%s' (KEY=VALUE with a profile key)", set);
    return HS_ERR_INVALID;
}

static hs_status_t replay_median(const pred_engine_ops_t *eng, const trace_t *tr,
                                 const profile_t *p, uint64_t hint, pred_mode_t mode,
                                 double *out)
{
    float *keep = hs_alloc_big((tr->n ? tr->n : 1) * sizeof(*keep));
    pred_opts_t o = {.mode = mode, .include_cold = 0, .flows = 1};
    pred_raw_t raw;
    size_t m = 0;
    hs_status_t st = pred_raw_alloc(&raw, tr->n);

    if (st != HS_OK)
        goto free_raw;
    if (!keep) {
        st = HS_ERR_NOMEM;
        goto free_raw;
    }
    st = eng->replay(tr, p, &o, hint, &raw);
    if (st != HS_OK)
        goto free_raw;
    for (size_t i = 0; i < tr->n; i++)
        if (!(tr->recs[i].flags & TRACE_F_COLD) && isfinite(raw.lat_us[i]))
            keep[m++] = raw.lat_us[i];
    if (m == 0) {
        hs_log_error("calibrate: no warm message to predict in a benchmark group");
        st = HS_ERR_INVALID;
        goto free_raw;
    }
    qsort(keep, m, sizeof(*keep), cmp_float);
    *out = keep[(m - 1) / 2];
free_raw:
    pred_raw_free(&raw);
    free(keep);
    return st;
}

hs_status_t calib_predict_replay(void *ctx, const profile_t *p, const calib_obs_t *obs,
                                 double *pred_us)
{
    profile_t *mp = (profile_t *)p; /* the override is undone before returning */
    double *field = NULL, old = 0;
    hs_status_t st;

    if (obs->set && (st = set_apply(mp, obs->set, &field, &old)) != HS_OK)
        return st;
    if (obs->trace)
        st = replay_median(ctx, obs->trace, mp, obs->hint_bytes, obs->mode, pred_us);
    else
        st = calib_predict_isolated(ctx, mp, obs, pred_us);
    if (field)
        *field = old;
    return st;
}
