/* hcap_match.c - see hcap_match.h. Per-QP deques of posts and of waiting completions, in a
 * table keyed by the QP's index (linear probing, the index itself as the hash: indexes are
 * handed out in order, so the live ones seldom collide). A destroyed QP's entry is removed
 * once its last events can have been matched (hcap_match_sweep), so a process that creates
 * and destroys QPs by the hundred thousand keeps entries for its live QPs only. */
#include "capture/preload/hcap_match.h"

#include <stdlib.h>
#include <string.h>

/* A pending WR queue bigger than this means nobody polls: emit the oldest as unknown. */
#define HCAP_MATCH_MAX_PENDING (1u << 20)
/* Records handed to emit in one call at most (a completion's run of WRs, in pieces). */
#define HCAP_MATCH_EMIT_BATCH 64

typedef struct {
    hcap_ev_t *v;
    size_t head; /* index of the first element */
    size_t n;
    size_t cap;  /* power of two */
} hcap_evq_t;

typedef struct {
    hcap_evq_t posts;
    hcap_evq_t comps;
    uint64_t n_posted;
    uint64_t n_comps;   /* completion events of this QP */
    uint32_t qp_num;    /* from its completions (0 until one arrived) */
    uint32_t key;       /* the QP's index + 1; 0: a free entry */
} hcap_mqp_t;

/* A QP whose end (HCAP_EV_GONE) was matched in pass epoch. */
typedef struct {
    uint64_t epoch;
    uint32_t qp;
} hcap_dying_t;

#define HCAP_MATCH_MIN_QPS 16

struct hcap_match {
    hcap_mqp_t *qps;   /* the table: n_qps entries, a power of two, at most half in use */
    size_t n_qps;
    size_t live;       /* entries in use */
    hcap_dying_t *dying;
    size_t n_dying, dying_cap;
    uint64_t epoch;    /* hcap_match_sweep calls so far */
    hcap_match_retire_fn retire;
    void *retire_arg;
    uint64_t cold_n;
    uint64_t unmatched;
    uint64_t lost;
    hcap_emit_fn emit;
    void *arg;
};

typedef enum { MATCH_DONE, MATCH_WAIT, MATCH_STALE } match_res_t;

static hcap_ev_t *evq_at(const hcap_evq_t *q, size_t i)
{
    return &q->v[(q->head + i) & (q->cap - 1)];
}

/* Out of line: the insert, once per event, then needs no registers saved for it. */
__attribute__((noinline, cold)) static hs_status_t evq_grow(hcap_evq_t *q)
{
    size_t ncap = q->cap ? q->cap * 2 : 64, i;
    hcap_ev_t *nv = malloc(ncap * sizeof(*nv));

    if (!nv)
        return HS_ERR_NOMEM;
    for (i = 0; i < q->n; i++)
        nv[i] = *evq_at(q, i);
    free(q->v);
    q->v = nv;
    q->head = 0;
    q->cap = ncap;
    return HS_OK;
}

/* Insert keeping t_ns order; posts of one thread arrive in order, so this is O(1) then.
 * Returns the slot the event went to, NULL when out of memory. The queue's fields are read
 * once: a store of an event (uint64_t fields) could otherwise be taken to alias them. */
static inline hcap_ev_t *evq_insert_sorted(hcap_evq_t *q, const hcap_ev_t *ev)
{
    if (q->n == q->cap && evq_grow(q) != HS_OK)
        return NULL;
    hcap_ev_t *v = q->v, *slot;
    size_t mask = q->cap - 1, head = q->head, i = q->n;
    uint64_t t = ev->t_ns;

    for (; i > 0 && v[(head + i - 1) & mask].t_ns > t; i--)
        v[(head + i) & mask] = v[(head + i - 1) & mask];
    slot = &v[(head + i) & mask];
    *slot = *ev;
    q->n++;
    return slot;
}

static void evq_pop(hcap_evq_t *q, size_t k)
{
    q->head = (q->head + k) & (q->cap - 1);
    q->n -= k;
}

/* Empty q and give its memory back (it grows again if events come). */
static void evq_release(hcap_evq_t *q)
{
    free(q->v);
    memset(q, 0, sizeof(*q));
}

hs_status_t hcap_match_new(uint64_t cold_n, hcap_emit_fn emit, void *arg, hcap_match_t **out)
{
    hcap_match_t *m = calloc(1, sizeof(*m));

    if (!m)
        return HS_ERR_NOMEM;
    /* never empty: the fast path indexes it without a check */
    m->qps = calloc(HCAP_MATCH_MIN_QPS, sizeof(*m->qps));
    if (!m->qps) {
        free(m);
        return HS_ERR_NOMEM;
    }
    m->n_qps = HCAP_MATCH_MIN_QPS;
    m->cold_n = cold_n;
    m->emit = emit;
    m->arg = arg;
    *out = m;
    return HS_OK;
}

void hcap_match_on_retire(hcap_match_t *m, hcap_match_retire_fn fn, void *arg)
{
    m->retire = fn;
    m->retire_arg = arg;
}

static size_t qp_home(const hcap_match_t *m, uint32_t qp)
{
    return qp & (m->n_qps - 1);
}

/* QP qp's entry, or NULL. The table always has a free entry, which ends every probe. */
static hcap_mqp_t *mqp_find(const hcap_match_t *m, uint32_t qp)
{
    size_t mask = m->n_qps - 1, i;

    for (i = qp_home(m, qp); m->qps[i].key != 0; i = (i + 1) & mask)
        if (m->qps[i].key == qp + 1)
            return &m->qps[i];
    return NULL;
}

/* A free entry for qp (not in the table), in a table with room. */
static hcap_mqp_t *mqp_slot(hcap_match_t *m, uint32_t qp)
{
    size_t mask = m->n_qps - 1, i;

    for (i = qp_home(m, qp); m->qps[i].key != 0; i = (i + 1) & mask)
        ;
    m->qps[i].key = qp + 1;
    m->live++;
    return &m->qps[i];
}

/* Rehash the table into n entries, a power of two above twice the live ones (the entries
 * move: no entry pointer is kept across events). */
static hs_status_t mqp_resize(hcap_match_t *m, size_t n_new)
{
    hcap_mqp_t *old = m->qps;
    size_t n = m->n_qps, i;

    m->qps = calloc(n_new, sizeof(*m->qps));
    if (!m->qps) {
        m->qps = old;
        return HS_ERR_NOMEM;
    }
    m->n_qps = n_new;
    m->live = 0;
    for (i = 0; i < n; i++)
        if (old[i].key != 0)
            *mqp_slot(m, old[i].key - 1) = old[i];
    free(old);
    return HS_OK;
}

/* Take entry q out of the table, closing the gap: each later entry of the probe run moves
 * back into it unless that would put the entry before its home. */
static void mqp_remove(hcap_match_t *m, hcap_mqp_t *q)
{
    size_t mask = m->n_qps - 1, gap = (size_t)(q - m->qps), j = gap;

    for (j = (j + 1) & mask; m->qps[j].key != 0; j = (j + 1) & mask) {
        size_t home = qp_home(m, m->qps[j].key - 1);

        if (((j - home) & mask) >= ((j - gap) & mask)) {
            m->qps[gap] = m->qps[j];
            gap = j;
        }
    }
    memset(&m->qps[gap], 0, sizeof(m->qps[gap]));
    m->live--;
}

/* QP qp's entry, made on its first event (out of line: once per new QP). */
__attribute__((noinline, cold)) static hcap_mqp_t *match_qp_new(hcap_match_t *m, uint32_t qp)
{
    if ((m->live + 1) * 2 > m->n_qps && mqp_resize(m, m->n_qps * 2) != HS_OK)
        return NULL;
    return mqp_slot(m, qp);
}

static hcap_mqp_t *match_qp(hcap_match_t *m, uint32_t qp)
{
    hcap_mqp_t *q = mqp_find(m, qp);

    return q ? q : match_qp_new(m, qp);
}

/* The record of post p, completed at t_done with status (extra: more flags). */
static void rec_fill(trace_rec_t *rec, const hcap_ev_t *p, uint64_t t_done, uint8_t status,
                     uint16_t extra)
{
    rec->t_post_ns = p->t_ns;
    rec->t_done_ns = t_done;
    rec->size_bytes = p->size_bytes;
    rec->qp = p->qp;
    rec->opcode = p->op;
    rec->status = status;
    rec->flags = (uint16_t)(p->flags | extra | (status ? TRACE_F_ERROR : 0));
}

static void emit_post(hcap_match_t *m, const hcap_ev_t *p, uint64_t t_done, uint8_t status,
                      uint16_t extra)
{
    trace_rec_t rec;

    rec_fill(&rec, p, t_done, status, extra);
    m->emit(m->arg, &rec, 1);
}

/* Emit the first i + 1 posts of q as completed by c: the unsignalled WRs before the one it
 * closes get its time and TRACE_F_IMPLICIT. In calls of up to HCAP_MATCH_EMIT_BATCH records
 * (measured: callgrind, bench_preload, 1 in 64 signalled: the writer's instructions per
 * event, a call chain per record before). */
static void emit_closed(hcap_match_t *m, const hcap_evq_t *q, size_t i, const hcap_ev_t *c)
{
    trace_rec_t recs[HCAP_MATCH_EMIT_BATCH];
    /* in locals: a record's uint64_t stores could otherwise be taken to alias them */
    const hcap_ev_t *v = q->v;
    size_t mask = q->cap - 1, head = q->head, k, nb = 0;
    uint64_t t = c->t_ns;
    uint8_t status = c->op;

    for (k = 0; k < i; k++) {
        rec_fill(&recs[nb++], &v[(head + k) & mask], t, 0, TRACE_F_IMPLICIT);
        if (nb == HCAP_MATCH_EMIT_BATCH - 1) { /* room left for c's own */
            m->emit(m->arg, recs, nb);
            nb = 0;
        }
    }
    rec_fill(&recs[nb++], &v[(head + i) & mask], t, status, 0);
    m->emit(m->arg, recs, nb);
}

/* Find the post completion c closes; emit it and the unsignalled WRs before it. */
static match_res_t match_one(hcap_match_t *m, hcap_mqp_t *q, const hcap_ev_t *c)
{
    const hcap_ev_t *v = q->posts.v;
    size_t mask = q->posts.cap - 1, head = q->posts.head, n = q->posts.n, i;
    uint64_t t = c->t_ns, wr_id = c->wr_id;

    for (i = 0; i < n; i++) {
        const hcap_ev_t *p = &v[(head + i) & mask];

        if (p->t_ns > t)
            return MATCH_STALE;
        if (p->wr_id != wr_id || (!(p->flags & TRACE_F_SIGNALED) && c->op == 0))
            continue;
        emit_closed(m, &q->posts, i, c);
        evq_pop(&q->posts, i + 1);
        return MATCH_DONE;
    }
    return MATCH_WAIT;
}

/* Retry waiting completions in order; stop at the first that still waits. */
__attribute__((noinline)) static void match_retry(hcap_match_t *m, hcap_mqp_t *q)
{
    while (q->comps.n > 0) {
        match_res_t r = match_one(m, q, evq_at(&q->comps, 0));

        if (r == MATCH_WAIT)
            break;
        if (r == MATCH_STALE)
            m->unmatched++;
        evq_pop(&q->comps, 1);
    }
}

static hs_status_t match_post(hcap_match_t *m, hcap_mqp_t *q, const hcap_ev_t *ev)
{
    int cold = q->n_posted++ < m->cold_n;
    hcap_ev_t *p;

    if (q->posts.n >= HCAP_MATCH_MAX_PENDING) {
        emit_post(m, evq_at(&q->posts, 0), TRACE_TIME_UNKNOWN, 0, 0);
        evq_pop(&q->posts, 1);
    }
    if ((p = evq_insert_sorted(&q->posts, ev)) == NULL)
        return HS_ERR_NOMEM;
    if (cold) /* in place: the event is not copied twice */
        p->flags |= TRACE_F_COLD;
    if (q->comps.n > 0) /* a completion waits for this post (seldom) */
        match_retry(m, q);
    return HS_OK;
}

static hs_status_t match_comp(hcap_match_t *m, hcap_mqp_t *q, const hcap_ev_t *ev)
{
    match_res_t r = MATCH_WAIT;

    if (q->comps.n == 0)
        r = match_one(m, q, ev);
    if (r == MATCH_STALE)
        m->unmatched++;
    if (r != MATCH_WAIT)
        return HS_OK;
    if (q->comps.n >= HCAP_MATCH_MAX_PENDING) {
        m->unmatched++;
        evq_pop(&q->comps, 1);
    }
    return evq_insert_sorted(&q->comps, ev) ? HS_OK : HS_ERR_NOMEM;
}

__attribute__((noinline, cold)) static void match_gone(hcap_match_t *m, hcap_mqp_t *q)
{
    while (q->posts.n > 0) {
        emit_post(m, evq_at(&q->posts, 0), TRACE_TIME_UNKNOWN, 0, 0);
        evq_pop(&q->posts, 1);
    }
    m->unmatched += q->comps.n;
    evq_release(&q->posts);
    evq_release(&q->comps); /* a server's destroyed QPs would otherwise keep theirs */
}

/* Note that QP qp ended in this pass, for hcap_match_sweep. Out of memory, its entry
 * simply stays. */
static void dying_add(hcap_match_t *m, uint32_t qp)
{
    if (m->n_dying == m->dying_cap) {
        size_t ncap = m->dying_cap ? m->dying_cap * 2 : 64;
        hcap_dying_t *nd = realloc(m->dying, ncap * sizeof(*nd));

        if (!nd)
            return;
        m->dying = nd;
        m->dying_cap = ncap;
    }
    m->dying[m->n_dying++] = (hcap_dying_t){m->epoch, qp};
}

/* match_event for an event that is not a post. */
static hs_status_t match_other(hcap_match_t *m, hcap_mqp_t *q, const hcap_ev_t *ev)
{
    switch (ev->kind) {
    case HCAP_EV_COMP:
        q->n_comps++;
        q->qp_num = (uint32_t)ev->size_bytes;
        return match_comp(m, q, ev);
    case HCAP_EV_GONE:
        match_gone(m, q);
        dying_add(m, ev->qp);
        return HS_OK;
    default:
        return HS_OK;
    }
}

/* hcap_match_event past its fast path: out of line, so that the fast path saves no
 * registers (it calls nothing but this, as a tail call). */
__attribute__((noinline)) static hs_status_t match_event(hcap_match_t *m, const hcap_ev_t *ev)
{
    hcap_mqp_t *q = match_qp(m, ev->qp);
    hs_status_t st;

    if (!q) {
        m->lost++;
        return HS_ERR_NOMEM;
    }
    st = ev->kind == HCAP_EV_POST ? match_post(m, q, ev) : match_other(m, q, ev);
    if (st != HS_OK)
        m->lost++;
    return st;
}

/* Whether post ev of q needs nothing but an append, match_post's most common case: past
 * the QP's cold-start WRs, room in the queue below the pending bound, no completion
 * waiting, and no earlier than the QP's newest post (so insert_sorted would not move it). */
static inline int post_appends(const hcap_match_t *m, const hcap_mqp_t *q, const hcap_ev_t *ev)
{
    const hcap_evq_t *pq = &q->posts;
    size_t n = pq->n;

    return q->n_posted >= m->cold_n && n < pq->cap && n < HCAP_MATCH_MAX_PENDING &&
           q->comps.n == 0 && (n == 0 || evq_at(pq, n - 1)->t_ns <= ev->t_ns);
}

/* A post for which post_appends holds is appended here, in a function that calls nothing
 * else and so saves no registers (measured: callgrind bench_preload, the writer's
 * instructions per event); anything else takes match_event. */
hs_status_t hcap_match_event(hcap_match_t *m, const hcap_ev_t *ev)
{
    hcap_mqp_t *q;

    /* the QP at its home entry: the common case, else match_event probes */
    if (ev->kind != HCAP_EV_POST || (q = &m->qps[qp_home(m, ev->qp)])->key != ev->qp + 1 ||
        !post_appends(m, q, ev))
        return match_event(m, ev);
    q->n_posted++;
    *evq_at(&q->posts, q->posts.n++) = *ev;
    return HS_OK;
}

void hcap_match_flush(hcap_match_t *m)
{
    size_t i;

    for (i = 0; i < m->n_qps; i++)
        if (m->qps[i].key != 0)
            match_gone(m, &m->qps[i]);
}

static void qp_stats(const hcap_mqp_t *q, hcap_match_qp_t *out)
{
    out->posted = q->n_posted;
    out->comps = q->n_comps;
    out->qp_num = q->qp_num;
}

/* Hand QP qp's figures to the retire callback and free its entry. An event of it that
 * came after its end (none should) is settled as at its end first. */
static void match_retire(hcap_match_t *m, uint32_t qp)
{
    hcap_mqp_t *q = mqp_find(m, qp);
    hcap_match_qp_t st;

    if (!q)
        return;
    match_gone(m, q);
    qp_stats(q, &st);
    if (m->retire)
        m->retire(m->retire_arg, &st);
    mqp_remove(m, q);
}

/* After a burst of QPs (or of ends waiting for their sweep), give the memory back: the
 * table shrinks to a quarter full when it is under an eighth (it grows at a half), the
 * list of ends goes when empty. Out of memory, both stay as they are. */
static void sweep_shrink(hcap_match_t *m)
{
    size_t n = HCAP_MATCH_MIN_QPS;

    if (m->n_dying == 0 && m->dying_cap > 64) {
        free(m->dying);
        m->dying = NULL;
        m->dying_cap = 0;
    }
    if (m->n_qps <= HCAP_MATCH_MIN_QPS || m->live * 8 >= m->n_qps)
        return;
    while (n < m->live * 4)
        n *= 2;
    if (n < m->n_qps)
        mqp_resize(m, n);
}

/* A QP's end is stamped after its last post and the last completion polled for it, so
 * every event of it is in a ring when its end is published; but another thread's ring may
 * have been drained earlier in the pass that met the end. A full pass after that one has
 * taken them all: the entry goes at the end of it. */
void hcap_match_sweep(hcap_match_t *m)
{
    size_t i, k = 0;

    for (i = 0; i < m->n_dying; i++) {
        if (m->dying[i].epoch < m->epoch)
            match_retire(m, m->dying[i].qp);
        else
            m->dying[k++] = m->dying[i];
    }
    m->n_dying = k;
    m->epoch++;
    sweep_shrink(m);
}

size_t hcap_match_mem_bytes(const hcap_match_t *m)
{
    size_t n = sizeof(*m) + m->n_qps * sizeof(*m->qps) + m->dying_cap * sizeof(*m->dying), i;

    for (i = 0; i < m->n_qps; i++)
        n += (m->qps[i].posts.cap + m->qps[i].comps.cap) * sizeof(hcap_ev_t);
    return n;
}

uint64_t hcap_match_unmatched(const hcap_match_t *m)
{
    return m->unmatched;
}

size_t hcap_match_n_qps(const hcap_match_t *m)
{
    return m->n_qps;
}

void hcap_match_qp_stats(const hcap_match_t *m, size_t i, hcap_match_qp_t *out)
{
    qp_stats(&m->qps[i], out);
}

uint64_t hcap_match_lost(const hcap_match_t *m)
{
    return m->lost;
}

void hcap_match_free(hcap_match_t *m)
{
    size_t i;

    if (!m)
        return;
    for (i = 0; i < m->n_qps; i++) {
        free(m->qps[i].posts.v);
        free(m->qps[i].comps.v);
    }
    free(m->qps);
    free(m->dying);
    free(m);
}
