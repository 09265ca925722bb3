/* mdl_steady.c - the ring a link-bound message left, replayed by formulas (MODEL.md section
 * 3, "The ring a link-bound message leaves"; MODEL_ACCEL_STEADY, which needs
 * MODEL_ACCEL_BOUND).
 *
 * Invariant: when the window is a whole number B >= 3 of batches, a link-bound message
 * whose own batches were all written by its commit leaves on its path its own last B - 1
 * full batches, one full chunk's link time S apart, and its last chunk's batch (open under
 * the moderation timer, or closed whole); the walk mdl_bound takes for the next link-bound
 * message on that ring is then known step by step, with no loop.
 * Condition: the path is untouched since (same pushes and, unless lazy, the same head,
 * count, open batch, timer and kept tail), S is the same, the message has at least B full
 * chunks, no perturbation-window edge is ahead, S > P and S >= event + P (P a full chunk's
 * post cost); every test mdl_bound would make on that walk is made (each chunk link-bound,
 * the open batch not taking chunk 0 in, each jump allowed and no further one), and where one
 * fails nothing has changed and mdl_bound replays the message.
 * The lazy ring: the steady commit does not write its own B - 1 batches (they are
 * L0 + (q1 + j) S + lf, mdl_steady_t); it sets the flag and s->gate[k] = 0, so that every
 * message on that path, whatever its size, takes post_message's slow branch, which either
 * replays it here (nothing reported on the path by its start) or writes the ring first
 * (mdl_steady_fill, the same expression, so the same doubles). mdl_steady_fill must run
 * before anything but mdl_steady_walk reads or moves that ring: any other message on the
 * path, and the memo keeping what a message left. */
#include "model/engine/mdl_accel.h"

MDL_ACCEL MDL_COLD void mdl_steady_fill(mdl_state_t *s, int k)
{
    mdl_steady_t *st = &s->steady[k];
    mdl_path_t *pa = &s->path[k];

    for (uint32_t j = 0; j + 1 < st->B; j++) /* the B - 1 own full batches */
        pa->ring[(pa->head + j) & pa->mask] = (mdl_batch_t){mdl_steady_close(st, j), pa->batch};
    st->lazy = 0;
    s->gate[k] = mdl_gate(s, k);
}

/* What the walk checks the path against later: pa as it is now, the full chunks' link
 * time S and the close of the ring's batch B - 2. */
static void steady_store(mdl_steady_t *st, const mdl_path_t *pa, double S, double tail_close_ns)
{
    st->pushes = pa->pushes;
    st->head = pa->head;
    st->count = pa->count;
    st->open_n = pa->open_n;
    st->S = S;
    st->tail_close_ns = tail_close_ns;
    st->timer_close_ns = pa->timer_close_ns;
}

MDL_ACCEL MDL_HOT void mdl_steady_note(mdl_state_t *s, int k, double S, int own, const int lazy)
{
    mdl_steady_t *st = &s->steady[k];
    const mdl_path_t *pa = &s->path[k];
    uint32_t B = st->B;

    if (lazy) {
        /* the walk's commit: own batches on a path of steady shape, S set by it; only the
         * last chunk's batch is tested (open under a timer, or closed whole) */
        st->valid = pa->open_n == 0 || pa->period_ns > 0;
        steady_store(st, pa, st->S, mdl_steady_close(st, B - 2));
        return;
    }
    st->valid = own && st->shape &&
                ((pa->count == B - 1 && pa->open_n > 0 && pa->period_ns > 0) ||
                 (pa->count == B && pa->open_n == 0));
    if (st->valid) /* the ring is written (not lazy) */
        steady_store(st, pa, S, pa->ring[(pa->head + B - 2) & pa->mask].close_ns);
}

/* The constants of the walk for g on path k: a full chunk's costs and link time, the
 * event, what a completion adds to the link's end, and the link's free time at the start. */
typedef struct {
    mdl_cost_t full, last;  /* copies, kept in registers (measured: bench_model phased) */
    uint32_t batch, nbatch; /* WRs a batch, full batches the window holds (B) */
    double chunk_link;      /* S: a full chunk's link time */
    double post;            /* P: a full chunk's post cost */
    double event, trip;     /* the event cost; latency + fixed (link end to completion) */
    double link0;           /* L0: the link's free time when the message starts */
    /* a full chunk posted at t on a link free at link is link-bound iff t + lead <= link
     * (also with one WR: then both terms are P + DMA), and mdl_bound's next-chunk test
     * iff r + S + lead <= end. The sums round apart from theirs, so a tie can take either
     * side: there the chunk starts when the link frees either way */
    double lead;
} walk_t;

/* The ring's kept batches for the walk: the head's close, the close of batch B - 2 (the
 * run's last), and the last batch (the open one, closed by its timer, or a closed one):
 * its close and WRs. 0 where the path is not as the note left it. */
typedef struct {
    double head_close, tail_close, last_close;
    uint32_t last_nwr;
    int open;
} kept_t;

static MDL_HOT int steady_kept(const mdl_path_t *pa, const mdl_steady_t *st, const int lazy,
                               kept_t *kp)
{
    const mdl_batch_t *ring = pa->ring, *last = &ring[(pa->head + st->B - 1) & pa->mask];

    if (lazy) { /* the ring's first B - 1 batches (mdl_steady_note: count >= B - 1) */
        kp->head_close = st->c0;
        kp->tail_close = st->tail_close_ns;
    } else {
        if (st->head != pa->head || st->count != pa->count || st->open_n != pa->open_n ||
            st->timer_close_ns != pa->timer_close_ns)
            return 0;
        kp->head_close = ring[pa->head].close_ns;
        kp->tail_close = ring[(pa->head + st->B - 2) & pa->mask].close_ns;
        if (kp->tail_close != st->tail_close_ns)
            return 0;
    }
    kp->open = pa->open_n > 0;
    kp->last_nwr = kp->open ? pa->open_n : last->nwr;
    kp->last_close = kp->open ? pa->timer_close_ns : last->close_ns;
    return 1;
}

/* mdl_bound on the ring the note kept, in O(1): the walk mdl_bound takes there, step by
 * step. Chunk 0 pops the ring's head; the jump over the other B - 2 kept batches (a run S
 * apart); chunk B - 1 pops (or reaps) the last batch, the open one as its timer closes it;
 * chunk B pops its own first batch; the jump over the rest; the last chunk pops own batch
 * nfull - B (with nfull = B, no chunk B: the last chunk pops own batch 0). Each step that
 * mdl_bound would take otherwise (a reap, a jump not allowed or one allowed further, a
 * chunk not link-bound) returns 0 with nothing changed. */
static MDL_HOT int steady_walk(mdl_state_t *s, mdl_seg_t *g, const walk_t *w, const kept_t *kp,
                               const int lazy)
{
    uint64_t nfull = g->nfull;
    uint32_t batch = w->batch, nbatch = w->nbatch;
    double chunk_link = w->chunk_link, post = w->post, event = w->event, link0 = w->link0;
    double t0 = g->t0, lead = w->lead, last_close = kp->last_close;
    int stalled = 0;

    /* chunk 0: post_chunks reaped by t0, so its wait pops the head (used + E > W) */
    double cpu = s->cpu_free_ns, r, t = mdl_wait_pop(t0, kp->head_close, event, &cpu, &r, &stalled);
    double t_first = t;
    /* link-bound; the open batch does not take it in; the jump over batches 1 .. B - 2
     * (kept S apart) is allowed and stops at the last batch */
    if (!(t + lead <= link0) || (kp->open && !(link0 + chunk_link + w->trip > last_close)) ||
        r != t || !(r + chunk_link + lead <= link0 + chunk_link) ||
        (kp->last_nwr == batch && last_close - kp->tail_close == chunk_link))
        return 0;
    double t_ch = kp->tail_close + event + post; /* the jump: each posts at the report it popped */
    cpu = t_ch;
    stalled = 1;
    uint32_t used = (nbatch - 1) * batch + kp->last_nwr;

    /* chunk B - 1: the last batch (the open one closed by its timer), reaped or popped */
    double own0_close = link0 + (double)(int64_t)1 * chunk_link + w->trip, last_r = -1;
    if (last_close + event <= t_ch) { /* reaped (and own batch 0 not yet reported): no wait */
        cpu = (cpu > last_close ? cpu : last_close) + event;
        if (own0_close + event <= t_ch)
            return 0;
        t = t_ch > cpu ? t_ch : cpu;
    } else {
        t = mdl_wait_pop(t_ch, last_close, event, &cpu, &last_r, &stalled);
    }
    used += batch - kp->last_nwr;
    double end = link0 + (double)(int64_t)nbatch * chunk_link;
    if (!(t + lead <= link0 + (double)(int64_t)(nbatch - 1) * chunk_link))
        return 0;
    if (nfull > nbatch && last_r == t && last_r + chunk_link + lead <= end &&
        own0_close - (last_r - event) == chunk_link)
        return 0; /* mdl_bound jumps from here */
    t_ch = cpu = t + post;

    uint64_t jumped = 0;
    if (nfull > nbatch) {
        /* chunk B: pops its own first batch */
        if (own0_close + event <= t_ch)
            return 0;
        t = mdl_wait_pop(t_ch, own0_close, event, &cpu, &last_r, &stalled);
        if (!(t + lead <= end))
            return 0;
        cpu = t_ch = t + post;
        /* the jump over the rest: chunk j >= B posts at own batch j - B's report */
        jumped = nfull - 1 - nbatch;
        if (jumped) {
            if (last_r != t || !(last_r + chunk_link + lead <= end + chunk_link))
                return 0;
            last_r = link0 + (double)(int64_t)(nfull - nbatch) * chunk_link + w->trip + event;
            cpu = t_ch = last_r + post;
        }
    }

    /* the last chunk: pops own batch nfull - B */
    double pop_close = link0 + (double)(int64_t)(nfull - nbatch + 1) * chunk_link + w->trip;
    if (pop_close + event <= t_ch)
        return 0;
    double t_last = mdl_wait_pop(t_ch, pop_close, event, &cpu, &last_r, &stalled);
    double link_end = link0 + (double)(int64_t)nfull * chunk_link;
    if (!mdl_bound_fits(&w->last, g->z->dma_ns, t_last, link_end))
        return 0;

    /* commit, as mdl_bound's: the last batch and own batches 0 .. nfull - B are popped
     * (nfull + 1 in all), B - 1 own batches stay queued */
    const mdl_path_t *pa = g->m.pa;
    mdl_bound_t b = {.head = pa->head, .mask = pa->mask, .nold = pa->count, .nv = nbatch,
                     .batch = batch, .ev = event, .open_close = last_close, .L0 = link0,
                     .S = chunk_link, .lf = w->trip, .cpu = t_last + w->last.post_ns,
                     .h = nfull + 1,
                     .used = used - batch + w->last.nwr, .stalled = stalled,
                     .t_first = t_first, .t_last = t_last, .jumped = (nbatch - 2) + jumped};
    mdl_bound_commit(s, g, &b, 1);
    s->steady_hits++;
    s->lazy_hits += (uint64_t)lazy;
    g->entry_ok = 1;
    return 1;
}

MDL_ACCEL MDL_HOT int mdl_steady_walk(mdl_state_t *s, mdl_seg_t *g, const int lazy)
{
    const mdl_path_t *pa = g->m.pa;
    const mdl_steady_t *st = &s->steady[g->m.k];
    walk_t w = {.full = *g->full, .last = g->last, .batch = pa->batch, .nbatch = st->B,
                .chunk_link = g->link_step,
                .post = g->full->post_ns, .event = pa->event_ns, .trip = g->z->lf_ns,
                .link0 = s->link_free_ns};
    double chunk_link = w.chunk_link, dma = g->z->dma_ns;
    kept_t kp;

    w.lead = w.full.post_share_ns + dma;
    double lead_cpu = w.full.post_ns + dma + w.full.ser_share_ns - w.full.ser_ns;
    w.lead = lead_cpu > w.lead ? lead_cpu : w.lead;
    /* lazy: the ring as the last commit left it (the pushes are the same: nothing else
     * moved its head, closed or added to its open batch without writing the ring first) */
    if (!st->valid || st->pushes != pa->pushes || st->S != chunk_link ||
        g->nfull < (uint64_t)st->B || mdl_edge_ahead(s, g->t0) ||
        !(chunk_link > w.post && chunk_link >= w.event + w.post) ||
        !steady_kept(pa, st, lazy, &kp))
        return 0;
    return steady_walk(s, g, &w, &kp, lazy);
}
