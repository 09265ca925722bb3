/* path_rules.c - deriving each path's constants from a profile, and the parameters' bounds
 * (see path_rules.h; the rules are MODEL.md sections 1, 2 and 5). */
#include "model/path_rules.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Upper bounds per unit. A message (at most 2^40 bytes, 2^32 WRs) then costs at most about
 * 1e25 ns however the parameters combine (the slowest link at the smallest bw factor is
 * 8e12 ns a byte), so a replay's times, summed over any trace that fits in memory, stay
 * far below a double's and a float's (the latencies in us are floats) range. */
#define PRULES_MAX_NS 1e12         /* 1000 s */
#define PRULES_MAX_US 1e9          /* 1000 s */
#define PRULES_MIN_GBPS 1e-6       /* 1 kb/s */
#define PRULES_MAX_GBPS 1e6
#define PRULES_MAX_RATIO 1e6       /* a perturbation factor, SQ lines per post */
#define PRULES_MAX_INT 9007199254740992.0 /* 2^53: whole numbers a double holds exactly */
#define PRULES_MIN_BW_FACTOR 1e-6
#define PRULES_MAX_FACTOR 1e6

/* Parameters that count, divide or multiply: at least 1. */
static const char *const g_at_least_one[] = {
    "ll.depth", "bw.depth", "bw.depth_hinted", "ll.signal_every", "bw.signal_every",
    "ll.coal_count", "bw.coal_count", "conn.qps", "host.wqe_bb_bytes", "link.mtu_bytes",
    "switch.hysteresis", "switch.perturb_factor", NULL};

void prules_param_bounds(const prof_param_info_t *info, double *lo, double *hi)
{
    const char *u = info->unit;

    *lo = 0;
    *hi = info->kind == PROF_INT ? PRULES_MAX_INT : HUGE_VAL;
    for (size_t i = 0; g_at_least_one[i]; i++)
        if (strcmp(info->key, g_at_least_one[i]) == 0)
            *lo = 1;
    if (strcmp(u, "ns") == 0) {
        *hi = PRULES_MAX_NS;
    } else if (strcmp(u, "us") == 0) {
        *hi = PRULES_MAX_US;
    } else if (strcmp(u, "Gb/s") == 0) {
        *lo = PRULES_MIN_GBPS;
        *hi = PRULES_MAX_GBPS;
    } else if (strcmp(u, "frac") == 0 || strcmp(u, "0/1") == 0) {
        *hi = 1;
    } else if (info->kind == PROF_REAL) {
        *hi = PRULES_MAX_RATIO; /* "x", "lines" */
    }
}

void prules_factor_bounds(double *bw_lo, double *bw_hi, double *lat_hi)
{
    *bw_lo = PRULES_MIN_BW_FACTOR;
    *bw_hi = PRULES_MAX_FACTOR;
    *lat_hi = PRULES_MAX_FACTOR;
}

hs_status_t prules_check_param(const char *ctx, const prof_param_info_t *info, double value)
{
    double lo, hi;

    prules_param_bounds(info, &lo, &hi);
    if (value >= lo && value <= hi) /* false for NaN */
        return HS_OK;
    hs_log_error("%s: parameter '%s' = %g is outside %g..%g %s (the range in which every "
                 "time the model and the simulator derive from it stays finite)",
                 ctx, info->key, value, lo, hi, info->unit);
    return HS_ERR_INVALID;
}

hs_status_t prules_check_factor(const char *ctx, size_t i, const prof_factor_t *f)
{
    double bw_lo, bw_hi, lat_hi;

    prules_factor_bounds(&bw_lo, &bw_hi, &lat_hi);
    if (f->bw_factor >= bw_lo && f->bw_factor <= bw_hi && f->lat_factor >= 0 &&
        f->lat_factor <= lat_hi) /* false for NaN */
        return HS_OK;
    hs_log_error("%s: factors[%zu]: bw_factor = %g, lat_factor = %g: bw_factor must be within "
                 "%g..%g and lat_factor within 0..%g (the range in which every time the model "
                 "and the simulator derive stays finite)", ctx, i, f->bw_factor, f->lat_factor,
                 bw_lo, bw_hi, lat_hi);
    return HS_ERR_INVALID;
}

/* Every parameter's range, by id: prules_param_bounds once per process, not its string
 * comparisons once per replay (a fit replays thousands of small traces). */
static double g_lo[PROF_NPARAMS], g_hi[PROF_NPARAMS];
static pthread_once_t g_bounds_once = PTHREAD_ONCE_INIT;

static void bounds_fill(void)
{
    const prof_param_info_t *params = profile_params();

    for (size_t i = 0; i < PROF_NPARAMS; i++)
        prules_param_bounds(&params[i], &g_lo[i], &g_hi[i]);
}

/* Every parameter and factor of p within its bounds (a profile that did not go through
 * profile_validate, e.g. one a fit writes directly, is checked here too). */
static hs_status_t check_profile(const profile_t *p)
{
    const prof_param_info_t *params = profile_params();

    pthread_once(&g_bounds_once, bounds_fill);
    for (size_t i = 0; i < PROF_NPARAMS; i++) {
        double v = profile_get(p, (prof_param_id_t)i);
        if (!(v >= g_lo[i] && v <= g_hi[i]))
            return prules_check_param(p->origin, &params[i], v); /* logs; false for NaN */
    }
    for (size_t i = 0; i < p->nfactors; i++)
        if (prules_check_factor(p->origin, i, &p->factors[i]) != HS_OK)
            return HS_ERR_INVALID;
    return HS_OK;
}

/* A derived constant: finite, else logged naming the parameters it comes from. */
static hs_status_t derived(const profile_t *p, double v, const char *what)
{
    if (isfinite(v))
        return HS_OK;
    hs_log_error("%s: %s is not a finite number (%g)", p->origin, what, v);
    return HS_ERR_INVALID;
}

static double slot_bytes(const profile_t *p, double inline_bytes)
{
    return p->host_wqe_bb_bytes * ceil((48.0 + inline_bytes) / p->host_wqe_bb_bytes);
}

double prules_l1_extra_ns(const profile_t *p, uint64_t hint_bytes)
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

/* One path's parameters as the profile names them (bw.depth_hinted in depth while a hint
 * is set). */
typedef struct {
    const char *name; /* "ll", "bw" */
    const char *depth_key;
    double depth, inline_bytes, signal_every, coal_count, coal_period_us, seg_bytes;
    double fixed_ns, split_ns, irq;
} path_params_t;

/* The window of depth (the value of depth_key) x conn.qps: within 1..PRULES_MAX_WINDOW. */
static hs_status_t window_check(const profile_t *p, const char *depth_key, double depth)
{
    double window = depth * p->conn_qps;

    if (window >= 1 && window <= PRULES_MAX_WINDOW) /* false for NaN */
        return HS_OK;
    hs_log_error("%s: %s x conn.qps = %g is outside 1..%u WRs (the window the model and the "
                 "simulator replay)", p->origin, depth_key, window, PRULES_MAX_WINDOW);
    return HS_ERR_INVALID;
}

hs_status_t prules_check_windows(const profile_t *p)
{
    hs_status_t st = window_check(p, "ll.depth", p->ll_depth);

    if (st != HS_OK)
        return st;
    st = window_check(p, "bw.depth", p->bw_depth);
    if (st != HS_OK)
        return st;
    return window_check(p, "bw.depth_hinted", p->bw_depth_hinted);
}

static hs_status_t path_init(const profile_t *p, const path_params_t *c, prules_path_t *pa)
{
    double window = c->depth * p->conn_qps;
    double batch = c->signal_every * c->coal_count;
    char what[96];
    hs_status_t st;

    memset(pa, 0, sizeof(*pa));
    if ((st = window_check(p, c->depth_key, c->depth)) != HS_OK)
        return st;
    pa->window = (uint32_t)window;
    pa->batch = batch < window ? (uint32_t)(batch < 1 ? 1 : batch) : pa->window;
    pa->seg_bytes = (uint64_t)c->seg_bytes;
    pa->seg_shift = prules_log2_exact(pa->seg_bytes);
    pa->inline_bytes = (uint64_t)c->inline_bytes;
    pa->period_ns = c->coal_period_us * 1e3;
    pa->event_ns = c->irq >= 1 ? p->host_interrupt_ns : p->host_poll_ns;
    pa->fixed_ns = c->fixed_ns;
    pa->split_ns = c->split_ns;
    snprintf(what, sizeof(what), "%s.coal_period_us in ns", c->name);
    if ((st = derived(p, pa->period_ns, what)) != HS_OK)
        return st;
    snprintf(what, sizeof(what), "%s's event cost (host.%s)", c->name,
             c->irq >= 1 ? "interrupt_ns" : "poll_ns");
    if ((st = derived(p, pa->event_ns, what)) != HS_OK)
        return st;
    snprintf(what, sizeof(what), "%s.fixed_ns", c->name);
    if ((st = derived(p, pa->fixed_ns, what)) != HS_OK)
        return st;
    snprintf(what, sizeof(what), "%s.split_ns", c->name);
    return derived(p, pa->split_ns, what);
}

/* The shared host and link constants, each checked finite. */
static hs_status_t shared_init(const profile_t *p, uint64_t hint_bytes, prules_t *r)
{
    hs_status_t st = HS_OK;

    r->hysteresis = p->switch_hysteresis < 1 ? 1 : (uint64_t)p->switch_hysteresis;
    r->post_ns = p->host_post_ns;
    r->doorbell_ns = p->host_doorbell_ns;
    r->l1x_ns = prules_l1_extra_ns(p, hint_bytes);
    r->dma_ns = p->link_dma_ns;
    r->pkt_ns = p->link_pkt_ns;
    r->wr_ns = p->link_wr_ns;
    r->wire2_ns = 2.0 * p->link_base_lat_ns;
    r->ns_per_byte = 8.0 / p->link_gbps;
    r->mtu_bytes = (uint64_t)p->link_mtu_bytes;
    r->mtu_shift = prules_log2_exact(r->mtu_bytes);
    r->drain_fixed_ns = p->switch_drain_fixed_us * 1e3;
    r->perturb_window_ns = p->switch_perturb_window_us * 1e3;
    r->perturb_factor = p->switch_perturb_factor;
    const struct {
        double v;
        const char *what;
    } terms[] = {
        {r->post_ns, "host.post_ns"},
        {r->doorbell_ns, "host.doorbell_ns"},
        {r->l1x_ns, "the L1 term (host.sq_lines_per_post x (host.l1_miss_ns - host.l1_hit_ns))"},
        {r->post_ns + r->l1x_ns, "a WR's post cost (host.post_ns + the L1 term)"},
        {r->dma_ns, "link.dma_ns"},
        {r->pkt_ns, "link.pkt_ns"},
        {r->wr_ns, "link.wr_ns"},
        {r->wire2_ns, "2 x link.base_lat_ns"},
        {r->ns_per_byte, "8 / link.gbps (ns per byte)"},
        {r->drain_fixed_ns, "switch.drain_fixed_us in ns"},
        {r->perturb_window_ns, "switch.perturb_window_us in ns"},
        {r->perturb_factor, "switch.perturb_factor"},
    };
    for (size_t i = 0; i < sizeof(terms) / sizeof(terms[0]) && st == HS_OK; i++)
        st = derived(p, terms[i].v, terms[i].what);
    return st;
}

hs_status_t prules_init(const profile_t *p, uint64_t hint_bytes, prules_t *r)
{
    const path_params_t ll = {"ll", "ll.depth", p->ll_depth, p->ll_inline_bytes,
                              p->ll_signal_every, p->ll_coal_count, p->ll_coal_period_us,
                              p->ll_seg_bytes, p->ll_fixed_ns, p->ll_split_ns, p->ll_irq};
    const path_params_t bw = {"bw", hint_bytes ? "bw.depth_hinted" : "bw.depth",
                              hint_bytes ? p->bw_depth_hinted : p->bw_depth,
                              p->bw_inline_bytes, p->bw_signal_every, p->bw_coal_count,
                              p->bw_coal_period_us, p->bw_seg_bytes, p->bw_fixed_ns,
                              p->bw_split_ns, p->bw_irq};
    hs_status_t st;

    memset(r, 0, sizeof(*r));
    r->hint_bytes = hint_bytes;
    if ((st = check_profile(p)) != HS_OK)
        return st;
    if ((st = path_init(p, &ll, &r->path[PRULES_LL])) != HS_OK)
        return st;
    if ((st = path_init(p, &bw, &r->path[PRULES_BW])) != HS_OK)
        return st;
    return shared_init(p, hint_bytes, r);
}
