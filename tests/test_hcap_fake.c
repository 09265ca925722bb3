/* test_hcap_fake.c - see test_hcap_fake.h. */
#include "tests/test_hcap_fake.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void fake_cq_push(fake_cq_t *cq, uint32_t qp_num, uint64_t wr_id, enum ibv_wc_status st,
                  enum ibv_wc_opcode op)
{
    struct ibv_wc *wc;

    if (cq->n == cq->cap)
        return;
    wc = &cq->wc[(cq->head + cq->n++) % cq->cap];
    memset(wc, 0, sizeof(*wc));
    wc->wr_id = wr_id;
    wc->status = st;
    wc->opcode = op;
    wc->qp_num = qp_num;
}

static enum ibv_wc_opcode wc_op(enum ibv_wr_opcode op)
{
    return op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RDMA_WRITE
           : op == IBV_WR_RDMA_READ                                    ? IBV_WC_RDMA_READ
                                                                       : IBV_WC_SEND;
}

static int f_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    fake_qp_t *q = (fake_qp_t *)qp;
    fake_ctx_t *f = (fake_ctx_t *)((char *)qp->context - offsetof(struct verbs_context, context));

    for (; wr; wr = wr->next) {
        if (wr->wr_id == FAKE_BAD_WRID) {
            *bad = wr;
            return EINVAL;
        }
        f->posted++;
        q->posted++;
        if (!f->skip_cqe && ((wr->send_flags & IBV_SEND_SIGNALED) || q->sig_all))
            fake_cq_push(q->send_cq, qp->qp_num, wr->wr_id, IBV_WC_SUCCESS, wc_op(wr->opcode));
    }
    return 0;
}

static int f_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
    fake_cq_t *cq = (fake_cq_t *)ibcq;
    int i;

    for (i = 0; i < n && cq->n > 0; i++) {
        wc[i] = cq->wc[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        cq->n--;
    }
    return i;
}

/* ---- extended QP ---- */

static void fx_start(struct ibv_qp_ex *qpx)
{
    ((fake_qp_t *)qpx)->batch_n = 0;
}

static void fx_open(struct ibv_qp_ex *qpx)
{
    fake_qp_t *q = (fake_qp_t *)qpx;

    if (q->batch_n < 64) {
        q->batch_wr_id[q->batch_n] = qpx->wr_id;
        q->batch_flags[q->batch_n++] = qpx->wr_flags;
    }
}

static void fx_send(struct ibv_qp_ex *qpx)
{
    fx_open(qpx);
}

static void fx_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
    (void)rkey;
    (void)addr;
    fx_open(qpx);
}

static void fx_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t len)
{
    (void)qpx;
    (void)lkey;
    (void)addr;
    (void)len;
}

static void fx_set_inline(struct ibv_qp_ex *qpx, void *addr, size_t len)
{
    (void)qpx;
    (void)addr;
    (void)len;
}

static int fx_complete(struct ibv_qp_ex *qpx)
{
    fake_qp_t *q = (fake_qp_t *)qpx;
    uint32_t i;

    for (i = 0; i < q->batch_n; i++)
        if ((q->batch_flags[i] & IBV_SEND_SIGNALED) || q->sig_all)
            fake_cq_push(q->send_cq, qpx->qp_base.qp_num, q->batch_wr_id[i], IBV_WC_SUCCESS,
                         IBV_WC_SEND);
    q->posted += q->batch_n;
    q->batch_n = 0;
    return 0;
}

static void fx_abort(struct ibv_qp_ex *qpx)
{
    ((fake_qp_t *)qpx)->batch_n = 0;
}

static struct ibv_qp *f_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
    fake_ctx_t *f = (fake_ctx_t *)((char *)ctx - offsetof(struct verbs_context, context));
    static uint32_t next_qpn = 1000;
    fake_qp_t *q = f->qp_mem;

    f->qp_mem = NULL;
    if (q)
        fake_qp_init(q, f, (fake_cq_t *)attr->send_cq, next_qpn++, attr->sq_sig_all);
    else if (!(q = fake_qp_new(f, (fake_cq_t *)attr->send_cq, next_qpn++, attr->sq_sig_all)))
        return NULL;
    q->qpx.wr_start = fx_start;
    q->qpx.wr_send = fx_send;
    q->qpx.wr_rdma_write = fx_write;
    q->qpx.wr_set_sge = fx_set_sge;
    q->qpx.wr_set_inline_data = fx_set_inline;
    q->qpx.wr_complete = fx_complete;
    q->qpx.wr_abort = fx_abort;
    return &q->qpx.qp_base;
}

/* ---- extended CQ ---- */

static int fc_next(struct ibv_cq_ex *cqx)
{
    fake_cq_t *cq = (fake_cq_t *)cqx;
    struct ibv_wc *wc;

    if (cq->n == 0)
        return ENOENT;
    wc = &cq->wc[cq->head];
    cq->head = (cq->head + 1) % cq->cap;
    cq->n--;
    cqx->wr_id = wc->wr_id;
    cqx->status = wc->status;
    cq->cur_qpn = wc->qp_num;
    return 0;
}

static int fc_start(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
    (void)attr;
    return fc_next(cqx);
}

static void fc_end(struct ibv_cq_ex *cqx)
{
    (void)cqx;
}

static enum ibv_wc_opcode fc_opcode(struct ibv_cq_ex *cqx)
{
    (void)cqx;
    return IBV_WC_SEND;
}

static uint32_t fc_qpn(struct ibv_cq_ex *cqx)
{
    return ((fake_cq_t *)cqx)->cur_qpn;
}

static struct ibv_cq_ex *f_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr)
{
    fake_ctx_t *f = (fake_ctx_t *)((char *)ctx - offsetof(struct verbs_context, context));
    fake_cq_t *cq = fake_cq_new(f, attr->cqe);

    if (!cq)
        return NULL;
    cq->wc_flags = attr->wc_flags;
    cq->cqx.start_poll = fc_start;
    cq->cqx.next_poll = fc_next;
    cq->cqx.end_poll = fc_end;
    cq->cqx.read_opcode = fc_opcode;
    cq->cqx.read_qp_num = (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM) ? fc_qpn : NULL;
    return &cq->cqx;
}

fake_ctx_t *fake_ctx_new(void)
{
    fake_ctx_t *f = calloc(1, sizeof(*f));

    if (!f)
        return NULL;
    f->vctx.sz = sizeof(struct verbs_context);
    f->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
    f->vctx.context.ops.post_send = f_post_send;
    f->vctx.context.ops.poll_cq = f_poll_cq;
    f->vctx.create_qp_ex = f_create_qp_ex;
    f->vctx.create_cq_ex = f_create_cq_ex;
    return f;
}

void fake_ctx_free(fake_ctx_t *f)
{
    free(f);
}

fake_cq_t *fake_cq_new(fake_ctx_t *f, uint32_t cap)
{
    fake_cq_t *cq = calloc(1, sizeof(*cq));

    if (!cq)
        return NULL;
    cq->cap = cap ? cap : 1;
    cq->wc = calloc(cq->cap, sizeof(*cq->wc));
    cq->cqx.context = &f->vctx.context;
    cq->cqx.cqe = (int)cq->cap;
    if (!cq->wc) {
        free(cq);
        return NULL;
    }
    return cq;
}

void fake_cq_free(fake_cq_t *cq)
{
    if (!cq)
        return;
    free(cq->wc);
    free(cq);
}

void fake_qp_init(fake_qp_t *q, fake_ctx_t *f, fake_cq_t *cq, uint32_t qp_num, int sig_all)
{
    memset(q, 0, sizeof(*q));
    q->qpx.qp_base.context = &f->vctx.context;
    q->qpx.qp_base.qp_num = qp_num;
    q->qpx.qp_base.send_cq = (struct ibv_cq *)&cq->cqx;
    q->send_cq = cq;
    q->sig_all = sig_all;
}

fake_qp_t *fake_qp_new(fake_ctx_t *f, fake_cq_t *cq, uint32_t qp_num, int sig_all)
{
    fake_qp_t *q = malloc(sizeof(*q));

    if (q)
        fake_qp_init(q, f, cq, qp_num, sig_all);
    return q;
}

void fake_qp_free(fake_qp_t *q)
{
    free(q);
}
