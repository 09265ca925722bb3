/* sim_policy.h - the constants of model/MODEL.md in seconds, for the actors.
 *
 * The rules themselves (each path's window, batch, segments, timer and costs, the L1 term,
 * WRs of a message, packets of a chunk, size factors, routing with hysteresis) live in
 * model/path_rules.h, shared with the analytical model and the live engine; this module
 * derives them once per replay (prules_init) and keeps the times in SimGrid's seconds
 * (the rules' ns x 1e-9). The actors (sim_actors.c)
 * decide *when* things happen; these constants say *how long* they take.
 */
#ifndef HS_SIM_POLICY_H
#define HS_SIM_POLICY_H

#include <stdint.h>

#include "model/path_rules.h"
#include "model/profile/profile.h"

enum { SIM_LL = PRULES_LL, SIM_BW = PRULES_BW, SIM_NPATHS = PRULES_NPATHS };

/* The effective configuration of one path for one hint (prules_path_t, in seconds). */
typedef struct {
    uint32_t window;       /* W_P slots (WRs) */
    uint32_t batch;        /* E_P WRs per event */
    uint64_t seg_bytes;    /* 0 = one WR per message */
    uint32_t seg_shift;    /* for prules_nwr */
    uint64_t inline_bytes; /* messages <= this skip the payload DMA read */
    double period_s;       /* moderation timer, 0 = none */
    double event_s;        /* completion event cost */
    double fixed_s, split_s;
} sim_path_cfg_t;

typedef struct {
    const profile_t *p;    /* for the size factors; must outlive the run */
    uint64_t hint_bytes;
    sim_path_cfg_t path[SIM_NPATHS];
    uint64_t hysteresis;
    double post_s, doorbell_s, l1x_s; /* per WR, per chunk, per WR (L1 miss term) */
    double dma_s, pkt_s, wr_s, wire2_s; /* DMA read, per packet, per WR, data + ack latency */
    double s_per_byte;                /* 8 / link.gbps, in seconds */
    uint64_t mtu_bytes;
    uint32_t mtu_shift;               /* for prules_npkt */
    double drain_fixed_s, perturb_window_s, perturb_factor;
} sim_cfg_t;

/* Derive the configuration for hint_bytes (0 = no hint) with prules_init. Returns
 * HS_ERR_INVALID (logged) for what the rules refuse. */
hs_status_t sim_cfg_init(const profile_t *p, uint64_t hint_bytes, sim_cfg_t *cfg);

#endif
