/* mdl_core.h - the steps of the replay (model/MODEL.md sections 2 and 3), shared by the base
 * replay (mdl_replay.c) and the accelerators: a path's batches (open, closed on its ring,
 * reported), the slot wait, a chunk's costs and its trip over the CPU and the link, and the
 * size cache. Inline: they are the per-message path. Internal to model/engine/. */
#ifndef HS_MDL_CORE_H
#define HS_MDL_CORE_H

#include <math.h>

#include "model/engine/mdl_state.h"

/* the per-message path is inlined into the replay loop (measured: bench_model) */
#define MDL_HOT inline __attribute__((always_inline))
#define MDL_COLD __attribute__((noinline))

/* ---- the CPU's and the link's free times in a replay loop ------------------------------ */

/* The state s with its CPU's and link's free times held apart: a replay loop keeps them in
 * a local of this type (mdl_run_take), which the compiler keeps in registers, and writes
 * them back to s (mdl_run_put) before anything that reads them through s runs, taking them
 * again after (mdl_run_get). Through s, each message stored and loaded them again (they
 * were on its chain of dependent steps: a store's round trip to a load; GCC does not keep
 * them in registers itself even in a loop without calls). The steps that move them take
 * this (mdl_batch_pop to mdl_chunk_hw); the rest take s. */
typedef struct {
    mdl_state_t *s;
    double cpu_free_ns, link_free_ns;
} mdl_run_t;

static MDL_HOT mdl_run_t mdl_run_take(mdl_state_t *s)
{
    return (mdl_run_t){s, s->cpu_free_ns, s->link_free_ns};
}

static MDL_HOT void mdl_run_put(const mdl_run_t *r)
{
    r->s->cpu_free_ns = r->cpu_free_ns;
    r->s->link_free_ns = r->link_free_ns;
}

static MDL_HOT void mdl_run_get(mdl_run_t *r)
{
    r->cpu_free_ns = r->s->cpu_free_ns;
    r->link_free_ns = r->s->link_free_ns;
}

/* ---- batches (MODEL.md section 3) --------------------------------------------------- */

/* Queue a closed batch of nwr WRs on pa's ring; the ring head's report time is cached
 * (recomputed without a test: one for the empty ring was a branch mispredicted on about a
 * third of a mixed trace's messages). */
static MDL_HOT void mdl_ring_push(mdl_path_t *pa, double close_ns, uint32_t nwr)
{
    mdl_batch_t *b = &pa->ring[(pa->head + pa->count) & pa->mask];

    b->close_ns = close_ns;
    b->nwr = nwr;
    pa->pushes++;
    if (pa->count++ == 0)
        pa->head_r_ns = close_ns + pa->event_ns;
}

/* The close of the newest batch on pa's ring (count > 0). */
static MDL_HOT const mdl_batch_t *mdl_ring_tail(const mdl_path_t *pa)
{
    return &pa->ring[(pa->head + pa->count - 1) & pa->mask];
}

/* A report at r_ns on pa: the path's latest moves up to it (the replay's latest,
 * s->t_last_done_ns, is the paths' latest, taken by mdl_state_finish: one max a report,
 * not two). */
static MDL_HOT void mdl_note_report(mdl_path_t *pa, double r_ns)
{
    pa->last_r_ns = r_ns > pa->last_r_ns ? r_ns : pa->last_r_ns;
}

/* Report a member of a batch closed at close_ns and reported at r_ns (its message's index,
 * latency reference and hardware completion, as mdl_member_t holds them): its latency, and
 * the coalescing delay it waited for the close. */
static MDL_HOT void mdl_member_report(mdl_state_t *s, size_t idx, double tref_ns, double hw_ns,
                                      double close_ns, double r_ns)
{
    double coal = close_ns - hw_ns; /* > 0 exactly where close_ns > hw_ns */

    s->lat_us[idx] = (float)((r_ns - tref_ns) * 1e-3);
    s->sum_lat_ns += r_ns - tref_ns;
    s->cost_ns.coalesce += coal > 0 ? coal : 0;
}

/* Close the open batch of pa (not empty) at close_ns and report its members; queued: its
 * slots go on the ring (else the caller frees them at once: counted pushed, not written). */
static MDL_HOT void mdl_batch_report(mdl_state_t *s, mdl_path_t *pa, double close_ns,
                                     const int queued)
{
    double r_ns = close_ns + pa->event_ns;

    for (uint32_t j = 0; j < pa->nmem; j++) {
        const mdl_member_t *m = &pa->mem[j];
        mdl_member_report(s, m->idx, m->tref_ns, m->hw_ns, close_ns, r_ns);
    }
    if (queued)
        mdl_ring_push(pa, close_ns, pa->open_n);
    else
        pa->pushes++;
    pa->nmem = 0;
    pa->open_n = 0;
    pa->timer_close_ns = pa->timer_r_ns = HUGE_VAL;
    mdl_note_report(pa, r_ns);
}

/* Close the open batch of pa at close_ns: report its members, queue its slots. */
static MDL_HOT void mdl_batch_close(mdl_state_t *s, mdl_path_t *pa, double close_ns)
{
    if (pa->open_n)
        mdl_batch_report(s, pa, close_ns, 1);
}

/* mdl_batch_add + mdl_batch_close of a one-WR message m on a path whose batches hold one
 * WR: it is reported as soon as it completes (no coalescing delay). */
static MDL_HOT void mdl_batch_one(mdl_state_t *s, mdl_path_t *pa, double hw_ns,
                                  const mdl_msg_t *m)
{
    double r_ns = hw_ns + pa->event_ns;

    s->lat_us[m->idx] = (float)((r_ns - m->tref_ns) * 1e-3);
    s->sum_lat_ns += r_ns - m->tref_ns;
    mdl_ring_push(pa, hw_ns, 1);
    mdl_note_report(pa, r_ns);
}

/* mdl_batch_add + mdl_batch_force_close of a one-WR message m on a path with no open batch
 * whose batches hold more than one WR: the closed loop's poster, which closed the last
 * batch, waits for m's, so m's batch holds m alone and closes at once at its timer (hw +
 * period) or, without one, at m's own completion; reported and queued, the timer left off
 * (callgrind, bench_model --once 0 on pingpong and coldstart: 202 -> 159 instructions a
 * message). */
static MDL_HOT void mdl_batch_alone(mdl_state_t *s, mdl_path_t *pa, double hw_ns,
                                    const mdl_msg_t *m)
{
    double close_ns = pa->period_ns > 0 ? hw_ns + pa->period_ns : hw_ns;
    double r_ns = close_ns + pa->event_ns;

    pa->h1_ns = hw_ns;
    /* mdl_member_report's steps, written out: through it, bench_model's closed-loop rows
     * ran 3% slower (pingpong and coldstart, three alternating runs) */
    s->lat_us[m->idx] = (float)((r_ns - m->tref_ns) * 1e-3);
    s->sum_lat_ns += r_ns - m->tref_ns;
    s->cost_ns.coalesce += close_ns > hw_ns ? close_ns - hw_ns : 0;
    mdl_ring_push(pa, close_ns, 1);
    mdl_note_report(pa, r_ns);
}

/* The close of pa's open batch when the poster needs it: its timer's, else a poll's. */
static MDL_HOT double mdl_forced_close(const mdl_path_t *pa)
{
    return pa->period_ns > 0 ? pa->timer_close_ns : pa->h1_ns;
}

/* The poster needs the open batch: the timer ends it if there is one, else a poll. */
static MDL_HOT void mdl_batch_force_close(mdl_state_t *s, mdl_path_t *pa)
{
    if (pa->open_n)
        mdl_batch_close(s, pa, mdl_forced_close(pa));
}

/* Pop the oldest closed batch: its slots free and its event costs the CPU. */
static MDL_HOT double mdl_batch_pop(mdl_run_t *r, mdl_path_t *pa)
{
    const mdl_batch_t *b = &pa->ring[pa->head];
    double r_ns = b->close_ns + pa->event_ns;

    r->cpu_free_ns = (r->cpu_free_ns > b->close_ns ? r->cpu_free_ns : b->close_ns) + pa->event_ns;
    pa->used -= b->nwr;
    pa->head = (pa->head + 1) & pa->mask;
    double next_r_ns = pa->ring[pa->head].close_ns + pa->event_ns; /* loaded even if stale */
    pa->head_r_ns = --pa->count ? next_r_ns : HUGE_VAL;
    return r_ns;
}

/* mdl_batch_force_close + mdl_batch_pop where the ring is empty and the open batch holds
 * the slots wanted: it is reported and its slots freed without going through the ring.
 * Returns its report time. */
static MDL_HOT double mdl_batch_close_pop(mdl_run_t *r, mdl_path_t *pa)
{
    double c = mdl_forced_close(pa);
    uint32_t n = pa->open_n;

    mdl_batch_report(r->s, pa, c, 0);
    r->cpu_free_ns = (r->cpu_free_ns > c ? r->cpu_free_ns : c) + pa->event_ns;
    pa->used -= n;
    pa->head = (pa->head + 1) & pa->mask; /* where the ring would have held it */
    return c + pa->event_ns;
}

/* The slot wait's next step: pop the ring's oldest batch, or, where the ring is empty,
 * force the open batch closed and free it (open: pa can have an open batch; callers whose
 * batches hold one WR pass 0, a constant). Returns the report time. */
static MDL_HOT double mdl_slot_pop(mdl_run_t *r, mdl_path_t *pa, const int open)
{
    return open && !pa->count && pa->open_n ? mdl_batch_close_pop(r, pa) : mdl_batch_pop(r, pa);
}

/* Add a chunk of nwr WRs completing at hw_ns; last: its message when it is the message's
 * last chunk (a member of the batch), else NULL. */
static MDL_HOT void mdl_batch_add(mdl_state_t *s, mdl_path_t *pa, uint32_t nwr, double hw_ns,
                                  const mdl_msg_t *last)
{
    if (hw_ns > pa->timer_close_ns)
        mdl_batch_close(s, pa, pa->timer_close_ns);
    if (pa->open_n == 0) {
        if (pa->period_ns > 0) {
            pa->timer_close_ns = hw_ns + pa->period_ns;
            pa->timer_r_ns = pa->timer_close_ns + pa->event_ns;
        }
        pa->h1_ns = hw_ns;
    } else if (hw_ns > pa->h1_ns) {
        pa->h1_ns = hw_ns;
    }
    pa->open_n += nwr;
    if (last)
        pa->mem[pa->nmem++] = (mdl_member_t){last->idx, last->tref_ns, hw_ns};
    if (pa->open_n >= pa->batch)
        mdl_batch_close(s, pa, pa->h1_ns);
}

/* ---- the slot wait ------------------------------------------------------------------- */

/* What a post at t finds done on pa: the moderation timer fires on its own, so a batch
 * whose timer report lies at or before t is closed now, not when the next chunk is added
 * (its event is charged here); then every batch reported by t is reaped. timer: pa can
 * have a timer (callers whose batches hold one WR pass 0, a constant). */
static MDL_HOT void mdl_reap_due(mdl_run_t *r, mdl_path_t *pa, double t, const int timer)
{
    if (timer && pa->timer_r_ns <= t) {
        if (!pa->count) { /* closed and reported by t: reaped at once */
            mdl_batch_close_pop(r, pa);
            return;
        }
        mdl_batch_close(r->s, pa, pa->timer_close_ns);
    }
    while (pa->head_r_ns <= t)
        mdl_batch_pop(r, pa);
}

/* Wait until nwr slots are free on pa at or after t_ns; returns the time they are (*stalled
 * set when it waited). timer: as mdl_reap_due's (0 when pa has no open batch, so no timer
 * to fire). */
static MDL_HOT double mdl_slots_acquire(mdl_run_t *r, mdl_path_t *pa, uint32_t nwr,
                                        double t_ns, int *stalled, const int timer)
{
    mdl_reap_due(r, pa, t_ns, timer);
    if (r->cpu_free_ns > t_ns)
        t_ns = r->cpu_free_ns;
    while (pa->used + nwr > pa->window) {
        double r_ns = mdl_slot_pop(r, pa, 1);
        if (r_ns > t_ns) {
            t_ns = r_ns;
            *stalled = 1;
        }
    }
    if (r->cpu_free_ns > t_ns)
        t_ns = r->cpu_free_ns;
    pa->used += nwr;
    return t_ns;
}

/* ---- a chunk's costs and its trip (MODEL.md section 2) ------------------------------- */

static MDL_HOT double mdl_npkt(const mdl_state_t *s, uint64_t bytes)
{
    return prules_npkt(s->mtu, s->mtu_shift, bytes);
}

/* The costs of a chunk of c WRs whose link time is ser_ns. */
static MDL_HOT void mdl_chunk_cost(const mdl_state_t *s, double ser_ns, uint32_t c,
                                   mdl_cost_t *cc)
{
    cc->nwr = c;
    cc->post_ns = c * (s->post_ns + s->l1x_ns) + s->doorbell_ns;
    cc->post_share_ns = c == 1 ? cc->post_ns : cc->post_ns / c;
    cc->ser_ns = ser_ns;
    cc->ser_share_ns = ser_ns / c;
}

/* Fill path k's size cache entry z for size (a miss; inlined: measured, bench_model phased,
 * whose 16 KB sizes nearly all miss). */
static MDL_HOT void mdl_size_fill(mdl_state_t *s, int k, mdl_size_t *z, uint64_t size)
{
    const mdl_path_t *pa = &s->path[k];

    z->tag = size + 1;
    z->npb_ns = s->ns_per_byte;
    z->lat_ns = s->wire2_ns;
    if (s->p->nfactors) {
        z->npb_ns = prules_per_byte(s->p, z->npb_ns, size);
        z->lat_ns *= prules_lat_factor(s->p, size);
    }
    z->lf_ns = z->lat_ns + pa->fixed_ns;
    z->nwr = (uint32_t)prules_nwr(pa->seg_bytes, s->seg_shift[k], size);
    z->dma_ns = size <= pa->inline_bytes ? 0 : s->dma_ns;
    if (z->nwr > pa->batch)
        return; /* segmented: mdl_chunks_plan costs its chunks (ser_ns and the rest unset) */
    z->ser_ns = (double)(int64_t)size * z->npb_ns + mdl_npkt(s, size) * s->pkt_ns +
                (double)z->nwr * s->wr_ns;
    mdl_cost_t c;
    mdl_chunk_cost(s, z->ser_ns, z->nwr, &c);
    z->post_ns = c.post_ns;
    z->post_share_ns = c.post_share_ns;
    z->ser_share_ns = c.ser_share_ns;
}

/* What mdl_size_fill computes for a segmented size (above s->seg_min[k]: no size-dependent
 * factors), without the cache: a segmented message's size is seldom seen twice (measured:
 * bench_model phased, where every 1 MB size missed the cache). */
static MDL_HOT void mdl_size_seg(const mdl_state_t *s, int k, uint64_t size, mdl_size_t *z)
{
    const mdl_path_t *pa = &s->path[k];

    z->npb_ns = s->ns_per_byte;
    z->lat_ns = s->wire2_ns;
    z->lf_ns = z->lat_ns + pa->fixed_ns;
    z->nwr = (uint32_t)mdl_div_up(size, pa->seg_bytes, s->seg_shift[k]);
    z->dma_ns = size <= pa->inline_bytes ? 0 : s->dma_ns;
}

/* Path k's size cache entry of size (computed on a miss). */
static MDL_HOT const mdl_size_t *mdl_size_of(mdl_state_t *s, int k, uint64_t size)
{
    mdl_size_t *z = &s->sizes[(size_t)k * MDL_SIZE_CACHE + ((size * 0x9E3779B97F4A7C15ull) >> 56)];

    if (__builtin_expect(z->tag != size + 1, 0))
        mdl_size_fill(s, k, z, size);
    return z;
}

/* mdl_chunk_hw's flags: a segmented message's last chunk (its completion carries the split
 * cost, inside what the perturbation inflates, MODEL.md 3, 4); a post that may lie in a
 * perturbation window (0 where no switch can have opened one: a replay at hint 0). */
#define MDL_HW_SPLIT 1
#define MDL_HW_PERT 2

/* Hardware completion of a chunk of costs cc and a message of size terms z, posted at
 * t_post on pa. Changes the CPU's and the link's free times and the drain total, nothing
 * else. flags: MDL_HW_* (constants where the caller knows them). */
static MDL_HOT double mdl_chunk_hw(mdl_run_t *r, const mdl_path_t *pa, const mdl_cost_t *cc,
                                   const mdl_size_t *z, double t_post, const int flags)
{
    double nic, start, end, dma = z->dma_ns;

    /* WRs of a chunk pipeline: the link starts after the first WR is posted and ends
     * no earlier than the last WR's post plus its own share of the chunk. */
    r->cpu_free_ns = t_post + cc->post_ns;
    nic = t_post + cc->post_share_ns + dma;
    start = nic > r->link_free_ns ? nic : r->link_free_ns;
    end = start + cc->ser_ns;
    if (cc->nwr > 1 && r->cpu_free_ns + dma + cc->ser_share_ns > end)
        end = r->cpu_free_ns + dma + cc->ser_share_ns;
    r->link_free_ns = end;
    double hw = end + z->lf_ns;
    if ((flags & MDL_HW_SPLIT) && pa->split_ns != 0)
        hw += pa->split_ns;
    if ((flags & MDL_HW_PERT) && mdl_in_window(r->s, t_post)) {
        /* the message's own latency, not the link queueing in front of it */
        double extra = (r->s->pert_factor - 1) * (hw - t_post - (start - nic));
        hw += extra;
        r->s->cost_ns.drain += extra;
    }
    return hw;
}

/* ---- a segmented message's chunks (MODEL.md section 3) ------------------------------- */

/* Plan g (g->nwr > batch WRs): nfull full chunks of a batch of WRs each, their costs kept
 * per path (s->full), and the last chunk (the rest), its costs computed. */
static MDL_HOT void mdl_chunks_plan(mdl_state_t *s, mdl_seg_t *g)
{
    const mdl_path_t *pa = g->m.pa;
    int k = g->m.k;
    uint64_t full_bytes = (uint64_t)pa->batch * pa->seg_bytes, nwr = g->nwr;
    /* nwr < 2^32 (pred_check_trace): a 32-bit division, or a shift */
    uint64_t nfull = s->batch_shift[k] != MDL_NO_SHIFT ? (nwr - 1) >> s->batch_shift[k]
                                                       : (uint32_t)(nwr - 1) / pa->batch;
    mdl_full_t *fc = &s->full[k];

    if (fc->npb_ns != g->z->npb_ns) {
        fc->npb_ns = g->z->npb_ns;
        mdl_chunk_cost(s, (double)full_bytes * g->z->npb_ns + mdl_npkt(s, full_bytes) * s->pkt_ns +
                              (double)pa->batch * s->wr_ns,
                       pa->batch, &fc->cost);
        const double c[] = {fc->cost.post_ns, fc->cost.post_share_ns, fc->cost.ser_ns,
                            fc->cost.ser_share_ns, pa->event_ns, pa->period_ns};
        fc->ties = 0;
        for (size_t j = 0; j < sizeof(c) / sizeof(c[0]); j++) {
            int64_t e = mdl_cost_tie_e(c[j]);
            fc->ties |= e >= -64 && e < 0 ? 1ull << (e + 64) : 0;
        }
    }
    g->full = &fc->cost;
    g->nfull = nfull;
    uint64_t lb = g->m.size - nfull * full_bytes;
    uint32_t last_nwr = (uint32_t)(nwr - nfull * pa->batch);
    mdl_chunk_cost(s, (double)(int64_t)lb * g->z->npb_ns + mdl_npkt(s, lb) * s->pkt_ns +
                          (double)last_nwr * s->wr_ns,
                   last_nwr, &g->last);
}

#endif
