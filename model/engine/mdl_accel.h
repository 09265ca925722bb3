/* mdl_accel.h - the replay's accelerators (internal to model/engine/): each replays a
 * segmented message, or part of one, as the chunk-by-chunk replay of mdl_replay.c would, in
 * fewer steps, where the condition its file's top comment states holds. Each can be left
 * off (pred_opts_t.model_off, MODEL_ACCEL_*); tests/test_model_skip.c compares each one
 * alone, and all together, against the chunk-by-chunk replay. */
#ifndef HS_MDL_ACCEL_H
#define HS_MDL_ACCEL_H

#include <float.h>

#include "model/engine/mdl_core.h"

/* The accelerators and the base replay compile as one unit (mdl_engine.c), so that their
 * entry points are static and the hot ones inline into the replay loop as they did when
 * the engine was one file (measured: bench_model phased at hint 0, 30% more instructions
 * as separate units). MDL_ACCEL marks an entry point; MDL_HOT ones are always inlined. */
#define MDL_ACCEL static

/* A full chunk just stepped: its post, its hardware completion, and whether adding it
 * queued exactly one batch of its own WRs (what the skip's run counts). */
typedef struct {
    double t_ns, hw_ns;
    int regular;
} mdl_step_t;

/* ---- shared by the skip and the serial form: a step repeated exactly ------------------ */

/* Whether a step of g's full chunks from t may add a cost that lands exactly halfway
 * between two doubles of t's binade (mdl_cost_tie_e), which rounds to the even one: then
 * a step an odd number of ulps later rounds it the other way. The switch perturbation's
 * extra latency, a product, is taken to. */
static MDL_HOT int mdl_step_may_tie(const mdl_state_t *s, const mdl_seg_t *g, double t)
{
    if (mdl_in_window(s, t) && s->pert_factor != 1)
        return 1;
    int64_t e = mdl_ulp_e(t); /* t positive, normal */
    return e < -64 || e >= 0 || (s->full[g->m.k].ties >> (e + 64) & 1) ||
           mdl_cost_tie_e(g->z->dma_ns) == e || mdl_cost_tie_e(g->z->lf_ns) == e;
}

/* ---- mdl_skip.c: the steady-state skip over a message's full chunks ------------------ */

/* After full chunk st of g (more than one chunk, *nwr WRs, left): track its batch and jump the
 * full chunks that repeat its step; returns the chunks jumped (st->t_ns and *nwr moved). */
MDL_ACCEL MDL_HOT uint64_t mdl_skip_track(mdl_state_t *s, const mdl_seg_t *g,
                                          mdl_track_t *track, mdl_step_t *st, uint64_t *nwr);

/* ---- mdl_entry.c: a long message's start on an idle path, kept ----------------------- */

/* Path g->m.k's entry record when g can start on an idle path (NULL if it cannot). */
MDL_ACCEL mdl_entry_t *mdl_entry_of(mdl_state_t *s, const mdl_seg_t *g);
/* Keep in e the pipeline after g's h-th full chunk st, before the skip's test (tracker k);
 * 0 when it does not fit. */
MDL_ACCEL MDL_COLD int mdl_entry_snap(const mdl_state_t *s, const mdl_seg_t *g, mdl_entry_t *e,
                                      uint32_t h, const mdl_step_t *st, const mdl_track_t *k);
/* Replay g's first e->h full chunks as e kept them, shifted to g->t0 (*k, *st as after). */
MDL_ACCEL MDL_COLD void mdl_entry_apply(mdl_state_t *s, mdl_seg_t *g, const mdl_entry_t *e,
                                        mdl_track_t *k, mdl_step_t *st);

/* ---- mdl_bound.c: a link-bound message in closed form -------------------------------- */

/* A closed-form walk over a message's slot waits (the batches popped are old ones, the
 * open one, then the message's own: own batch q closes at L0 + (q + 1) S + lf). */
typedef struct {
    const mdl_batch_t *ring;
    uint64_t head, mask, nold, nv; /* ring batches before the message, plus the open one */
    uint32_t window, batch, open_nwr;
    double ev, open_close, L0, S, lf; /* event cost; own batch q closes at L0 + (q + 1) S + lf */
    double cpu, last_r;  /* the CPU's free time; report of the batch the last wait popped */
    uint64_t h;          /* the next batch to pop, counted from the ring's head */
    uint32_t used;       /* slots held */
    int stalled;
    double t_first, t_last; /* the first and the last chunk's posts */
    uint64_t jumped;        /* full chunks jumped */
} mdl_bound_t;

/* Whether a link-bound closed form can apply to g at all (the link's steps exact by
 * formula, g->link_step set to them: mdl_link_step; its first chunk link-bound, no own
 * batch popped too early). */
MDL_ACCEL MDL_HOT int mdl_bound_may(const mdl_state_t *s, mdl_seg_t *g);
/* g (mdl_bound_may holding) in closed form where every chunk is link-bound; 0, nothing
 * changed, where not. */
MDL_ACCEL MDL_COLD int mdl_bound(mdl_state_t *s, mdl_seg_t *g);
/* Apply the walk b over g to the state; lazy: mdl_steady_walk's (the own batches left
 * unwritten, mdl_steady_t.lazy). */
MDL_ACCEL MDL_HOT void mdl_bound_commit(mdl_state_t *s, mdl_seg_t *g, const mdl_bound_t *b,
                                        const int lazy);

/* The link time a full chunk of link time ser adds on a saturated link free at L0, as the
 * chunk-by-chunk replay adds it (L0 + ser rounded, less L0: exact). Inside L0's binade
 * every such sum rounds alike, so the link frees exactly L0 + q S after q chunks while
 * L0 + n S (n chunks) stays in it; 0 where it does not, or where ser lands exactly halfway
 * between two doubles there (its lowest bit half the binade's ulp: such sums round to the
 * even one, so alternately). */
static MDL_HOT double mdl_link_step(double L0, double ser, uint64_t n)
{
    double bin = mdl_binade(L0), S = (L0 + ser) - L0;

    /* the tie is mdl_cost_tie_e(ser) == mdl_ulp_e(L0), tested as ser rounded to the ulp
     * by half of it exactly (S and ser within a factor of two: the difference is exact):
     * 1.1% fewer instructions than the bit test (callgrind, a phased replay at hint 0) */
    if (!(L0 >= DBL_MIN && ser >= 2 * bin * 0x1p-52) || fabs(S - ser) == bin * 0x1p-53)
        return 0;
    return L0 + (double)n * S < 2 * bin ? S : 0;
}

/* Whether a chunk of costs cc posted at t on a link free at link is link-bound (starts
 * at link, ends S later; mdl_chunk_hw with no perturbation window). */
static MDL_HOT int mdl_bound_fits(const mdl_cost_t *cc, double dma, double t, double link)
{
    double cpu = t + cc->post_ns;

    return t + cc->post_share_ns + dma <= link &&
           !(cc->nwr > 1 && cpu + dma + cc->ser_share_ns > link + cc->ser_ns);
}

/* A slot wait from t_ch, the CPU free at *cpu, that reaps nothing and pops one batch
 * closing at c (mdl_slots_acquire's walk then): the post time; *cpu, *last_r (the batch's
 * report) and *stalled as that walk leaves them. */
static MDL_HOT double mdl_wait_pop(double t_ch, double c, double ev, double *cpu,
                                   double *last_r, int *stalled)
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

/* ---- mdl_steady.c: the ring a link-bound message left, by formulas ------------------- */

/* g (mdl_bound_may holding) by the formulas of the walk mdl_bound would take on the ring
 * s->steady[k] kept (lazy: that ring left unwritten); 0, nothing changed, where a test
 * fails. */
MDL_ACCEL MDL_HOT int mdl_steady_walk(mdl_state_t *s, mdl_seg_t *g, const int lazy);
/* Write the batches a steady commit left lazy in path k's ring: before anything but
 * mdl_steady_walk reads or moves that ring. */
MDL_ACCEL MDL_COLD void mdl_steady_fill(mdl_state_t *s, int k);
/* After a closed-form commit on path k: keep its ring in s->steady[k] when it has the
 * steady shape (own: every batch in it is the message's own; lazy: left so by the steady
 * walk). */
MDL_ACCEL MDL_HOT void mdl_steady_note(mdl_state_t *s, int k, double S, int own, const int lazy);

/* Close of the lazy batch j (mdl_steady_t.lazy): what mdl_bound_commit writes there. */
static MDL_HOT double mdl_steady_close(const mdl_steady_t *st, uint32_t j)
{
    return st->L0 + (st->q1 + (double)j) * st->S + st->lf;
}

/* ---- mdl_serial.c: a window of one batch in closed form ------------------------------ */

/* Whether the serial closed form may apply to a message of nfull full chunks on pa: its
 * window holds one full batch, and the previous message's last chunk is alone on it, open
 * (the first chunk's wait forces it closed and pops it) or closed (the wait pops it). */
static MDL_HOT int mdl_serial_may(const mdl_path_t *pa, uint64_t nfull)
{
    return pa->window < 2 * pa->batch && nfull >= 1 && pa->used + pa->batch > pa->window &&
           ((pa->count == 0 && pa->open_n > 0) || (pa->count == 1 && pa->open_n == 0));
}

/* g (planned) in the serial closed form; 0, nothing changed, where a chunk would not take
 * that walk. */
MDL_ACCEL MDL_COLD int mdl_serial(mdl_state_t *s, mdl_seg_t *g);

#endif
