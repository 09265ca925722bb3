/* mdl_memo.c - the memo: replaying a segmented message again, shifted: views of a path
 * from a time, their comparison, keeping a replay and applying it (the invariant and the
 * condition: mdl_memo.h; MODEL.md section 3). */
#include "model/engine/mdl_memo.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model/engine/mdl_core.h"

/* pa's pipeline from t0 without its batches and members: the view's scalars (span: and
 * the span of its times, t_min and t_max, which only a view that is restored needs). */
static inline void view_head(const mdl_state_t *s, const mdl_path_t *pa, double t0,
                             mdl_view_t *v, const int span)
{
    v->cpu_ns = s->cpu_free_ns - t0;
    v->link_ns = s->link_free_ns - t0;
    v->last_r_ns = pa->last_r_ns - t0;
    v->used = pa->used;
    v->count = pa->count;
    v->open_n = pa->open_n;
    v->nmem = pa->nmem;
    v->h1_ns = pa->open_n ? pa->h1_ns - t0 : 0;
    v->timer_ns = pa->open_n && pa->timer_close_ns != HUGE_VAL ? pa->timer_close_ns - t0
                                                                : HUGE_VAL;
    if (!span)
        return;
    v->t_min = v->t_max = t0;
    mdl_span_add(&v->t_min, &v->t_max, s->cpu_free_ns);
    mdl_span_add(&v->t_min, &v->t_max, s->link_free_ns);
    mdl_span_add(&v->t_min, &v->t_max, pa->last_r_ns);
    if (pa->open_n)
        mdl_span_add(&v->t_min, &v->t_max, pa->h1_ns);
    if (v->timer_ns != HUGE_VAL)
        mdl_span_add(&v->t_min, &v->t_max, pa->timer_close_ns);
}

/* From t0 on the link is only read as max(link, a time after t0); the latest report only as
 * a max with the message's own reports, all after t0; with nothing queued the CPU too is
 * only read as max(cpu, a time at or after t0): a key holds them clamped to t0. */
static void view_clamp(mdl_view_t *v)
{
    v->link_ns = v->link_ns > 0 ? v->link_ns : 0;
    v->last_r_ns = v->last_r_ns > 0 ? v->last_r_ns : 0;
    if (v->count == 0 && v->open_n == 0 && v->cpu_ns < 0)
        v->cpu_ns = 0;
}

/* mdl_view_out's view, with its span or (a key's) without */
static inline int view_fill(const mdl_state_t *s, const mdl_path_t *pa, double t0,
                            mdl_view_t *v, const int span)
{
    if (pa->count > MDL_MEMO_RING || pa->nmem > MDL_MEMO_MEM)
        return 0;
    view_head(s, pa, t0, v, span);
    for (uint32_t j = 0; j < pa->count; j++) {
        const mdl_batch_t *b = &pa->ring[(pa->head + j) & pa->mask];
        v->ring_ns[j] = b->close_ns - t0;
        v->ring_nwr[j] = b->nwr;
        if (span)
            mdl_span_add(&v->t_min, &v->t_max, b->close_ns);
    }
    v->last_is_tail = pa->count > 0 && pa->last_r_ns == mdl_ring_tail(pa)->close_ns + pa->event_ns;
    for (uint32_t j = 0; j < pa->nmem; j++) {
        v->mem_hw_ns[j] = pa->mem[j].hw_ns - t0;
        if (span)
            mdl_span_add(&v->t_min, &v->t_max, pa->mem[j].hw_ns);
    }
    return 1;
}

int mdl_view_out(const mdl_state_t *s, const mdl_path_t *pa, double t0, mdl_view_t *v)
{
    return view_fill(s, pa, t0, v, 1);
}

int mdl_shift_keep(mdl_shift_t *sh, double t0, double mn, double mx)
{
    double lo;

    sh->bin_lo = 0;
    if (!(t0 >= DBL_MIN && t0 < HUGE_VAL) || !(mn <= t0 && t0 <= mx))
        return 0;
    lo = mdl_binade(t0);
    if (mn < lo || !(mx < 2 * lo))
        return 0;
    sh->bin_lo = lo;
    sh->bin_hi = 2 * lo;
    sh->lo = mn - t0;
    sh->hi = mx - t0;
    sh->odd = mdl_time_odd(t0);
    return 1;
}

void mdl_view_copy(mdl_view_t *dst, const mdl_view_t *src)
{
    memcpy(dst, src, offsetof(mdl_view_t, ring_ns));
    memcpy(dst->ring_ns, src->ring_ns, src->count * sizeof(src->ring_ns[0]));
    memcpy(dst->ring_nwr, src->ring_nwr, src->count * sizeof(src->ring_nwr[0]));
    memcpy(dst->mem_hw_ns, src->mem_hw_ns, src->nmem * sizeof(src->mem_hw_ns[0]));
}

int mdl_view_key(const mdl_state_t *s, const mdl_path_t *pa, double t0, mdl_view_t *v)
{
    if (!view_fill(s, pa, t0, v, 0))
        return 0;
    view_clamp(v);
    return 1;
}

int mdl_memo_edge_free(const mdl_state_t *s, double t0, double span_ns)
{
    return t0 + span_ns < mdl_next_edge(s, t0);
}

/* Whether the scalars of key equal pa's pipeline from t0 as mdl_view_key would see it,
 * compared without building that view (measured: callgrind and bench_model allreduce,
 * whose long messages are nearly all memo hits): the counts first, then the times, clamped
 * as view_clamp clamps a key's (written out here: through a shared helper the compiler laid
 * this out slower); with no open batch both hold h1 0 and no timer. Every time a key holds
 * unclamped is within a factor of two of its t0 (a batch not yet reaped reports after t0,
 * and a message's pipeline is short beside the time it starts at, or its shift would not
 * be exact: mdl_shift_t), so each relative time is exact (Sterbenz) and equal keys mean
 * pipelines that are exact shifts of each other. */
static int same_head_at(const mdl_state_t *s, const mdl_path_t *pa, const mdl_view_t *key,
                        double t0)
{
    if (key->used != pa->used || key->count != pa->count || key->open_n != pa->open_n ||
        key->nmem != pa->nmem)
        return 0;
    double cpu = s->cpu_free_ns - t0, link = s->link_free_ns - t0, last = pa->last_r_ns - t0;
    link = link > 0 ? link : 0;
    last = last > 0 ? last : 0;
    if (pa->count == 0 && pa->open_n == 0 && cpu < 0)
        cpu = 0;
    if (key->cpu_ns != cpu || key->link_ns != link || key->last_r_ns != last)
        return 0;
    if (!pa->open_n)
        return 1;
    double timer = pa->timer_close_ns != HUGE_VAL ? pa->timer_close_ns - t0 : HUGE_VAL;
    return key->h1_ns == pa->h1_ns - t0 && key->timer_ns == timer;
}

/* Whether pa from t0 is what a key of every term 0 (mdl_memo_t.key_idle) holds, as
 * same_head_at, the batches and the members would find: nothing held, queued or open, and
 * the CPU, the link and the latest report at or before t0 (their clamped terms 0). */
static int idle_at(const mdl_state_t *s, const mdl_path_t *pa, double t0)
{
    return (pa->used | pa->count | pa->open_n | pa->nmem) == 0 && s->cpu_free_ns <= t0 &&
           s->link_free_ns <= t0 && pa->last_r_ns <= t0;
}

/* Whether key has every term 0 (idle_at's key). */
static int key_is_idle(const mdl_view_t *key)
{
    return (key->used | key->count | key->open_n | key->nmem) == 0 && key->cpu_ns == 0 &&
           key->link_ns == 0 && key->last_r_ns == 0;
}

/* Whether any of n batches b differs from a key's close times ns (relative to t0) and WR
 * counts nwr. */
static int batches_differ(const mdl_batch_t *b, const double *ns, const uint32_t *nwr,
                          uint32_t n, double t0)
{
    for (uint32_t j = 0; j < n; j++)
        if (nwr[j] != b[j].nwr || ns[j] != b[j].close_ns - t0)
            return 1;
    return 0;
}

/* Whether a - b is d exactly (TwoSum: d the rounded difference, its error 0). */
static int diff_exact(double a, double b, double d)
{
    double nb = -b, s = a + nb, bv = s - a, err = (a - (s - bv)) + (nb - bv);

    return s == d && err == 0;
}

/* Set rel to the relation of key to r's out view (mdl_memo_rel_t): whether the key's
 * batches are out's last ones, each with its WRs and later by one d, exactly. */
static void ring_relate(mdl_memo_rel_t *rel, const mdl_view_t *key, const mdl_memo_t *r)
{
    const mdl_view_t *out = &r->out;

    rel->from = r;
    rel->from_gen = r->gen;
    rel->shift = 0;
    if (key->count == 0 || out->count < key->count)
        return;
    uint32_t p = out->count - key->count;
    double d = out->ring_ns[p] - key->ring_ns[0];
    for (uint32_t j = 0; j < key->count; j++)
        if (out->ring_nwr[p + j] != key->ring_nwr[j] ||
            !diff_exact(out->ring_ns[p + j], key->ring_ns[j], d))
            return;
    rel->shift = 1;
    rel->d = d;
}

/* Whether pa's ring (as many batches as m's key: checked before), seen from t0, holds m's
 * key's batches because the memo r that restored it last relates to m's key by a shift d
 * (mdl_memo_t): each close is then c = applied_t0 + out exactly (r's shift was exact), t0 -
 * applied_t0 is exact (within a factor of two: Sterbenz) and d, so c - t0 = out - d = the
 * key's, exactly. A ring for which this does not hold is compared batch by batch (it may
 * still match). */
static int ring_shifted(const mdl_state_t *s, mdl_memo_t *m, const mdl_path_t *pa, int k,
                        double t0)
{
    const mdl_memo_t *r = s->restored[k];

    if (!r || pa->pushes != r->applied_pushes)
        return 0;
    mdl_memo_rel_t *rel = &m->rel[(r - s->memo) & 1];
    if (rel->from != r || rel->from_gen != r->gen || rel->gen != m->gen) {
        rel->gen = m->gen;
        ring_relate(rel, &m->key, r);
    }
    double t = r->applied_t0;
    return rel->shift && t <= t0 && t0 <= 2 * t && t0 - t == rel->d;
}

/* Compared in place, batch by batch: building pa's key first cost as much as the
 * comparison (measured: callgrind, bench_model allreduce); where the ring does not wrap,
 * without a mask (measured: allreduce at hint 0, whose messages meet some 20 batches, 4.7%
 * fewer instructions). */
int mdl_memo_matches(const mdl_state_t *s, mdl_memo_t *m, const mdl_msg_t *msg, double t0)
{
    const mdl_view_t *key = &m->key;
    const mdl_path_t *pa = msg->pa;

    if (!m->valid || m->size != msg->size || m->k != msg->k || m->pert != mdl_in_window(s, t0) ||
        !(t0 + m->span_ns < mdl_next_edge(s, t0)) || !mdl_shift_exact(&m->shift, t0))
        return 0;
    if (m->key_idle)
        return idle_at(s, pa, t0);
    if (!same_head_at(s, pa, key, t0))
        return 0;
    if (key->count && ring_shifted(s, m, pa, msg->k, t0)) {
        /* the batches match: ring_shifted's reason */
    } else if (pa->head + key->count <= pa->mask + 1) { /* one run: no mask */
        if (batches_differ(pa->ring + pa->head, key->ring_ns, key->ring_nwr, key->count, t0))
            return 0;
    } else {
        for (uint32_t j = 0; j < key->count; j++) {
            const mdl_batch_t *b = &pa->ring[(pa->head + j) & pa->mask];
            if (key->ring_nwr[j] != b->nwr || key->ring_ns[j] != b->close_ns - t0)
                return 0;
        }
    }
    for (uint32_t j = 0; j < key->nmem; j++)
        if (key->mem_hw_ns[j] != pa->mem[j].hw_ns - t0)
            return 0;
    return 1;
}

/* Report member mb of a batch closed at close_ns (as mdl_batch_close does). */
static void report(mdl_state_t *s, const mdl_path_t *pa, const mdl_member_t *mb,
                   double close_ns)
{
    mdl_member_report(s, mb->idx, mb->tref_ns, mb->hw_ns, close_ns, close_ns + pa->event_ns);
}

void mdl_memo_apply(mdl_state_t *s, const mdl_seg_t *g, mdl_memo_t *m)
{
    const mdl_view_t *o = &m->out;
    mdl_path_t *pa = g->m.pa;
    double t0 = g->t0;
    mdl_member_t self = {g->m.idx, g->m.tref_ns, t0 + m->self_hw_ns};

    if (m->key.open_n)
        for (uint32_t j = 0; j < pa->nmem; j++)
            report(s, pa, &pa->mem[j], t0 + m->entry_close_ns);
    pa->nmem = 0;
    if (o->nmem)
        pa->mem[pa->nmem++] = self;
    else
        report(s, pa, &self, t0 + m->self_close_ns);
    mdl_view_restore(s, pa, o, t0);
    pa->pushes += m->pushes;
    s->restored[g->m.k] = m;
    m->applied_t0 = t0;
    m->applied_pushes = pa->pushes;
    s->cost_ns.queue += m->queue_ns;
    s->cost_ns.drain += m->drain_ns;
    s->stalls += m->stalls;
    s->chunks_skipped += m->skipped;
    s->memo_hits++;
}

void mdl_memo_keep(mdl_state_t *s, const mdl_seg_t *g, const mdl_view_t *key, mdl_memo_t *m)
{
    const mdl_path_t *pa = g->m.pa;
    double t0 = g->t0;

    m->valid = 0;
    m->gen++; /* its relations to the memos (mdl_memo_rel_t) are to be computed again */
    m->applied_pushes = UINT64_MAX; /* a ring it restored is not its new out's */
    if (pa->nmem > 1 || !mdl_memo_edge_free(s, t0, g->t_last - t0) ||
        !mdl_view_out(s, pa, t0, &m->out))
        return;
    double mn = m->out.t_min, mx = m->out.t_max;
    mdl_span_add(&mn, &mx, g->hw);
    if (key->open_n) /* the key kept now (m->key is the last one until copied below) */
        mdl_span_add(&mn, &mx, g->entry_close);
    if (!mdl_shift_keep(&m->shift, t0, mn, mx))
        return;
    m->valid = 1;
    m->size = g->m.size;
    m->k = g->m.k;
    m->pert = mdl_in_window(s, t0);
    mdl_view_copy(&m->key, key);
    m->key_idle = key_is_idle(key);
    m->span_ns = g->t_last - t0;
    m->entry_close_ns = g->entry_close - t0;
    m->self_hw_ns = g->hw - t0;
    m->self_close_ns = pa->nmem ? 0 : pa->ring[(pa->head + pa->count - 1) & pa->mask].close_ns - t0;
    m->queue_ns = g->queue_ns; /* added once, as the replay added it */
    m->drain_ns = s->cost_ns.drain - g->d0;
    m->stalls = (uint64_t)g->stalled;
    m->skipped = s->chunks_skipped - g->sk0;
    m->pushes = pa->pushes - g->push0;
}
