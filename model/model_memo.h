/* model_memo.h - replaying a segmented message again, shifted (internal to model/).
 *
 * The replay is a chain of max and +, so a message that meets the same pipeline (relative
 * to the time it can start, t0) as an earlier message of the same size on the same path
 * leaves the same pipeline shifted by the difference of their t0s, with the same costs.
 * A message of many chunks is replayed once, kept in a slot (MDL_MEMO_SLOTS per path,
 * by size; a size is kept from its second message in a row in its slot on), and later
 * copies are applied in O(ring) (MODEL.md section 3). */
#ifndef HS_MODEL_MEMO_H
#define HS_MODEL_MEMO_H

#include <math.h>

#include "model/model_state.h"

/* The slot for a message of size bytes on path k (valid or not). */
mdl_memo_t *memo_slot(mdl_state_t *s, int k, uint64_t size);
/* View of pa from t0 for a key (link and, when nothing is queued, CPU and the latest report
 * clamped to t0: earlier values cannot matter); 0 when pa holds more than the view can. */
int memo_view_key(const mdl_state_t *s, const mdl_path_t *pa, double t0, mdl_view_t *v);
/* Whether m was kept for this message, on pa (index k) from t0: same size, path,
 * perturbation side, key (pa's, as memo_view_key sees it, to rounding), and its span from t0
 * crosses no perturbation edge. */
int memo_matches(const mdl_state_t *s, const mdl_memo_t *m, uint64_t size, int k,
                 const mdl_path_t *pa, double t0);
/* Whether a message from t0 spanning span_ns crosses no perturbation-window edge. */
int memo_edge_free(const mdl_state_t *s, double t0, double span_ns);
/* Set pa and the shared state to what m's message left, shifted to t0; report the open
 * batch's members m's message closed and, if it did, message i (posted for tref_ns). */
void memo_apply(mdl_state_t *s, mdl_path_t *pa, const mdl_memo_t *m, size_t i, double t0,
                double tref_ns);
/* *dst = *src, copying only the batches and members src holds. */
void memo_view_copy(mdl_view_t *dst, const mdl_view_t *src);
/* View of pa after a message (no clamping); 0 when it does not fit. */
int memo_view_out(const mdl_state_t *s, const mdl_path_t *pa, double t0, mdl_view_t *v);
/* Set pa's ring, slots, open batch and latest report, and the CPU and the link, to view v
 * (memo_view_out's) shifted to t0; the members are the caller's. Inline: an out-of-line
 * call cost the memo's replays 2.4% more instructions (callgrind, bench_model allreduce). */
static inline void memo_view_restore(mdl_state_t *s, mdl_path_t *pa, const mdl_view_t *v,
                                     double t0)
{
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
    pa->last_r_ns = t0 + v->last_r_ns;
    if (pa->last_r_ns > s->t_last_done_ns)
        s->t_last_done_ns = pa->last_r_ns;
    s->cpu_free_ns = t0 + v->cpu_ns;
    s->link_free_ns = t0 + v->link_ns;
}


#endif
