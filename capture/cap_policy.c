/* cap_policy.c - routing, path configuration, segmenting, signalling and completion
 * bookkeeping of the two-path engine, without any device (see cap_policy.h). */
#include "capture/cap_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cap_path_name(cap_path_id_t id)
{
    return id == CAP_PATH_LL ? "LL" : "BW";
}

void cap_route_init(cap_route_t *r, uint64_t hint_bytes, uint64_t hysteresis)
{
    r->hint_bytes = hint_bytes;
    prules_router_init(&r->router, hysteresis);
}

cap_path_id_t cap_route_class(uint64_t hint_bytes, uint64_t size_bytes)
{
    return (cap_path_id_t)prules_class(hint_bytes, size_bytes);
}

cap_path_id_t cap_route_next(cap_route_t *r, uint64_t size_bytes, int *switched)
{
    *switched = prules_route(&r->router, prules_class(r->hint_bytes, size_bytes));
    return (cap_path_id_t)r->router.cur;
}

static uint32_t clamp_u32(double v)
{
    if (v <= 0)
        return 0;
    if (v >= 4294967295.0)
        return UINT32_MAX;
    return (uint32_t)v;
}

void cap_path_cfg_from_profile(const profile_t *p, uint64_t hint_bytes,
                               cap_path_cfg_t cfg[CAP_NPATHS])
{
    cap_path_cfg_t *ll = &cfg[CAP_PATH_LL], *bw = &cfg[CAP_PATH_BW];

    ll->depth = clamp_u32(p->ll_depth);
    ll->inline_bytes = clamp_u32(p->ll_inline_bytes);
    ll->signal_every = clamp_u32(p->ll_signal_every);
    ll->coal_count = clamp_u32(p->ll_coal_count);
    ll->coal_period_us = p->ll_coal_period_us;
    ll->seg_bytes = (uint64_t)p->ll_seg_bytes;
    ll->moderation_hw = 0;
    bw->depth = clamp_u32(hint_bytes ? p->bw_depth_hinted : p->bw_depth);
    bw->inline_bytes = clamp_u32(p->bw_inline_bytes);
    bw->signal_every = clamp_u32(p->bw_signal_every);
    bw->coal_count = clamp_u32(p->bw_coal_count);
    bw->coal_period_us = p->bw_coal_period_us;
    bw->seg_bytes = (uint64_t)p->bw_seg_bytes;
    bw->moderation_hw = 0;
}

static int wants_moderation(const cap_path_cfg_t *cfg)
{
    return cfg->coal_count > 1 || cfg->coal_period_us > 0;
}

hs_status_t cap_path_cfg_apply_limits(cap_path_id_t id, cap_path_cfg_t *cfg,
                                      const cap_limits_t *lim)
{
    const char *pfx = id == CAP_PATH_LL ? "ll" : "bw";

    if (cfg->depth < 1 || cfg->depth > lim->max_qp_wr) {
        hs_log_error("%s.depth=%u is outside the device limit max_qp_wr=%u", pfx, cfg->depth,
                     lim->max_qp_wr);
        return HS_ERR_INVALID;
    }
    if (cfg->inline_bytes > lim->max_inline) {
        hs_log_error("%s.inline_bytes=%u is above the device limit max_inline_data=%u", pfx,
                     cfg->inline_bytes, lim->max_inline);
        return HS_ERR_INVALID;
    }
    if (cfg->signal_every < 1)
        cfg->signal_every = 1;
    cfg->moderation_hw = 0;
    if (wants_moderation(cfg)) {
        if (lim->cq_mod_supported && cfg->coal_count <= lim->max_cq_count &&
            cfg->coal_period_us <= lim->max_cq_period_us)
            cfg->moderation_hw = 1;
        else if (cfg->coal_count > cfg->signal_every)
            cfg->signal_every = cfg->coal_count; /* emulation: fewer signalled WRs */
    }
    if (cfg->signal_every > cfg->depth) {
        /* A full queue with no signalled WR in it could never drain. */
        hs_log_error("%s.signal_every=%u (after moderation emulation) is above %s.depth=%u", pfx,
                     cfg->signal_every, pfx, cfg->depth);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

typedef struct {
    profile_t *p;
    char *changes;
    size_t len, used;
} effective_t;

/* Set key to v on the profile, noting the change. */
static hs_status_t effective_set(effective_t *e, const char *key, double v)
{
    const prof_param_info_t *info = profile_param_find(key);
    double old;
    hs_status_t st;

    if (!info)
        return HS_ERR_INTERNAL;
    old = profile_get(e->p, (prof_param_id_t)(info - profile_params()));
    if (old == v)
        return HS_OK;
    st = profile_set_value(e->p, key, v, "the live replay's effective configuration "
                                          "(model/MODEL.md 7b)");
    if (st == HS_OK && e->changes && e->used < e->len) {
        int n = snprintf(e->changes + e->used, e->len - e->used, "%s%s %g->%g",
                         e->used ? "; " : "", key, old, v);
        e->used += n > 0 ? (size_t)n : 0;
    }
    return st;
}

/* One path as the live replay applies it: its own signal_every, no coalescing, no
 * interrupt moderation. */
static hs_status_t effective_path(effective_t *e, const char *pfx, const cap_path_cfg_t *cfg)
{
    char key[48];
    hs_status_t st;

    snprintf(key, sizeof(key), "%s.signal_every", pfx);
    st = effective_set(e, key, cfg->signal_every);
    if (st != HS_OK)
        return st;
    snprintf(key, sizeof(key), "%s.coal_count", pfx);
    st = effective_set(e, key, 1);
    if (st != HS_OK)
        return st;
    snprintf(key, sizeof(key), "%s.coal_period_us", pfx);
    st = effective_set(e, key, 0);
    if (st != HS_OK)
        return st;
    snprintf(key, sizeof(key), "%s.irq", pfx);
    return effective_set(e, key, 0);
}

hs_status_t cap_profile_effective(profile_t *p, const cap_path_cfg_t cfg[CAP_NPATHS],
                                  char *changes, size_t len)
{
    static const char *const pfx[CAP_NPATHS] = {"ll", "bw"};
    effective_t e = {p, changes, len, 0};
    hs_status_t st;

    if (changes && len)
        changes[0] = '\0';
    for (int i = 0; i < CAP_NPATHS; i++) {
        st = effective_path(&e, pfx[i], &cfg[i]);
        if (st != HS_OK)
            return st;
    }
    st = effective_set(&e, "switch.perturb_window_us", 0);
    if (st != HS_OK || !cfg[0].mtu_bytes)
        return st;
    return effective_set(&e, "link.mtu_bytes", cfg[0].mtu_bytes);
}

uint64_t cap_seg_count(uint64_t size_bytes, uint64_t seg_bytes)
{
    return prules_nwr(seg_bytes, PRULES_NO_SHIFT, size_bytes);
}

uint64_t cap_seg_len(uint64_t size_bytes, uint64_t seg_bytes, uint64_t i)
{
    uint64_t off;

    if (seg_bytes == 0 || size_bytes <= seg_bytes)
        return i == 0 ? size_bytes : 0;
    off = i * seg_bytes;
    if (off >= size_bytes)
        return 0;
    return size_bytes - off < seg_bytes ? size_bytes - off : seg_bytes;
}

uint64_t cap_chunk_len(uint64_t nwr, uint64_t i, uint32_t signal_every)
{
    uint64_t k = signal_every ? signal_every : 1;

    return nwr - i < k ? nwr - i : k;
}

int cap_sig_wr(uint32_t unsig_run, uint32_t signal_every, uint64_t nwr, uint64_t i,
               int sig_last)
{
    uint64_t k = signal_every ? signal_every : 1;
    int last = i + 1 == nwr;

    if (sig_last && last)
        return 1;
    return (last || (i + 1) % k == 0) && (uint64_t)unsig_run + 1 >= k;
}

hs_status_t cap_track_init(cap_track_t *t, size_t capacity)
{
    t->next_seq = 0;
    t->done_seq = 0;
    t->head = 0;
    t->n = 0;
    t->cap = capacity ? capacity : 1;
    t->fifo = calloc(t->cap, sizeof(*t->fifo));
    return t->fifo ? HS_OK : HS_ERR_NOMEM;
}

void cap_track_release(cap_track_t *t)
{
    free(t->fifo);
    t->fifo = NULL;
    t->cap = t->n = t->head = 0;
}

uint64_t cap_track_outstanding(const cap_track_t *t)
{
    return t->next_seq - t->done_seq;
}

uint64_t cap_track_take(cap_track_t *t, uint64_t n)
{
    uint64_t first = t->next_seq;

    t->next_seq += n;
    return first;
}

hs_status_t cap_track_push(cap_track_t *t, uint64_t msg, uint64_t last_seq)
{
    if (t->n == t->cap)
        return HS_ERR_INTERNAL;
    t->fifo[(t->head + t->n) % t->cap] = (cap_pending_t){msg, last_seq};
    t->n++;
    return HS_OK;
}

size_t cap_track_complete(cap_track_t *t, uint64_t w, cap_pending_t *done, int *implicit,
                          size_t max)
{
    size_t k = 0;

    if (w + 1 > t->done_seq)
        t->done_seq = w + 1;
    while (k < max && t->n > 0 && t->fifo[t->head].last_seq <= w) {
        done[k] = t->fifo[t->head];
        implicit[k] = done[k].last_seq != w;
        t->head = (t->head + 1) % t->cap;
        t->n--;
        k++;
    }
    return k;
}
