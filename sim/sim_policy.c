/* sim_policy.c - model/path_rules.h's constants in seconds (see sim_policy.h). */
#include "sim/sim_policy.h"

#define NS 1e-9

static void path_cfg(const prules_path_t *r, sim_path_cfg_t *pc)
{
    pc->window = r->window;
    pc->batch = r->batch;
    pc->seg_bytes = r->seg_bytes;
    pc->seg_shift = r->seg_shift;
    pc->inline_bytes = r->inline_bytes;
    pc->period_s = r->period_ns * NS;
    pc->event_s = r->event_ns * NS;
    pc->fixed_s = r->fixed_ns * NS;
    pc->split_s = r->split_ns * NS;
}

hs_status_t sim_cfg_init(const profile_t *p, uint64_t hint_bytes, sim_cfg_t *cfg)
{
    prules_t r;
    hs_status_t st = prules_init(p, hint_bytes, &r);

    if (st != HS_OK)
        return st;
    cfg->p = p;
    cfg->hint_bytes = hint_bytes;
    for (int k = 0; k < SIM_NPATHS; k++)
        path_cfg(&r.path[k], &cfg->path[k]);
    cfg->hysteresis = r.hysteresis;
    cfg->post_s = r.post_ns * NS;
    cfg->doorbell_s = r.doorbell_ns * NS;
    cfg->l1x_s = r.l1x_ns * NS;
    cfg->dma_s = r.dma_ns * NS;
    cfg->pkt_s = r.pkt_ns * NS;
    cfg->wr_s = r.wr_ns * NS;
    cfg->wire2_s = r.wire2_ns * NS;
    cfg->s_per_byte = r.ns_per_byte * NS;
    cfg->mtu_bytes = r.mtu_bytes;
    cfg->mtu_shift = r.mtu_shift;
    cfg->drain_fixed_s = r.drain_fixed_ns * NS;
    cfg->perturb_window_s = r.perturb_window_ns * NS;
    cfg->perturb_factor = r.perturb_factor;
    return HS_OK;
}
