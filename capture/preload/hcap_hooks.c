/* hcap_hooks.c - the recording side of libhintcap: the provider operations we swap into
 * each opened context (post_send, poll_cq, create_qp_ex, create_cq_ex) and the tracking of
 * QPs and CQs.
 *
 * ibv_post_send and ibv_poll_cq are static inline in <infiniband/verbs.h> and call
 * ctx->ops.post_send / ctx->ops.poll_cq (not the _compat_ entries), and ibv_create_qp_ex /
 * ibv_create_cq_ex are inline calls of verbs_context's create_qp_ex / create_cq_ex, so
 * those four pointers are what an unmodified application reaches. The post path takes one
 * timestamp, calls the provider, and appends one 32-byte event per WR posted to the
 * calling thread's ring: no lock, no allocation.
 */
#include "capture/preload/hcap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"

static uint8_t wr_opcode(enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_RDMA_WRITE:
        return TRACE_OP_WRITE;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return TRACE_OP_WRITE_IMM;
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_INV:
    case IBV_WR_TSO:
        return TRACE_OP_SEND;
    case IBV_WR_SEND_WITH_IMM:
        return TRACE_OP_SEND_IMM;
    case IBV_WR_RDMA_READ:
        return TRACE_OP_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
    case IBV_WR_ATOMIC_WRITE:
        return TRACE_OP_ATOMIC;
    default:
        return TRACE_OP_OTHER;
    }
}

hcap_ctx_t *hcap_ctx_find(hcap_t *h, const struct ibv_context *ctx)
{
    uint32_t i, n = atomic_load_explicit(&h->ctx_hwm, memory_order_acquire);

    for (i = 0; i < n; i++)
        if (atomic_load_explicit(&h->ctxs[i].ctx, memory_order_relaxed) == ctx)
            return &h->ctxs[i];
    return NULL;
}

static uint64_t qpn_key(uint32_t ctx_index, uint32_t qp_num)
{
    return ((uint64_t)(ctx_index + 1) << 32) | qp_num;
}

/* What h->qpns holds for a QP: its trace index + 1 (hcap.h: pollers never touch the
 * hcap_qp_t), and back. */
static void *qpn_val(const hcap_qp_t *hq)
{
    return (void *)((uintptr_t)hq->index + 1);
}

static uint32_t qpn_index(void *val)
{
    return (uint32_t)((uintptr_t)val - 1);
}

static hcap_qp_t *qp_adopt(hcap_t *h, struct ibv_qp *qp);

/* The WRs of a post that cannot be recorded (its QP cannot be tracked, or this thread has
 * no ring): each one lost, counted in the trace's dropped. Out of line, like note_outside. */
__attribute__((noinline, cold)) static void lose_posts(hcap_t *h, const struct ibv_send_wr *wr,
                                                        const struct ibv_send_wr *stop)
{
    uint64_t n = 0;

    for (; wr && wr != stop; wr = wr->next)
        n++;
    atomic_fetch_add_explicit(&h->lost, n, memory_order_relaxed);
}

static void record_posts(hcap_t *h, struct ibv_qp *qp, const struct ibv_send_wr *wr,
                         const struct ibv_send_wr *stop, uint64_t t)
{
    hcap_qp_t *hq = hcap_map_get(&h->qps, (uintptr_t)qp);
    hcap_ring_t *r;

    if ((__builtin_expect(!hq, 0) && !(hq = qp_adopt(h, qp))) || !(r = hcap_ring_get(h))) {
        lose_posts(h, wr, stop);
        return;
    }
    for (; wr && wr != stop; wr = wr->next) {
        uint64_t slot = hcap_ring_reserve(r, 1), size = 0;
        hcap_ev_t *ev;
        int i;

        if (slot == UINT64_MAX)
            continue; /* counted as dropped by the ring */
        for (i = 0; i < wr->num_sge; i++)
            size += wr->sg_list[i].length;
        ev = hcap_ring_slot(r, slot);
        ev->t_ns = t;
        ev->wr_id = wr->wr_id;
        ev->size_bytes = size;
        ev->qp = hq->index;
        ev->kind = HCAP_EV_POST;
        ev->op = wr_opcode(wr->opcode);
        ev->flags = (uint16_t)(((wr->send_flags & IBV_SEND_SIGNALED) || hq->sig_all
                                    ? TRACE_F_SIGNALED : 0) |
                               (wr->send_flags & IBV_SEND_INLINE ? TRACE_F_INLINE : 0));
        hcap_ring_publish(r, 1);
    }
}

static int hook_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    hcap_t *h = &hcap_g;
    hcap_ctx_t *hc = hcap_ctx_find(h, qp->context);
    uint64_t t = hcap_stamp();
    int rc;

    if (!hc)
        return EINVAL; /* cannot happen: ops are swapped only in tracked contexts */
    rc = hc->post_send(qp, wr, bad);
    if (hcap_running(h))
        record_posts(h, qp, wr, rc ? *bad : NULL, t);
    return rc;
}

/* A send completion of a QP number no hook tracks: its QP was created and posted outside
 * the wrappers (provider-direct posting). Counted, and the number kept for the summary.
 * Out of line: it would otherwise cost the poll path registers it does not need. */
__attribute__((noinline, cold)) static void note_outside(hcap_t *h, uint32_t qp_num)
{
    uint32_t i, want = qp_num + 1;

    atomic_fetch_add_explicit(&h->outside_comps, 1, memory_order_relaxed);
    for (i = 0; i < HCAP_OUTSIDE_QPNS; i++) {
        uint32_t cur = atomic_load_explicit(&h->outside_qpn[i], memory_order_relaxed);

        if (cur == want)
            return;
        if (cur == 0 && atomic_compare_exchange_strong(&h->outside_qpn[i], &cur, want))
            return;
        if (cur == want)
            return;
    }
    atomic_fetch_add_explicit(&h->outside_more, 1, memory_order_relaxed);
}

void hcap_record_comp(hcap_t *h, uint32_t ctx_index, uint32_t qp_num, uint64_t wr_id,
                      uint8_t status, uint64_t t_ns)
{
    void *val = hcap_map_get(&h->qpns, qpn_key(ctx_index, qp_num));
    hcap_ring_t *r;
    uint64_t slot;
    hcap_ev_t *ev;

    if (!val) {
        note_outside(h, qp_num);
        return;
    }
    r = hcap_ring_get(h);
    if (!r || (slot = hcap_ring_reserve(r, 1)) == UINT64_MAX)
        return;
    ev = hcap_ring_slot(r, slot);
    ev->t_ns = t_ns;
    ev->wr_id = wr_id;
    ev->size_bytes = qp_num;
    ev->qp = qpn_index(val);
    ev->kind = HCAP_EV_COMP;
    ev->op = status;
    ev->flags = 0;
    hcap_ring_publish(r, 1);
}

static int hook_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    hcap_t *h = &hcap_g;
    hcap_ctx_t *hc = hcap_ctx_find(h, cq->context);
    uint64_t t;
    int got, i;

    if (!hc)
        return -1;
    got = hc->poll_cq(cq, n, wc);
    if (got <= 0 || !hcap_running(h))
        return got;
    t = hcap_stamp();
    for (i = 0; i < got; i++) {
        /* Receive completions are not ours; an error's opcode is undefined, keep it. */
        if (wc[i].status == IBV_WC_SUCCESS && (wc[i].opcode & IBV_WC_RECV))
            continue;
        hcap_record_comp(h, hc->index, wc[i].qp_num, wc[i].wr_id, (uint8_t)wc[i].status, t);
    }
    return got;
}

static struct ibv_qp *hook_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
    hcap_t *h = &hcap_g;
    hcap_ctx_t *hc = hcap_ctx_find(h, ctx);
    struct ibv_qp *qp;

    if (!hc) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    qp = hc->create_qp_ex(ctx, attr);
    if (qp && hcap_running(h))
        hcap_qp_attach(h, qp, attr->sq_sig_all, attr->cap.max_send_wr, attr);
    return qp;
}

static struct ibv_cq_ex *hook_create_cq_ex(struct ibv_context *ctx,
                                           struct ibv_cq_init_attr_ex *attr)
{
    hcap_t *h = &hcap_g;
    hcap_ctx_t *hc = hcap_ctx_find(h, ctx);
    struct ibv_cq_init_attr_ex mine;
    struct ibv_cq_ex *cq;
    int have_qpn = 1;

    if (!hc) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    if (!hcap_running(h))
        return hc->create_cq_ex(ctx, attr);
    /* We need the QP number of each completion; ask for it if the application did not. */
    mine = *attr;
    mine.wc_flags |= IBV_WC_EX_WITH_QP_NUM;
    cq = hc->create_cq_ex(ctx, &mine);
    if (!cq) {
        cq = hc->create_cq_ex(ctx, attr);
        have_qpn = (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM) != 0;
    }
    if (cq)
        hcap_cq_attach(h, cq, have_qpn);
    return cq;
}

void hcap_ctx_attach(hcap_t *h, struct ibv_context *ctx)
{
    struct verbs_context *vctx;
    hcap_ctx_t *hc = NULL;
    uint32_t i;

    pthread_mutex_lock(&h->lock);
    for (i = 0; i < HCAP_MAX_CTX && !hc; i++)
        if (!atomic_load(&h->ctxs[i].ctx))
            hc = &h->ctxs[i];
    if (!hc || hcap_ctx_find(h, ctx))
        goto out;
    hc->index = (uint32_t)(hc - h->ctxs);
    hc->post_send = ctx->ops.post_send;
    hc->poll_cq = ctx->ops.poll_cq;
    vctx = verbs_get_ctx_op(ctx, create_qp_ex);
    hc->create_qp_ex = vctx ? vctx->create_qp_ex : NULL;
    vctx = verbs_get_ctx_op(ctx, create_cq_ex);
    hc->create_cq_ex = vctx ? vctx->create_cq_ex : NULL;
    atomic_store(&hc->ctx, ctx);
    if (hc->index + 1 > atomic_load(&h->ctx_hwm))
        atomic_store(&h->ctx_hwm, hc->index + 1);
    /* Published before the swap, so a hook always finds its slot. */
    if (hc->post_send)
        ctx->ops.post_send = hook_post_send;
    if (hc->poll_cq)
        ctx->ops.poll_cq = hook_poll_cq;
    vctx = verbs_get_ctx(ctx);
    if (hc->create_qp_ex)
        vctx->create_qp_ex = hook_create_qp_ex;
    if (hc->create_cq_ex)
        vctx->create_cq_ex = hook_create_cq_ex;
out:
    pthread_mutex_unlock(&h->lock);
}

void hcap_ctx_detach(hcap_t *h, struct ibv_context *ctx)
{
    hcap_ctx_t *hc;
    struct verbs_context *vctx;

    pthread_mutex_lock(&h->lock);
    hc = hcap_ctx_find(h, ctx);
    if (hc) {
        if (hc->post_send)
            ctx->ops.post_send = hc->post_send;
        if (hc->poll_cq)
            ctx->ops.poll_cq = hc->poll_cq;
        vctx = verbs_get_ctx(ctx);
        if (hc->create_qp_ex)
            vctx->create_qp_ex = hc->create_qp_ex;
        if (hc->create_cq_ex)
            vctx->create_cq_ex = hc->create_cq_ex;
        atomic_store(&hc->ctx, NULL);
    }
    pthread_mutex_unlock(&h->lock);
}

/* The extended QP of a QP created for the wr_* API, with the batch its wrappers fill, in
 * hq->qpx; left NULL when there is none or no memory for the batch (WRs then unrecorded). */
static void qp_ex_prepare(hcap_t *h, hcap_qp_t *hq, uint32_t max_send_wr,
                          const struct ibv_qp_init_attr_ex *attr_ex)
{
    struct ibv_qp_ex *qpx;

    if (!attr_ex || !(attr_ex->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
        !h->real.qp_to_qp_ex || !(qpx = h->real.qp_to_qp_ex(hq->qp)))
        return;
    hq->batch_cap = max_send_wr > 64 ? max_send_wr : 64;
    hq->batch = calloc(hq->batch_cap, sizeof(*hq->batch));
    if (hq->batch)
        hq->qpx = qpx;
}

static void qp_free(hcap_qp_t *hq)
{
    if (!hq)
        return;
    free(hq->batch);
    free(hq);
}

/* Put hq in both maps, then swap in its wrappers; h->lock held. -1 (nothing changed): a
 * map is full. */
static int qp_publish_locked(hcap_t *h, hcap_qp_t *hq)
{
    if (hcap_map_put(&h->qps, (uintptr_t)hq->qp, hq) != 0)
        return -1;
    if (hcap_map_put(&h->qpns, qpn_key(hq->ctx_index, hq->qp_num), qpn_val(hq)) != 0) {
        hcap_map_del(&h->qps, (uintptr_t)hq->qp);
        return -1;
    }
    if (hq->qpx)
        hcap_qpx_swap(hq); /* after the maps know it: the wrappers look it up */
    return 0;
}

static int qp_publish(hcap_t *h, hcap_qp_t *hq)
{
    int rc;

    pthread_mutex_lock(&h->lock);
    rc = qp_publish_locked(h, hq);
    pthread_mutex_unlock(&h->lock);
    return rc;
}

/* Swap qp's wrappers out, then take it out of both maps. Returns its hcap_qp_t or NULL. */
static hcap_qp_t *qp_unpublish(hcap_t *h, struct ibv_qp *qp)
{
    hcap_qp_t *hq;

    pthread_mutex_lock(&h->lock);
    hq = hcap_map_get(&h->qps, (uintptr_t)qp);
    if (hq) {
        if (hq->qpx)
            hcap_qpx_unswap(hq);
        hcap_map_del(&h->qps, (uintptr_t)qp);
        hcap_map_del(&h->qpns, qpn_key(hq->ctx_index, hq->qp_num));
    }
    pthread_mutex_unlock(&h->lock);
    return hq;
}

/* Tell the matcher that QP index is gone: what is pending never completes. */
static void note_gone(hcap_t *h, uint32_t index)
{
    hcap_ring_t *r;
    uint64_t slot;

    if (!hcap_running(h) || !(r = hcap_ring_get(h)))
        return;
    if ((slot = hcap_ring_reserve(r, 1)) == UINT64_MAX)
        return;
    memset(hcap_ring_slot(r, slot), 0, sizeof(hcap_ev_t));
    hcap_ring_slot(r, slot)->t_ns = hcap_stamp();
    hcap_ring_slot(r, slot)->qp = index;
    hcap_ring_slot(r, slot)->kind = HCAP_EV_GONE;
    hcap_ring_publish(r, 1);
}

/* An unpublished QP is gone: tell the matcher, and free its hcap_qp_t, which nothing else
 * can reach any more (hcap.h: h->qps, h->qpns). */
static void qp_retire(hcap_t *h, hcap_qp_t *hq)
{
    if (!hq)
        return;
    note_gone(h, hq->index);
    qp_free(hq);
}

/* A hcap_qp_t for qp (its index is given when it is tracked), or NULL when qp's context is
 * not tracked or memory is short. */
static hcap_qp_t *qp_new(hcap_t *h, struct ibv_qp *qp, int sig_all, uint32_t max_send_wr,
                         const struct ibv_qp_init_attr_ex *attr_ex)
{
    hcap_ctx_t *hc = hcap_ctx_find(h, qp->context);
    hcap_qp_t *hq;

    if (!hc || !(hq = calloc(1, sizeof(*hq))))
        return NULL;
    hq->qp = qp;
    hq->ctx_index = hc->index;
    hq->qp_num = qp->qp_num;
    hq->sig_all = sig_all != 0;
    qp_ex_prepare(h, hq, max_send_wr, attr_ex);
    return hq;
}

/* Track hq (taking it over). The map may know its QP already: adopted by another thread
 * meanwhile (adopt: that tracking stands and is returned, so two threads' first posts make
 * one QP), or destroyed where we did not see it and its address reused by this new QP (the
 * old tracking is retired). NULL when the maps are full. */
static hcap_qp_t *qp_track(hcap_t *h, hcap_qp_t *hq, int adopt)
{
    hcap_qp_t *old;
    int rc;

    pthread_mutex_lock(&h->lock);
    old = hcap_map_get(&h->qps, (uintptr_t)hq->qp);
    if (old && adopt) {
        pthread_mutex_unlock(&h->lock);
        qp_free(hq);
        return old;
    }
    /* Its wrappers went with the provider's old object: nothing to swap back. Its QP number
     * may have gone to another QP since. */
    if (old && hcap_map_get(&h->qpns, qpn_key(old->ctx_index, old->qp_num)) == qpn_val(old))
        hcap_map_del(&h->qpns, qpn_key(old->ctx_index, old->qp_num));
    /* An index only for a QP the maps took (under h->lock, which every insert holds): the
     * summary's qps_seen is next_qp - qp_base, the QPs whose WRs can be recorded. */
    hq->index = atomic_load(&h->next_qp);
    rc = qp_publish_locked(h, hq);
    if (rc == 0)
        atomic_fetch_add(&h->next_qp, 1);
    pthread_mutex_unlock(&h->lock);
    qp_retire(h, old);
    if (rc == 0)
        return hq;
    /* Untracked: its posts through the hooks are counted lost one by one; its wr_* calls,
     * left to the provider, are not seen, so the QP counts once for them. */
    if (hq->qpx)
        atomic_fetch_add_explicit(&h->lost, 1, memory_order_relaxed);
    qp_free(hq);
    return NULL;
}

hcap_qp_t *hcap_qp_attach(hcap_t *h, struct ibv_qp *qp, int sig_all, uint32_t max_send_wr,
                          const struct ibv_qp_init_attr_ex *attr_ex)
{
    hcap_qp_t *hq = qp_new(h, qp, sig_all, max_send_wr, attr_ex);

    return hq ? qp_track(h, hq, 0) : NULL;
}

/* A QP met on the post path that was created before we saw it (or through a path we do not
 * wrap): ask the provider. Off the post path's fast case (a map hit), so it may lock. */
static hcap_qp_t *qp_adopt(hcap_t *h, struct ibv_qp *qp)
{
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;
    hcap_qp_t *hq;

    if (!h->real.query_qp || h->real.query_qp(qp, &attr, IBV_QP_CAP, &init) != 0)
        return NULL;
    hq = qp_new(h, qp, init.sq_sig_all, init.cap.max_send_wr, NULL);
    return hq ? qp_track(h, hq, 1) : NULL;
}

void hcap_qp_detach(hcap_t *h, struct ibv_qp *qp)
{
    qp_retire(h, qp_unpublish(h, qp));
}

int hcap_qp_destroy(hcap_t *h, struct ibv_qp *qp, int (*destroy)(struct ibv_qp *qp))
{
    hcap_qp_t *hq = qp_unpublish(h, qp);
    int rc = destroy(qp);

    if (rc != 0 && hq && qp_publish(h, hq) == 0)
        return rc; /* still alive: tracked as before */
    qp_retire(h, hq);
    return rc;
}

/* Put c in the map, then swap in its wrappers. -1 (nothing changed): the map is full. */
static int cq_publish(hcap_t *h, hcap_cq_t *c)
{
    int rc;

    pthread_mutex_lock(&h->lock);
    rc = hcap_map_put(&h->cqs, (uintptr_t)c->cq, c);
    if (rc == 0)
        hcap_cqx_swap(c, c->cq); /* after the map knows it: the wrappers look it up */
    pthread_mutex_unlock(&h->lock);
    return rc;
}

/* Swap cq's wrappers out, then take it out of the map. Returns its hcap_cq_t or NULL. */
static hcap_cq_t *cq_unpublish(hcap_t *h, struct ibv_cq *cq)
{
    hcap_cq_t *c;

    pthread_mutex_lock(&h->lock);
    c = hcap_map_get(&h->cqs, (uintptr_t)cq);
    if (c) {
        hcap_cqx_unswap(c);
        hcap_map_del(&h->cqs, (uintptr_t)cq);
    }
    pthread_mutex_unlock(&h->lock);
    return c;
}

void hcap_cq_attach(hcap_t *h, struct ibv_cq_ex *cq, int have_qp_num)
{
    hcap_ctx_t *hc = hcap_ctx_find(h, cq->context);
    hcap_cq_t *c;

    if (!hc || !(c = calloc(1, sizeof(*c))))
        return;
    c->cq = cq;
    c->ctx_index = hc->index;
    c->have_qp_num = have_qp_num;
    if (cq_publish(h, c) != 0)
        free(c);
}

void hcap_cq_detach(hcap_t *h, struct ibv_cq *cq)
{
    free(cq_unpublish(h, cq)); /* polling a CQ while destroying it is the application's bug */
}

int hcap_cq_destroy(hcap_t *h, struct ibv_cq *cq, int (*destroy)(struct ibv_cq *cq))
{
    hcap_cq_t *c = cq_unpublish(h, cq);
    int rc = destroy(cq);

    if (rc != 0 && c && cq_publish(h, c) == 0)
        return rc; /* still alive: tracked as before */
    free(c);
    return rc;
}
