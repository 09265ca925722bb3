/* mdl_memo.h - the memo: replaying a segmented message again, shifted (internal to
 * model/engine/, mdl_memo.c).
 *
 * Invariant: the replay is a chain of max and +, so a message that meets the same pipeline
 * (relative to the time it can start, t0) as an earlier message of the same size on the
 * same path leaves the same pipeline shifted by the difference of their t0s, with the same
 * costs; in doubles, bit for bit where that shift is exact (mdl_shift_t). Applies to a
 * segmented message whose size was the last one seen in its slot (MDL_MEMO_SLOTS per path
 * and last bit of t0, by size: a size is kept from its second message in a row in its slot
 * on), when the kept replay's key equals the path seen from t0 bit for bit, the shift is
 * exact, on the same side of the perturbation window, with no window edge inside its span;
 * it is applied in O(ring) (MODEL.md section 3). A ring a steady commit left lazy is
 * written (mdl_steady_fill) before a view of it is taken. The key is compared in O(1)
 * where its batches are those a memo restored, popped since but not pushed, shifted by
 * one exact d (mdl_memo_rel_t), or where it holds nothing (mdl_memo_t.key_idle). */
#ifndef HS_MDL_MEMO_H
#define HS_MDL_MEMO_H

#include <math.h>

#include "model/engine/mdl_state.h"

/* Keep in sh the span [mn, mx] of times relative to t0 (which it holds); 0 when they do not
 * lie in t0's binade (then no shift of them is exact). */
int mdl_shift_keep(mdl_shift_t *sh, double t0, double mn, double mx);
/* Whether sh's times shift to t0 exactly. */
static inline int mdl_shift_exact(const mdl_shift_t *sh, double t0)
{
    return t0 + sh->lo >= sh->bin_lo && t0 + sh->hi < sh->bin_hi && mdl_time_odd(t0) == sh->odd;
}

/* The slot for a message of size bytes on path k from t0 (valid or not). Inline: one
 * multiply and a shift, on every segmented message's way to the memo. */
static inline mdl_memo_t *mdl_memo_slot(mdl_state_t *s, int k, uint64_t size, double t0)
{
    int j = k * MDL_MEMO_SLOTS + (int)((size * 0x9E3779B97F4A7C15ull) >> 61);

    return &s->memo[2 * j + (int)mdl_time_odd(t0)];
}
/* View of pa from t0 for a key (link and, when nothing is queued, CPU and the latest report
 * clamped to t0: earlier values cannot matter); 0 when pa holds more than the view can. */
int mdl_view_key(const mdl_state_t *s, const mdl_path_t *pa, double t0, mdl_view_t *v);
/* Whether m was kept for message msg from t0: same size, path, perturbation side, key
 * (its path's, as mdl_view_key sees it, bit for bit), a shift to t0 that is exact, and its
 * span from t0 crosses no perturbation edge. */
int mdl_memo_matches(const mdl_state_t *s, mdl_memo_t *m, const mdl_msg_t *msg, double t0);
/* Whether a message from t0 spanning span_ns crosses no perturbation-window edge. */
int mdl_memo_edge_free(const mdl_state_t *s, double t0, double span_ns);
/* Set g's path and the shared state to what m's message left, shifted to g->t0; report
 * the open batch's members m's message closed and, if it did, g's message. */
void mdl_memo_apply(mdl_state_t *s, const mdl_seg_t *g, mdl_memo_t *m);
/* Keep in m what g's replay did, met from key (not kept when it cannot be replayed
 * shifted: a batch of several members left open, a perturbation edge crossed, a ring
 * larger than a view). */
void mdl_memo_keep(mdl_state_t *s, const mdl_seg_t *g, const mdl_view_t *key, mdl_memo_t *m);
/* *dst = *src, copying only the batches and members src holds. */
void mdl_view_copy(mdl_view_t *dst, const mdl_view_t *src);
/* View of pa after a message (no clamping); 0 when it does not fit. */
int mdl_view_out(const mdl_state_t *s, const mdl_path_t *pa, double t0, mdl_view_t *v);
/* Set pa's ring, slots, open batch and latest report, and the CPU and the link, to view v
 * (mdl_view_out's) shifted to t0; the members are the caller's. Inline: an out-of-line
 * call cost the memo's replays 2.4% more instructions (callgrind, bench_model allreduce). */
static inline void mdl_view_restore(mdl_state_t *s, mdl_path_t *pa, const mdl_view_t *v,
                                    double t0)
{
    s->restored[pa == &s->path[1]] = NULL; /* mdl_memo_apply sets it when it restores */
    pa->head = 0;
    pa->count = v->count;
    for (uint32_t j = 0; j < v->count; j++)
        pa->ring[j] = (mdl_batch_t){t0 + v->ring_ns[j], v->ring_nwr[j]};
    pa->head_r_ns = v->count ? pa->ring[0].close_ns + pa->event_ns : HUGE_VAL;
    pa->used = v->used;
    pa->open_n = v->open_n;
    pa->h1_ns = t0 + v->h1_ns;
    pa->timer_close_ns = t0 + v->timer_ns; /* HUGE_VAL stays */
    pa->timer_r_ns = pa->timer_close_ns + pa->event_ns;
    /* the path's latest report may move back (a key clamps one before t0 to t0): the
     * replay's latest keeps what it was (mdl_note_report) */
    if (pa->last_r_ns > s->t_last_done_ns)
        s->t_last_done_ns = pa->last_r_ns;
    /* a report the newest batch gave stays its report: shifted apart, the two could round
     * apart, and a closed loop's next message, ready at that report, would find the batch
     * not yet due (a tie broken by one ulp: measured, 4e-4 of a queue cost) */
    pa->last_r_ns = v->last_is_tail ? pa->ring[v->count - 1].close_ns + pa->event_ns
                                    : t0 + v->last_r_ns;
    if (pa->last_r_ns > s->t_last_done_ns)
        s->t_last_done_ns = pa->last_r_ns;
    s->cpu_free_ns = t0 + v->cpu_ns;
    s->link_free_ns = t0 + v->link_ns;
}

#endif
