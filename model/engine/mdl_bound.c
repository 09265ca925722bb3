/* mdl_bound.c - a link-bound segmented message in closed form (MODEL.md section 3, "A
 * link-bound message in closed form"; MODEL_ACCEL_BOUND).
 *
 * Invariant: where every chunk of a message starts on the link the moment the link frees
 * (its post, however long its slot wait, comes before the previous chunk's link time ends:
 * a saturated path), the chunks do not wait for one another: full chunk q ends (q + 1) S
 * after the link's free time L0 when the message started (S a full chunk's link time), and
 * its batch closes at L0 + (q + 1) S + latency, whatever its post.
 * Condition: no perturbation-window edge ahead; an open batch has a timer (else it would
 * take the first chunk in); the first chunk is link-bound, and a full chunk j >= B (B =
 * window / batch) that pops own batch j - B by its post still starts at L0 + j S
 * (mdl_bound_may); then the slot waits are replayed on copies (the batches queued before
 * the message, the open one as its timer closes it, the message's own, computed), runs of
 * waits that repeat one S later jumped, and only when every chunk, the last included, was
 * link-bound does anything change (mdl_bound_commit). The commit notes the ring it leaves
 * for mdl_steady.c. */
#include "model/engine/mdl_accel.h"

/* The close and WRs of batch h: an old one, the open one, or an own one. */
static MDL_HOT double bound_close(const mdl_bound_t *b, uint64_t h, uint32_t *nwr)
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

/* mdl_slots_acquire of a chunk of n WRs from t_ch on, the first avail batches queued;
 * returns the post time, or -1 when they run out (not modelled here). */
static MDL_HOT double bound_acquire(mdl_bound_t *b, uint32_t n, double t_ch, uint64_t avail)
{
    double close;
    uint32_t nwr;

    for (; b->h < avail; b->h++) { /* mdl_reap_due: every batch reported by t_ch */
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

static MDL_HOT int bound_post(mdl_bound_t *b, const mdl_cost_t *cc, double dma, double t,
                              double link)
{
    b->cpu = t + cc->post_ns;
    return mdl_bound_fits(cc, dma, t, link);
}

/* bound_run's test on the chunk after one posted at report r, whose link frees at end_j. */
static MDL_HOT int bound_next_fits(double r, double S, const mdl_cost_t *full, double dma,
                                   double end_j)
{
    return !(r + S + full->post_share_ns + dma > end_j ||
             r + full->post_ns + dma + full->ser_share_ns > end_j);
}

/* After full chunk j's wait ended at the report of batch h - 1 (posted at that report),
 * how many of the want further full chunks repeat its step one S later: the batches from
 * h on continue the spacing S with E WRs each (own batches always do), the slots held
 * make each wait pop exactly one, and each stays link-bound (its post + DMA before the
 * link frees, mdl_chunk_hw's CPU bound): both hold when they hold for chunk j + 1, with
 * end_j the link's free time after chunk j. Needs S > P and S >= event + P. */
static MDL_HOT uint64_t bound_run(const mdl_bound_t *b, const mdl_cost_t *full, double dma,
                                  double end_j, uint64_t want)
{
    double r = b->last_r, prev = r - b->ev;
    uint64_t k = 0;

    if (b->used + b->batch <= b->window || !bound_next_fits(r, b->S, full, dma, end_j))
        return 0;
    while (k < want) {
        uint64_t h = b->h + k;
        if (h > b->nv)
            return want; /* own batches after an own one */
        uint32_t nwr;
        double c = bound_close(b, h, &nwr);
        if (nwr != b->batch || c - prev != b->S)
            break;
        prev = c;
        k++;
    }
    return k;
}

MDL_ACCEL MDL_HOT int mdl_bound_may(const mdl_state_t *s, mdl_seg_t *g)
{
    const mdl_path_t *pa = g->m.pa;
    const mdl_cost_t *full = g->full;
    uint32_t B = pa->window / pa->batch;
    double dma = g->z->dma_ns;

    if (!(g->t0 + full->post_share_ns + dma <= s->link_free_ns))
        return 0;
    double S = g->link_step = mdl_link_step(s->link_free_ns, full->ser_ns, g->nfull);
    return S > 0 && (g->nfull <= B || g->z->lf_ns + pa->event_ns + full->post_share_ns + dma <=
                                          (double)(B - 1) * S);
}

/* Write own batches from q1 on (n of them) into pa's ring at index at, wrapping. */
static void bound_write(mdl_path_t *pa, const mdl_bound_t *b, uint32_t at, uint32_t n, double q1)
{
    uint32_t n1 = (uint32_t)b->mask + 1 - at; /* up to the ring's end, then its start */
    n1 = n1 < n ? n1 : n;
    for (uint32_t j = 0; j < n1; j++, q1 += 1)
        pa->ring[at + j] = (mdl_batch_t){b->L0 + q1 * b->S + b->lf, b->batch};
    for (uint32_t j = 0; j < n - n1; j++, q1 += 1)
        pa->ring[j] = (mdl_batch_t){b->L0 + q1 * b->S + b->lf, b->batch};
}

/* Apply walk b (b->h batches popped, b->used slots held, b->cpu the CPU's free time after
 * the last post) to g's path: the open batch closes by its timer (as the first chunk's
 * mdl_batch_add does), the popped batches go, the own batches not popped are queued (own
 * batch q closes at L0 + (q + 1) S + lf; q + 1 counted in a double: exact), or left lazy,
 * the last chunk joins a batch as usual, and the ring left is noted for mdl_steady.c. */
MDL_ACCEL MDL_HOT void mdl_bound_commit(mdl_state_t *s, mdl_seg_t *g, const mdl_bound_t *b,
                                        const int lazy)
{
    mdl_path_t *pa = g->m.pa;
    int k = g->m.k;
    const mdl_cost_t *last = &g->last;
    uint64_t nfull = g->nfull, avail = b->nv + nfull, h0 = b->h > b->nv ? b->h : b->nv;
    double link = b->L0 + (double)(int64_t)nfull * b->S;
    double hw_last = link + last->ser_ns + b->lf + pa->split_ns;
    int open = b->nv > b->nold;

    if (open) /* popped below when lazy (the steady walk: b->h > b->nv) */
        mdl_batch_report(s, pa, b->open_close, !lazy);
    double q1 = (double)(int64_t)(h0 - b->nv + 1);
    mdl_steady_t *st = &s->steady[k];
    if (lazy) { /* h0 == b->h: the B - 1 batches not popped start at the new head */
        st->lazy = 1;
        s->gate[k] = 0;
        st->L0 = b->L0;
        st->q1 = q1;
        st->S = b->S;
        st->lf = b->lf;
        st->c0 = mdl_steady_close(st, 0);
    } else {
        bound_write(pa, b, (uint32_t)((b->head + h0) & b->mask), (uint32_t)(avail - h0), q1);
    }
    mdl_note_report(pa, link + b->lf + b->ev);
    pa->head = (uint32_t)((b->head + b->h) & b->mask);
    pa->count = (uint32_t)(avail - b->h);
    pa->used = b->used;
    pa->pushes += nfull;
    pa->head_r_ns = !pa->count ? HUGE_VAL
                    : (lazy ? st->c0 : pa->ring[pa->head].close_ns) + b->ev;
    s->cpu_free_ns = b->cpu;
    s->link_free_ns = link + last->ser_ns;
    g->queue_ns = b->t_first - g->t0;
    s->cost_ns.queue += g->queue_ns;
    s->chunks_skipped += b->jumped;
    s->stalls += (uint64_t)b->stalled;
    s->bound_hits++;
    mdl_batch_add(s, pa, last->nwr, hw_last, &g->m);
    g->stalled = b->stalled;
    g->hw = hw_last;
    g->t_last = b->t_last;
    if (open)
        g->entry_close = b->open_close;
    mdl_steady_note(s, k, b->S, b->h >= b->nv, lazy);
}

/* The walk's start for g on its path as it is now. */
static void bound_start(const mdl_state_t *s, const mdl_seg_t *g, mdl_bound_t *b)
{
    const mdl_path_t *pa = g->m.pa;
    uint64_t open = pa->open_n > 0;

    *b = (mdl_bound_t){.ring = pa->ring, .head = pa->head, .mask = pa->mask, .nold = pa->count,
                       .nv = pa->count + open, .window = pa->window, .batch = pa->batch,
                       .open_nwr = pa->open_n, .ev = pa->event_ns,
                       .open_close = open ? pa->timer_close_ns : 0, .L0 = s->link_free_ns,
                       .S = g->link_step, .lf = g->z->lf_ns,
                       .cpu = s->cpu_free_ns, .last_r = -1, .used = pa->used};
}

/* The full chunks' walk; 0 where a chunk is not link-bound, or the open batch would take
 * the first chunk in. */
static MDL_HOT int bound_walk_full(mdl_seg_t *g, mdl_bound_t *b, double *t_ch)
{
    const mdl_cost_t *full = g->full;
    double S = b->S, dma = g->z->dma_ns;
    int open = b->nv > b->nold;
    int consts = S > full->post_ns && S >= b->ev + full->post_ns;
    uint64_t nfull = g->nfull;

    for (uint64_t j = 0; j < nfull; j++) {
        double t = bound_acquire(b, full->nwr, *t_ch, b->nv + j);
        double end_j = b->L0 + (double)(int64_t)(j + 1) * S;
        if (t < 0 || !bound_post(b, full, dma, t, b->L0 + (double)(int64_t)j * S))
            return 0;
        if (j == 0) {
            b->t_first = t;
            if (open && b->h <= b->nold && !(end_j + b->lf > b->open_close))
                return 0; /* the open batch would take the first chunk in */
            /* forced closed and popped by the first wait: the memo cannot know its close */
            g->entry_ok = !(open && b->h > b->nold);
        }
        *t_ch = b->cpu;
        uint64_t m = consts && b->last_r == t ? bound_run(b, full, dma, end_j, nfull - 1 - j) : 0;
        if (m) {
            uint32_t nwr;
            b->h += m;
            j += m;
            b->last_r = bound_close(b, b->h - 1, &nwr) + b->ev;
            b->cpu = *t_ch = b->last_r + full->post_ns;
            b->stalled = 1;
            b->jumped += m;
        }
    }
    return 1;
}

MDL_ACCEL MDL_COLD int mdl_bound(mdl_state_t *s, mdl_seg_t *g)
{
    const mdl_path_t *pa = g->m.pa;
    int open = pa->open_n > 0;
    mdl_bound_t b;

    /* no perturbation window ahead; an open batch without a timer would take the first
     * chunk in (one batch of both) */
    if (mdl_edge_ahead(s, g->t0) || (open && !(pa->period_ns > 0)))
        return 0;
    bound_start(s, g, &b); /* after mdl_bound_may: b.S > 0 */
    double t_ch = g->t0;
    if (!bound_walk_full(g, &b, &t_ch))
        return 0;
    /* the last chunk: the rest of the WRs */
    double link = b.L0 + (double)(int64_t)g->nfull * b.S;
    b.t_last = bound_acquire(&b, g->last.nwr, t_ch, b.nv + g->nfull);
    if (b.t_last < 0 || !bound_post(&b, &g->last, g->z->dma_ns, b.t_last, link))
        return 0;
    mdl_bound_commit(s, g, &b, 0);
    return 1;
}
