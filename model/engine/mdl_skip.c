/* mdl_skip.c - the steady-state skip over a segmented message's full chunks (MODEL.md
 * section 3, "Steady state of a long message"; MODEL_ACCEL_SKIP).
 *
 * Invariant: every step of the replay is a max or a + of times, so shifting the state (the
 * post time, the CPU's and the link's free times, the ring's closes) by d shifts the next
 * step's result by d.
 * Condition: after a full chunk that is not its message's last, the pipeline seen from its
 * post (the link's backlog, the slots held) is the previous full chunk's shifted by lambda
 * (the gap between their posts), and what the next chunks read of the ring is too: either
 * the ring is one run of equally spaced batches of this message's full chunks, lambda
 * apart, covering the batch this chunk popped (every further full chunk repeats: the ring
 * shifts), or this chunk popped the one batch the previous left at the head and the next
 * heads continue the spacing with a batch of WRs each (the ring rolls, as far as they
 * do). The jump stops short of a perturbation-window edge and of the message's last chunk.
 * O(1) per chunk: the run at the ring's tail is tracked as batches are pushed (mdl_track_t).
 */
#include "model/engine/mdl_accel.h"

/* A jump: m further full chunks, each the last one's step lambda later, adding drain_step
 * to the drain total each. */
typedef struct {
    uint64_t m;
    double lambda, drain_step;
} skip_jump_t;

/* A full chunk posted at t_post closed its own batch of E_P WRs at hw (regular: the one
 * push of its mdl_batch_add; a full chunk always leaves no open batch) or not; extend or
 * restart the run of equally spaced batches. */
static void track_batch(mdl_track_t *k, int regular, double hw)
{
    if (!regular) {
        k->run = 0;
        return;
    }
    if (k->run == 1 || (k->run >= 2 && hw - k->close_ns != k->gap_ns)) {
        k->gap_ns = hw - k->close_ns;
        k->run = 2;
    } else {
        k->run++; /* also 0 -> 1 */
    }
    k->close_ns = hw;
}

/* The edge the jump's times must stay below so that it moves them exactly: each time the
 * steps read or write, and the previous step's post t_prev, lies in the binade
 * [2^e, 2^(e+1)) of t's, where every + of a cost rounds alike (a multiple of that binade's
 * ulp added to each), so each step repeats the last one's exactly, lambda later, and m
 * lambda is exact. The latest of them (the CPU, the link, the ring's newest report)
 * reaches that binade's end when t reaches the edge returned; -HUGE_VAL when the earliest
 * (the previous post, the ring's oldest close) lies before it. */
static double binade_edge(const mdl_state_t *s, const mdl_path_t *pa, double t, double t_prev)
{
    double lo = t_prev, hi = t, bin = mdl_binade(t);

    mdl_span_add(&lo, &hi, s->cpu_free_ns);
    mdl_span_add(&lo, &hi, s->link_free_ns);
    for (uint32_t b = 0; b < pa->count; b++)
        mdl_span_add(&lo, &hi, pa->ring[(pa->head + b) & pa->mask].close_ns);
    if (pa->count)
        mdl_span_add(&lo, &hi, mdl_ring_tail(pa)->close_ns + pa->event_ns);
    return lo < bin || !(hi < 2 * bin) ? -HUGE_VAL : t + (2 * bin - hi);
}

/* How many of m further full chunks of g, each lambda after the last (posted at t), post on
 * the same side of the perturbation window's edges as t does, with every time they move in
 * t's binade (binade_edge), and by an even number of ulps in all where a step may meet a
 * tie (mdl_step_may_tie). */
static uint64_t skip_limit(const mdl_state_t *s, const mdl_seg_t *g, double t, double lambda,
                           uint64_t m)
{
    double edge = mdl_next_edge(s, t), bin = binade_edge(s, g->m.pa, t, t - lambda);

    edge = bin < edge ? bin : edge;
    if (!(edge > t))
        return 0;
    double fit = floor((edge - t) / lambda);
    uint64_t lim = fit < (double)m ? (uint64_t)(fit > 0 ? fit : 0) : m;
    while (lim > 0 && t + (double)lim * lambda >= edge)
        lim--;
    if (lim & 1 && mdl_time_odd(t) != mdl_time_odd(t - lambda) && mdl_step_may_tie(s, g, t))
        lim--; /* lambda an odd number of ulps */
    return lim;
}

/* What jump j does besides the ring: shift the chunk time *t_ns, the CPU and the link, and
 * count the chunks. Returns the shift. */
static double skip_shift(mdl_state_t *s, double *t_ns, const skip_jump_t *j)
{
    double shift = (double)j->m * j->lambda;
    *t_ns += shift;
    s->cost_ns.drain += (double)j->m * j->drain_step;
    s->cpu_free_ns += shift;
    s->link_free_ns += shift;
    s->chunks_skipped += j->m;
    return shift;
}

/* Jump j on a ring that is one run: shift the ring. */
static MDL_COLD void skip_apply(mdl_state_t *s, mdl_path_t *pa, double *t_ns,
                                const skip_jump_t *j)
{
    double shift = skip_shift(s, t_ns, j);
    for (uint32_t b = 0; b < pa->count; b++)
        pa->ring[(pa->head + b) & pa->mask].close_ns += shift;
    if (pa->count) {
        double r_ns = mdl_ring_tail(pa)->close_ns + pa->event_ns;
        pa->head_r_ns = pa->ring[pa->head].close_ns + pa->event_ns;
        mdl_note_report(pa, r_ns);
    }
}

/* Batches from pa's head on, of nwr WRs each, lambda apart after the one before the head
 * closed at prev_ns: how many, at most lim. */
static uint32_t head_run(const mdl_path_t *pa, double prev_ns, double lambda, uint32_t nwr,
                         uint32_t lim)
{
    uint32_t r = 0;

    for (; r < pa->count && r < lim; r++) {
        const mdl_batch_t *b = &pa->ring[(pa->head + r) & pa->mask];
        if (b->nwr != nwr || b->close_ns - prev_ns != lambda)
            break;
        prev_ns = b->close_ns;
    }
    return r;
}

/* Jump j whose steps each pop the ring's head and push their own batch lambda after the
 * last (the skip's second case): roll the ring by j->m and extend k's run of equally
 * spaced batches. */
static MDL_COLD void skip_roll(mdl_state_t *s, mdl_path_t *pa, double *t_ns,
                               const skip_jump_t *j, mdl_track_t *k)
{
    const mdl_batch_t *tail = mdl_ring_tail(pa);
    double close_ns = tail->close_ns, shift = skip_shift(s, t_ns, j), lambda = j->lambda;
    uint32_t nwr = tail->nwr;

    for (uint64_t q = 1; q <= j->m; q++) {
        pa->head = (pa->head + 1) & pa->mask;
        mdl_batch_t *b = &pa->ring[(pa->head + pa->count - 1) & pa->mask];
        b->close_ns = close_ns + (double)q * lambda;
        b->nwr = nwr;
    }
    pa->head_r_ns = pa->ring[pa->head].close_ns + pa->event_ns;
    mdl_note_report(pa, close_ns + shift + pa->event_ns);
    /* the pushed batches continue the run at the tail when it is lambda apart */
    if (!(k->run >= 2 && k->gap_ns == lambda)) {
        k->gap_ns = lambda;
        k->run = 1;
    }
    k->run += (uint32_t)j->m; /* m < the ring's batches */
    k->close_ns = close_ns + shift;
}

/* How many further full chunks (at most full_left) the roll may jump after the chunk
 * posted at t (lambda after the previous): the heads that continue the spacing. */
static uint64_t roll_limit(const mdl_state_t *s, const mdl_seg_t *g, const mdl_track_t *k,
                           double t, double lambda, uint64_t full_left)
{
    const mdl_path_t *pa = g->m.pa;

    /* one push (regular) and an equal count: this chunk popped one batch, of E_P WRs
     * (equal slots), the previous one's head; each further step pops the next. If this
     * chunk's reaping found that batch reported, it also looked at the one after, and so
     * does each further step: a run of r from the head allows r - 1 steps; if not, the
     * slot wait popped it and r */
    uint32_t r = head_run(pa, k->head_ns, lambda, pa->batch,
                          full_left < pa->count ? (uint32_t)full_left + 1 : pa->count);
    uint32_t waited = k->head_ns + pa->event_ns > k->reap_ns;
    if (r + waited <= 1)
        return 0;
    return skip_limit(s, g, t, lambda,
                      r + waited - 1 < full_left ? r + waited - 1 : full_left);
}

/* After a full chunk posted at *t_ns (its batch regular, full_left more full chunks before
 * the last): jump the full chunks that repeat its step (the two cases of the top comment).
 * Returns the chunks jumped. */
static uint64_t chunks_skip(mdl_state_t *s, const mdl_seg_t *g, double *t_ns,
                            uint64_t full_left, mdl_track_t *k)
{
    mdl_path_t *pa = g->m.pa;
    double t = *t_ns, link = s->link_free_ns - t;
    double lambda = t - k->t_ns;
    uint64_t m = 0;
    int roll = 0;

    /* every batch in the ring holds E_P WRs (run > count), so equal slots held means an
     * equal count of batches */
    if (k->valid && lambda > 0 && pa->used == k->used && link == k->link_ns) {
        if (k->run > pa->count && k->gap_ns == lambda) {
            m = skip_limit(s, g, t, lambda, full_left);
        } else if (k->run && pa->count == k->count && pa->count) {
            m = roll_limit(s, g, k, t, lambda, full_left);
            roll = 1;
        }
    }
    skip_jump_t j = {m, lambda, s->cost_ns.drain - k->drain_ns};
    *k = (mdl_track_t){t, link, s->cost_ns.drain, pa->used, 1, k->close_ns, k->gap_ns, k->run,
                        pa->count ? pa->ring[pa->head].close_ns : 0,
                        t > s->cpu_free_ns ? t : s->cpu_free_ns, pa->count};
    if (m == 0)
        return 0;
    if (roll) {
        skip_roll(s, pa, t_ns, &j, k);
    } else {
        skip_apply(s, pa, t_ns, &j);
        k->run = 0;
    }
    k->valid = 0; /* m stopped at an edge, at the last full chunk or at the run's end: the
                   * state changes next */
    return m;
}

MDL_ACCEL MDL_HOT uint64_t mdl_skip_track(mdl_state_t *s, const mdl_seg_t *g,
                                          mdl_track_t *track, mdl_step_t *st, uint64_t *nwr)
{
    track_batch(track, st->regular, st->hw_ns);
    uint64_t m = chunks_skip(s, g, &st->t_ns, (*nwr - 1) / g->m.pa->batch, track);
    *nwr -= m * g->m.pa->batch;
    return m;
}
