/* sim_policy.c - MODEL.md's constants and cost rules in seconds (see sim_policy.h). */
#include "sim/sim_policy.h"

#include <math.h>

#define NS 1e-9
#define SIM_MAX_WINDOW (1u << 22)

static double slot_bytes(const profile_t *p, double inline_bytes)
{
    return p->host_wqe_bb_bytes * ceil((48.0 + inline_bytes) / p->host_wqe_bb_bytes);
}

double sim_cfg_l1x(const profile_t *p, uint64_t hint_bytes)
{
    double bw_depth = hint_bytes ? p->bw_depth_hinted : p->bw_depth;
    double f = p->conn_qps * bw_depth * slot_bytes(p, p->bw_inline_bytes);
    double l1 = p->host_l1d_bytes * p->host_l1_sq_share, miss, per_line;

    if (hint_bytes)
        f += p->conn_qps * p->ll_depth * slot_bytes(p, p->ll_inline_bytes);
    miss = f <= l1 ? 0 : 1.0 - l1 / f;
    per_line = p->host_l1_miss_ns - p->host_l1_hit_ns;
    return p->host_sq_lines_per_post * (per_line > 0 ? per_line : 0) * miss * NS;
}

static hs_status_t path_init(const profile_t *p, sim_path_cfg_t *pc, const char *name,
                             double depth, double inl, double sig, double cc, double period_us,
                             double seg, double fixed_ns, double split_ns, double irq)
{
    double window = depth * p->conn_qps, batch = sig * cc;

    if (window < 1 || window > SIM_MAX_WINDOW) {
        hs_log_error("%s: %s.depth x conn.qps = %g is outside the simulator's range 1..%u",
                     p->origin, name, window, SIM_MAX_WINDOW);
        return HS_ERR_INVALID;
    }
    pc->window = (uint32_t)window;
    pc->batch = batch < window ? (uint32_t)(batch < 1 ? 1 : batch) : pc->window;
    pc->seg_bytes = (uint64_t)seg;
    pc->inline_bytes = (uint64_t)inl;
    pc->period_s = period_us * 1e-6;
    pc->event_s = (irq >= 1 ? p->host_interrupt_ns : p->host_poll_ns) * NS;
    pc->fixed_s = fixed_ns * NS;
    pc->split_s = split_ns * NS;
    return HS_OK;
}

hs_status_t sim_cfg_init(const profile_t *p, uint64_t hint_bytes, sim_cfg_t *cfg)
{
    hs_status_t st;

    cfg->p = p;
    cfg->hint_bytes = hint_bytes;
    st = path_init(p, &cfg->path[SIM_LL], "ll", p->ll_depth, p->ll_inline_bytes,
                   p->ll_signal_every, p->ll_coal_count, p->ll_coal_period_us, p->ll_seg_bytes,
                   p->ll_fixed_ns, p->ll_split_ns, p->ll_irq);
    if (st == HS_OK)
        st = path_init(p, &cfg->path[SIM_BW], "bw",
                       hint_bytes ? p->bw_depth_hinted : p->bw_depth, p->bw_inline_bytes,
                       p->bw_signal_every, p->bw_coal_count, p->bw_coal_period_us,
                       p->bw_seg_bytes, p->bw_fixed_ns, p->bw_split_ns, p->bw_irq);
    if (st != HS_OK)
        return st;
    cfg->hysteresis = p->switch_hysteresis < 1 ? 1 : (unsigned)p->switch_hysteresis;
    cfg->post_s = p->host_post_ns * NS;
    cfg->doorbell_s = p->host_doorbell_ns * NS;
    cfg->l1x_s = sim_cfg_l1x(p, hint_bytes);
    cfg->dma_s = p->link_dma_ns * NS;
    cfg->pkt_s = p->link_pkt_ns * NS;
    cfg->wire2_s = 2.0 * p->link_base_lat_ns * NS;
    cfg->s_per_byte = p->link_gbps > 0 ? 8.0 / p->link_gbps * NS : 0;
    cfg->mtu_bytes = p->link_mtu_bytes >= 1 ? (uint64_t)p->link_mtu_bytes : 4096;
    cfg->drain_fixed_s = p->switch_drain_fixed_us * 1e-6;
    cfg->perturb_window_s = p->switch_perturb_window_us * 1e-6;
    cfg->perturb_factor = p->switch_perturb_factor;
    return HS_OK;
}

int sim_cfg_class(const sim_cfg_t *cfg, uint64_t size_bytes)
{
    return (cfg->hint_bytes > 0 && size_bytes <= cfg->hint_bytes) ? SIM_LL : SIM_BW;
}

uint64_t sim_cfg_nwr(const sim_path_cfg_t *pc, uint64_t size_bytes)
{
    if (pc->seg_bytes == 0 || size_bytes <= pc->seg_bytes)
        return 1;
    return (size_bytes + pc->seg_bytes - 1) / pc->seg_bytes;
}

double sim_cfg_s_per_byte(const sim_cfg_t *cfg, double s_per_byte, uint64_t size_bytes)
{
    return cfg->p->nfactors ? s_per_byte / profile_bw_factor(cfg->p, size_bytes) : s_per_byte;
}

double sim_cfg_npkt(const sim_cfg_t *cfg, uint64_t bytes)
{
    return bytes > cfg->mtu_bytes ? ceil((double)bytes / (double)cfg->mtu_bytes) : 1.0;
}

double sim_cfg_lat_factor(const sim_cfg_t *cfg, uint64_t size_bytes)
{
    return cfg->p->nfactors ? profile_lat_factor(cfg->p, size_bytes) : 1.0;
}

void sim_router_init(sim_router_t *r)
{
    r->cur = -1;
    r->run = 0;
}

int sim_router_route(sim_router_t *r, const sim_cfg_t *cfg, int cls, int *switched)
{
    *switched = 0;
    if (r->cur < 0) {
        r->cur = cls;
    } else if (cls != r->cur) {
        if (++r->run >= cfg->hysteresis) {
            r->cur = cls;
            r->run = 0;
            *switched = 1;
        }
    } else {
        r->run = 0;
    }
    return r->cur;
}
