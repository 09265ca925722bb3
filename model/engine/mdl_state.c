/* mdl_state.c - setting up the replay engine's constants and buffers from a profile. */
#include "model/engine/mdl_state.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Path k's ring and batch buffers, and its constants from the rules. */
static hs_status_t path_init(mdl_path_t *pa, const prules_path_t *c)
{
    memset(pa, 0, sizeof(*pa));
    pa->window = c->window;
    pa->batch = c->batch;
    pa->seg_bytes = c->seg_bytes;
    pa->inline_bytes = c->inline_bytes;
    pa->period_ns = c->period_ns;
    pa->event_ns = c->event_ns;
    pa->fixed_ns = c->fixed_ns;
    pa->split_ns = c->split_ns;
    uint32_t cap = 1;
    while (cap < pa->window + 2)
        cap <<= 1;
    pa->mask = cap - 1;
    pa->ring = malloc(cap * sizeof(*pa->ring));
    pa->mem = malloc(pa->batch * sizeof(*pa->mem));
    pa->last_r_ns = 0;
    pa->head_r_ns = pa->timer_close_ns = pa->timer_r_ns = HUGE_VAL;
    return pa->ring && pa->mem ? HS_OK : HS_ERR_NOMEM;
}

/* Both paths and what the replay derives from their constants. Only called with rules
 * prules_init accepted: nothing here divides by a refused value. */
static hs_status_t paths_init(mdl_state_t *s, const prules_t *r)
{
    for (int k = 0; k < 2; k++) {
        hs_status_t st = path_init(&s->path[k], &r->path[k]);
        if (st != HS_OK)
            return st;
        const mdl_path_t *pa = &s->path[k];
        s->seg_shift[k] = r->path[k].seg_shift;
        s->batch_shift[k] = prules_log2_exact(pa->batch);
        s->steady[k].B = pa->window / pa->batch;
        s->steady[k].shape = s->steady[k].B >= 3 && pa->window == s->steady[k].B * pa->batch;
        s->seg_min[k] = pa->seg_bytes && !s->p->nfactors &&
                                pa->seg_bytes <= UINT64_MAX / pa->batch
                            ? pa->seg_bytes * pa->batch : UINT64_MAX;
        s->gate[k] = mdl_gate(s, k);
    }
    return HS_OK;
}

/* The host's, the link's and the switch's constants from the rules. */
static void shared_init(mdl_state_t *s, const prules_t *r)
{
    prules_router_init(&s->route, r->hysteresis);
    s->ns_per_byte = r->ns_per_byte;
    s->mtu = r->mtu_bytes;
    s->mtu_shift = r->mtu_shift;
    s->pkt_ns = r->pkt_ns;
    s->wr_ns = r->wr_ns;
    s->dma_ns = r->dma_ns;
    s->wire2_ns = r->wire2_ns;
    s->post_ns = r->post_ns;
    s->doorbell_ns = r->doorbell_ns;
    s->l1x_ns = r->l1x_ns;
    s->drain_fixed_ns = r->drain_fixed_ns;
    s->pert_window_ns = r->perturb_window_ns;
    s->pert_factor = r->perturb_factor;
}

/* The accelerators o leaves off, with those that need one left off (the entry needs the
 * skip, the steady walk the closed form it continues). */
static unsigned mdl_accel_off(const pred_opts_t *o)
{
    unsigned off = o ? o->model_off : 0;

    if (o && o->every_chunk)
        off |= MODEL_ACCEL_ALL;
    if (o && o->no_bound)
        off |= MODEL_ACCEL_BOUND | MODEL_ACCEL_STEADY | MODEL_ACCEL_SERIAL;
    if (off & MODEL_ACCEL_SKIP)
        off |= MODEL_ACCEL_ENTRY;
    if (off & MODEL_ACCEL_BOUND)
        off |= MODEL_ACCEL_STEADY;
    return off;
}

hs_status_t mdl_state_init(mdl_state_t *s, const trace_t *tr, const profile_t *p,
                           const pred_opts_t *o, uint64_t hint_bytes, pred_raw_t *raw)
{
    prules_t rules;
    hs_status_t st;

    memset(s, 0, sizeof(*s));
    s->tr = tr;
    s->p = p;
    s->raw = raw;
    s->lat_us = raw->lat_us;
    s->pathv = raw->path;
    s->mode = o ? o->mode : PRED_OPEN;
    s->off = mdl_accel_off(o);
    s->hint = hint_bytes;
    s->t0_ns = tr->recs[0].t_post_ns;
    s->pert_from_ns = s->pert_until_ns = -1;
    if ((st = prules_init(p, hint_bytes, &rules)) != HS_OK)
        return st; /* nothing allocated yet */
    shared_init(s, &rules);
    s->route.cur = 0; /* replay_loop routes the first message */
    s->sizes = calloc(2 * MDL_SIZE_CACHE, sizeof(*s->sizes));
    s->memo = calloc(2 * 2 * MDL_MEMO_SLOTS, sizeof(*s->memo));
    s->entry = calloc(2 * 2, sizeof(*s->entry));
    st = s->sizes && s->memo && s->entry ? paths_init(s, &rules) : HS_ERR_NOMEM;
    if (st != HS_OK)
        mdl_state_release(s);
    return st;
}

hs_status_t mdl_state_finish(mdl_state_t *s)
{
    pred_costs_t *c = &s->raw->costs;

    /* the replay's latest report: the paths' latest (mdl_note_report), and what a memo
     * restore set aside (mdl_view_restore) */
    for (int k = 0; k < 2; k++)
        if (s->path[k].last_r_ns > s->t_last_done_ns)
            s->t_last_done_ns = s->path[k].last_r_ns;

    /* Every report is at most the last one and a latency at most the sum: both finite and
     * within a float's range (lat_us) means every figure is. prules_init's bounds make this
     * hold; were one missing, this says so instead of printing inf. */
    if (!(s->t_last_done_ns * 1e-3 < FLT_MAX && s->sum_lat_ns * 1e-3 < DBL_MAX &&
          s->cost_ns.queue + s->cost_ns.drain + s->cost_ns.coalesce + s->cost_ns.l1 < DBL_MAX)) {
        hs_log_error("%s: the replay's times are not finite (last completion %g ns): a "
                     "parameter is outside the range path_rules.c bounds it to",
                     s->p->origin, s->t_last_done_ns);
        return HS_ERR_INVALID;
    }

    c->queue_us = s->cost_ns.queue * 1e-3;
    c->drain_us = s->cost_ns.drain * 1e-3;
    c->coalesce_us = s->cost_ns.coalesce * 1e-3;
    c->l1_us = s->cost_ns.l1 * 1e-3;
    c->base_us = (s->sum_lat_ns - s->cost_ns.queue - s->cost_ns.drain - s->cost_ns.coalesce -
                  s->cost_ns.l1) * 1e-3;
    s->raw->t_last_done_us = s->t_last_done_ns * 1e-3;
    s->raw->switches = s->switches;
    s->raw->sq_full_stalls = s->stalls;
    s->raw->drain_us_total = s->drain_us_total;
    s->raw->chunks_skipped = s->chunks_skipped;
    s->raw->memo_hits = s->memo_hits;
    s->raw->entry_hits = s->entry_hits;
    s->raw->bound_hits = s->bound_hits;
    s->raw->steady_hits = s->steady_hits;
    s->raw->lazy_hits = s->lazy_hits;
    s->raw->serial_hits = s->serial_hits;
    return HS_OK;
}

void mdl_state_release(mdl_state_t *s)
{
    free(s->sizes);
    free(s->memo);
    free(s->entry);
    s->entry = NULL;
    s->sizes = NULL;
    s->memo = NULL;
    for (int k = 0; k < 2; k++) {
        free(s->path[k].ring);
        free(s->path[k].mem);
        s->path[k].ring = NULL;
        s->path[k].mem = NULL;
    }
}
