/* cap_replay.c - the live replay of one trace under one hint (see cap_replay.h). */
#include "capture/cap_replay.h"

#include <math.h>
#include <stdlib.h>

#include "common/hs_util.h"

typedef struct {
    float *lat_us;
    const uint64_t *sched_ns;
    uint64_t last_done_ns;
} replay_ctx_t;

static void replay_done(void *arg, uint64_t msg, uint64_t t_done_ns, int implicit)
{
    replay_ctx_t *r = arg;

    (void)implicit;
    r->lat_us[msg] = (float)((double)(t_done_ns - r->sched_ns[msg]) / 1e3);
    if (t_done_ns > r->last_done_ns)
        r->last_done_ns = t_done_ns;
}

static uint64_t think_ns(const trace_t *tr, size_t i)
{
    const trace_rec_t *a, *b;

    if (i == 0)
        return 0;
    a = &tr->recs[i - 1];
    b = &tr->recs[i];
    if (a->t_done_ns == TRACE_TIME_UNKNOWN || b->t_post_ns <= a->t_done_ns)
        return 0;
    return b->t_post_ns - a->t_done_ns;
}

static void spin_until(uint64_t t_ns)
{
    while (hs_now_ns() < t_ns)
        ;
}

/* Post message i per mode; closed loop waits for it where its path signals. */
static hs_status_t replay_one(cap_conn_t *c, const trace_t *tr, size_t i, cap_path_id_t path,
                              pred_mode_t mode, uint64_t t0, uint64_t *sched, pred_raw_t *raw)
{
    cap_qp_t *q = &c->ep->qp[path];
    int sig = 0;
    hs_status_t st;

    if (mode == PRED_OPEN)
        sched[i] = t0 + (tr->recs[i].t_post_ns - tr->recs[0].t_post_ns);
    else
        sched[i] = hs_now_ns() + think_ns(tr, i);
    spin_until(sched[i]);
    if (cap_track_outstanding(&q->track) + cap_seg_count(tr->recs[i].size_bytes,
                                                         q->cfg.seg_bytes) > q->cfg.depth)
        raw->sq_full_stalls++;
    raw->path[i] = path == CAP_PATH_LL ? TRACE_F_PATH_LL : TRACE_F_PATH_BW;
    st = cap_qp_post_msg(c->ep, q, i, tr->recs[i].size_bytes, 0, &sig);
    if (st == HS_OK && mode == PRED_CLOSED && sig)
        st = cap_qp_wait_msg(c->ep, q, q->track.next_seq - 1);
    return st;
}

hs_status_t cap_replay_run(cap_conn_t *c, const cap_replay_opts_t *o, pred_raw_t *raw)
{
    const trace_t *tr = o->tr;
    uint64_t hint = o->hint, hysteresis = o->hysteresis;
    pred_mode_t mode = o->mode;
    uint64_t *sched = calloc(tr->n, sizeof(*sched)), t0, drain_ns = 0;
    replay_ctx_t rc = {raw->lat_us, sched, 0};
    cap_route_t route;
    int sw, started = 0;
    cap_path_id_t prev = CAP_PATH_BW;
    hs_status_t st = sched ? HS_OK : HS_ERR_NOMEM;

    for (size_t i = 0; i < tr->n; i++)
        raw->lat_us[i] = NAN;
    for (int p = 0; p < CAP_NPATHS; p++) {
        c->ep->qp[p].on_done = replay_done;
        c->ep->qp[p].on_done_arg = &rc;
    }
    cap_route_init(&route, hint, hysteresis);
    t0 = hs_now_ns() + 1000;
    for (size_t i = 0; st == HS_OK && i < tr->n; i++) {
        cap_path_id_t path = cap_route_next(&route, tr->recs[i].size_bytes, &sw);
        if (started && path != prev) {
            st = cap_qp_drain(c->ep, &c->ep->qp[prev], &drain_ns);
            raw->switches++;
            raw->drain_us_total += (double)drain_ns / 1e3;
        }
        started = 1;
        prev = path;
        if (st == HS_OK)
            st = replay_one(c, tr, i, path, mode, t0, sched, raw);
    }
    for (int p = 0; st == HS_OK && p < CAP_NPATHS; p++)
        st = cap_qp_drain(c->ep, &c->ep->qp[p], NULL);
    raw->t_first_post_us = 0;
    raw->t_last_done_us = rc.last_done_ns > t0 ? (double)(rc.last_done_ns - t0) / 1e3 : 0;
    for (int p = 0; p < CAP_NPATHS; p++)
        c->ep->qp[p].on_done = NULL;
    free(sched);
    return st;
}

