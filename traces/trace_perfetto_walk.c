/* trace_perfetto_walk.c - posts and completions of a trace merged into one time order
 * (trace_perfetto_walk.h): records are visited in post order and a binary min-heap holds the
 * completions still to come. */
#include "traces/trace_perfetto_walk.h"

#include <stdlib.h>

#include "common/hs_util.h"

const char *pf_path_str(uint16_t flags)
{
    switch (flags & TRACE_F_PATH_MASK) {
    case TRACE_F_PATH_LL:
        return "LL";
    case TRACE_F_PATH_BW:
        return "BW";
    default:
        return "unknown";
    }
}

uint64_t pf_done_ns(const trace_rec_t *r)
{
    return r->t_done_ns > r->t_post_ns ? r->t_done_ns : r->t_post_ns;
}

/* ---- QP slots --------------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static hs_status_t qps_build(pf_walk_t *w)
{
    const trace_t *tr = w->tr;
    size_t n = 0;

    if ((w->qps = malloc((tr->n ? tr->n : 1) * sizeof(*w->qps))) == NULL)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < tr->n; i++)
        w->qps[i] = tr->recs[i].qp;
    qsort(w->qps, tr->n, sizeof(*w->qps), cmp_u32);
    for (size_t i = 0; i < tr->n; i++)
        if (n == 0 || w->qps[n - 1] != w->qps[i])
            w->qps[n++] = w->qps[i];
    w->nqp = n;
    if ((w->inflight = calloc(n ? n : 1, sizeof(*w->inflight))) == NULL)
        return HS_ERR_NOMEM;
    return HS_OK;
}

uint32_t pf_walk_slot(const pf_walk_t *w, uint32_t qp)
{
    size_t lo = 0, hi = w->nqp;

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->qps[mid] <= qp)
            lo = mid;
        else
            hi = mid;
    }
    return (uint32_t)lo;
}

/* ---- post order ------------------------------------------------------------------- */

static const trace_rec_t *g_sort_recs; /* qsort has no context argument in C11 */

static int cmp_post(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    uint64_t x = g_sort_recs[i].t_post_ns, y = g_sort_recs[j].t_post_ns;

    if (x != y)
        return (x > y) - (x < y);
    return (i > j) - (i < j); /* ties in file order */
}

static hs_status_t order_build(pf_walk_t *w)
{
    if (trace_unordered(w->tr) == 0)
        return HS_OK;
    if ((w->order = malloc(w->tr->n * sizeof(*w->order))) == NULL)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < w->tr->n; i++)
        w->order[i] = i;
    g_sort_recs = w->tr->recs;
    qsort(w->order, w->tr->n, sizeof(*w->order), cmp_post);
    g_sort_recs = NULL;
    return HS_OK;
}

/* ---- pending completions (binary min-heap on time, then record) ------------------- */

static int pending_before(pf_pending_t a, pf_pending_t b)
{
    return a.t_ns < b.t_ns || (a.t_ns == b.t_ns && a.rec < b.rec);
}

static void heap_push(pf_walk_t *w, pf_pending_t p)
{
    size_t i = w->nheap++;

    while (i > 0 && pending_before(p, w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = p;
}

static pf_pending_t heap_pop(pf_walk_t *w)
{
    pf_pending_t top = w->heap[0], last = w->heap[--w->nheap];
    size_t i = 0;

    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= w->nheap)
            break;
        if (k + 1 < w->nheap && pending_before(w->heap[k + 1], w->heap[k]))
            k++;
        if (!pending_before(w->heap[k], last))
            break;
        w->heap[i] = w->heap[k];
        i = k;
    }
    if (w->nheap)
        w->heap[i] = last;
    return top;
}

/* ---- the walk --------------------------------------------------------------------- */

hs_status_t pf_walk_init(pf_walk_t *w, const trace_t *tr)
{
    *w = (pf_walk_t){.tr = tr};
    if (qps_build(w) != HS_OK || order_build(w) != HS_OK ||
        (w->heap = malloc((tr->n ? tr->n : 1) * sizeof(*w->heap))) == NULL) {
        pf_walk_free(w);
        return HS_ERR_NOMEM;
    }
    return HS_OK;
}

void pf_walk_free(pf_walk_t *w)
{
    free(w->heap);
    free(w->order);
    free(w->inflight);
    free(w->qps);
    *w = (pf_walk_t){0};
}

/* Completions at or before t, in time order. */
static void complete_until(pf_walk_t *w, const pf_walk_ops_t *ops, void *ctx, uint64_t t)
{
    while (w->nheap && w->heap[0].t_ns <= t) {
        pf_pending_t p = heap_pop(w);
        uint32_t slot = pf_walk_slot(w, w->tr->recs[p.rec].qp);
        w->inflight[slot]--;
        ops->done(ctx, w, p.rec, slot);
    }
}

void pf_walk_run(pf_walk_t *w, const pf_walk_ops_t *ops, void *ctx)
{
    const trace_t *tr = w->tr;

    for (size_t k = 0; k < tr->n; k++) {
        size_t i = w->order ? w->order[k] : k;
        const trace_rec_t *r = &tr->recs[i];
        uint32_t slot = pf_walk_slot(w, r->qp);

        complete_until(w, ops, ctx, r->t_post_ns);
        if (r->t_done_ns != TRACE_TIME_UNKNOWN) {
            w->inflight[slot]++;
            heap_push(w, (pf_pending_t){pf_done_ns(r), i});
        }
        ops->post(ctx, w, i, slot);
    }
    complete_until(w, ops, ctx, UINT64_MAX);
}

hs_status_t pf_save(const char *path, pf_write_fn write, const trace_t *tr, const char *source)
{
    hs_afile_t *af;
    hs_status_t st;

    if ((st = hs_afile_open(path, &af)) != HS_OK)
        return st;
    if ((st = write(hs_afile_stream(af), tr, source)) != HS_OK) {
        hs_log_error("%s: write failed", path);
        hs_afile_abort(af);
        return st;
    }
    return hs_afile_commit(af);
}
