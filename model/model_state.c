/* model_state.c - setting up the replay engine's constants and buffers from a profile. */
#include "model/model_state.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MDL_MAX_WINDOW (1u << 24)

static double slot_bytes(const profile_t *p, double inline_bytes)
{
    return p->host_wqe_bb_bytes * ceil((48.0 + inline_bytes) / p->host_wqe_bb_bytes);
}

double mdl_l1_extra_ns(const profile_t *p, uint64_t hint_bytes)
{
    double bw_depth = hint_bytes ? p->bw_depth_hinted : p->bw_depth;
    double f = p->conn_qps * bw_depth * slot_bytes(p, p->bw_inline_bytes);
    double l1 = p->host_l1d_bytes * p->host_l1_sq_share, miss;

    if (hint_bytes)
        f += p->conn_qps * p->ll_depth * slot_bytes(p, p->ll_inline_bytes);
    miss = f <= l1 ? 0 : 1.0 - l1 / f;
    double per_line = p->host_l1_miss_ns - p->host_l1_hit_ns;
    return p->host_sq_lines_per_post * (per_line > 0 ? per_line : 0) * miss;
}

typedef struct {
    double depth, inline_bytes, signal_every, coal_count, coal_period_us, seg_bytes;
    double fixed_ns, split_ns, irq;
} path_cfg_t;

static hs_status_t path_init(mdl_path_t *pa, const profile_t *p, const path_cfg_t *c,
                             const char *name)
{
    double window = c->depth * p->conn_qps;
    double batch = c->signal_every * c->coal_count;

    memset(pa, 0, sizeof(*pa));
    if (window > MDL_MAX_WINDOW) {
        hs_log_error("%s: %s.depth x conn.qps = %g exceeds the model's limit of %u WRs",
                     p->origin, name, window, MDL_MAX_WINDOW);
        return HS_ERR_INVALID;
    }
    pa->window = (uint32_t)window;
    pa->batch = batch < window ? (uint32_t)batch : pa->window;
    pa->seg_bytes = (uint64_t)c->seg_bytes;
    pa->inline_bytes = (uint64_t)c->inline_bytes;
    pa->period_ns = c->coal_period_us * 1e3;
    pa->event_ns = c->irq >= 1 ? p->host_interrupt_ns : p->host_poll_ns;
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

/* log2(v) when v is a power of two, else MDL_NO_SHIFT (also for 0). */
static uint32_t log2_exact(uint64_t v)
{
    return v && !(v & (v - 1)) ? (uint32_t)__builtin_ctzll(v) : MDL_NO_SHIFT;
}

static hs_status_t paths_init(mdl_state_t *s, const profile_t *p, uint64_t hint)
{
    path_cfg_t ll = {p->ll_depth, p->ll_inline_bytes, p->ll_signal_every, p->ll_coal_count,
                     p->ll_coal_period_us, p->ll_seg_bytes, p->ll_fixed_ns, p->ll_split_ns,
                     p->ll_irq};
    path_cfg_t bw = {hint ? p->bw_depth_hinted : p->bw_depth, p->bw_inline_bytes,
                     p->bw_signal_every, p->bw_coal_count, p->bw_coal_period_us,
                     p->bw_seg_bytes, p->bw_fixed_ns, p->bw_split_ns, p->bw_irq};
    hs_status_t st = path_init(&s->path[0], p, &ll, "ll");

    if (st == HS_OK)
        st = path_init(&s->path[1], p, &bw, "bw");
    for (int k = 0; k < 2; k++) {
        s->seg_shift[k] = log2_exact(s->path[k].seg_bytes);
        s->batch_shift[k] = log2_exact(s->path[k].batch);
        const mdl_path_t *pa = &s->path[k];
        s->steady[k].B = pa->window / pa->batch;
        s->steady[k].shape = s->steady[k].B >= 3 && pa->window == s->steady[k].B * pa->batch;
        s->seg_min[k] = pa->seg_bytes && !p->nfactors && pa->seg_bytes <= UINT64_MAX / pa->batch
                            ? pa->seg_bytes * pa->batch : UINT64_MAX;
        s->gate[k] = mdl_gate(s, k);
    }
    return st;
}

hs_status_t mdl_state_init(mdl_state_t *s, const trace_t *tr, const profile_t *p,
                           const pred_opts_t *o, uint64_t hint_bytes, pred_raw_t *raw)
{
    hs_status_t st;

    memset(s, 0, sizeof(*s));
    s->tr = tr;
    s->p = p;
    s->raw = raw;
    s->lat_us = raw->lat_us;
    s->pathv = raw->path;
    s->mode = o ? o->mode : PRED_OPEN;
    s->every_chunk = o ? o->every_chunk : 0;
    s->no_bound = o ? o->no_bound : 0;
    s->hint = hint_bytes;
    s->t0_ns = tr->recs[0].t_post_ns;
    s->cur = 0; /* replay_loop routes the first message */
    s->hysteresis = (int)p->switch_hysteresis;
    s->ns_per_byte = 8.0 / p->link_gbps;
    s->mtu = (uint64_t)p->link_mtu_bytes;
    s->mtu_shift = log2_exact(s->mtu);
    s->pkt_ns = p->link_pkt_ns;
    s->dma_ns = p->link_dma_ns;
    s->wire2_ns = 2.0 * p->link_base_lat_ns;
    s->post_ns = p->host_post_ns;
    s->doorbell_ns = p->host_doorbell_ns;
    s->l1x_ns = mdl_l1_extra_ns(p, hint_bytes);
    s->drain_fixed_ns = p->switch_drain_fixed_us * 1e3;
    s->pert_window_ns = p->switch_perturb_window_us * 1e3;
    s->pert_factor = p->switch_perturb_factor;
    s->pert_from_ns = s->pert_until_ns = -1;
    s->sizes = calloc(2 * MDL_SIZE_CACHE, sizeof(*s->sizes));
    s->memo = calloc(2 * MDL_MEMO_SLOTS, sizeof(*s->memo));
    s->entry = calloc(2, sizeof(*s->entry));
    st = s->sizes && s->memo && s->entry ? paths_init(s, p, hint_bytes) : HS_ERR_NOMEM;
    if (st != HS_OK)
        mdl_state_release(s);
    return st;
}

void mdl_state_finish(mdl_state_t *s)
{
    pred_costs_t *c = &s->raw->costs;

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
