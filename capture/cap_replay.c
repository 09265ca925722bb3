/* cap_replay.c - the live replay of one trace under one hint (see cap_replay.h; the rules it
 * follows are model/MODEL.md's section "Live replay").
 *
 * One loop: route the message, drain the old path on a switch, wait for the post time,
 * post, and in closed loop wait for the message. Every wait is a pass of cap_pace.h's
 * progress loop, which polls the send CQs of both paths (the endpoint's progress hook makes
 * cap_path.c's slot, drain and completion waits do the same), so a completion is stamped at
 * the first poll that can see it instead of when the replay next happens to look at that
 * path; capture bench paces its messages with the same loop.
 */
#include "capture/cap_replay.h"

#include <math.h>
#include <stdlib.h>

#include "capture/cap_hist.h"
#include "capture/cap_pace.h"
#include "common/hs_util.h"

/* ---- the replay ------------------------------------------------------------------------- */

typedef struct {
    cap_conn_t *c;
    const cap_replay_opts_t *o;
    pred_raw_t *raw;
    uint64_t *sched_ns;       /* per message: when it was due */
    uint64_t *post_ns;        /* per message: when its post began */
    uint64_t t_done_last_ns;  /* the latest completion stamped */
    uint64_t fences;          /* the endpoint's QPs' fences during the replay */
    cap_pace_t w;             /* the progress loop: passes, clock reads, time between polls */
    cap_hist_t late, service;
} replay_t;

/* Fences posted so far on every QP of ep (cap_qp_t.fences). */
static uint64_t fences_of(const cap_ep_t *ep)
{
    uint64_t n = 0;

    for (int p = 0; p < CAP_NPATHS; p++)
        n += ep->qp[p].fences;
    return n;
}

static void replay_done(void *arg, uint64_t msg, uint64_t t_done_ns, int implicit)
{
    replay_t *r = arg;

    (void)implicit;
    r->raw->lat_us[msg] = (float)((double)(t_done_ns - r->sched_ns[msg]) / 1e3);
    cap_hist_add(&r->service, t_done_ns - r->post_ns[msg]);
    if (t_done_ns > r->t_done_last_ns)
        r->t_done_last_ns = t_done_ns;
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

/* Message i's scheduled time: open, the trace's post time from t0; closed, the previous
 * message's completion (the poster has seen it: the replay waited for it) plus think. */
static uint64_t schedule(replay_t *r, size_t i, uint64_t t0)
{
    const trace_t *tr = r->o->tr;

    if (r->o->mode == PRED_OPEN)
        return t0 + (tr->recs[i].t_post_ns - tr->recs[0].t_post_ns);
    return (i == 0 ? cap_pace_clock(&r->w) : r->t_done_last_ns) + think_ns(tr, i);
}

/* Post message i on path at its time; closed loop waits until it is seen complete (its last
 * WR signalled, so it is seen at its own completion). sig_last: signal its last WR (the
 * poster will wait for it: the next message switches paths, or it is the last). */
static hs_status_t replay_one(replay_t *r, size_t i, cap_path_id_t path, uint64_t t0,
                              int sig_last)
{
    cap_ep_t *ep = r->c->ep;
    cap_qp_t *q = &ep->qp[path];
    uint64_t size = r->o->tr->recs[i].size_bytes;
    hs_status_t st;

    r->sched_ns[i] = schedule(r, i, t0);
    st = cap_pace_until(&r->w, r->sched_ns[i]);
    if (st != HS_OK)
        return st;
    /* the clock read that ended the wait is when the post starts */
    r->post_ns[i] = r->w.clock_ns > r->sched_ns[i] ? r->w.clock_ns : r->sched_ns[i];
    cap_hist_add(&r->late, r->post_ns[i] - r->sched_ns[i]);
    if (cap_track_outstanding(&q->track) + cap_seg_count(size, q->cfg.seg_bytes) > q->cfg.depth)
        r->raw->sq_full_stalls++;
    r->raw->path[i] = path == CAP_PATH_LL ? TRACE_F_PATH_LL : TRACE_F_PATH_BW;
    if (r->o->mode == PRED_OPEN && !sig_last)
        return cap_qp_post_msg(ep, q, i, size, 0, NULL);
    if (r->o->mode == PRED_OPEN)
        return cap_qp_post_msg_signaled(ep, q, i, size);
    st = cap_qp_post_msg_signaled(ep, q, i, size);
    return st == HS_OK ? cap_qp_wait_msg(ep, q, q->track.next_seq - 1) : st;
}

static hs_status_t replay_all(replay_t *r)
{
    const trace_t *tr = r->o->tr;
    cap_ep_t *ep = r->c->ep;
    uint64_t t0, drain_ns = 0;
    cap_route_t route;
    int sw;
    cap_path_id_t path = CAP_PATH_BW, prev = CAP_PATH_BW;
    hs_status_t st = HS_OK;

    cap_route_init(&route, r->o->hint, r->o->hysteresis);
    t0 = hs_now_ns() + 1000;
    if (tr->n > 0)
        path = cap_route_next(&route, tr->recs[0].size_bytes, &sw);
    for (size_t i = 0; st == HS_OK && i < tr->n; i++) {
        /* message i + 1 is routed before i is posted, so i's last WR is signalled where
         * the poster will wait for it: a switch follows, or the trace ends */
        cap_path_id_t next = i + 1 < tr->n ?
                             cap_route_next(&route, tr->recs[i + 1].size_bytes, &sw) : path;
        if (i > 0 && path != prev) {
            st = cap_qp_drain(ep, &ep->qp[prev], &drain_ns);
            r->raw->switches++;
            r->raw->drain_us_total += (double)drain_ns / 1e3;
            if (st != HS_OK)
                break;
        }
        st = replay_one(r, i, path, t0, i + 1 == tr->n || next != path);
        prev = path;
        path = next;
    }
    for (int p = 0; st == HS_OK && p < CAP_NPATHS; p++)
        st = cap_qp_drain(ep, &ep->qp[p], NULL);
    r->raw->t_first_post_us = 0;
    r->raw->t_last_done_us = r->t_done_last_ns > t0 ?
                             (double)(r->t_done_last_ns - t0) / 1e3 : 0;
    return st;
}

static void overhead_fill(const replay_t *r, cap_replay_overhead_t *ov)
{
    ov->polls = r->w.polls;
    ov->poll_gap_p50_us = cap_hist_pctl_us(&r->w.gap, 0.50);
    ov->poll_gap_p99_us = cap_hist_pctl_us(&r->w.gap, 0.99);
    ov->poll_gap_max_us = cap_hist_max_us(&r->w.gap);
    ov->posts = r->late.n;
    ov->post_late_p50_us = cap_hist_pctl_us(&r->late, 0.50);
    ov->post_late_p99_us = cap_hist_pctl_us(&r->late, 0.99);
    ov->post_late_max_us = cap_hist_max_us(&r->late);
    ov->post_to_completion_p50_us = cap_hist_pctl_us(&r->service, 0.50);
    ov->post_to_completion_p99_us = cap_hist_pctl_us(&r->service, 0.99);
    ov->post_to_completion_max_us = cap_hist_max_us(&r->service);
    ov->fences = r->fences;
}

/* The warm-up of cap_replay_warmup: the trace's smallest and largest sizes, closed loop. */
static hs_status_t warmup_trace(const trace_t *tr, trace_t **out)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    hs_status_t st = trace_new(out);

    for (size_t i = 0; i < tr->n; i++) {
        lo = tr->recs[i].size_bytes < lo ? tr->recs[i].size_bytes : lo;
        hi = tr->recs[i].size_bytes > hi ? tr->recs[i].size_bytes : hi;
    }
    for (uint64_t i = 0; st == HS_OK && i < CAP_REPLAY_WARMUP_SMALL + CAP_REPLAY_WARMUP_LARGE;
         i++) {
        trace_rec_t r = tr->recs[0];
        r.size_bytes = i < CAP_REPLAY_WARMUP_SMALL ? lo : hi;
        r.t_post_ns = i * 1000;
        r.t_done_ns = (i + 1) * 1000; /* each posted as the previous one completes */
        st = trace_push(*out, &r);
    }
    return st;
}

hs_status_t cap_replay_warmup(cap_conn_t *c, const cap_replay_opts_t *o)
{
    trace_t *w = NULL;
    pred_raw_t raw;
    hs_status_t st;

    if (o->tr->n == 0)
        return HS_OK;
    st = warmup_trace(o->tr, &w);
    if (st != HS_OK)
        goto free_trace;
    st = pred_raw_alloc(&raw, w->n);
    if (st != HS_OK)
        goto free_trace;
    st = cap_replay_run(c, &(cap_replay_opts_t){.tr = w, .hint = o->hint,
                                                .hysteresis = o->hysteresis,
                                                .mode = PRED_CLOSED}, &raw);
    pred_raw_free(&raw);
free_trace:
    if (w)
        trace_free(w);
    return st;
}

hs_status_t cap_replay_run(cap_conn_t *c, const cap_replay_opts_t *o, pred_raw_t *raw)
{
    replay_t *r = calloc(1, sizeof(*r));
    cap_ep_t *ep = c->ep;
    hs_status_t st = HS_ERR_NOMEM;

    if (!r)
        return st;
    *r = (replay_t){.c = c, .o = o, .raw = raw,
                    .sched_ns = calloc(o->tr->n, sizeof(uint64_t)),
                    .post_ns = calloc(o->tr->n, sizeof(uint64_t))};
    if (!r->sched_ns || !r->post_ns)
        goto free_times;
    for (size_t i = 0; i < o->tr->n; i++)
        raw->lat_us[i] = NAN;
    for (int p = 0; p < CAP_NPATHS; p++) {
        ep->qp[p].on_done = replay_done;
        ep->qp[p].on_done_arg = r;
    }
    cap_pace_init(&r->w, ep);
    r->fences = fences_of(ep);
    st = replay_all(r);
    r->fences = fences_of(ep) - r->fences;
    cap_pace_fini(&r->w);
    for (int p = 0; p < CAP_NPATHS; p++)
        ep->qp[p].on_done = NULL;
    if (st == HS_OK && o->overhead)
        overhead_fill(r, o->overhead);
free_times:
    free(r->sched_ns);
    free(r->post_ns);
    free(r);
    return st;
}

void cap_replay_overhead_merge(cap_replay_overhead_t *acc, const cap_replay_overhead_t *run)
{
    acc->polls += run->polls;
    acc->poll_gap_p50_us = fmax(acc->poll_gap_p50_us, run->poll_gap_p50_us);
    acc->poll_gap_p99_us = fmax(acc->poll_gap_p99_us, run->poll_gap_p99_us);
    acc->poll_gap_max_us = fmax(acc->poll_gap_max_us, run->poll_gap_max_us);
    acc->posts += run->posts;
    acc->fences += run->fences;
    acc->post_late_p50_us = fmax(acc->post_late_p50_us, run->post_late_p50_us);
    acc->post_late_p99_us = fmax(acc->post_late_p99_us, run->post_late_p99_us);
    acc->post_late_max_us = fmax(acc->post_late_max_us, run->post_late_max_us);
    acc->post_to_completion_p50_us = fmax(acc->post_to_completion_p50_us,
                                          run->post_to_completion_p50_us);
    acc->post_to_completion_p99_us = fmax(acc->post_to_completion_p99_us,
                                          run->post_to_completion_p99_us);
    acc->post_to_completion_max_us = fmax(acc->post_to_completion_max_us,
                                          run->post_to_completion_max_us);
}

cJSON *cap_replay_overhead_json(const cap_replay_overhead_t *ov)
{
    cJSON *j = cJSON_CreateObject();

    if (!j)
        return NULL;
    cJSON_AddNumberToObject(j, "polls", (double)ov->polls);
    cJSON_AddItemToObject(j, "poll_gap_us",
                          cap_hist_triple_json(ov->poll_gap_p50_us, ov->poll_gap_p99_us,
                                               ov->poll_gap_max_us));
    cJSON_AddNumberToObject(j, "posts", (double)ov->posts);
    cJSON_AddItemToObject(j, "post_late_us",
                          cap_hist_triple_json(ov->post_late_p50_us, ov->post_late_p99_us,
                                               ov->post_late_max_us));
    cJSON_AddItemToObject(j, "post_to_completion_us",
                          cap_hist_triple_json(ov->post_to_completion_p50_us,
                                               ov->post_to_completion_p99_us,
                                               ov->post_to_completion_max_us));
    cJSON_AddNumberToObject(j, "fences", (double)ov->fences);
    return j;
}
