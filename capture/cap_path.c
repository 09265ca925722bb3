/* cap_path.c - endpoints, QPs and the bounded post/poll/drain loops (see cap_path.h). */
#include "capture/cap_path.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"

#define CAP_RECV_DEPTH 256

static hs_status_t cq_moderate(cap_qp_t *q)
{
    struct ibv_modify_cq_attr a = {
        .attr_mask = IBV_CQ_ATTR_MODERATE,
        .moderate = {.cq_count = (uint16_t)q->cfg.coal_count,
                     .cq_period = (uint16_t)q->cfg.coal_period_us},
    };
    int rc = ibv_modify_cq(q->cq, &a);

    if (rc != 0) {
        /* The device claimed the caps but refused: fall back to the emulation. */
        hs_log_warn("%s path: ibv_modify_cq failed (%s); emulating moderation by signalling "
                    "every %u WRs", cap_path_name(q->id), strerror(rc), q->cfg.coal_count);
        q->cfg.moderation_hw = 0;
        if (q->cfg.coal_count > q->cfg.signal_every && q->cfg.coal_count <= q->cfg.depth)
            q->cfg.signal_every = q->cfg.coal_count;
    }
    return HS_OK;
}

static hs_status_t qp_create(cap_ep_t *ep, cap_qp_t *q)
{
    struct ibv_context *ctx = ep->dev->ctx;
    struct ibv_qp_init_attr a;

    q->cq = ibv_create_cq(ctx, (int)q->cfg.depth + 1, NULL, NULL, 0);
    q->rcq = ibv_create_cq(ctx, CAP_RECV_DEPTH, NULL, NULL, 0);
    if (!q->cq || !q->rcq) {
        hs_log_error("%s path: ibv_create_cq failed: %s", cap_path_name(q->id), strerror(errno));
        return HS_ERR_ENV;
    }
    if (q->cfg.moderation_hw)
        cq_moderate(q);
    memset(&a, 0, sizeof(a));
    a.send_cq = q->cq;
    a.recv_cq = q->rcq;
    a.qp_type = IBV_QPT_RC;
    a.sq_sig_all = 0;
    a.cap.max_send_wr = q->cfg.depth + 1; /* +1: the drain fence */
    a.cap.max_recv_wr = CAP_RECV_DEPTH;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = 1;
    a.cap.max_inline_data = q->cfg.inline_bytes;
    q->qp = ibv_create_qp(ep->dev->pd, &a);
    if (!q->qp) {
        hs_log_error("%s path: ibv_create_qp(max_send_wr=%u, max_inline_data=%u) failed: %s",
                     cap_path_name(q->id), q->cfg.depth + 1, q->cfg.inline_bytes,
                     strerror(errno));
        return HS_ERR_ENV;
    }
    q->psn = (uint32_t)(hs_now_ns() & 0xffffff);
    q->last_signaled = 1;
    return cap_track_init(&q->track, q->cfg.depth + 1);
}

static void qp_destroy(cap_qp_t *q)
{
    if (q->qp)
        ibv_destroy_qp(q->qp);
    if (q->cq)
        ibv_destroy_cq(q->cq);
    if (q->rcq)
        ibv_destroy_cq(q->rcq);
    cap_track_release(&q->track);
}

hs_status_t cap_ep_create(cap_dev_t *dev, const cap_mem_ops_t *mem,
                          const cap_path_cfg_t cfg[CAP_NPATHS], size_t max_msg,
                          uint64_t timeout_ns, cap_ep_t **out)
{
    cap_ep_t *ep = max_msg <= SIZE_MAX / 2 ? calloc(1, sizeof(*ep)) : NULL; /* 2*max_msg */
    hs_status_t st;

    if (!ep)
        return max_msg <= SIZE_MAX / 2 ? HS_ERR_NOMEM : HS_ERR_INVALID;
    ep->dev = dev;
    ep->mem = mem;
    ep->max_msg = max_msg ? max_msg : 1;
    ep->timeout_ns = timeout_ns;
    st = mem->alloc(2 * ep->max_msg, &ep->buf);
    if (st != HS_OK)
        goto err;
    st = mem->reg(dev->pd, ep->buf, 2 * ep->max_msg, &ep->mr);
    if (st != HS_OK)
        goto err;
    for (int i = 0; i < CAP_NPATHS; i++) {
        ep->qp[i].id = (cap_path_id_t)i;
        ep->qp[i].cfg = cfg[i];
        st = qp_create(ep, &ep->qp[i]);
        if (st != HS_OK)
            goto err;
    }
    *out = ep;
    return HS_OK;
err:
    cap_ep_destroy(ep);
    return st;
}

void cap_ep_destroy(cap_ep_t *ep)
{
    if (!ep)
        return;
    for (int i = 0; i < CAP_NPATHS; i++)
        qp_destroy(&ep->qp[i]);
    if (ep->mr)
        ibv_dereg_mr(ep->mr);
    if (ep->buf)
        ep->mem->free(ep->buf);
    free(ep);
}

void cap_ep_info(const cap_ep_t *ep, cap_ep_info_t *out)
{
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < CAP_NPATHS; i++) {
        out->qpn[i] = ep->qp[i].qp->qp_num;
        out->psn[i] = ep->qp[i].psn;
    }
    memcpy(out->gid, ep->dev->gid.raw, 16);
    out->lid = ep->dev->lid;
    out->addr = (uint64_t)(uintptr_t)ep->buf + ep->max_msg;
    out->rkey = ep->mr->rkey;
    out->max_msg = ep->max_msg;
}

static hs_status_t qp_modify(cap_qp_t *q, struct ibv_qp_attr *a, int mask, const char *state)
{
    int rc = ibv_modify_qp(q->qp, a, mask);

    if (rc != 0) {
        hs_log_error("%s path: ibv_modify_qp to %s failed: %s", cap_path_name(q->id), state,
                     strerror(rc));
        return HS_ERR_ENV;
    }
    return HS_OK;
}

/* After a failed move to RTR on RoCE (no LIDs: the route is the GIDs): say which GIDs were
 * paired and how to choose. A GID the host cannot route to fails there with nothing else to
 * go by: seen in the soft-RoCE VMs, EINVAL for a link-local GID facing an IPv4 one
 * (vm_cross_host) and ETIMEDOUT for link-local GIDs on both ends. */
static void rtr_gid_hint(const cap_ep_t *ep, const cap_ep_info_t *peer)
{
    char mine[CAP_GID_TEXT], theirs[CAP_GID_TEXT];

    if (peer->lid != 0)
        return;
    hs_log_error("%s GID[%d] %s could not be connected to the peer's GID %s: each end's -x "
                 "(--gid-index) must name a GID of an address the other host reaches (ibv_devinfo "
                 "-v lists them; RoCE v2 over IPv4 reads ::ffff:a.b.c.d; an fe80:: GID is "
                 "link-local)", ep->dev->name, ep->dev->gid_index,
                 cap_gid_text(ep->dev->gid.raw, mine, sizeof(mine)),
                 cap_gid_text(peer->gid, theirs, sizeof(theirs)));
}

static hs_status_t qp_connect(cap_ep_t *ep, cap_qp_t *q, const cap_ep_info_t *peer, int i)
{
    struct ibv_qp_attr a;
    hs_status_t st;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.port_num = ep->dev->port;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    st = qp_modify(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
                   "INIT");
    if (st != HS_OK)
        return st;
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = ep->dev->active_mtu;
    a.dest_qp_num = peer->qpn[i];
    a.rq_psn = peer->psn[i];
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
    a.ah_attr.grh.sgid_index = (uint8_t)ep->dev->gid_index;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.dlid = peer->lid;
    a.ah_attr.port_num = ep->dev->port;
    st = qp_modify(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");
    if (st != HS_OK) {
        rtr_gid_hint(ep, peer);
        return st;
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;   /* 4.096 us * 2^14 = 67 ms per try */
    a.retry_cnt = 7;  /* a dead peer shows as RETRY_EXC_ERR after about 0.5 s */
    a.rnr_retry = 6;  /* bounded (7 would retry forever) */
    a.sq_psn = q->psn;
    a.max_rd_atomic = 1;
    return qp_modify(q, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
}

hs_status_t cap_ep_connect(cap_ep_t *ep, const cap_ep_info_t *peer)
{
    hs_status_t st;

    for (int i = 0; i < CAP_NPATHS; i++) {
        st = qp_connect(ep, &ep->qp[i], peer, i);
        if (st != HS_OK)
            return st;
    }
    ep->raddr = peer->addr;
    ep->rkey = peer->rkey;
    return HS_OK;
}

static hs_status_t wc_error(const cap_qp_t *q, const struct ibv_wc *wc)
{
    hs_log_error("%s path: work completion error: %s (status %d, vendor error 0x%x)",
                 cap_path_name(q->id), ibv_wc_status_str(wc->status), (int)wc->status,
                 wc->vendor_err);
    return HS_ERR_CHECK;
}

hs_status_t cap_qp_poll(cap_ep_t *ep, cap_qp_t *q)
{
    struct ibv_wc wc[16];
    cap_pending_t done[16];
    int implicit[16];
    int n = ibv_poll_cq(q->cq, 16, wc);

    (void)ep;
    if (n < 0) {
        hs_log_error("%s path: ibv_poll_cq failed", cap_path_name(q->id));
        return HS_ERR_ENV;
    }
    for (int i = 0; i < n; i++) {
        uint64_t now = q->on_done ? hs_now_ns() : 0; /* no clock read nobody uses */
        size_t k;

        if (wc[i].status != IBV_WC_SUCCESS)
            return wc_error(q, &wc[i]);
        do {
            k = cap_track_complete(&q->track, wc[i].wr_id, done, implicit, 16);
            for (size_t j = 0; j < k && q->on_done; j++)
                q->on_done(q->on_done_arg, done[j].msg, now, implicit[j]);
        } while (k == 16);
    }
    return HS_OK;
}

static hs_status_t post_one(cap_ep_t *ep, cap_qp_t *q, uint64_t off, uint64_t len, int sig,
                            int imm);

static const char *qp_state_str(enum ibv_qp_state s)
{
    static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

/* The QP is in the error state: what does a probe WR complete with? (Flushed, usually; an
 * error that caused the state is reported by cap_qp_poll before we get here.) */
static hs_status_t probe_error_qp(cap_ep_t *ep, cap_qp_t *q)
{
    cap_wait_t w = {0};
    struct ibv_wc wc;
    int n = 0;

    if (cap_track_outstanding(&q->track) <= q->cfg.depth && post_one(ep, q, 0, 0, 1, 0) == HS_OK)
        while ((n = ibv_poll_cq(q->cq, 1, &wc)) == 0 && !cap_wait_expired(ep, &w))
            ;
    hs_log_error("%s path: the QP is in the error state (the peer vanished or reset the "
                 "connection); work completion status: %s", cap_path_name(q->id),
                 n == 1 ? ibv_wc_status_str(wc.status) : "none (no completion was flushed)");
    return HS_ERR_CHECK;
}

hs_status_t cap_qp_check(cap_ep_t *ep, cap_qp_t *q)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    hs_status_t st = cap_qp_poll(ep, q); /* a completion in error that came meanwhile */

    if (st != HS_OK)
        return st;
    if (ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) != 0)
        return HS_OK;
    if (a.qp_state == IBV_QPS_ERR)
        return probe_error_qp(ep, q);
    if (a.qp_state != IBV_QPS_RTS)
        hs_log_warn("%s path: the QP is in state %s, not RTS", cap_path_name(q->id),
                    qp_state_str(a.qp_state));
    return HS_OK;
}

hs_status_t cap_qp_probe(cap_ep_t *ep, cap_qp_t *q, uint64_t bound_ns, int *alive)
{
    uint64_t deadline = hs_now_ns() + bound_ns;
    hs_status_t st = HS_OK;

    *alive = 0;
    if (cap_track_outstanding(&q->track) > q->cfg.depth)
        return HS_OK; /* no slot for the probe */
    st = post_one(ep, q, 0, 0, 1, 0);
    while (st == HS_OK && cap_track_outstanding(&q->track) > 0) {
        st = cap_qp_poll(ep, q); /* a vanished peer: transport retry counter exceeded */
        if (st == HS_OK && hs_now_ns() > deadline)
            return HS_OK;
    }
    *alive = st == HS_OK;
    return st;
}

static hs_status_t timed_out(cap_ep_t *ep, cap_qp_t *q, const char *what)
{
    hs_status_t st = cap_qp_check(ep, q);

    if (st != HS_OK)
        return st;
    hs_log_error("%s path: no completion within %.1f s while %s (peer gone or device stuck)",
                 cap_path_name(q->id), (double)ep->timeout_ns / 1e9, what);
    return HS_ERR_TIMEOUT;
}

int cap_wait_expired(const cap_ep_t *ep, cap_wait_t *w)
{
    uint64_t now;

    if ((++w->spins & CAP_WAIT_CHECK_MASK) != 0) /* a short wait reads no clock at all */
        return 0;
    now = hs_now_ns();
    if (w->deadline_ns == 0) {
        w->deadline_ns = now + ep->timeout_ns;
        return 0;
    }
    return now > w->deadline_ns;
}

/* One pass of a wait on q: the caller's progress pass when it set one, else q's CQ. */
static hs_status_t wait_pass(cap_ep_t *ep, cap_qp_t *q)
{
    return ep->progress ? ep->progress(ep->progress_arg) : cap_qp_poll(ep, q);
}

/* Poll until outstanding WRs <= limit. */
static hs_status_t wait_outstanding(cap_ep_t *ep, cap_qp_t *q, uint64_t limit, const char *what)
{
    cap_wait_t w = {0};
    hs_status_t st;

    while (cap_track_outstanding(&q->track) > limit) {
        st = wait_pass(ep, q);
        if (st != HS_OK)
            return st;
        if (cap_wait_expired(ep, &w))
            return timed_out(ep, q, what);
    }
    return HS_OK;
}

static hs_status_t post_one(cap_ep_t *ep, cap_qp_t *q, uint64_t off, uint64_t len, int sig,
                            int imm)
{
    struct ibv_sge sge = {
        .addr = (uint64_t)(uintptr_t)ep->buf + off, .length = (uint32_t)len, .lkey = ep->mr->lkey,
    };
    struct ibv_send_wr wr, *bad = NULL;
    uint64_t seq = cap_track_take(&q->track, 1);
    int rc;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = seq;
    wr.sg_list = len ? &sge : NULL;
    wr.num_sge = len ? 1 : 0;
    wr.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
    wr.imm_data = htobe32((uint32_t)seq);
    wr.send_flags = sig ? IBV_SEND_SIGNALED : 0;
    if (len > 0 && len <= q->cfg.inline_bytes && ep->mem->cpu_visible)
        wr.send_flags |= IBV_SEND_INLINE;
    wr.wr.rdma.remote_addr = ep->raddr + off;
    wr.wr.rdma.rkey = ep->rkey;
    rc = ibv_post_send(q->qp, &wr, &bad);
    if (rc != 0) {
        hs_log_error("%s path: ibv_post_send failed: %s", cap_path_name(q->id), strerror(rc));
        return HS_ERR_CHECK;
    }
    q->last_signaled = sig;
    q->unsig_run = sig ? 0 : q->unsig_run + 1;
    return HS_OK;
}

/* Wait until c more WRs fit in q's send queue (c <= depth). Slots free as signalled WRs
 * complete; where the WRs in the way are the open batch alone (all unsignalled), nothing
 * would free them: a signalled zero-byte WRITE closes the batch (the model's forced close
 * at a slot wait, model/MODEL.md section 3) in the slot kept for a fence. */
static hs_status_t wait_slots(cap_ep_t *ep, cap_qp_t *q, uint64_t c)
{
    uint64_t limit = q->cfg.depth - c;
    uint64_t out = cap_track_outstanding(&q->track);
    hs_status_t st;

    if (out > limit && out == q->unsig_run && !q->last_signaled) {
        st = post_one(ep, q, 0, 0, 1, 0);
        if (st != HS_OK)
            return st;
        q->fences++;
    }
    return wait_outstanding(ep, q, limit, "waiting for a send-queue slot");
}

/* Post message msg's WRs in chunks (cap_chunk_len), each waiting for its slots as a whole,
 * signalled as cap_sig_wr says. */
static hs_status_t post_msg(cap_ep_t *ep, cap_qp_t *q, uint64_t msg, uint64_t size_bytes,
                            int imm, int sig_last, int *signaled_out)
{
    uint64_t nseg = cap_seg_count(size_bytes, q->cfg.seg_bytes);
    uint64_t off = 0, c;
    int sig = 0;
    hs_status_t st;

    for (uint64_t i = 0; i < nseg; i += c) {
        c = cap_chunk_len(nseg, i, q->cfg.signal_every);
        st = wait_slots(ep, q, c);
        for (uint64_t k = 0; st == HS_OK && k < c; k++) {
            uint64_t len = cap_seg_len(size_bytes, q->cfg.seg_bytes, i + k);
            sig = cap_sig_wr(q->unsig_run, q->cfg.signal_every, nseg, i + k, sig_last);
            st = post_one(ep, q, off, len, sig, imm && i + k + 1 == nseg);
            off += len;
        }
        if (st != HS_OK)
            return st;
    }
    st = cap_track_push(&q->track, msg, q->track.next_seq - 1);
    if (signaled_out)
        *signaled_out = sig;
    return st;
}

hs_status_t cap_qp_post_msg(cap_ep_t *ep, cap_qp_t *q, uint64_t msg, uint64_t size_bytes,
                            int imm, int *signaled_out)
{
    return post_msg(ep, q, msg, size_bytes, imm, 0, signaled_out);
}

hs_status_t cap_qp_post_msg_signaled(cap_ep_t *ep, cap_qp_t *q, uint64_t msg,
                                     uint64_t size_bytes)
{
    return post_msg(ep, q, msg, size_bytes, 0, 1, NULL);
}

hs_status_t cap_qp_wait_msg(cap_ep_t *ep, cap_qp_t *q, uint64_t last_seq)
{
    cap_wait_t w = {0};
    hs_status_t st;

    while (q->track.done_seq <= last_seq) {
        st = wait_pass(ep, q);
        if (st != HS_OK)
            return st;
        if (cap_wait_expired(ep, &w))
            return timed_out(ep, q, "waiting for a message's completion");
    }
    return HS_OK;
}

hs_status_t cap_qp_drain(cap_ep_t *ep, cap_qp_t *q, uint64_t *drain_ns)
{
    uint64_t t0 = hs_now_ns();
    hs_status_t st;

    if (cap_track_outstanding(&q->track) > 0 && !q->last_signaled) {
        /* RC completes in order: a signalled fence covers everything before it. */
        st = post_one(ep, q, 0, 0, 1, 0);
        if (st != HS_OK)
            return st;
        q->fences++;
    }
    st = wait_outstanding(ep, q, 0, "draining the path before a switch");
    if (st == HS_OK && drain_ns)
        *drain_ns = hs_now_ns() - t0;
    return st;
}

hs_status_t cap_qp_post_recvs(cap_qp_t *q, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct ibv_recv_wr wr = {.wr_id = i}, *bad = NULL;
        int rc = ibv_post_recv(q->qp, &wr, &bad);
        if (rc != 0) {
            hs_log_error("%s path: ibv_post_recv failed: %s", cap_path_name(q->id), strerror(rc));
            return HS_ERR_ENV;
        }
    }
    return HS_OK;
}

hs_status_t cap_qp_wait_recv(cap_ep_t *ep, cap_qp_t *q)
{
    cap_wait_t w = {0};
    struct ibv_wc wc;

    for (;;) {
        int n = ibv_poll_cq(q->rcq, 1, &wc);
        if (n < 0) {
            hs_log_error("%s path: ibv_poll_cq (receive) failed", cap_path_name(q->id));
            return HS_ERR_ENV;
        }
        if (n == 1)
            return wc.status == IBV_WC_SUCCESS ? cap_qp_post_recvs(q, 1) : wc_error(q, &wc);
        if (cap_wait_expired(ep, &w))
            return timed_out(ep, q, "waiting for the peer's write-with-immediate");
        /* keep send slots flowing meanwhile */
        hs_status_t st = cap_qp_poll(ep, q);
        if (st != HS_OK)
            return st;
    }
}

volatile uint8_t *cap_ep_landing_last(cap_ep_t *ep, uint64_t size_bytes)
{
    return (volatile uint8_t *)ep->buf + ep->max_msg + (size_bytes ? size_bytes - 1 : 0);
}

void cap_ep_mark_source(cap_ep_t *ep, uint64_t size_bytes, uint8_t v)
{
    ((volatile uint8_t *)ep->buf)[size_bytes ? size_bytes - 1 : 0] = v;
}
