/* hcap_qpx.c - recording wrappers for the extended verbs: the ibv_qp_ex work-request API
 * (wr_start, wr_send/wr_rdma_*, wr_set_sge/inline, wr_complete) and ibv_cq_ex polling
 * (start_poll/next_poll).
 *
 * Between wr_start and wr_complete each wr_<opcode> opens a WR in the QP's batch (wr_id and
 * flags are read from the qp_ex at that moment, as the provider does) and the wr_set_*
 * calls give its size. The batch is published, with wr_start's time as post time, only
 * when wr_complete succeeds; wr_abort discards it. A QP's wr_* calls are serialised by the
 * application (verbs requires it), so the batch needs no lock. The wrappers are swapped in
 * only while their QP or CQ is in hcap_g's maps (hcap.h), so a lookup always finds it.
 */
#include "capture/preload/hcap.h"

#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"

static hcap_qp_t *qpx_find(struct ibv_qp_ex *qpx)
{
    return hcap_map_get(&hcap_g.qps, (uintptr_t)&qpx->qp_base);
}

/* Open a WR in the batch (or count it lost when the batch is full). */
static void batch_open(hcap_qp_t *hq, struct ibv_qp_ex *qpx, uint8_t op, uint64_t size)
{
    hcap_ev_t *ev;

    if (hq->batch_n == hq->batch_cap) {
        atomic_fetch_add_explicit(&hcap_g.lost, 1, memory_order_relaxed);
        return;
    }
    ev = &hq->batch[hq->batch_n++];
    ev->t_ns = hq->batch_t_ns;
    ev->wr_id = qpx->wr_id;
    ev->size_bytes = size;
    ev->qp = hq->index;
    ev->kind = HCAP_EV_POST;
    ev->op = op;
    ev->flags = (uint16_t)(((qpx->wr_flags & IBV_SEND_SIGNALED) || hq->sig_all
                                ? TRACE_F_SIGNALED : 0) |
                           (qpx->wr_flags & IBV_SEND_INLINE ? TRACE_F_INLINE : 0));
}

static void batch_size(hcap_qp_t *hq, uint64_t size, uint16_t flags)
{
    if (hq->batch_n > 0) {
        hq->batch[hq->batch_n - 1].size_bytes = size;
        hq->batch[hq->batch_n - 1].flags |= flags;
    }
}

static void batch_publish(hcap_qp_t *hq)
{
    hcap_ring_t *r = hcap_ring_get(&hcap_g);
    uint32_t i;

    for (i = 0; r && i < hq->batch_n; i++) {
        uint64_t slot = hcap_ring_reserve(r, 1);

        if (slot == UINT64_MAX)
            continue;
        *hcap_ring_slot(r, slot) = hq->batch[i];
        hcap_ring_publish(r, 1);
    }
    hq->batch_n = 0;
}

static void w_start(struct ibv_qp_ex *qpx)
{
    hcap_qp_t *hq = qpx_find(qpx);

    hq->batch_n = 0;
    hq->batch_t_ns = hcap_stamp();
    hq->orig.wr_start(qpx);
}

static int w_complete(struct ibv_qp_ex *qpx)
{
    hcap_qp_t *hq = qpx_find(qpx);
    int rc = hq->orig.wr_complete(qpx);

    if (rc == 0 && hcap_running(&hcap_g))
        batch_publish(hq);
    hq->batch_n = 0;
    return rc;
}

static void w_abort(struct ibv_qp_ex *qpx)
{
    hcap_qp_t *hq = qpx_find(qpx);

    hq->batch_n = 0;
    hq->orig.wr_abort(qpx);
}

static void w_send(struct ibv_qp_ex *qpx)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_SEND, 0);
    hq->orig.wr_send(qpx);
}

static void w_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_SEND_IMM, 0);
    hq->orig.wr_send_imm(qpx, imm);
}

static void w_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_SEND, 0);
    hq->orig.wr_send_inv(qpx, rkey);
}

static void w_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_WRITE, 0);
    hq->orig.wr_rdma_write(qpx, rkey, addr);
}

static void w_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_WRITE_IMM, 0);
    hq->orig.wr_rdma_write_imm(qpx, rkey, addr, imm);
}

static void w_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_READ, 0);
    hq->orig.wr_rdma_read(qpx, rkey, addr);
}

static void w_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t cmp,
                      uint64_t swp)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_ATOMIC, 8);
    hq->orig.wr_atomic_cmp_swp(qpx, rkey, addr, cmp, swp);
}

static void w_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_open(hq, qpx, TRACE_OP_ATOMIC, 8);
    hq->orig.wr_atomic_fetch_add(qpx, rkey, addr, add);
}

static void w_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t len)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_size(hq, len, 0);
    hq->orig.wr_set_sge(qpx, lkey, addr, len);
}

static void w_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *sge)
{
    hcap_qp_t *hq = qpx_find(qpx);
    uint64_t size = 0;
    size_t i;

    for (i = 0; i < n; i++)
        size += sge[i].length;
    batch_size(hq, size, 0);
    hq->orig.wr_set_sge_list(qpx, n, sge);
}

static void w_set_inline(struct ibv_qp_ex *qpx, void *addr, size_t len)
{
    hcap_qp_t *hq = qpx_find(qpx);

    batch_size(hq, len, TRACE_F_INLINE);
    hq->orig.wr_set_inline_data(qpx, addr, len);
}

static void w_set_inline_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *buf)
{
    hcap_qp_t *hq = qpx_find(qpx);
    uint64_t size = 0;
    size_t i;

    for (i = 0; i < n; i++)
        size += buf[i].length;
    batch_size(hq, size, TRACE_F_INLINE);
    hq->orig.wr_set_inline_data_list(qpx, n, buf);
}

/* Swap one function pointer if the provider set it, saving the original. */
#define HCAP_SWAP(field, fn)                                                                  \
    do {                                                                                      \
        hq->orig.field = qpx->field;                                                          \
        if (qpx->field)                                                                       \
            qpx->field = fn;                                                                  \
    } while (0)

void hcap_qpx_swap(hcap_qp_t *hq)
{
    struct ibv_qp_ex *qpx = hq->qpx;

    HCAP_SWAP(wr_start, w_start);
    HCAP_SWAP(wr_complete, w_complete);
    HCAP_SWAP(wr_abort, w_abort);
    HCAP_SWAP(wr_send, w_send);
    HCAP_SWAP(wr_send_imm, w_send_imm);
    HCAP_SWAP(wr_send_inv, w_send_inv);
    HCAP_SWAP(wr_rdma_write, w_write);
    HCAP_SWAP(wr_rdma_write_imm, w_write_imm);
    HCAP_SWAP(wr_rdma_read, w_read);
    HCAP_SWAP(wr_atomic_cmp_swp, w_cmp_swp);
    HCAP_SWAP(wr_atomic_fetch_add, w_fetch_add);
    HCAP_SWAP(wr_set_sge, w_set_sge);
    HCAP_SWAP(wr_set_sge_list, w_set_sge_list);
    HCAP_SWAP(wr_set_inline_data, w_set_inline);
    HCAP_SWAP(wr_set_inline_data_list, w_set_inline_list);
}

/* Put back one function pointer that HCAP_SWAP replaced. */
#define HCAP_UNSWAP(field)                                                                    \
    do {                                                                                      \
        if (hq->orig.field)                                                                   \
            qpx->field = hq->orig.field;                                                      \
    } while (0)

void hcap_qpx_unswap(hcap_qp_t *hq)
{
    struct ibv_qp_ex *qpx = hq->qpx;

    HCAP_UNSWAP(wr_start);
    HCAP_UNSWAP(wr_complete);
    HCAP_UNSWAP(wr_abort);
    HCAP_UNSWAP(wr_send);
    HCAP_UNSWAP(wr_send_imm);
    HCAP_UNSWAP(wr_send_inv);
    HCAP_UNSWAP(wr_rdma_write);
    HCAP_UNSWAP(wr_rdma_write_imm);
    HCAP_UNSWAP(wr_rdma_read);
    HCAP_UNSWAP(wr_atomic_cmp_swp);
    HCAP_UNSWAP(wr_atomic_fetch_add);
    HCAP_UNSWAP(wr_set_sge);
    HCAP_UNSWAP(wr_set_sge_list);
    HCAP_UNSWAP(wr_set_inline_data);
    HCAP_UNSWAP(wr_set_inline_data_list);
}

/* ---- ibv_cq_ex polling ---------------------------------------------------------- */

static void cqx_record(hcap_cq_t *hc, struct ibv_cq_ex *cq)
{
    uint64_t t = hcap_stamp();

    if (cq->status == IBV_WC_SUCCESS && (hc->read_opcode(cq) & IBV_WC_RECV))
        return;
    if (!hc->have_qp_num) {
        atomic_fetch_add_explicit(&hcap_g.lost, 1, memory_order_relaxed);
        return;
    }
    hcap_record_comp(&hcap_g, hc->ctx_index, hc->read_qp_num(cq), cq->wr_id,
                     (uint8_t)cq->status, t);
}

static int c_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
    hcap_cq_t *hc = hcap_map_get(&hcap_g.cqs, (uintptr_t)cq);
    int rc = hc->start_poll(cq, attr);

    if (rc == 0 && hcap_running(&hcap_g))
        cqx_record(hc, cq);
    return rc;
}

static int c_next_poll(struct ibv_cq_ex *cq)
{
    hcap_cq_t *hc = hcap_map_get(&hcap_g.cqs, (uintptr_t)cq);
    int rc = hc->next_poll(cq);

    if (rc == 0 && hcap_running(&hcap_g))
        cqx_record(hc, cq);
    return rc;
}

void hcap_cqx_swap(hcap_cq_t *hc, struct ibv_cq_ex *cq)
{
    hc->start_poll = cq->start_poll;
    hc->next_poll = cq->next_poll;
    hc->read_opcode = cq->read_opcode;
    hc->read_qp_num = cq->read_qp_num;
    if (!hc->read_opcode || !hc->start_poll || !hc->next_poll)
        return;
    if (!hc->read_qp_num)
        hc->have_qp_num = 0;
    cq->start_poll = c_start_poll;
    cq->next_poll = c_next_poll;
}

void hcap_cqx_unswap(hcap_cq_t *hc)
{
    if (hc->cq->start_poll != c_start_poll)
        return; /* never swapped */
    hc->cq->start_poll = hc->start_poll;
    hc->cq->next_poll = hc->next_poll;
}
