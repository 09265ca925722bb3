/* cap_path.h - the two-path engine on a real verbs device.
 *
 * An endpoint (cap_ep_t) is one end of a connection: one registered buffer and two RC QPs,
 * the LL path (shallow, every WR signalled, inline up to the device limit) and the BW path
 * (deep, selective signalling, segments, CQ moderation by ibv_modify_cq where the device has
 * it, emulated by the signalling interval where not), each with its own send CQ. The buffer
 * has two halves: [0, max_msg) is the source of this end's writes, [max_msg, 2*max_msg) is
 * where the peer's writes land.
 *
 * Messages are RDMA WRITEs (WRITE_WITH_IMM when asked) into the peer's landing half. Every
 * wait is bounded by a deadline; a completion in error ends the run with HS_ERR_CHECK and
 * the ibv_wc_status_str named.
 */
#ifndef HS_CAP_PATH_H
#define HS_CAP_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "capture/cap_dev.h"
#include "capture/cap_mem.h"
#include "capture/cap_policy.h"

/* Called for each message whose completion the poster has just seen (t_done_ns, CLOCK_
 * MONOTONIC); implicit = its own WR was unsignalled, a later signalled WR covered it. */
typedef void (*cap_done_fn)(void *arg, uint64_t msg, uint64_t t_done_ns, int implicit);
/* A caller's progress pass (cap_ep_t.progress): poll every CQ it owns; HS_OK or the first
 * error a poll saw. */
typedef hs_status_t (*cap_progress_fn)(void *arg);

typedef struct {
    cap_path_id_t id;
    cap_path_cfg_t cfg;
    struct ibv_cq *cq;   /* send completions */
    struct ibv_cq *rcq;  /* receive completions (write-with-immediate) */
    struct ibv_qp *qp;
    uint32_t psn;
    cap_track_t track;
    int last_signaled;   /* the last posted WR was signalled (drain needs no fence) */
    uint32_t unsig_run;  /* WRs posted since the last signalled one (the open batch) */
    uint64_t fences;     /* signalled zero-byte WRs posted to close an unsignalled batch (a
                          * drain or a slot wait): a WR of the device's time the model does
                          * not cost (model/MODEL.md 7b) */
    cap_done_fn on_done;
    void *on_done_arg;
} cap_qp_t;

/* What the peer needs to reach one endpoint (exchanged over TCP or copied in loopback). */
typedef struct {
    uint32_t qpn[CAP_NPATHS];
    uint32_t psn[CAP_NPATHS];
    uint8_t gid[16];
    uint16_t lid;
    uint64_t addr;   /* landing half */
    uint32_t rkey;
    uint64_t max_msg;
} cap_ep_info_t;

typedef struct {
    cap_dev_t *dev;          /* borrowed */
    const cap_mem_ops_t *mem;
    void *buf;
    size_t max_msg;
    struct ibv_mr *mr;
    cap_qp_t qp[CAP_NPATHS];
    uint64_t raddr;          /* peer's landing half */
    uint32_t rkey;
    uint64_t timeout_ns;     /* bound of every wait */
    /* NULL: a wait on a QP polls that QP's send CQ. Set: every wait in cap_path.c (a send-
     * queue slot, a message's completion, a drain) calls progress(progress_arg) instead, so
     * that a caller replaying on both paths sees every completion as soon as it is polled
     * (cap_replay.c), whichever QP it is waiting on. */
    cap_progress_fn progress;
    void *progress_arg;
} cap_ep_t;

/* Create an endpoint: buffer of 2*max_msg from mem, two QPs configured by cfg (already
 * checked by cap_path_cfg_apply_limits), CQ moderation applied where cfg says so. */
hs_status_t cap_ep_create(cap_dev_t *dev, const cap_mem_ops_t *mem,
                          const cap_path_cfg_t cfg[CAP_NPATHS], size_t max_msg,
                          uint64_t timeout_ns, cap_ep_t **out);
void cap_ep_destroy(cap_ep_t *ep);
void cap_ep_info(const cap_ep_t *ep, cap_ep_info_t *out);
/* Bring both QPs to RTS against the peer's info. */
hs_status_t cap_ep_connect(cap_ep_t *ep, const cap_ep_info_t *peer);

/* Post message msg of size bytes on path q: segments per cfg, waits (bounded) for free
 * slots, inline when small enough and the memory is CPU-visible; imm: the last WR is a
 * WRITE_WITH_IMM (the receiver gets a completion). *signaled_out (may be NULL): the
 * message's last WR was signalled. */
hs_status_t cap_qp_post_msg(cap_ep_t *ep, cap_qp_t *q, uint64_t msg, uint64_t size_bytes,
                            int imm, int *signaled_out);
/* As cap_qp_post_msg (no immediate), but the message's last WR is signalled whatever the
 * signalling interval: a message its poster will wait for (closed loop) is seen complete at
 * its own completion, not at a later signalled WR's. */
hs_status_t cap_qp_post_msg_signaled(cap_ep_t *ep, cap_qp_t *q, uint64_t msg,
                                     uint64_t size_bytes);
/* After a wait ran out: HS_ERR_CHECK, logged with the ibv_wc_status_str, when a completion
 * in error has arrived or the QP is in the error state (a probe WR shows what it completes
 * with); HS_OK when nothing wrong is visible. */
hs_status_t cap_qp_check(cap_ep_t *ep, cap_qp_t *q);
/* A wait for the peer ran out with nothing in error: post a zero-byte signalled WRITE and
 * wait up to bound_ns. HS_ERR_CHECK (logged, the ibv_wc_status_str named) when it fails, as
 * it does when the peer's QP is gone; else HS_OK, *alive = it completed (the peer's QP still
 * acknowledges). */
hs_status_t cap_qp_probe(cap_ep_t *ep, cap_qp_t *q, uint64_t bound_ns, int *alive);
/* Poll q's send CQ once (non-blocking); reports finished messages via q->on_done, each
 * stamped with the clock read when its CQE was polled. */
hs_status_t cap_qp_poll(cap_ep_t *ep, cap_qp_t *q);
/* Wait (bounded) until message msg has completed, i.e. until nothing up to it is pending. */
hs_status_t cap_qp_wait_msg(cap_ep_t *ep, cap_qp_t *q, uint64_t last_seq);
/* Drain: wait until every WR posted on q has completed (posting a zero-byte signalled
 * WRITE first when the last WR was unsignalled). *drain_ns (may be NULL) gets the time it
 * took. */
hs_status_t cap_qp_drain(cap_ep_t *ep, cap_qp_t *q, uint64_t *drain_ns);

/* A bounded busy wait that reads the clock only every CAP_WAIT_CHECK_MASK + 1 spins (a
 * clock read costs microseconds in an emulated guest; ib_write_lat reads none while it
 * spins). Start with {0}; cap_wait_expired: the wait has lasted longer than ep's timeout. */
#define CAP_WAIT_CHECK_MASK 255u
typedef struct {
    uint64_t deadline_ns; /* 0: not yet started */
    unsigned spins;
} cap_wait_t;
int cap_wait_expired(const cap_ep_t *ep, cap_wait_t *w);

/* Post n receive WRs on q (for write-with-immediate), and wait for one receive completion. */
hs_status_t cap_qp_post_recvs(cap_qp_t *q, unsigned n);
hs_status_t cap_qp_wait_recv(cap_ep_t *ep, cap_qp_t *q);

/* Pointer to the last byte of the landing half for a message of size bytes (host memory). */
volatile uint8_t *cap_ep_landing_last(cap_ep_t *ep, uint64_t size_bytes);
/* Set the last source byte of a size-byte message to v (host memory only). */
void cap_ep_mark_source(cap_ep_t *ep, uint64_t size_bytes, uint8_t v);

#endif
