/* mdl_serial.c - a segmented message on a window of one batch, in closed form (MODEL.md
 * section 3, "A window of one batch"; MODEL_ACCEL_SERIAL).
 *
 * Invariant: when the window holds one full batch and no more (window < 2 batch: seed000's
 * BW path under any hint, 10 WRs), every full chunk waits for the report of the one before
 * it, so from the second on the chunks repeat one step: posted at the previous chunk's
 * report, on a free link, lambda (the chunk's own post-to-report time) apart.
 * Condition (mdl_serial_may): the previous message's last chunk is alone on the path, open
 * (the first chunk's wait forces it closed and pops it) or closed (the wait pops it); and,
 * checked on the way, no batch is reaped before a chunk's wait, the CPU is free before each
 * batch closes, the link is free at each chunk's start, and no perturbation-window edge
 * lies inside the message. The chunks' mdl_chunk_hw move the CPU's and the link's times held
 * apart (mdl_run_t), written to s when the walk applies; where a check fails the drain
 * total, which they moved too, is put back and nothing else has changed. */
#include "model/engine/mdl_accel.h"

/* The last full chunk: its post and completion, and the full chunks jumped before it. */
typedef struct {
    double t_ns, hw_ns;
    uint64_t jumped;
} serial_full_t;

/* Chunks 1 .. nfull - 1 of g after chunk 0 (posted at f->t_ns, completing at f->hw_ns):
 * chunk 1 pops chunk 0's batch at its report, every later full chunk repeats its step
 * lambda later, jumped. Moves *f to the last full chunk; 0 where the chunks do not take
 * that walk. */
static int serial_middle(mdl_run_t *r, const mdl_seg_t *g, serial_full_t *f)
{
    mdl_state_t *s = r->s;
    double t_first = f->t_ns, hw0 = f->hw_ns;
    const mdl_path_t *pa = g->m.pa;
    const mdl_cost_t *full = g->full;
    double ev = pa->event_ns, P = full->post_ns, ps = full->post_share_ns, dma = g->z->dma_ns;
    double end0 = r->link_free_ns, d0 = s->cost_ns.drain;
    /* chunk 1: nothing reaped before its wait (chunk 0 reported after the CPU is free),
     * which pops chunk 0's batch (closed after the CPU is free) at its report; the link
     * free */
    double t1 = hw0 + ev;
    if (!(hw0 >= t_first + P && t1 > t_first + P) || end0 > t1 + ps + dma)
        return 0;
    double hw1 = mdl_chunk_hw(r, pa, full, g->z, t1, MDL_HW_PERT);
    double end1 = r->link_free_ns, x1 = s->cost_ns.drain - d0, lambda = hw1 + ev - t1;
    /* so does chunk 2, and every later full chunk repeats chunk 1's step */
    if (!(hw1 >= t1 + P && hw1 + ev > t1 + P) || end1 > hw1 + ev + ps + dma)
        return 0;
    uint64_t m = g->nfull - 2;
    /* each step repeats chunk 1's exactly (mdl_skip.c's binade_edge): every time from
     * chunk 0's post to the last full chunk's report in t1's binade, and an even shift
     * where a step may meet a tie */
    double bin = mdl_binade(t1), last_r = hw1 + ev + (double)m * lambda;
    if (!(t_first >= bin && last_r < 2 * bin && end1 + (double)m * lambda < 2 * bin) ||
        (m & 1 && mdl_time_odd(t1) != mdl_time_odd(hw1 + ev) && mdl_step_may_tie(s, g, t1)))
        return 0;
    f->jumped = m;
    f->t_ns = t1 + (double)m * lambda;
    f->hw_ns = hw1 + (double)m * lambda;
    r->link_free_ns = end1 + (double)m * lambda;
    s->cost_ns.drain += (double)m * x1;
    return 1;
}

/* The commit: the forced close (it reports the previous message) and the pop; the full
 * chunks' batches, each pushed and popped by the next, the last full one's (closing at
 * hwf) kept when the last chunk does not pop it. */
static void serial_commit(mdl_state_t *s, mdl_seg_t *g, int forced, double c0, int pop,
                          double hwf)
{
    mdl_path_t *pa = g->m.pa;
    uint32_t E = pa->batch;
    uint64_t nfull = g->nfull;

    if (forced) /* reported; popped at once, so not written (head moves past it) */
        mdl_batch_report(s, pa, c0, 0);
    uint32_t head = (pa->head + 1) & pa->mask;
    if (pop) {
        pa->head = (uint32_t)((head + nfull) & pa->mask);
        pa->count = 0;
        pa->used = g->last.nwr;
        pa->head_r_ns = HUGE_VAL;
    } else {
        pa->head = (uint32_t)((head + nfull - 1) & pa->mask);
        pa->ring[pa->head] = (mdl_batch_t){hwf, E};
        pa->count = 1;
        pa->used = E + g->last.nwr;
        pa->head_r_ns = hwf + pa->event_ns;
    }
    pa->pushes += nfull;
    mdl_note_report(pa, hwf + pa->event_ns);
}

/* The walk: chunk 0, whose wait pops the previous message's last batch (forced closed
 * first when open); chunk 1 and the jump (serial_middle, nfull >= 2); the last chunk,
 * which pops the last full one's batch when it needs its slots. */
MDL_ACCEL MDL_COLD int mdl_serial(mdl_state_t *s, mdl_seg_t *g)
{
    mdl_path_t *pa = g->m.pa;
    const mdl_cost_t *full = g->full, *last = &g->last;
    double ev = pa->event_ns, P = full->post_ns, t0 = g->t0;
    int forced = pa->open_n > 0; /* else the ring's one batch (post_chunks reaped by t0) */
    double c0 = !forced ? pa->ring[pa->head].close_ns : mdl_forced_close(pa);
    mdl_run_t run = mdl_run_take(s);
    double drain0 = s->cost_ns.drain;

    /* chunk 0: the wait pops that batch, closed first (mdl_batch_force_close) when open */
    double cpu = run.cpu_free_ns, r;
    int stalled = 0;
    double t_first = mdl_wait_pop(t0, c0, ev, &cpu, &r, &stalled);
    double hw0 = mdl_chunk_hw(&run, pa, full, g->z, t_first, MDL_HW_PERT);
    /* the last full chunk: chunk 0 itself, or nfull - 2 steps after chunk 1 */
    serial_full_t f = {t_first, hw0, 0};
    if (g->nfull >= 2) {
        if (!serial_middle(&run, g, &f))
            goto undo_drain;
        stalled = 1; /* chunk 1 waited */
    }
    /* the last chunk: nothing reaped before its wait (the last full batch reported after the
     * CPU is free); it pops that batch if it needs its slots (else posts when the CPU is
     * free), with every post on t0's side of the perturbation window's edges */
    double cf = f.t_ns + P;
    int pop = pa->batch + last->nwr > pa->window;
    double t_last = pop ? f.hw_ns + ev : cf;
    if (!(f.hw_ns + ev > cf) || (pop && !(f.hw_ns >= cf)) || t_last >= mdl_next_edge(s, t0))
        goto undo_drain;
    stalled |= pop; /* its wait ended at the report, after the CPU was free */
    double hw_last = mdl_chunk_hw(&run, pa, last, g->z, t_last, MDL_HW_SPLIT | MDL_HW_PERT);

    mdl_run_put(&run);
    serial_commit(s, g, forced, c0, pop, f.hw_ns);
    g->queue_ns = t_first - t0;
    s->cost_ns.queue += g->queue_ns;
    s->chunks_skipped += f.jumped;
    s->stalls += (uint64_t)stalled;
    s->serial_hits++;
    mdl_batch_add(s, pa, last->nwr, hw_last, &g->m);
    g->stalled = stalled;
    g->hw = hw_last;
    g->t_last = t_last;
    g->entry_ok = !forced; /* a forced close was popped at once: its close unknown */
    return 1;
undo_drain: /* the chunks moved s's drain total; the times held apart are dropped */
    s->cost_ns.drain = drain0;
    return 0;
}
