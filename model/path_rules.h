/* path_rules.h - the per-path cost rules of model/MODEL.md, written once.
 *
 * What a profile and a hint make of each path (window W_P, batch E_P, segment and inline
 * sizes, moderation timer, event cost, fixed and split costs: section 1), the bounds every
 * profile parameter keeps so that every time derived from it stays finite, the L1 footprint
 * term (section 5), the class of a size, the WRs of a message, the packets of a chunk, the
 * size factors (section 2) and the hysteresis router (section 1). Times are in ns.
 *
 * The analytical model (model_state.c derives its constants once per replay with
 * prules_init; model.c calls the inline rules per message), the simulator (sim_policy.c,
 * which multiplies these ns by 1e-9 for SimGrid's seconds) and the live engine's routing
 * (capture/cap_policy.c) all call this module: a rule changed here changes in every engine.
 */
#ifndef HS_PATH_RULES_H
#define HS_PATH_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"
#include "model/profile/profile.h"

enum { PRULES_LL = 0, PRULES_BW = 1, PRULES_NPATHS = 2 };

/* The inline rules below are compiled for the host and, under nvcc, for the GPU too (the
 * CUDA sweep engine, sweep/sweep_eval_cuda.cu, calls them per message): written once. */
#ifdef __CUDACC__
#define PRULES_HD __host__ __device__
#else
#define PRULES_HD
#endif

/* The largest window W_P = depth x conn.qps (WRs) an engine replays: the simulator keeps
 * a chunk record per slot of both paths, the model a ring of a power of two above it. */
#define PRULES_MAX_WINDOW (1u << 22)
/* prules_log2_exact's answer for a value that is not a power of two. */
#define PRULES_NO_SHIFT 64u

/* One path's configuration for one hint (MODEL.md section 1). */
typedef struct {
    uint32_t window;       /* W_P = D_P x conn.qps slots (WRs), 1..PRULES_MAX_WINDOW */
    uint32_t batch;        /* E_P = min(signal_every x coal_count, W_P), >= 1 */
    uint64_t seg_bytes;    /* 0 = one WR per message */
    uint32_t seg_shift;    /* log2(seg_bytes) when a power of two, else PRULES_NO_SHIFT */
    uint64_t inline_bytes; /* messages <= this skip the payload DMA read */
    double period_ns;      /* moderation timer p_P, 0 = none */
    double event_ns;       /* e_P: host.interrupt_ns if P.irq = 1, else host.poll_ns */
    double fixed_ns, split_ns;
} prules_path_t;

/* Every constant of one replay: both paths and the shared host and link. */
typedef struct {
    uint64_t hint_bytes;
    prules_path_t path[PRULES_NPATHS];
    uint64_t hysteresis;          /* k >= 1 */
    double post_ns, doorbell_ns;  /* per WR, per chunk */
    double l1x_ns;                /* the L1 term, per WR (prules_l1_extra_ns) */
    double dma_ns, pkt_ns, wr_ns; /* payload DMA read; link occupancy per packet, per WR */
    double wire2_ns;              /* data + ack: 2 x link.base_lat_ns */
    double ns_per_byte;           /* 8 / link.gbps */
    uint64_t mtu_bytes;
    uint32_t mtu_shift;           /* log2(mtu_bytes) or PRULES_NO_SHIFT */
    double drain_fixed_ns, perturb_window_ns, perturb_factor;
} prules_t;

/* The range [*lo, *hi] of parameter info: the kind's (>= 0, whole numbers), at least 1 for
 * depths, counts, sizes that divide and factors, and an upper bound per unit that keeps
 * every derived time finite for any trace a replay takes (messages up to 2^40 bytes). */
void prules_param_bounds(const prof_param_info_t *info, double *lo, double *hi);
/* The ranges of a size factor's bw_factor and lat_factor. */
void prules_factor_bounds(double *bw_lo, double *bw_hi, double *lat_hi);
/* Check size factor i (f) against prules_factor_bounds, logging "CTX: factors[I]: ..." when
 * it is outside. */
hs_status_t prules_check_factor(const char *ctx, size_t i, const prof_factor_t *f);
/* Check value against prules_param_bounds, logging "CTX: parameter 'KEY' = V is outside
 * LO..HI UNIT ..." when it is not inside. */
hs_status_t prules_check_param(const char *ctx, const prof_param_info_t *info, double value);

/* Every window a hint can give p (ll.depth, bw.depth and bw.depth_hinted, each x conn.qps)
 * within 1..PRULES_MAX_WINDOW; HS_ERR_INVALID (logged, naming the parameter) otherwise.
 * profile_validate calls it, so a profile no engine could replay is refused at load. */
hs_status_t prules_check_windows(const profile_t *p);

/* Derive every constant of a replay of profile p under hint_bytes (0 = no hint), once.
 * Checks each parameter it reads against its bounds, each path's window against
 * PRULES_MAX_WINDOW and each derived time for finiteness; HS_ERR_INVALID (logged, naming
 * p->origin and the parameter) otherwise, and then *r is not to be used. */
hs_status_t prules_init(const profile_t *p, uint64_t hint_bytes, prules_t *r);

/* Per-WR extra post cost of the L1 term for this profile and hint (MODEL.md section 5). */
double prules_l1_extra_ns(const profile_t *p, uint64_t hint_bytes);

/* log2(v) when v is a power of two, else PRULES_NO_SHIFT (also for 0). */
static inline uint32_t prules_log2_exact(uint64_t v)
{
    return v && !(v & (v - 1)) ? (uint32_t)__builtin_ctzll(v) : PRULES_NO_SHIFT;
}

/* ceil(a / d), with d = 2^sh unless sh is PRULES_NO_SHIFT (a + d - 1 must not wrap:
 * sizes are at most 2^40, pred_check_trace). */
PRULES_HD static inline uint64_t prules_div_up(uint64_t a, uint64_t d, uint32_t sh)
{
    return sh != PRULES_NO_SHIFT ? (a + d - 1) >> sh : (a + d - 1) / d;
}

/* The class of a message: LL (0) if a hint is set and size <= hint, else BW (1). */
PRULES_HD static inline int prules_class(uint64_t hint_bytes, uint64_t size_bytes)
{
    return (hint_bytes > 0 && size_bytes <= hint_bytes) ? PRULES_LL : PRULES_BW;
}

/* WRs of a message of size bytes on a path of segment seg_bytes (shift: its
 * prules_log2_exact): ceil(size / seg), 1 when seg is 0 or size <= seg. */
PRULES_HD static inline uint64_t prules_nwr(uint64_t seg_bytes, uint32_t seg_shift, uint64_t size_bytes)
{
    return seg_bytes && size_bytes > seg_bytes ? prules_div_up(size_bytes, seg_bytes, seg_shift)
                                               : 1;
}

/* Packets of a chunk of bytes: max(1, ceil(bytes / mtu)) (as a double: it multiplies a
 * time; exact, chunks are at most 2^40 bytes). */
PRULES_HD static inline double prules_npkt(uint64_t mtu_bytes, uint32_t mtu_shift, uint64_t bytes)
{
    return bytes > mtu_bytes ? (double)(int64_t)prules_div_up(bytes, mtu_bytes, mtu_shift) : 1.0;
}

/* The size factor segment of size: the first with size <= max_bytes; NULL when none (then
 * both factors are 1: profile_bw_factor, profile_lat_factor). */
PRULES_HD static inline const prof_factor_t *prules_factor_of(const profile_t *p,
                                                              uint64_t size_bytes)
{
    for (size_t i = 0; i < p->nfactors; i++)
        if (size_bytes <= p->factors[i].max_bytes)
            return &p->factors[i];
    return NULL;
}

/* A per-byte link time (in any unit) at size: divided by the size's bw factor (first
 * segment with size <= max_bytes; unchanged without a factor table). */
PRULES_HD static inline double prules_per_byte(const profile_t *p, double per_byte,
                                               uint64_t size_bytes)
{
    const prof_factor_t *f = p->nfactors ? prules_factor_of(p, size_bytes) : NULL;

    return p->nfactors ? per_byte / (f ? f->bw_factor : 1.0) : per_byte;
}

/* The latency factor of size (1 without a factor table). */
PRULES_HD static inline double prules_lat_factor(const profile_t *p, uint64_t size_bytes)
{
    const prof_factor_t *f = p->nfactors ? prules_factor_of(p, size_bytes) : NULL;

    return f ? f->lat_factor : 1.0;
}

/* ---- the hysteresis router (MODEL.md section 1) --------------------------------------- */

typedef struct {
    int cur;             /* the current path, -1 before the first message */
    uint64_t run;        /* consecutive messages of the other class */
    uint64_t hysteresis; /* k >= 1 */
} prules_router_t;

/* A router before the first message; hysteresis below 1 is 1 (switch at once). */
PRULES_HD static inline void prules_router_init(prules_router_t *r, uint64_t hysteresis)
{
    r->cur = -1;
    r->run = 0;
    r->hysteresis = hysteresis < 1 ? 1 : hysteresis;
}

/* Route a message of class cls. The first message sets the path (no switch); one of the
 * current class resets the run; the k-th in a row of the other class switches. Returns 1
 * when the path switches before this message (r->cur is then cls), else 0; the message
 * takes r->cur either way. */
PRULES_HD static inline int prules_route(prules_router_t *r, int cls)
{
    if (cls == r->cur) {
        r->run = 0;
        return 0;
    }
    if (r->cur < 0) {
        r->cur = cls;
        return 0;
    }
    if (++r->run < r->hysteresis)
        return 0;
    r->cur = cls;
    r->run = 0;
    return 1;
}

#endif
