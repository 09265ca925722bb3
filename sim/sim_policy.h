/* sim_policy.h - the constants and cost rules of model/MODEL.md, in seconds, for the actors.
 *
 * Pure arithmetic on the profile (no SimGrid): routing with hysteresis, WRs per message,
 * completion batch size, post cost, the L1 footprint term, NIC and link occupancy. The
 * actors (sim_actors.c) decide *when* things happen; this module says *how long* they take,
 * with the same formulas as the analytical model so the two can be compared.
 */
#ifndef HS_SIM_POLICY_H
#define HS_SIM_POLICY_H

#include <stdint.h>

#include "model/profile.h"

enum { SIM_LL = 0, SIM_BW = 1, SIM_NPATHS = 2 };

/* The effective configuration of one path for one hint (MODEL.md section 1). */
typedef struct {
    uint32_t window;       /* W_P = depth x conn.qps slots (WRs) */
    uint32_t batch;        /* E_P = min(signal_every x coal_count, W_P) WRs per event */
    uint64_t seg_bytes;    /* 0 = one WR per message */
    uint64_t inline_bytes; /* messages <= this skip the payload DMA read */
    double period_s;       /* moderation timer, 0 = none */
    double event_s;        /* completion event cost: interrupt if P.irq, else one poll */
    double fixed_s, split_s;
} sim_path_cfg_t;

typedef struct {
    const profile_t *p;    /* for the size factors; must outlive the run */
    uint64_t hint_bytes;
    sim_path_cfg_t path[SIM_NPATHS];
    unsigned hysteresis;
    double post_s, doorbell_s, l1x_s; /* per WR, per chunk, per WR (L1 miss term) */
    double dma_s, pkt_s, wire2_s;     /* DMA read, per packet, data + ack latency */
    double s_per_byte;                /* 8 / link.gbps, in seconds */
    uint64_t mtu_bytes;
    double drain_fixed_s, perturb_window_s, perturb_factor;
} sim_cfg_t;

/* Derive the configuration for hint_bytes (0 = no hint). Returns HS_ERR_INVALID (logged)
 * when a window is too large to simulate. */
hs_status_t sim_cfg_init(const profile_t *p, uint64_t hint_bytes, sim_cfg_t *cfg);

/* Class of a message: SIM_LL if hint > 0 and size <= hint, else SIM_BW. */
int sim_cfg_class(const sim_cfg_t *cfg, uint64_t size_bytes);
/* WRs of a message on a path (>= 1). */
uint64_t sim_cfg_nwr(const sim_path_cfg_t *pc, uint64_t size_bytes);
/* Extra post cost per WR from the SQ footprint exceeding the L1 share (MODEL.md 5). */
double sim_cfg_l1x(const profile_t *p, uint64_t hint_bytes);
/* Seconds per byte on the wire for a message of size_bytes (link rate x bw factor). */
double sim_cfg_s_per_byte(const sim_cfg_t *cfg, double s_per_byte, uint64_t size_bytes);
/* Packets of a chunk of bytes (>= 1). */
double sim_cfg_npkt(const sim_cfg_t *cfg, uint64_t bytes);
/* Latency factor of the size (1 without a factor table). */
double sim_cfg_lat_factor(const sim_cfg_t *cfg, uint64_t size_bytes);

/* Path-choice state with hysteresis: the first message sets the path (no switch). */
typedef struct {
    int cur;      /* current path, -1 before the first message */
    unsigned run; /* consecutive messages of the other class */
} sim_router_t;

void sim_router_init(sim_router_t *r);
/* Path for the next message of class cls; *switched is set when it switches first. */
int sim_router_route(sim_router_t *r, const sim_cfg_t *cfg, int cls, int *switched);

#endif
