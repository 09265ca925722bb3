/* model.c - the analytical replay engine (model_engine_ops): the recursion of
 * model/MODEL.md, O(1) amortised per message.
 *
 * Each path keeps a FIFO ring of closed-but-unreported completion batches (slots free when
 * a batch is reported) and one open batch with its member messages; the CPU and the link
 * are single FIFO resources shared by both paths. Nothing is allocated per message.
 * A message of one WR takes post_w1 (the common case, a straight line), one of a chunk
 * post_one_chunk; a segmented one takes post_chunks, which applies an earlier identical
 * replay shifted when one is kept (the memo, model_memo.h) and else replays its chunks
 * (chunks_run): on an idle path from the start an earlier message kept (mdl_entry_t), the
 * full ones between the first and the last through chunk_full, the others through
 * chunk_step, jumping over the chunks that repeat the last one (chunks_skip: the ring
 * shifted when it is one run of equally spaced batches, rolled while the batches the next
 * chunks pop continue the spacing); on a saturated path, where every chunk starts when the
 * link frees, the whole message in closed form (chunks_bound), by formulas when it meets the
 * ring the previous one left (chunks_steady); on a path whose window holds one full batch,
 * the whole message in closed form too (chunks_serial); MODEL.md section 3. A saturated
 * path's closed form leaves its own batches unwritten (mdl_steady_t.lazy: steady_fill
 * writes them before anything else reads that ring), and the next segmented message there
 * goes to it first, as one on a one-batch window goes to chunks_serial, before
 * post_chunks and its memo (closed_next). The loop over messages is compiled once per mode
 * (open / closed, hint 0 / routed); the routed one posts through a copy per path, and a run
 * of messages of the current path's class past the perturbation window goes through
 * replay_run, with no routing. Speed: model/README.md, bench/bench_model.c. */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model_memo.h"
#include "model/model_state.h"

_Static_assert(TRACE_F_PATH_BW == TRACE_F_PATH_LL << 1, "path flags: BW = LL << 1");

/* the per-message path is inlined into the replay loop (measured: bench_model) */
#define HS_HOT inline __attribute__((always_inline))

/* ---- batches ------------------------------------------------------------------- */

/* Queue a closed batch of nwr WRs on pa's ring; the ring head's report time is cached
 * (recomputed without a test: one for the empty ring was a branch mispredicted on about a
 * third of a mixed trace's messages). */
static HS_HOT void ring_push(mdl_path_t *pa, double close_ns, uint32_t nwr)
{
    mdl_batch_t *b = &pa->ring[(pa->head + pa->count) & pa->mask];

    b->close_ns = close_ns;
    b->nwr = nwr;
    pa->pushes++;
    if (pa->count++ == 0)
        pa->head_r_ns = close_ns + pa->event_ns;
}

/* A report at r_ns on pa: the latest of the path and of the replay move up to it. */
static HS_HOT void note_report(mdl_state_t *s, mdl_path_t *pa, double r_ns)
{
    pa->last_r_ns = r_ns > pa->last_r_ns ? r_ns : pa->last_r_ns;
    s->t_last_done_ns = r_ns > s->t_last_done_ns ? r_ns : s->t_last_done_ns;
}

/* Close the open batch of pa (not empty) at close_ns and report its members; queued: its
 * slots go on the ring (else the caller frees them at once: counted pushed, not written). */
static HS_HOT void batch_report(mdl_state_t *s, mdl_path_t *pa, double close_ns,
                                const int queued)
{
    double r_ns = close_ns + pa->event_ns;

    for (uint32_t j = 0; j < pa->nmem; j++) {
        const mdl_member_t *m = &pa->mem[j];
        double coal = close_ns > m->hw_ns ? close_ns - m->hw_ns : 0;
        s->lat_us[m->idx] = (float)((r_ns - m->tref_ns) * 1e-3);
        s->sum_lat_ns += r_ns - m->tref_ns;
        s->cost_ns.coalesce += coal;
    }
    if (queued)
        ring_push(pa, close_ns, pa->open_n);
    else
        pa->pushes++;
    pa->nmem = 0;
    pa->open_n = 0;
    pa->timer_close_ns = pa->timer_r_ns = HUGE_VAL;
    note_report(s, pa, r_ns);
}

/* Close the open batch of pa at close_ns: report its members, queue its slots. */
static HS_HOT void batch_close(mdl_state_t *s, mdl_path_t *pa, double close_ns)
{
    if (pa->open_n)
        batch_report(s, pa, close_ns, 1);
}

/* batch_add + batch_close of a one-WR message on a path whose batches hold one WR: it is
 * reported as soon as it completes (no coalescing delay). */
static HS_HOT void batch_one(mdl_state_t *s, mdl_path_t *pa, double hw_ns, size_t member,
                             double tref_ns)
{
    double r_ns = hw_ns + pa->event_ns;

    s->lat_us[member] = (float)((r_ns - tref_ns) * 1e-3);
    s->sum_lat_ns += r_ns - tref_ns;
    ring_push(pa, hw_ns, 1);
    note_report(s, pa, r_ns);
}

/* The poster needs the open batch: the timer ends it if there is one, else a poll. */
static HS_HOT void batch_force_close(mdl_state_t *s, mdl_path_t *pa)
{
    if (pa->open_n)
        batch_close(s, pa, pa->period_ns > 0 ? pa->timer_close_ns : pa->h1_ns);
}

/* Pop the oldest closed batch: its slots free and its event costs the CPU. */
static HS_HOT double batch_pop(mdl_state_t *s, mdl_path_t *pa)
{
    const mdl_batch_t *b = &pa->ring[pa->head];
    double r_ns = b->close_ns + pa->event_ns;

    s->cpu_free_ns = (s->cpu_free_ns > b->close_ns ? s->cpu_free_ns : b->close_ns) + pa->event_ns;
    pa->used -= b->nwr;
    pa->head = (pa->head + 1) & pa->mask;
    double next_r_ns = pa->ring[pa->head].close_ns + pa->event_ns; /* loaded even if stale */
    pa->head_r_ns = --pa->count ? next_r_ns : HUGE_VAL;
    return r_ns;
}

/* batch_force_close + batch_pop where the ring is empty and the open batch holds the slots
 * wanted: it is reported and its slots freed without going through the ring. Returns its
 * report time. */
static HS_HOT double batch_close_pop(mdl_state_t *s, mdl_path_t *pa)
{
    double c = pa->period_ns > 0 ? pa->timer_close_ns : pa->h1_ns;
    uint32_t n = pa->open_n;

    batch_report(s, pa, c, 0);
    s->cpu_free_ns = (s->cpu_free_ns > c ? s->cpu_free_ns : c) + pa->event_ns;
    pa->used -= n;
    pa->head = (pa->head + 1) & pa->mask; /* where the ring would have held it */
    return c + pa->event_ns;
}

/* The slot wait's next step: pop the ring's oldest batch, or, where the ring is empty, force
 * the open batch closed and free it (open: pa can have an open batch; callers whose batches
 * hold one WR pass 0, a constant). Returns the report time. */
static HS_HOT double slot_pop(mdl_state_t *s, mdl_path_t *pa, const int open)
{
    return open && !pa->count && pa->open_n ? batch_close_pop(s, pa) : batch_pop(s, pa);
}

/* Add a chunk completing at hw_ns; member >= 0 when it is its message's last chunk. */
static HS_HOT void batch_add(mdl_state_t *s, mdl_path_t *pa, uint32_t nwr, double hw_ns,
                      size_t member, int is_last, double tref_ns)
{
    if (hw_ns > pa->timer_close_ns)
        batch_close(s, pa, pa->timer_close_ns);
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
    if (is_last)
        pa->mem[pa->nmem++] = (mdl_member_t){member, tref_ns, hw_ns};
    if (pa->open_n >= pa->batch)
        batch_close(s, pa, pa->h1_ns);
}

/* What a post at t finds done on pa: the moderation timer fires on its own, so a batch
 * whose timer report lies at or before t is closed now, not when the next chunk is added
 * (its event is charged here); then every batch reported by t is reaped. timer: pa can
 * have a timer (callers whose batches hold one WR pass 0, a constant). */
static HS_HOT void reap_due(mdl_state_t *s, mdl_path_t *pa, double t, const int timer)
{
    if (timer && pa->timer_r_ns <= t) {
        if (!pa->count) { /* closed and reported by t: reaped at once */
            batch_close_pop(s, pa);
            return;
        }
        batch_close(s, pa, pa->timer_close_ns);
    }
    while (pa->head_r_ns <= t)
        batch_pop(s, pa);
}

/* Wait until nwr slots are free on pa at or after t_ns; returns the time they are. timer:
 * as reap_due's (0 when pa has no open batch, so no timer to fire). */
static HS_HOT double slots_acquire(mdl_state_t *s, mdl_path_t *pa, uint32_t nwr, double t_ns,
                                   int *stalled, const int timer)
{
    reap_due(s, pa, t_ns, timer);
    if (s->cpu_free_ns > t_ns)
        t_ns = s->cpu_free_ns;
    while (pa->used + nwr > pa->window) {
        double r_ns = slot_pop(s, pa, 1);
        if (r_ns > t_ns) {
            t_ns = r_ns;
            *stalled = 1;
        }
    }
    if (s->cpu_free_ns > t_ns)
        t_ns = s->cpu_free_ns;
    pa->used += nwr;
    return t_ns;
}

/* ---- one message ------------------------------------------------------------------ */

static double npkt_of(const mdl_state_t *s, uint64_t bytes)
{
    return prules_npkt(s->mtu, s->mtu_shift, bytes);
}


static HS_HOT void chunk_cost(const mdl_state_t *s, double ser_ns, uint32_t c, chunk_cost_t *cc)
{
    cc->nwr = c;
    cc->post_ns = c * (s->post_ns + s->l1x_ns) + s->doorbell_ns;
    cc->post_share_ns = c == 1 ? cc->post_ns : cc->post_ns / c;
    cc->ser_ns = ser_ns;
    cc->ser_share_ns = ser_ns / c;
}

/* Fill path k's size cache entry z for size (a miss; inlined: measured, bench_model phased,
 * whose 16 KB sizes nearly all miss). */
static HS_HOT void size_fill(mdl_state_t *s, int k, mdl_size_t *z, uint64_t size)
{
    const mdl_path_t *pa = &s->path[k];

    z->tag = size + 1;
    z->npb_ns = s->ns_per_byte;
    z->lat_ns = s->wire2_ns;
    if (s->p->nfactors) {
        z->npb_ns = prules_per_byte(s->p, z->npb_ns, size);
        z->lat_ns *= prules_lat_factor(s->p, size);
    }
    z->nwr = (uint32_t)prules_nwr(pa->seg_bytes, s->seg_shift[k], size);
    z->dma_ns = size <= pa->inline_bytes ? 0 : s->dma_ns;
    if (z->nwr > pa->batch)
        return; /* segmented: chunks_plan costs its chunks (ser_ns and the rest unset) */
    z->ser_ns = (double)(int64_t)size * z->npb_ns + npkt_of(s, size) * s->pkt_ns;
    chunk_cost_t c;
    chunk_cost(s, z->ser_ns, z->nwr, &c);
    z->post_ns = c.post_ns;
    z->post_share_ns = c.post_share_ns;
    z->ser_share_ns = c.ser_share_ns;
}

/* What size_fill computes for a segmented size (above s->seg_min[k]: no size-dependent
 * factors), without the cache: a segmented message's size is seldom seen twice (measured:
 * bench_model phased, where every 1 MB size missed the cache). */
static HS_HOT void size_seg(const mdl_state_t *s, int k, uint64_t size, mdl_size_t *z)
{
    const mdl_path_t *pa = &s->path[k];

    z->npb_ns = s->ns_per_byte;
    z->lat_ns = s->wire2_ns;
    z->nwr = (uint32_t)mdl_div_up(size, pa->seg_bytes, s->seg_shift[k]);
    z->dma_ns = size <= pa->inline_bytes ? 0 : s->dma_ns;
}

/* Path k's size cache entry of size (computed on a miss). */
static HS_HOT const mdl_size_t *size_of(mdl_state_t *s, int k, uint64_t size)
{
    mdl_size_t *z = &s->sizes[(size_t)k * MDL_SIZE_CACHE + ((size * 0x9E3779B97F4A7C15ull) >> 56)];

    if (__builtin_expect(z->tag != size + 1, 0))
        size_fill(s, k, z, size);
    return z;
}

/* Hardware completion of a chunk posted at t_post; split: the split cost when it is a
 * segmented message's last chunk (inside what the perturbation inflates, MODEL.md 3, 4);
 * pert: 0 (a constant) where no switch can have opened a perturbation window (a replay at
 * hint 0). Changes the CPU's and the link's free times and the drain total, nothing else. */
static HS_HOT double chunk_hw_p(mdl_state_t *s, const mdl_path_t *pa, const chunk_cost_t *cc,
                                double dma, double lat, double split, double t_post,
                                const int pert)
{
    double nic, start, end;

    /* WRs of a chunk pipeline: the link starts after the first WR is posted and ends
     * no earlier than the last WR's post plus its own share of the chunk. */
    s->cpu_free_ns = t_post + cc->post_ns;
    nic = t_post + cc->post_share_ns + dma;
    start = nic > s->link_free_ns ? nic : s->link_free_ns;
    end = start + cc->ser_ns;
    if (cc->nwr > 1 && s->cpu_free_ns + dma + cc->ser_share_ns > end)
        end = s->cpu_free_ns + dma + cc->ser_share_ns;
    s->link_free_ns = end;
    double hw = end + lat + pa->fixed_ns;
    if (split != 0) /* folded away where callers pass a constant 0 (one-WR messages) */
        hw += split;
    if (pert && mdl_in_window(s, t_post)) {
        /* the message's own latency, not the link queueing in front of it */
        double extra = (s->pert_factor - 1) * (hw - t_post - (start - nic));
        hw += extra;
        s->cost_ns.drain += extra;
    }
    return hw;
}

static HS_HOT double chunk_hw(mdl_state_t *s, const mdl_path_t *pa, const chunk_cost_t *cc,
                              double dma, double lat, double split, double t_post)
{
    return chunk_hw_p(s, pa, cc, dma, lat, split, t_post, 1);
}

/* post_one_chunk for a message of one WR, the common case: the slot wait without what
 * cannot happen (b1: pa's batches hold one WR, so no open batch and no timer; callers pass
 * a constant so that each case compiles to its own straight line). Measured 12-15% faster on kv and burst than post_one_chunk(.., 1, ..). */
static HS_HOT void post_w1(mdl_state_t *s, mdl_path_t *pa, int k, const mdl_size_t *z,
                           size_t i, double t_ns, double tref_ns, const int b1, const int pert)
{
    s->cost_ns.l1 += s->l1x_ns;
    double t0 = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
    reap_due(s, pa, t0, !b1);
    double t = t0 > s->cpu_free_ns ? t0 : s->cpu_free_ns;
    if (pa->used >= pa->window) {
        double t_wait = t;
        while (pa->used >= pa->window) {
            double r_ns = slot_pop(s, pa, !b1);
            t = r_ns > t ? r_ns : t;
        }
        s->stalls += t > t_wait;
        t = t > s->cpu_free_ns ? t : s->cpu_free_ns;
    }
    pa->used++;
    s->cost_ns.queue += t - t0;
    /* one WR: its shares of the post and of the link time are the whole (chunk_cost) */
    chunk_cost_t cc = {z->post_ns, z->post_ns, z->ser_ns, z->ser_ns, 1};
    double hw = chunk_hw_p(s, pa, &cc, z->dma_ns, z->lat_ns, 0, t, pert);
    if (b1)
        batch_one(s, pa, hw, i, tref_ns);
    else
        batch_add(s, pa, 1, hw, i, 1, tref_ns);
}

/* Post message i, of 1 < nwr <= batch WRs (one chunk; so pa's batches hold more than one
 * WR), on pa (index k) from t_ns on; pert as chunk_hw_p's. */
static HS_HOT void post_one_chunk(mdl_state_t *s, mdl_path_t *pa, int k, const mdl_size_t *z,
                                  uint32_t nwr, size_t i, double t_ns, double tref_ns,
                                  const int pert)
{
    int stalled = 0;

    s->cost_ns.l1 += (double)nwr * s->l1x_ns;
    double t0 = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
    double t_post = slots_acquire(s, pa, nwr, t0, &stalled, 1);
    chunk_cost_t cc = {z->post_ns, z->post_share_ns, z->ser_ns, z->ser_share_ns, nwr};
    s->cost_ns.queue += t_post - t0;
    double hw = chunk_hw_p(s, pa, &cc, z->dma_ns, z->lat_ns, pa->split_ns, t_post, pert);
    batch_add(s, pa, nwr, hw, i, 1, tref_ns);
    s->stalls += (uint64_t)stalled;
}

/* ---- steady state of a segmented message (MODEL.md section 3) ---------------------- */

/* A full chunk posted at t_post closed its own batch of E_P WRs at hw (regular: the one
 * push of its batch_add; a full chunk always leaves no open batch) or not; extend or
 * restart the run of equally spaced batches. */
static HS_HOT void track_batch(mdl_track_t *k, int regular, double hw, double t_post)
{
    if (!regular) {
        k->run = 0;
        return;
    }
    if (k->run == 1 || (k->run >= 2 && !mdl_same_time(hw - k->close_ns, k->gap_ns, mdl_time_tol(t_post)))) {
        k->gap_ns = hw - k->close_ns;
        k->run = 2;
    } else {
        k->run++; /* also 0 -> 1 */
    }
    k->close_ns = hw;
}

/* How many of m further chunks, each lambda after the last (posted at t), post on the same
 * side of the perturbation window's edges as t does. */
static uint64_t skip_limit(const mdl_state_t *s, double t, double lambda, uint64_t m)
{
    double edge = mdl_next_edge(s, t);

    if (edge == HUGE_VAL)
        return m;
    double fit = floor((edge - t) / lambda);
    uint64_t lim = fit < (double)m ? (uint64_t)(fit > 0 ? fit : 0) : m;
    while (lim > 0 && t + (double)lim * lambda >= edge)
        lim--;
    return lim;
}

/* What jumping m further full chunks, each repeating the last step shifted by lambda and
 * adding drain_step, does besides the ring: shift the chunk time *t_ns, the CPU and the
 * link, and count the chunks. Returns the shift. */
static double skip_shift(mdl_state_t *s, double *t_ns, uint64_t m, double lambda,
                         double drain_step)
{
    double shift = (double)m * lambda;
    *t_ns += shift;
    s->cost_ns.drain += (double)m * drain_step;
    s->cpu_free_ns += shift;
    s->link_free_ns += shift;
    s->chunks_skipped += m;
    return shift;
}

/* Jump m further full chunks (skip_shift) on a ring that is one run: shift the ring. */
static __attribute__((noinline)) void skip_apply(mdl_state_t *s, mdl_path_t *pa, double *t_ns,
                                                 uint64_t m, double lambda, double drain_step)
{
    double shift = skip_shift(s, t_ns, m, lambda, drain_step);
    for (uint32_t j = 0; j < pa->count; j++)
        pa->ring[(pa->head + j) & pa->mask].close_ns += shift;
    if (pa->count) {
        double r_ns = pa->ring[(pa->head + pa->count - 1) & pa->mask].close_ns + pa->event_ns;
        pa->head_r_ns = pa->ring[pa->head].close_ns + pa->event_ns;
        note_report(s, pa, r_ns);
    }
}

/* Batches from pa's head on, of nwr WRs each, lambda apart (to within tol) after the one
 * before the head closed at prev_ns: how many, at most lim. */
static uint32_t head_run(const mdl_path_t *pa, double prev_ns, double lambda, double tol,
                         uint32_t nwr, uint32_t lim)
{
    uint32_t r = 0;

    for (; r < pa->count && r < lim; r++) {
        const mdl_batch_t *b = &pa->ring[(pa->head + r) & pa->mask];
        if (b->nwr != nwr || !mdl_same_time(b->close_ns - prev_ns, lambda, tol))
            break;
        prev_ns = b->close_ns;
    }
    return r;
}

/* Jump m further full chunks (skip_shift) whose steps each pop the ring's head and push
 * their own batch lambda after the last (chunks_skip's second case): roll the ring by m and
 * extend k's run of equally spaced batches. */
static __attribute__((noinline)) void skip_roll(mdl_state_t *s, mdl_path_t *pa, double *t_ns,
                                                uint64_t m, double lambda, double drain_step,
                                                mdl_track_t *k)
{
    const mdl_batch_t *tail = &pa->ring[(pa->head + pa->count - 1) & pa->mask];
    double close_ns = tail->close_ns, shift = skip_shift(s, t_ns, m, lambda, drain_step);
    uint32_t nwr = tail->nwr;

    for (uint64_t j = 1; j <= m; j++) {
        pa->head = (pa->head + 1) & pa->mask;
        mdl_batch_t *b = &pa->ring[(pa->head + pa->count - 1) & pa->mask];
        b->close_ns = close_ns + (double)j * lambda;
        b->nwr = nwr;
    }
    pa->head_r_ns = pa->ring[pa->head].close_ns + pa->event_ns;
    note_report(s, pa, close_ns + shift + pa->event_ns);
    /* the pushed batches continue the run at the tail when it is lambda apart */
    if (!(k->run >= 2 && mdl_same_time(k->gap_ns, lambda, mdl_time_tol(*t_ns)))) {
        k->gap_ns = lambda;
        k->run = 1;
    }
    k->run += (uint32_t)m; /* m < the ring's batches */
    k->close_ns = close_ns + shift;
}

/* After a full chunk posted at *t_ns (its batch regular, full_left more full chunks before
 * the last): if the pipeline seen from this chunk is the previous chunk's shifted by lambda
 * (CPU, link, slots), further full chunks repeat the step as long as what they read of the
 * ring does too. Two cases: the ring is a run of equally spaced batches lambda apart that
 * also covers the batch this chunk popped, so every further full chunk repeats (skip_apply:
 * the ring shifts); or this chunk popped the batch the previous one left at the ring's head
 * and the head is lambda after it, so the next chunks repeat while the batches they pop
 * continue that spacing (skip_roll: the ring rolls; the run ends, for instance, at the
 * shorter last batch of the message before this one). Returns the chunks jumped. */
static HS_HOT uint64_t chunks_skip(mdl_state_t *s, mdl_path_t *pa, double *t_ns,
                                   uint64_t full_left, mdl_track_t *k)
{
    double t = *t_ns, link = s->link_free_ns - t;
    double lambda = t - k->t_ns;
    uint64_t m = 0;
    int roll = 0;

    /* every batch in the ring holds E_P WRs (run > count), so equal slots held means an
     * equal count of batches */
    double tol = mdl_time_tol(t);
    if (k->valid && lambda > 0 && pa->used == k->used && mdl_same_time(link, k->link_ns, tol)) {
        if (k->run > pa->count && mdl_same_time(k->gap_ns, lambda, tol)) {
            m = skip_limit(s, t, lambda, full_left);
        } else if (k->run && pa->count == k->count && pa->count) {
            /* one push (regular) and an equal count: this chunk popped one batch, of E_P
             * WRs (equal slots), the previous one's head; each further step pops the next.
             * If this chunk's reaping found that batch reported (a margin of tol), it also
             * looked at the one after, and so does each further step: a run of r from the
             * head allows r - 1 steps; if not, the slot wait popped it and r */
            uint32_t r = head_run(pa, k->head_ns, lambda, tol, pa->batch,
                                  full_left < pa->count ? (uint32_t)full_left + 1 : pa->count);
            uint32_t waited = k->head_ns + pa->event_ns > k->reap_ns + tol;
            if (r + waited > 1) {
                m = skip_limit(s, t, lambda, r + waited - 1 < full_left ? r + waited - 1 : full_left);
                roll = 1;
            }
        }
    }
    double drain_step = s->cost_ns.drain - k->drain_ns;
    *k = (mdl_track_t){t, link, s->cost_ns.drain, pa->used, 1, k->close_ns, k->gap_ns, k->run,
                        pa->count ? pa->ring[pa->head].close_ns : 0,
                        t > s->cpu_free_ns ? t : s->cpu_free_ns, pa->count};
    if (m == 0)
        return 0;
    if (roll) {
        skip_roll(s, pa, t_ns, m, lambda, drain_step, k);
    } else {
        skip_apply(s, pa, t_ns, m, lambda, drain_step);
        k->run = 0;
    }
    k->valid = 0; /* m stopped at an edge, at the last full chunk or at the run's end: the
                   * state changes next */
    return m;
}

/* What a segmented message did, kept in m for a later message that meets the same
 * pipeline from its own t0 (memo_apply); not kept when it cannot be replayed shifted. */
typedef struct {
    double t0, q0, d0, entry_close, hw, t_last;
    uint64_t sk0, push0;
    int stalled, entry_ok;
} chunks_rec_t;

static void memo_keep(mdl_state_t *s, mdl_path_t *pa, int k, uint64_t size,
                      const mdl_view_t *key, const chunks_rec_t *c, mdl_memo_t *m)
{
    double t0 = c->t0;

    m->valid = 0;
    if (pa->nmem > 1 || !memo_edge_free(s, t0, c->t_last - t0) ||
        !memo_view_out(s, pa, t0, &m->out))
        return;
    m->valid = 1;
    m->size = size;
    m->k = k;
    m->pert = mdl_in_window(s, t0);
    memo_view_copy(&m->key, key);
    m->span_ns = c->t_last - t0;
    m->entry_close_ns = c->entry_close - t0;
    m->self_hw_ns = c->hw - t0;
    m->self_close_ns = pa->nmem ? 0 : pa->ring[(pa->head + pa->count - 1) & pa->mask].close_ns - t0;
    m->queue_ns = s->cost_ns.queue - c->q0;
    m->drain_ns = s->cost_ns.drain - c->d0;
    m->stalls = (uint64_t)c->stalled;
    m->skipped = s->chunks_skipped - c->sk0;
    m->pushes = pa->pushes - c->push0;
}

/* One chunk of cc->nwr WRs (the message's last when is_last) posted from t0 on: the slot
 * wait, the link, and its batch. Returns its hardware completion; *t_post its post, and
 * *regular whether adding it queued exactly one batch, of its own WRs (what the skip's
 * run of equally spaced batches counts: track_batch). */
static HS_HOT double chunk_step(mdl_state_t *s, mdl_path_t *pa, const chunk_cost_t *cc,
                                double dma, double lat, double t0, int is_last, size_t i,
                                double tref_ns, int *stalled, double *t_post, int *regular)
{
    *t_post = slots_acquire(s, pa, cc->nwr, t0, stalled, 1);
    double hw = chunk_hw(s, pa, cc, dma, lat, is_last ? pa->split_ns : 0, *t_post);
    uint64_t pushes = pa->pushes;
    batch_add(s, pa, cc->nwr, hw, i, is_last, tref_ns);
    *regular = pa->pushes == pushes + 1 &&
               pa->ring[(pa->head + pa->count - 1) & pa->mask].nwr == cc->nwr;
    return hw;
}

/* chunk_step for a full chunk (E_P WRs) that is not its message's last, on a path with no
 * open batch: its batch closes as it is added (batch_add), so the step is the slot wait
 * with no timer to fire, the link, and one push. What every full chunk leaves: the middle
 * chunks of a segmented message take it (measured: bench_model phased). */
static HS_HOT double chunk_full(mdl_state_t *s, mdl_path_t *pa, const chunk_cost_t *cc,
                                double dma, double lat, double t0, int *stalled, double *t_post)
{
    *t_post = slots_acquire(s, pa, cc->nwr, t0, stalled, 0);
    double hw = chunk_hw(s, pa, cc, dma, lat, 0, *t_post);
    ring_push(pa, hw, cc->nwr);
    note_report(s, pa, hw + pa->event_ns);
    return hw;
}

/* After a full chunk posted at t_post that leaves more than one chunk (nwr WRs) to post:
 * track its batch and jump the repeating full chunks when the pipeline repeats. */
static HS_HOT uint64_t chunks_track(mdl_state_t *s, mdl_path_t *pa, mdl_track_t *track,
                                    int regular, double hw, double *t_ns, uint64_t *nwr)
{
    track_batch(track, regular, hw, *t_ns);
    uint64_t m = chunks_skip(s, pa, t_ns, (*nwr - 1) / pa->batch, track);
    *nwr -= m * pa->batch;
    return m;
}

/* ---- the start of a long message on an idle path (mdl_entry_t) ------------------------ */

/* pa's entry record when a message can start on it from t0 (its reaping done) with nothing
 * queued, the CPU and the link free, and no perturbation window at or after t0 (so none in
 * its chunks either); NULL if not. A record kept for other full-chunk costs (size-dependent
 * link factors) is dropped. */
static mdl_entry_t *entry_of(mdl_state_t *s, const mdl_path_t *pa, int k, double t0,
                             const chunk_cost_t *full, double lat, double dma)
{
    mdl_entry_t *e = &s->entry[k];

    if (pa->count || pa->open_n || s->link_free_ns > t0 || s->cpu_free_ns > t0 ||
        mdl_edge_ahead(s, t0))
        return NULL;
    if (e->ser_ns != full->ser_ns || e->lat_ns != lat || e->dma_ns != dma) {
        e->valid = 0;
        e->failed = 0;
        e->ser_ns = full->ser_ns;
        e->lat_ns = lat;
        e->dma_ns = dma;
    }
    return e;
}

/* Keep in e the pipeline after the h-th full chunk (posted at t_ns, completing at hw) of a
 * message that started idle at t0, before the skip's test: relative to t0. Returns 0 when
 * the ring does not fit a view. */
static __attribute__((noinline)) int entry_snap(const mdl_state_t *s, const mdl_path_t *pa,
                                                mdl_entry_t *e, double t0, uint32_t h,
                                                double t_ns, double hw, int regular,
                                                int stalled, const mdl_track_t *k,
                                                uint64_t push0)
{
    if (!memo_view_out(s, pa, t0, &e->view))
        return 0;
    e->h = h;
    e->t_ns = t_ns - t0;
    e->hw_ns = hw - t0;
    e->regular = regular;
    e->stalled = stalled;
    e->pushes = pa->pushes - push0;
    e->track = *k;
    e->track.t_ns -= t0;
    e->track.close_ns -= t0;
    e->track.head_ns -= t0;
    e->track.reap_ns -= t0;
    e->track.drain_ns -= s->cost_ns.drain;
    return 1;
}

/* Set pa, the CPU, the link and the skip's tracker k to what e kept, shifted to t0, as
 * if its h full chunks had been replayed from t0 (posted at *t_ns, the last completing at
 * *hw; counted as skipped). The first chunk on an idle path does not wait: no queue cost,
 * and no drain outside the window. */
static __attribute__((noinline)) void entry_apply(mdl_state_t *s, mdl_path_t *pa,
                                                  const mdl_entry_t *e, double t0,
                                                  mdl_track_t *k, double *t_ns, double *hw,
                                                  int *regular, int *stalled)
{
    /* nothing was queued at t0, so the latest report is the kept one's (memo_view_restore
     * sets it, as note_report would) */
    memo_view_restore(s, pa, &e->view, t0);
    pa->pushes += e->pushes;
    s->chunks_skipped += e->h;
    *t_ns = t0 + e->t_ns;
    *hw = t0 + e->hw_ns;
    *regular = e->regular;
    *stalled = e->stalled;
    *k = e->track;
    k->t_ns += t0;
    k->close_ns += t0;
    k->head_ns += t0;
    k->reap_ns += t0;
    k->drain_ns += s->cost_ns.drain;
    s->entry_hits++;
}

/* ---- a link-bound message in closed form (MODEL.md section 3) ------------------------ */

/* Where every chunk of a segmented message starts on the link the moment the link frees
 * (its post, delayed by the slot wait, is early enough: a saturated path), the chunks do
 * not wait for one another: full chunk q ends q + 1 link times S after the link's free time
 * L0, so its batch closes at L0 + (q + 1) S + latency. chunks_bound replays such a message
 * on copies: the slot waits pop, in order, the batches queued before it, the open batch (as
 * closed by its timer, which the first chunk's batch_add does) and its own batches, and
 * where a chunk's wait ended at the report of a batch it popped, the next chunks repeat
 * that step one S later as long as the batches they pop continue that spacing (a run of
 * the previous message's batches, or its own), so they are jumped. Nothing changes unless
 * every chunk was link-bound; returns whether it applied. */
typedef struct {
    const mdl_batch_t *ring;
    uint64_t head, mask, nold, nv; /* ring batches before the message, plus the open one */
    uint32_t window, batch, open_nwr;
    double ev, open_close, L0, S, lf; /* own batch q closes at L0 + (q + 1) S + lf */
    double cpu, last_r;  /* the CPU's free time; report of the batch the last wait popped */
    uint64_t h;          /* the next batch to pop, counted from the ring's head */
    uint32_t used;       /* slots held */
    int stalled;
} bound_t;

/* The close and WRs of batch h: an old one, the open one, or an own one. */
static HS_HOT double bound_close(const bound_t *b, uint64_t h, uint32_t *nwr)
{
    if (h >= b->nv) {
        *nwr = b->batch;
        return b->L0 + (double)(int64_t)(h - b->nv + 1) * b->S + b->lf;
    }
    if (h < b->nold) {
        const mdl_batch_t *x = &b->ring[(b->head + h) & b->mask];
        *nwr = x->nwr;
        return x->close_ns;
    }
    *nwr = b->open_nwr;
    return b->open_close;
}

/* slots_acquire of a chunk of n WRs from t_ch on, the first avail batches queued; returns
 * the post time, or -1 when they run out (not modelled here). */
static HS_HOT double bound_acquire(bound_t *b, uint32_t n, double t_ch, uint64_t avail)
{
    double close;
    uint32_t nwr;

    for (; b->h < avail; b->h++) { /* reap_due: every batch reported by t_ch */
        close = bound_close(b, b->h, &nwr);
        if (close + b->ev > t_ch)
            break;
        b->cpu = (b->cpu > close ? b->cpu : close) + b->ev;
        b->used -= nwr;
    }
    double t = t_ch > b->cpu ? t_ch : b->cpu;
    b->last_r = -1;
    while (b->used + n > b->window) {
        if (b->h >= avail)
            return -1;
        close = bound_close(b, b->h++, &nwr);
        b->last_r = close + b->ev;
        b->cpu = (b->cpu > close ? b->cpu : close) + b->ev;
        b->used -= nwr;
        if (b->last_r > t) {
            t = b->last_r;
            b->stalled = 1;
        }
    }
    t = t > b->cpu ? t : b->cpu;
    b->used += n;
    return t;
}

/* chunk_hw of a chunk posted at t on a link free at link (no perturbation window):
 * whether it is link-bound (starts at link and ends S later). */
static HS_HOT int bound_fits(const chunk_cost_t *cc, double dma, double t, double link)
{
    double cpu = t + cc->post_ns;

    return t + cc->post_share_ns + dma <= link &&
           !(cc->nwr > 1 && cpu + dma + cc->ser_share_ns > link + cc->ser_ns);
}

static HS_HOT int bound_post(bound_t *b, const chunk_cost_t *cc, double dma, double t,
                             double link)
{
    b->cpu = t + cc->post_ns;
    return bound_fits(cc, dma, t, link);
}

/* bound_run's test on the chunk after one posted at report r, whose link frees at end_j. */
static HS_HOT int bound_next_fits(double r, double S, const chunk_cost_t *full, double dma,
                                  double end_j)
{
    return !(r + S + full->post_share_ns + dma > end_j ||
             r + full->post_ns + dma + full->ser_share_ns > end_j);
}

/* After full chunk j's wait ended at the report of batch h - 1 (posted at that report),
 * how many of the want further full chunks repeat its step one S later: the batches from
 * h on continue the spacing S with E WRs each (own batches always do), the slots held
 * make each wait pop exactly one, and each stays link-bound (its post + DMA before the
 * link frees, chunk_hw's CPU bound): both hold when they hold for chunk j + 1, with end_j
 * the link's free time after chunk j. consts: S > P and S >= event + P. */
static HS_HOT uint64_t bound_run(const bound_t *b, const chunk_cost_t *full, double dma,
                                 double end_j, uint64_t want)
{
    double r = b->last_r, prev = r - b->ev, tol = mdl_time_tol(r);
    uint64_t k = 0;

    if (b->used + b->batch <= b->window || !bound_next_fits(r, b->S, full, dma, end_j))
        return 0;
    while (k < want) {
        uint64_t h = b->h + k;
        if (h > b->nv)
            return want; /* own batches after an own one */
        uint32_t nwr;
        double c = bound_close(b, h, &nwr);
        if (nwr != b->batch || !mdl_same_time(c - prev, b->S, tol))
            break;
        prev = c;
        k++;
    }
    return k;
}

/* Whether chunks_bound can apply to a message of nfull full chunks from t0 on: its first
 * chunk, posted at t0 at the earliest, must start when the link frees, and full chunk
 * j >= B, which pops own batch j - B by its post (at most B = window / batch full
 * batches are held), posts at that batch's report at the earliest: L0 + (j - B + 1) S +
 * latency + event, and must start at L0 + j S. */
static HS_HOT int bound_may(const mdl_state_t *s, const mdl_path_t *pa, const chunk_cost_t *full,
                            double dma, double lat, double t0, uint64_t nfull)
{
    uint32_t B = pa->window / pa->batch;

    return t0 + full->post_share_ns + dma <= s->link_free_ns &&
           (nfull <= B || lat + pa->fixed_ns + pa->event_ns + full->post_share_ns + dma <=
                              (double)(B - 1) * full->ser_ns);
}

/* A slot wait from t_ch, the CPU free at *cpu, that reaps nothing and pops one batch closing
 * at c (slots_acquire's walk then): the post time; *cpu, *last_r (the batch's report) and
 * *stalled as that walk leaves them. */
static HS_HOT double wait_pop(double t_ch, double c, double ev, double *cpu, double *last_r,
                              int *stalled)
{
    double t = t_ch > *cpu ? t_ch : *cpu;

    *last_r = c + ev;
    *cpu = (*cpu > c ? *cpu : c) + ev;
    if (*last_r > t) {
        t = *last_r;
        *stalled = 1;
    }
    return t > *cpu ? t : *cpu;
}

/* Close of the lazy batch j (mdl_steady_t.lazy): what bound_commit writes there. */
static HS_HOT double steady_close(const mdl_steady_t *st, uint32_t j)
{
    return st->L0 + (st->q1 + (double)j) * st->S + st->lf;
}

/* Write the batches chunks_steady's commit left lazy in path k's ring. Called before
 * anything but chunks_steady reads or moves that ring (post_message, post_chunks). */
static __attribute__((noinline)) void steady_fill(mdl_state_t *s, int k)
{
    mdl_steady_t *st = &s->steady[k];
    mdl_path_t *pa = &s->path[k];

    for (uint32_t j = 0; j + 1 < st->B; j++) /* the B - 1 own full batches */
        pa->ring[(pa->head + j) & pa->mask] = (mdl_batch_t){steady_close(st, j), pa->batch};
    st->lazy = 0;
    s->gate[k] = mdl_gate(s, k);
}

/* What chunks_steady checks the path against later: pa as it is now, the full chunks' link
 * time S and the close of the ring's batch B - 2 (steady_note, steady_keep). */
static HS_HOT void steady_store(mdl_steady_t *st, const mdl_path_t *pa, double S,
                                double tail_close_ns)
{
    st->pushes = pa->pushes;
    st->head = pa->head;
    st->count = pa->count;
    st->open_n = pa->open_n;
    st->S = S;
    st->tail_close_ns = tail_close_ns;
    st->timer_close_ns = pa->timer_close_ns;
}

/* steady_note after chunks_steady's commit: the ring is the message's own batches on a path
 * of steady shape, left lazy (S set by the commit), so only its last chunk's batch is tested
 * (open under a timer, or closed whole). */
static HS_HOT void steady_keep(mdl_state_t *s, const mdl_path_t *pa, int k)
{
    mdl_steady_t *st = &s->steady[k];

    /* the last chunk's batch open (count B - 1) or closed whole (count B) */
    st->valid = pa->open_n == 0 || pa->period_ns > 0;
    steady_store(st, pa, st->S, steady_close(st, st->B - 2));
}

/* After a closed-form message on pa (index k): keep the ring in s->steady[k] when it is the
 * message's own last B - 1 full batches (B = window / batch >= 3, written by the commit from
 * the link's times, S apart) and its last chunk's batch, open under a timer or closed (a
 * whole batch). own: the batches in the ring are all the message's own. */
static void steady_note(mdl_state_t *s, const mdl_path_t *pa, int k, double S, int own)
{
    mdl_steady_t *st = &s->steady[k];
    uint32_t B = st->B;

    st->valid = own && st->shape &&
                ((pa->count == B - 1 && pa->open_n > 0 && pa->period_ns > 0) ||
                 (pa->count == B && pa->open_n == 0));
    if (st->valid) /* the ring is written (not lazy) */
        steady_store(st, pa, S, pa->ring[(pa->head + B - 2) & pa->mask].close_ns);
}

/* Apply a closed-form message that b walked to its end (b->h batches popped, b->used slots
 * held, b->cpu the CPU's free time after its last post at t_last, jumped chunks jumped) to
 * pa (index k): the open batch closes by its timer (as the first chunk's batch_add does),
 * the popped batches go, the own batches not popped are queued (own batch q closes at L0 +
 * (q + 1) S + lf; q + 1 counted in a double: exact), the last chunk joins a batch as usual,
 * and the ring left is noted for chunks_steady. */
static HS_HOT void bound_commit(mdl_state_t *s, mdl_path_t *pa, int k, const bound_t *b,
                         const chunk_cost_t *last, uint64_t nfull, double t0, double t_first,
                         double t_last, uint64_t jumped, size_t i, double tref_ns,
                         chunks_rec_t *rec, const int lazy)
{
    uint64_t avail = b->nv + nfull, h0 = b->h > b->nv ? b->h : b->nv;
    double link = b->L0 + (double)(int64_t)nfull * b->S;
    double hw_last = link + last->ser_ns + b->lf + pa->split_ns;
    int open = b->nv > b->nold;

    if (open) /* popped below when lazy (chunks_steady: b->h > b->nv) */
        batch_report(s, pa, b->open_close, !lazy);
    double q1 = (double)(int64_t)(h0 - b->nv + 1);
    uint32_t n = (uint32_t)(avail - h0), at = (uint32_t)((b->head + h0) & b->mask);
    mdl_steady_t *st = &s->steady[k];
    if (lazy) { /* h0 == b->h: the B - 1 batches not popped start at the new head */
        st->lazy = 1;
        s->gate[k] = 0;
        st->L0 = b->L0;
        st->q1 = q1;
        st->S = b->S;
        st->lf = b->lf;
        st->c0 = steady_close(st, 0);
    } else {
        uint32_t n1 = (uint32_t)b->mask + 1 - at; /* up to the ring's end, then its start */
        n1 = n1 < n ? n1 : n;
        for (uint32_t j = 0; j < n1; j++, q1 += 1)
            pa->ring[at + j] = (mdl_batch_t){b->L0 + q1 * b->S + b->lf, b->batch};
        for (uint32_t j = 0; j < n - n1; j++, q1 += 1)
            pa->ring[j] = (mdl_batch_t){b->L0 + q1 * b->S + b->lf, b->batch};
    }
    note_report(s, pa, link + b->lf + b->ev);
    pa->head = (uint32_t)((b->head + b->h) & b->mask);
    pa->count = (uint32_t)(avail - b->h);
    pa->used = b->used;
    pa->pushes += nfull;
    pa->head_r_ns = !pa->count ? HUGE_VAL
                    : (lazy ? st->c0 : pa->ring[pa->head].close_ns) + b->ev;
    s->cpu_free_ns = b->cpu;
    s->link_free_ns = link + last->ser_ns;
    s->cost_ns.queue += t_first - t0;
    s->chunks_skipped += jumped;
    s->stalls += (uint64_t)b->stalled;
    s->bound_hits++;
    batch_add(s, pa, last->nwr, hw_last, i, 1, tref_ns);
    rec->stalled = b->stalled;
    rec->hw = hw_last;
    rec->t_last = t_last;
    if (open)
        rec->entry_close = b->open_close;
    if (lazy) /* chunks_steady's: own batches on a path of steady shape */
        steady_keep(s, pa, k);
    else
        steady_note(s, pa, k, b->S, b->h >= b->nv);
}

static __attribute__((noinline)) int chunks_bound(mdl_state_t *s, mdl_path_t *pa, int k,
                                                  const chunk_cost_t *full,
                                                  const chunk_cost_t *last, uint64_t nfull,
                                                  double dma, double lat, size_t i, double t0,
                                                  double tref_ns, chunks_rec_t *rec)
{
    uint64_t open = pa->open_n > 0;
    double S = full->ser_ns;
    bound_t b = {.ring = pa->ring, .head = pa->head, .mask = pa->mask, .nold = pa->count,
                 .nv = pa->count + open, .window = pa->window, .batch = pa->batch,
                 .open_nwr = pa->open_n, .ev = pa->event_ns,
                 .open_close = open ? pa->timer_close_ns : 0, .L0 = s->link_free_ns, .S = S,
                 .lf = lat + pa->fixed_ns, .cpu = s->cpu_free_ns, .last_r = -1,
                 .used = pa->used};

    /* no perturbation window ahead; an open batch without a timer would take the first
     * chunk in (one batch of both) */
    if (mdl_edge_ahead(s, t0) || (open && !(pa->period_ns > 0)))
        return 0;
    int consts = S > full->post_ns && S >= b.ev + full->post_ns;
    double t_first = 0, t_ch = t0;
    uint64_t jumped = 0;
    for (uint64_t j = 0; j < nfull; j++) {
        double t = bound_acquire(&b, full->nwr, t_ch, b.nv + j);
        double end_j = b.L0 + (double)(int64_t)(j + 1) * S;
        if (t < 0 || !bound_post(&b, full, dma, t, b.L0 + (double)(int64_t)j * S))
            return 0;
        if (j == 0) {
            t_first = t;
            if (open && b.h <= b.nold && !(end_j + b.lf > b.open_close))
                return 0; /* the open batch would take the first chunk in */
            /* forced closed and popped by the first wait: the memo cannot know its close */
            rec->entry_ok = !(open && b.h > b.nold);
        }
        t_ch = b.cpu;
        uint64_t m = consts && b.last_r == t ? bound_run(&b, full, dma, end_j, nfull - 1 - j) : 0;
        if (m) {
            uint32_t nwr;
            b.h += m;
            j += m;
            b.last_r = bound_close(&b, b.h - 1, &nwr) + b.ev;
            b.cpu = t_ch = b.last_r + full->post_ns;
            b.stalled = 1;
            jumped += m;
        }
    }
    /* the last chunk: the rest of the WRs */
    uint64_t avail = b.nv + nfull;
    double link = b.L0 + (double)(int64_t)nfull * S;
    double t_last = bound_acquire(&b, last->nwr, t_ch, avail);
    if (t_last < 0 || !bound_post(&b, last, dma, t_last, link))
        return 0;
    bound_commit(s, pa, k, &b, last, nfull, t0, t_first, t_last, jumped, i, tref_ns, rec, 0);
    return 1;
}

/* chunks_bound on the ring steady_note kept (the path untouched since: same pushes, head,
 * count, open batch and tail), in O(1): the walk chunks_bound takes there, step by step.
 * Chunk 0 pops the ring's head; the jump over the other B - 2 kept batches (a run S
 * apart); chunk B - 1 pops (or reaps) the last batch, the open one as its timer closes it;
 * chunk B pops its own first batch; the jump over the rest; the last chunk pops own batch
 * nfull - B (with nfull = B, no chunk B: the last chunk pops own batch 0).
 * Each step that chunks_bound would take otherwise (a reap, a jump not allowed or one
 * allowed further, a chunk not link-bound) returns 0 with nothing changed, and
 * chunks_bound replays the message. tests/test_model_skip.c checks both against the
 * chunk-by-chunk replay. */
static HS_HOT int steady_walk(mdl_state_t *s, mdl_path_t *pa, int k, const chunk_cost_t *full_p,
                              const chunk_cost_t *last_p, uint64_t nfull, double dma, double lat,
                              size_t i, double t0, double tref_ns, chunks_rec_t *rec,
                              const int lazy)
{
    /* copies, kept in registers: every check below reads them (measured: bench_model phased) */
    const chunk_cost_t fc = *full_p, lc = *last_p, *full = &fc, *last = &lc;
    const mdl_steady_t *st = &s->steady[k];
    uint32_t E = pa->batch, B = st->B, open = pa->open_n > 0;
    double S = full->ser_ns, P = full->post_ns, ev = pa->event_ns, lf = lat + pa->fixed_ns;
    double L0 = s->link_free_ns;
    const mdl_batch_t *ring = pa->ring, *tail = &ring[(pa->head + B - 1) & pa->mask];
    double c0, cl;
    /* bound_fits of a full chunk as one sum: posted at t on a link free at link, it is
     * link-bound iff t + F <= link (also with one WR: then both terms are P + DMA); and
     * bound_next_fits(r, .., end) iff r + S + F <= end. The sums round apart from theirs,
     * so a tie can take either side: there the chunk starts when the link frees either way */
    double F = fc.post_share_ns + dma, F2 = fc.post_ns + dma + fc.ser_share_ns - S;
    F = F2 > F ? F2 : F;

    /* lazy: the ring as the last commit left it (the pushes are the same: nothing else
     * moved its head, closed or added to its open batch without writing the ring first) */
    if (!st->valid || st->pushes != pa->pushes || st->S != S || nfull < (uint64_t)B ||
        mdl_edge_ahead(s, t0) || !(S > P && S >= ev + P))
        return 0;
    if (lazy) { /* the ring's first B - 1 batches (steady_note: count >= B - 1) */
        c0 = st->c0;
        cl = st->tail_close_ns;
    } else {
        if (st->head != pa->head || st->count != pa->count || st->open_n != pa->open_n ||
            st->timer_close_ns != pa->timer_close_ns)
            return 0;
        c0 = ring[pa->head].close_ns;
        cl = ring[(pa->head + B - 2) & pa->mask].close_ns;
        if (cl != st->tail_close_ns)
            return 0;
    }
    /* the last batch: the open one (closed by its timer) or a closed one */
    uint32_t o = open ? pa->open_n : tail->nwr;
    double oc = open ? pa->timer_close_ns : tail->close_ns;
    int stalled = 0;

    /* chunk 0: post_chunks reaped by t0, so its wait pops the head (used + E > W: o > 0) */
    double cpu = s->cpu_free_ns, r, t = wait_pop(t0, c0, ev, &cpu, &r, &stalled);
    double t_first = t;
    /* link-bound; the open batch does not take it in; the jump over batches 1 .. B - 2
     * (kept S apart) is allowed and stops at the last batch */
    if (!(t + F <= L0) || (open && !(L0 + S + lf > oc)) || r != t || !(r + S + F <= L0 + S) ||
        (o == E && mdl_same_time(oc - cl, S, mdl_time_tol(r))))
        return 0;
    double t_ch = cl + ev + P; /* the jump: each posts at the report it popped */
    cpu = t_ch;
    stalled = 1;
    uint32_t used = (B - 1) * E + o;

    /* chunk B - 1: the last batch (the open one closed by its timer), reaped or popped */
    double own0 = L0 + (double)(int64_t)1 * S + lf, last_r = -1;
    if (oc + ev <= t_ch) { /* reaped (and own batch 0 not yet reported): no wait */
        cpu = (cpu > oc ? cpu : oc) + ev;
        if (own0 + ev <= t_ch)
            return 0;
        t = t_ch > cpu ? t_ch : cpu;
    } else {
        t = wait_pop(t_ch, oc, ev, &cpu, &last_r, &stalled);
    }
    used += E - o;
    double end = L0 + (double)(int64_t)B * S;
    if (!(t + F <= L0 + (double)(int64_t)(B - 1) * S))
        return 0;
    if (nfull > B && last_r == t && last_r + S + F <= end &&
        mdl_same_time(own0 - (last_r - ev), S, mdl_time_tol(last_r)))
        return 0; /* chunks_bound jumps from here */
    t_ch = cpu = t + P;

    uint64_t m = 0;
    if (nfull > B) {
        /* chunk B: pops its own first batch */
        if (own0 + ev <= t_ch)
            return 0;
        t = wait_pop(t_ch, own0, ev, &cpu, &last_r, &stalled);
        if (!(t + F <= end))
            return 0;
        cpu = t_ch = t + P;
        /* the jump over the rest: chunk j >= B posts at own batch j - B's report */
        m = nfull - 1 - B;
        if (m) {
            if (last_r != t || !(last_r + S + F <= end + S))
                return 0;
            last_r = L0 + (double)(int64_t)(nfull - B) * S + lf + ev;
            cpu = t_ch = last_r + P;
        }
    }

    /* the last chunk: pops own batch nfull - B */
    double cn = L0 + (double)(int64_t)(nfull - B + 1) * S + lf;
    if (cn + ev <= t_ch)
        return 0;
    double t_last = wait_pop(t_ch, cn, ev, &cpu, &last_r, &stalled);
    if (!bound_fits(last, dma, t_last, L0 + (double)(int64_t)nfull * S))
        return 0;

    /* commit, as chunks_bound's: the last batch and own batches 0 .. nfull - B are popped
     * (nfull + 1 in all), B - 1 own batches stay queued */
    bound_t b = {.head = pa->head, .mask = pa->mask, .nold = pa->count, .nv = B, .batch = E,
                 .ev = ev, .open_close = oc, .L0 = L0, .S = S, .lf = lf,
                 .cpu = t_last + last->post_ns, .h = nfull + 1, .used = used - E + last->nwr,
                 .stalled = stalled};
    bound_commit(s, pa, k, &b, last, nfull, t0, t_first, t_last, (B - 2) + m, i, tref_ns, rec,
                 1);
    s->steady_hits++;
    s->lazy_hits += (uint64_t)lazy;
    rec->entry_ok = 1;
    return 1;
}

static __attribute__((noinline)) int chunks_steady(mdl_state_t *s, mdl_path_t *pa, int k,
                                                   const chunk_cost_t *full,
                                                   const chunk_cost_t *last, uint64_t nfull,
                                                   double dma, double lat, size_t i, double t0,
                                                   double tref_ns, chunks_rec_t *rec)
{
    return steady_walk(s, pa, k, full, last, nfull, dma, lat, i, t0, tref_ns, rec, 0);
}

/* Whether chunks_serial may apply to a message of nfull full chunks on pa: its window holds
 * one full batch (window < 2 batch), and the previous message's last chunk is alone on it,
 * open (the first chunk's wait forces it closed and pops it) or closed (the wait pops it). */
static HS_HOT int serial_may(const mdl_path_t *pa, uint64_t nfull)
{
    return pa->window < 2 * pa->batch && nfull >= 1 && pa->used + pa->batch > pa->window &&
           ((pa->count == 0 && pa->open_n > 0) || (pa->count == 1 && pa->open_n == 0));
}

/* A segmented message on a path whose window holds one full batch (seed 000's BW path under
 * a hint: every full chunk waits for the report of the one before it), from t0 on, where
 * serial_may holds, in closed form (MODEL.md section 3): the first chunk, whose wait pops
 * the previous message's last batch (forced closed first when it is open); the second (if
 * nfull >= 2), which pops the first's batch at its report; full chunks 2 .. nfull - 1, each
 * the second's step lambda later, jumped; the last chunk, which pops the last full one's
 * batch when it needs its slots. Returns 0, with
 * nothing changed, where a chunk would not take that walk (a batch reaped before its wait,
 * the CPU free after a batch closes, the link busy at a chunk's start, a perturbation edge
 * inside the message); chunks_run then replays it. chunk_hw, which changes the CPU, the
 * link and the drain total, computes the chunks; those three are put back on a return 0. */
static __attribute__((noinline)) int chunks_serial(mdl_state_t *s, mdl_path_t *pa,
                                                   const chunk_cost_t *full,
                                                   const chunk_cost_t *last, uint64_t nfull,
                                                   double dma, double lat, size_t i, double t0,
                                                   double tref_ns, chunks_rec_t *rec)
{
    uint32_t E = pa->batch, W = pa->window;
    double ev = pa->event_ns, P = full->post_ns, ps = full->post_share_ns;
    int forced = pa->open_n > 0; /* else the ring's one batch (post_chunks reaped by t0) */
    double c0 = !forced ? pa->ring[pa->head].close_ns
                        : pa->period_ns > 0 ? pa->timer_close_ns : pa->h1_ns;
    double cpu0 = s->cpu_free_ns, link0 = s->link_free_ns, drain0 = s->cost_ns.drain;

    /* chunk 0: the wait pops that batch, closed first (batch_force_close) when open */
    double cpu = cpu0, r;
    int stalled = 0;
    double t_first = wait_pop(t0, c0, ev, &cpu, &r, &stalled);
    double hw0 = chunk_hw(s, pa, full, dma, lat, 0, t_first);
    /* the last full chunk: chunk 0 itself, or nfull - 2 steps after chunk 1 */
    double tf = t_first, hwf = hw0;
    uint64_t m = 0;
    if (nfull >= 2) {
        double end0 = s->link_free_ns, d0 = s->cost_ns.drain;
        /* chunk 1: nothing reaped before its wait (chunk 0 reported after the CPU is free),
         * which pops chunk 0's batch (closed after the CPU is free) at its report; the link
         * free */
        double t1 = hw0 + ev;
        if (!(hw0 >= t_first + P && t1 > t_first + P) || end0 > t1 + ps + dma)
            goto undo;
        double hw1 = chunk_hw(s, pa, full, dma, lat, 0, t1);
        double end1 = s->link_free_ns, x1 = s->cost_ns.drain - d0, lambda = hw1 + ev - t1;
        /* so does chunk 2, and every later full chunk repeats chunk 1's step */
        if (!(hw1 >= t1 + P && hw1 + ev > t1 + P) || end1 > hw1 + ev + ps + dma)
            goto undo;
        m = nfull - 2;
        tf = t1 + (double)m * lambda;
        hwf = hw1 + (double)m * lambda;
        s->link_free_ns = end1 + (double)m * lambda;
        s->cost_ns.drain += (double)m * x1;
        stalled = 1; /* chunk 1 waited */
    }
    /* the last chunk: nothing reaped before its wait (the last full batch reported after the
     * CPU is free); it pops that batch if it needs its slots (else posts when the CPU is
     * free), with every post on t0's side of the perturbation window's edges */
    double cf = tf + P;
    int pop = E + last->nwr > W;
    double t_last = pop ? hwf + ev : cf;
    if (!(hwf + ev > cf) || (pop && !(hwf >= cf)) || t_last >= mdl_next_edge(s, t0))
        goto undo;
    stalled |= pop; /* its wait ended at the report, after the CPU was free */
    double hw_last = chunk_hw(s, pa, last, dma, lat, pa->split_ns, t_last);

    /* commit: the forced close (it reports the previous message) and the pop; the full
     * chunks' batches, each pushed and popped by the next, the last full one's kept when
     * the last chunk does not pop it */
    if (forced) /* reported; popped at once, so not written (head moves past it) */
        batch_report(s, pa, c0, 0);
    uint32_t head = (pa->head + 1) & pa->mask;
    if (pop) {
        pa->head = (uint32_t)((head + nfull) & pa->mask);
        pa->count = 0;
        pa->used = last->nwr;
        pa->head_r_ns = HUGE_VAL;
    } else {
        pa->head = (uint32_t)((head + nfull - 1) & pa->mask);
        pa->ring[pa->head] = (mdl_batch_t){hwf, E};
        pa->count = 1;
        pa->used = E + last->nwr;
        pa->head_r_ns = hwf + ev;
    }
    pa->pushes += nfull;
    note_report(s, pa, hwf + ev);
    s->cost_ns.queue += t_first - t0;
    s->chunks_skipped += m;
    s->stalls += (uint64_t)stalled;
    s->serial_hits++;
    batch_add(s, pa, last->nwr, hw_last, i, 1, tref_ns);
    rec->stalled = stalled;
    rec->hw = hw_last;
    rec->t_last = t_last;
    rec->entry_ok = !forced; /* a forced close was popped at once: its close unknown */
    return 1;
undo:
    s->cpu_free_ns = cpu0;
    s->link_free_ns = link0;
    s->cost_ns.drain = drain0;
    return 0;
}

/* A segmented message's chunks: nfull full ones (a batch of WRs each) and the last one
 * (the rest), with their costs. */
typedef struct {
    const chunk_cost_t *full; /* s->full[k].cost: kept per path */
    chunk_cost_t last;
    uint64_t nfull;
} chunks_plan_t;

/* The plan of a message of nwr > batch WRs and left bytes on pa (index k): the full chunk's
 * costs are kept per path (s->full), the last chunk's computed. */
static HS_HOT void chunks_plan(mdl_state_t *s, const mdl_path_t *pa, int k, const mdl_size_t *z,
                               uint64_t left, uint64_t nwr, chunks_plan_t *pl)
{
    uint64_t full_bytes = (uint64_t)pa->batch * pa->seg_bytes;
    /* nwr < 2^32 (pred_check_trace): a 32-bit division, or a shift */
    uint64_t nfull = s->batch_shift[k] != MDL_NO_SHIFT ? (nwr - 1) >> s->batch_shift[k]
                                                       : (uint32_t)(nwr - 1) / pa->batch;
    mdl_full_t *fc = &s->full[k];

    if (fc->npb_ns != z->npb_ns) {
        fc->npb_ns = z->npb_ns;
        chunk_cost(s, (double)full_bytes * z->npb_ns + npkt_of(s, full_bytes) * s->pkt_ns,
                   pa->batch, &fc->cost);
    }
    pl->full = &fc->cost;
    pl->nfull = nfull;
    /* the last chunk: the rest of the WRs and bytes, after nfull full chunks */
    uint64_t lb = left - nfull * full_bytes;
    chunk_cost(s, (double)(int64_t)lb * z->npb_ns + npkt_of(s, lb) * s->pkt_ns,
               (uint32_t)(nwr - nfull * pa->batch), &pl->last);
}

/* A saturated path, or a window of one batch: message i, planned as pl, in closed form
 * (chunks_serial, chunks_steady, chunks_bound) from t0 on; returns whether it applied.
 * Kept apart from chunks_run, whose frame and setup these messages do not need (measured:
 * bench_model phased). */
static __attribute__((noinline)) int chunks_closed(mdl_state_t *s, mdl_path_t *pa, int k,
                                                   const mdl_size_t *z, const chunks_plan_t *pl,
                                                   size_t i, double t0, double tref_ns,
                                                   chunks_rec_t *rec)
{
    double dma = z->dma_ns, lat = z->lat_ns;

    if (serial_may(pa, pl->nfull))
        return chunks_serial(s, pa, pl->full, &pl->last, pl->nfull, dma, lat, i, t0, tref_ns,
                             rec);
    return bound_may(s, pa, pl->full, dma, lat, t0, pl->nfull) &&
           (chunks_steady(s, pa, k, pl->full, &pl->last, pl->nfull, dma, lat, i, t0, tref_ns,
                          rec) ||
            chunks_bound(s, pa, k, pl->full, &pl->last, pl->nfull, dma, lat, i, t0, tref_ns,
                         rec));
}

/* The chunks of message i (nwr > batch WRs, planned as pl) on pa (index k), the first from
 * t0 on (its reaping at t0 done): at most a batch each, the first and the last through the
 * general step, the full ones between with no open batch (chunk_full; with every_chunk, the
 * general step), and the steady-state skip over the repeating full chunks. Fills rec's hw
 * (the last chunk's), t_last, stalled and the close of the open batch the message met
 * (entry_close; 0 in entry_ok if it cannot be known). Not inlined: the caller's memo
 * bookkeeping would crowd this loop's registers (measured). */
static __attribute__((noinline)) void chunks_run(mdl_state_t *s, mdl_path_t *pa, int k,
                                                 const mdl_size_t *z, const chunks_plan_t *pl,
                                                 uint64_t nwr, size_t i, double t0,
                                                 double tref_ns, chunks_rec_t *rec)
{
    uint64_t push0 = pa->pushes;
    uint64_t nwr0 = nwr, chunks = pl->nfull + 1;
    int stalled = 0, had_open = pa->open_n > 0, skip = !s->every_chunk, regular;
    double hw, t_ns, dma = z->dma_ns, lat = z->lat_ns;
    chunk_cost_t full = *pl->full, last = pl->last;
    mdl_track_t track = {0};

    /* on an idle path: the start an earlier message kept (then nothing to keep), or keep
     * this one's (e stays set while it is being kept) */
    mdl_entry_t *e = skip ? entry_of(s, pa, k, t0, &full, lat, dma) : NULL;
    if (e && e->valid && nwr > (uint64_t)e->h * pa->batch) { /* its h full chunks, then more */
        entry_apply(s, pa, e, t0, &track, &t_ns, &hw, &regular, &stalled);
        rec->entry_ok = 1;
        nwr -= (uint64_t)e->h * pa->batch;
        if (nwr > pa->batch)
            chunks_track(s, pa, &track, regular, hw, &t_ns, &nwr);
        e = NULL;
    } else {
        if (e && (e->valid || chunks <= e->failed))
            e = NULL;
        /* the first chunk (full: nwr > batch) may meet an open batch and its timer */
        hw = chunk_step(s, pa, &full, dma, lat, t0, 0, i, tref_ns, &stalled, &t_ns, &regular);
        s->cost_ns.queue += t_ns - t0;
        /* the open batch the message met closed with the first push (pops come before
         * pushes in a chunk), unless a forced close was popped at once */
        uint64_t pushed = pa->pushes - push0;
        rec->entry_ok = !had_open || pushed <= pa->count;
        if (had_open && rec->entry_ok)
            rec->entry_close = pa->ring[(pa->head + pa->count - pushed) & pa->mask].close_ns;
        nwr -= pa->batch;
        if (skip && nwr > pa->batch) {
            if (e && !entry_snap(s, pa, e, t0, 1, t_ns, hw, regular, stalled, &track, push0))
                e = NULL;
            chunks_track(s, pa, &track, regular, hw, &t_ns, &nwr); /* cannot jump yet */
        }
    }
    while (nwr > pa->batch) {
        double t_ch = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
        if (skip && pa->open_n == 0) { /* always, after a full chunk: checked, not assumed */
            hw = chunk_full(s, pa, &full, dma, lat, t_ch, &stalled, &t_ns);
            regular = 1; /* its one push */
        } else {
            hw = chunk_step(s, pa, &full, dma, lat, t_ch, 0, i, tref_ns, &stalled, &t_ns,
                            &regular);
        }
        nwr -= pa->batch;
        if (skip && nwr > pa->batch) {
            /* while the start is kept, no chunk has been jumped: nwr0 - nwr full chunks */
            if (__builtin_expect(e != NULL, 0) &&
                !entry_snap(s, pa, e, t0, (uint32_t)((nwr0 - nwr) / pa->batch), t_ns, hw,
                            regular, stalled, &track, push0))
                e = NULL;
            if (chunks_track(s, pa, &track, regular, hw, &t_ns, &nwr) && e) {
                e->valid = 1; /* kept: the skip jumped after the h-th chunk */
                e = NULL;
            }
        }
    }
    if (e)
        e->failed = chunks > e->failed ? chunks : e->failed;
    /* the last chunk (costed above: nwr is its WRs now) */
    double t_ch = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
    hw = chunk_step(s, pa, &last, dma, lat, t_ch, 1, i, tref_ns, &stalled, &t_ns, &regular);
    s->stalls += (uint64_t)stalled;
    rec->stalled = stalled;
    rec->hw = hw;
    rec->t_last = t_ns;
}

/* chunks_serial for message i (nwr > batch WRs, size left) from t0 on, where the closed
 * forms are on and serial_may holds: planned here. Returns 0 where it does not apply. */
static HS_HOT int serial_try(mdl_state_t *s, mdl_path_t *pa, int k, const mdl_size_t *z,
                             uint64_t left, uint64_t nwr, size_t i, double t0, double tref_ns,
                             chunks_rec_t *rec)
{
    chunks_plan_t pl;

    if (s->every_chunk || s->no_bound || !serial_may(pa, 1))
        return 0;
    chunks_plan(s, pa, k, z, left, nwr, &pl);
    return chunks_serial(s, pa, pl.full, &pl.last, pl.nfull, z->dma_ns, z->lat_ns, i, t0,
                         tref_ns, rec);
}

/* Post message i of nwr > batch WRs on pa (index k) from t_ns on (chunks_run); or, when an
 * earlier message of its size met the same pipeline, that message's replay shifted (the
 * memo, model_memo.h). */
static void post_chunks(mdl_state_t *s, mdl_path_t *pa, int k, const mdl_size_t *z,
                        uint64_t left, uint64_t nwr, size_t i, double t_ns, double tref_ns)
{
    chunks_rec_t rec = {0};
    mdl_memo_t *memo = NULL;
    mdl_view_t key;

    s->cost_ns.l1 += (double)(int64_t)nwr * s->l1x_ns;
    rec.t0 = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
    /* the first chunk's reaping (slots_acquire's first steps), here so that the memo sees
     * the pipeline it leaves */
    reap_due(s, pa, rec.t0, 1);
    /* a window of one batch: the closed form before the memo, as closed_next's (a formula
     * is cheaper than a lookup; measured: bench_model phased at hint 4K) */
    if (serial_try(s, pa, k, z, left, nwr, i, rec.t0, tref_ns, &rec))
        return;
    if (!s->every_chunk) {
        /* a size is looked up and kept from its second message in a row in its slot on,
         * so that traces of ever-different sizes pay one comparison per message */
        mdl_memo_t *slot = memo_slot(s, k, left);
        if (slot->seen == left) {
            if (memo_matches(s, slot, left, k, pa, rec.t0)) {
                memo_apply(s, pa, slot, i, rec.t0, tref_ns);
                return;
            }
            if (memo_view_key(s, pa, rec.t0, &key))
                memo = slot;
        }
        slot->seen = left;
    }
    rec.q0 = s->cost_ns.queue;
    rec.d0 = s->cost_ns.drain;
    rec.sk0 = s->chunks_skipped;
    rec.push0 = pa->pushes;
    chunks_plan_t pl;
    chunks_plan(s, pa, k, z, left, nwr, &pl);
    if (s->every_chunk || s->no_bound || !chunks_closed(s, pa, k, z, &pl, i, rec.t0, tref_ns, &rec))
        chunks_run(s, pa, k, z, &pl, nwr, i, rec.t0, tref_ns, &rec);
    if (memo && rec.entry_ok) {
        if (s->steady[k].lazy) /* chunks_steady's commit: the memo reads the ring it left */
            steady_fill(s, k);
        memo_keep(s, pa, k, left, &key, &rec, memo);
    }
}

/* Message i of size (above s->seg_min[k]) from t_ns on, on pa (index k), in closed form
 * before post_chunks and its memo (a formula is cheaper than a lookup, and post_chunks's
 * frame is not needed; measured: bench_model phased), where nothing on pa is due by then:
 * lazy, chunks_steady on the ring the previous message left lazy; else chunks_serial on a
 * window of one batch. Returns 0, with nothing changed, where it does not apply (a lazy ring
 * must then be written). */
static HS_HOT int closed_next(mdl_state_t *s, mdl_path_t *pa, int k, const mdl_size_t *z,
                              uint64_t size, size_t i, double t_ns, double tref_ns,
                              const int lazy)
{
    double t0 = t_ns > s->cpu_free_ns ? t_ns : s->cpu_free_ns;
    chunks_plan_t pl;
    chunks_rec_t rec;

    if (!(pa->head_r_ns > t0 && pa->timer_r_ns > t0))
        return 0;
    if (lazy) {
        chunks_plan(s, pa, k, z, size, z->nwr, &pl);
        if (!bound_may(s, pa, pl.full, z->dma_ns, z->lat_ns, t0, pl.nfull) ||
            !steady_walk(s, pa, k, pl.full, &pl.last, pl.nfull, z->dma_ns, z->lat_ns, i, t0,
                         tref_ns, &rec, 1))
            return 0;
    } else if (!serial_try(s, pa, k, z, size, z->nwr, i, t0, tref_ns, &rec)) {
        return 0;
    }
    s->cost_ns.l1 += (double)z->nwr * s->l1x_ns; /* post_chunks's first step */
    return 1;
}

/* Post message i on pa (index k) from t_ns on: one WR, one chunk, or chunks; pert as
 * chunk_hw_p's. */
static HS_HOT void post_message(mdl_state_t *s, mdl_path_t *pa, int k, size_t i, uint64_t size,
                                double t_ns, double tref_ns, const int pert)
{
    if (__builtin_expect(size >= s->gate[k], 0)) {
        if (size > s->seg_min[k]) {
            mdl_size_t zs;
            size_seg(s, k, size, &zs);
            if (s->steady[k].lazy) {
                if (closed_next(s, pa, k, &zs, size, i, t_ns, tref_ns, 1))
                    return;
                steady_fill(s, k);
            } else if (pa->window < 2 * pa->batch &&
                       closed_next(s, pa, k, &zs, size, i, t_ns, tref_ns, 0)) {
                return;
            }
            post_chunks(s, pa, k, &zs, size, zs.nwr, i, t_ns, tref_ns);
            return;
        }
        steady_fill(s, k); /* lazy: written before anything else reads it */
    }
    const mdl_size_t *z = size_of(s, k, size);
    uint32_t nwr = z->nwr;

    if (nwr == 1) {
        if (pa->batch == 1)
            post_w1(s, pa, k, z, i, t_ns, tref_ns, 1, pert);
        else
            post_w1(s, pa, k, z, i, t_ns, tref_ns, 0, pert);
    } else if (nwr <= pa->batch) {
        post_one_chunk(s, pa, k, z, nwr, i, t_ns, tref_ns, pert);
    } else {
        post_chunks(s, pa, k, z, size, nwr, i, t_ns, tref_ns);
    }
}

/* The path a message's size asks for: LL (0) up to the hint, BW (1) above it or with none. */
static HS_HOT int route_class(const mdl_state_t *s, const trace_rec_t *r)
{
    return prules_class(s->hint, r->size_bytes);
}

/* Hysteresis policy (prules_route): which path message i takes (0 LL, 1 BW); performs the
 * drain of a switch. Not called at hint 0 (replay_mode's one loop), so the class is
 * prules_class's, size > hint (and so in replay_run). */
static HS_HOT int route(mdl_state_t *s, const trace_rec_t *r, double *t_ns)
{
    int cls = r->size_bytes > s->hint, from = s->route.cur;

    if (prules_route(&s->route, cls)) {
        mdl_path_t *old = &s->path[from];
        double t0 = *t_ns > s->cpu_free_ns ? *t_ns : s->cpu_free_ns;
        batch_force_close(s, old);
        double done = (t0 > old->last_r_ns ? t0 : old->last_r_ns) + s->drain_fixed_ns;
        s->switches++;
        s->drain_us_total += (done - *t_ns) * 1e-3;
        s->cost_ns.drain += done - t0;
        s->pert_from_ns = done;
        s->pert_until_ns = done + s->pert_window_ns;
        *t_ns = done;
    }
    return s->route.cur;
}

/* When message i is ready under mode (a constant per caller): its trace post time (open),
 * or the previous message's report plus the trace's think time (closed). */
static HS_HOT hs_status_t ready_time(mdl_state_t *s, size_t i, const pred_mode_t mode,
                                     double *ready_ns)
{
    const trace_rec_t *r = &s->tr->recs[i];

    if (mode == PRED_OPEN) {
        *ready_ns = (double)(r->t_post_ns - s->t0_ns);
        return HS_OK;
    }
    if (i == 0) {
        *ready_ns = 0;
        return HS_OK;
    }
    const trace_rec_t *prev = &s->tr->recs[i - 1];
    if (prev->t_done_ns == TRACE_TIME_UNKNOWN) {
        hs_log_error("closed-loop replay needs completion times: record %zu has none "
                     "(use --mode open)", i - 1);
        return HS_ERR_INVALID;
    }
    double think = r->t_post_ns > prev->t_done_ns ? (double)(r->t_post_ns - prev->t_done_ns) : 0;
    *ready_ns = s->path[s->prev_path].last_r_ns + think;
    return HS_OK;
}

/* Messages from i on while each one's class is K (a constant: the current path, so no
 * switch), all ready after the perturbation window: no routing, no perturbation test, and
 * K's fields at fixed offsets (measured: callgrind at hint 4K, phased's three phases 185,
 * 364 and 511 instructions a message, now 138, 273 and 481; model/README.md). Under mode,
 * as replay_mode. Returns the index of the first message not replayed (*st set on an
 * error). */
static HS_HOT size_t replay_run(mdl_state_t *s, const pred_mode_t mode, const int K, size_t i,
                                hs_status_t *st)
{
    const trace_rec_t *recs = s->tr->recs;
    size_t n = s->tr->n, i0 = i;
    uint8_t *restrict pathv = s->pathv;
    uint64_t hint = s->hint;
    mdl_path_t *pa = &s->path[K];

    for (; i < n; i++) {
        const trace_rec_t *r = &recs[i];
        double ready;
        if ((r->size_bytes > hint) != K)
            break;
        if ((*st = ready_time(s, i, mode, &ready)) != HS_OK)
            break;
        pathv[i] = (uint8_t)(TRACE_F_PATH_LL << K);
        post_message(s, pa, K, i, r->size_bytes, ready, ready, 0);
        if (mode == PRED_CLOSED)
            batch_force_close(s, pa); /* prev_path is K already */
    }
    if (i != i0)
        s->route.run = 0; /* as route on a message of the current class */
    return i;
}

/* The replay of every message under one mode (a constant per call, so that each mode
 * compiles to its own loop). one: every message takes the BW path (hint 0, a constant):
 * no routing, no switch, so no perturbation window (measured: bench_model's hint 0 rows). */
static HS_HOT hs_status_t replay_mode(mdl_state_t *s, const pred_mode_t mode, const int one)
{
    const trace_rec_t *recs = s->tr->recs;
    size_t n = s->tr->n;
    /* restrict: a path byte written per message aliases nothing the replay reads */
    uint8_t *restrict pathv = s->pathv;

    if (one)
        memset(pathv, TRACE_F_PATH_BW, n);
    for (size_t i = 0; i < n; i++) {
        const trace_rec_t *r = &recs[i];
        double ready, t;
        hs_status_t st = ready_time(s, i, mode, &ready);
        if (st != HS_OK)
            return st;
        t = ready;
        int k = one ? 1 : route(s, r, &t);
        mdl_path_t *pa = &s->path[k];
        if (!one)
            pathv[i] = (uint8_t)(TRACE_F_PATH_LL << k); /* BW = LL << 1 (trace.h) */
        if (one)
            post_message(s, pa, 1, i, r->size_bytes, t, ready, 0);
        else if (k) /* each path its own copy: its branches predicted apart */
            post_message(s, &s->path[1], 1, i, r->size_bytes, t, ready, 1);
        else
            post_message(s, &s->path[0], 0, i, r->size_bytes, t, ready, 1);
        if (mode == PRED_CLOSED) {
            batch_force_close(s, pa);
            s->prev_path = k;
        }
        if (!one && ready >= s->pert_until_ns) {
            /* past the perturbation window (every later message is: ready times do not
             * decrease, pred_check_trace): the rest of the run on path k */
            size_t j = k ? replay_run(s, mode, 1, i + 1, &st) : replay_run(s, mode, 0, i + 1, &st);
            if (st != HS_OK)
                return st;
            i = j - 1;
        }
    }
    return HS_OK;
}

/* Each mode's loop is a function of its own, so that one's code does not move with
 * another's (measured: bench_model wide at hint 0, 13% slower when replay_run's loops were
 * added to the one function holding all four). */
static __attribute__((noinline)) hs_status_t replay_open_one(mdl_state_t *s)
{
    return replay_mode(s, PRED_OPEN, 1);
}

static __attribute__((noinline)) hs_status_t replay_closed_one(mdl_state_t *s)
{
    return replay_mode(s, PRED_CLOSED, 1);
}

static __attribute__((noinline)) hs_status_t replay_open_routed(mdl_state_t *s)
{
    return replay_mode(s, PRED_OPEN, 0);
}

static __attribute__((noinline)) hs_status_t replay_closed_routed(mdl_state_t *s)
{
    return replay_mode(s, PRED_CLOSED, 0);
}

static hs_status_t replay_loop(mdl_state_t *s)
{
    /* the first message is ready at time 0 (open loop: times are relative to its post)
     * on an idle host, and takes its own class's path with nothing to switch from */
    s->raw->t_first_post_us = 0;
    s->route.cur = route_class(s, &s->tr->recs[0]);
    if (s->hint == 0)
        return s->mode == PRED_OPEN ? replay_open_one(s) : replay_closed_one(s);
    return s->mode == PRED_OPEN ? replay_open_routed(s) : replay_closed_routed(s);
}

static hs_status_t model_replay(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                                 uint64_t hint_bytes, pred_raw_t *raw)
{
    mdl_state_t s;
    hs_status_t st;

    if (tr->n == 0) {
        hs_log_error("the trace has no records: nothing to replay");
        return HS_ERR_INVALID;
    }
    st = mdl_state_init(&s, tr, p, o, hint_bytes, raw);
    if (st != HS_OK)
        return st;
    st = replay_loop(&s);
    if (st == HS_OK) {
        batch_force_close(&s, &s.path[0]);
        batch_force_close(&s, &s.path[1]);
        st = mdl_state_finish(&s);
    }
    mdl_state_release(&s);
    return st;
}

const pred_engine_ops_t model_engine_ops = {.name = "model", .replay = model_replay};
