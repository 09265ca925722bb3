/* test_hcap_hooks.c - libhintcap's hooks against a provider double: the application calls
 * the real inline verbs (ibv_post_send, ibv_poll_cq, ibv_create_qp_ex, ibv_wr_*,
 * ibv_start_poll ...) on a fake context whose ops libhintcap swapped, and the records that
 * reach the sink are checked: sizes, opcodes, flags, implicit completions, cold start,
 * errors, failed posts, QP destruction, drops, and the trace file with its header. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "capture/preload/hcap.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"
#include "tests/test_hcap_fake.h"

typedef struct {
    trace_rec_t recs[4096];
    size_t n;
} sink_t;

static void sink_rec(void *arg, const trace_rec_t *recs, size_t n)
{
    sink_t *s = arg;

    for (size_t i = 0; i < n && s->n < 4096; i++)
        s->recs[s->n++] = recs[i];
}

typedef struct {
    fake_ctx_t *f;
    fake_cq_t *cq;
    sink_t sink;
} fx_t;

static struct ibv_qp_ex *to_qp_ex(struct ibv_qp *qp)
{
    return (struct ibv_qp_ex *)qp; /* the fake's QP starts with its ibv_qp_ex */
}

static const hcap_real_t test_real = {.qp_to_qp_ex = to_qp_ex};

static int fx_setup(void **state)
{
    fx_t *x = calloc(1, sizeof(*x));

    setenv("HINTCAP_COLD", "3", 1);
    setenv("HINTCAP_FLUSH_US", "100", 1);
    unsetenv("HINTCAP_RING_EVENTS");
    x->f = fake_ctx_new();
    x->cq = fake_cq_new(x->f, 1024);
    hcap_start(&hcap_g, &test_real, sink_rec, &x->sink);
    assert_int_equal(atomic_load(&hcap_g.state), HCAP_RUNNING);
    hcap_ctx_attach(&hcap_g, &x->f->vctx.context);
    *state = x;
    return 0;
}

static int fx_teardown(void **state)
{
    fx_t *x = *state;

    hcap_stop(&hcap_g, 0);
    hcap_ctx_detach(&hcap_g, &x->f->vctx.context);
    fake_cq_free(x->cq);
    fake_ctx_free(x->f);
    free(x);
    return 0;
}

/* A QP as ibv_create_qp would have made it, tracked like the ibv_create_qp wrapper does. */
static fake_qp_t *qp_make(fx_t *x, uint32_t qpn, int sig_all)
{
    fake_qp_t *q = fake_qp_new(x->f, x->cq, qpn, sig_all);

    assert_non_null(hcap_qp_attach(&hcap_g, &q->qpx.qp_base, sig_all, 128, NULL));
    return q;
}

static int post(fake_qp_t *q, uint64_t wr_id, uint32_t len, int flags, enum ibv_wr_opcode op)
{
    struct ibv_sge sge = {.addr = 0x1000, .length = len, .lkey = 1};
    struct ibv_send_wr wr, *bad = NULL;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = op;
    wr.send_flags = (unsigned)flags;
    return ibv_post_send(&q->qpx.qp_base, &wr, &bad);
}

static int poll_all(fake_cq_t *cq)
{
    struct ibv_wc wc[16];
    int n, total = 0;

    while ((n = ibv_poll_cq((struct ibv_cq *)&cq->cqx, 16, wc)) > 0)
        total += n;
    return total;
}

static void test_signalled_and_cold(void **state)
{
    fx_t *x = *state;
    fake_qp_t *q = qp_make(x, 7, 0);
    size_t i;

    for (i = 0; i < 5; i++)
        assert_int_equal(post(q, 100 + i, (uint32_t)(8 << i), IBV_SEND_SIGNALED,
                              IBV_WR_RDMA_WRITE), 0);
    assert_int_equal(poll_all(x->cq), 5);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 5);
    for (i = 0; i < 5; i++) {
        const trace_rec_t *r = &x->sink.recs[i];
        assert_int_equal(r->size_bytes, 8u << i);
        assert_int_equal(r->opcode, TRACE_OP_WRITE);
        assert_true(r->flags & TRACE_F_SIGNALED);
        assert_false(r->flags & TRACE_F_IMPLICIT);
        assert_int_equal(!!(r->flags & TRACE_F_COLD), i < 3); /* HINTCAP_COLD=3 */
        assert_true(r->t_done_ns != TRACE_TIME_UNKNOWN && r->t_done_ns >= r->t_post_ns);
        assert_int_equal(r->status, 0);
    }
    fake_qp_free(q);
}

static void test_unsignalled_implicit(void **state)
{
    fx_t *x = *state;
    fake_qp_t *q = qp_make(x, 8, 0);
    size_t i;

    for (i = 0; i < 3; i++)
        post(q, 1, 64, 0, IBV_WR_SEND);
    post(q, 1, 4096, IBV_SEND_SIGNALED | IBV_SEND_INLINE, IBV_WR_SEND);
    post(q, 1, 32, 0, IBV_WR_SEND); /* never followed by a signalled WR */
    assert_int_equal(poll_all(x->cq), 1);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 5);
    for (i = 0; i < 3; i++) {
        assert_true(x->sink.recs[i].flags & TRACE_F_IMPLICIT);
        assert_false(x->sink.recs[i].flags & TRACE_F_SIGNALED);
        assert_int_equal(x->sink.recs[i].t_done_ns, x->sink.recs[3].t_done_ns);
    }
    assert_true(x->sink.recs[3].flags & TRACE_F_INLINE);
    assert_int_equal(x->sink.recs[3].size_bytes, 4096);
    assert_int_equal(x->sink.recs[4].size_bytes, 32);
    assert_int_equal(x->sink.recs[4].t_done_ns, TRACE_TIME_UNKNOWN);
    fake_qp_free(q);
}

/* A chain of three sends of 10, 20 and 30 bytes (wr_id 0, 1, 2) with send_flags. */
static void chain3(struct ibv_send_wr wr[3], struct ibv_sge sge[3], unsigned send_flags)
{
    memset(wr, 0, 3 * sizeof(*wr));
    for (int i = 0; i < 3; i++) {
        sge[i] = (struct ibv_sge){0, (uint32_t)(10 * (i + 1)), 1};
        wr[i].wr_id = (uint64_t)i;
        wr[i].sg_list = &sge[i];
        wr[i].num_sge = 1;
        wr[i].opcode = IBV_WR_SEND;
        wr[i].send_flags = send_flags;
        wr[i].next = i < 2 ? &wr[i + 1] : NULL;
    }
}

static void test_sig_all_and_chain_failure(void **state)
{
    fx_t *x = *state;
    fake_qp_t *q = qp_make(x, 9, 1);
    struct ibv_sge sge[3];
    struct ibv_send_wr wr[3], *bad = NULL;

    chain3(wr, sge, 0);
    wr[2].wr_id = FAKE_BAD_WRID; /* the provider takes the first two, refuses the third */
    assert_int_not_equal(ibv_post_send(&q->qpx.qp_base, wr, &bad), 0);
    assert_ptr_equal(bad, &wr[2]);
    assert_int_equal(poll_all(x->cq), 2);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 2);
    assert_int_equal(x->sink.recs[0].size_bytes, 10);
    assert_int_equal(x->sink.recs[1].size_bytes, 20);
    assert_true(x->sink.recs[0].flags & TRACE_F_SIGNALED); /* sq_sig_all */
    assert_false(x->sink.recs[1].flags & TRACE_F_IMPLICIT);
    fake_qp_free(q);
}

static void test_error_completion(void **state)
{
    fx_t *x = *state;
    fake_qp_t *q = qp_make(x, 10, 0);

    post(q, 5, 100, 0, IBV_WR_RDMA_READ);
    fake_cq_push(x->cq, 10, 5, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ); /* flushed WR */
    fake_cq_push(x->cq, 10, 77, IBV_WC_SUCCESS, IBV_WC_RECV);           /* not ours */
    assert_int_equal(poll_all(x->cq), 2);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 1);
    assert_int_equal(x->sink.recs[0].status, IBV_WC_REM_ACCESS_ERR);
    assert_true(x->sink.recs[0].flags & TRACE_F_ERROR);
    assert_int_equal(x->sink.recs[0].opcode, TRACE_OP_READ);
    fake_qp_free(q);
}

static void test_destroy_pending(void **state)
{
    fx_t *x = *state;
    fake_qp_t *q = qp_make(x, 11, 0);

    post(q, 1, 1, 0, IBV_WR_SEND);
    post(q, 2, 2, 0, IBV_WR_SEND);
    hcap_qp_detach(&hcap_g, &q->qpx.qp_base);
    post(q, 3, 3, IBV_SEND_SIGNALED, IBV_WR_SEND); /* untracked now: counted, not recorded */
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 2);
    assert_int_equal(x->sink.recs[0].t_done_ns, TRACE_TIME_UNKNOWN);
    assert_int_equal(x->sink.recs[1].t_done_ns, TRACE_TIME_UNKNOWN);
    fake_qp_free(q);
}

static void test_qp_ex_and_cq_ex(void **state)
{
    fx_t *x = *state;
    struct ibv_cq_init_attr_ex cattr = {.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS &
                                                               ~IBV_WC_EX_WITH_QP_NUM};
    struct ibv_cq_ex *cqx = ibv_create_cq_ex(&x->f->vctx.context, &cattr);
    struct ibv_qp_init_attr_ex qattr;
    struct ibv_poll_cq_attr pattr = {0};
    struct ibv_qp_ex *qpx;
    struct ibv_qp *qp;
    int n = 0, rc;

    assert_non_null(cqx);
    assert_true(((fake_cq_t *)cqx)->wc_flags & IBV_WC_EX_WITH_QP_NUM); /* we asked for it */
    memset(&qattr, 0, sizeof(qattr));
    qattr.send_cq = ibv_cq_ex_to_cq(cqx);
    qattr.recv_cq = ibv_cq_ex_to_cq(cqx);
    qattr.cap.max_send_wr = 16;
    qattr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    qattr.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
    qp = ibv_create_qp_ex(&x->f->vctx.context, &qattr);
    assert_non_null(qp);
    qpx = (struct ibv_qp_ex *)qp;
    ibv_wr_start(qpx);
    qpx->wr_id = 1;
    qpx->wr_flags = 0;
    ibv_wr_rdma_write(qpx, 1, 0x2000);
    ibv_wr_set_sge(qpx, 1, 0x1000, 300);
    qpx->wr_id = 2;
    qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    ibv_wr_send(qpx);
    ibv_wr_set_inline_data(qpx, NULL, 12);
    assert_int_equal(ibv_wr_complete(qpx), 0);
    ibv_wr_start(qpx);
    qpx->wr_id = 3;
    ibv_wr_send(qpx);
    ibv_wr_abort(qpx); /* never posted */
    for (rc = ibv_start_poll(cqx, &pattr); rc == 0; rc = ibv_next_poll(cqx))
        n++;
    if (n > 0)
        ibv_end_poll(cqx);
    assert_int_equal(n, 1);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 2);
    assert_int_equal(x->sink.recs[0].size_bytes, 300);
    assert_int_equal(x->sink.recs[0].opcode, TRACE_OP_WRITE);
    assert_true(x->sink.recs[0].flags & TRACE_F_IMPLICIT);
    assert_int_equal(x->sink.recs[1].size_bytes, 12);
    assert_int_equal(x->sink.recs[1].opcode, TRACE_OP_SEND);
    assert_true(x->sink.recs[1].flags & TRACE_F_INLINE);
    assert_true(x->sink.recs[1].t_done_ns >= x->sink.recs[1].t_post_ns);
    hcap_qp_detach(&hcap_g, qp);
    hcap_cq_detach(&hcap_g, ibv_cq_ex_to_cq(cqx));
    fake_qp_free((fake_qp_t *)qp);
    fake_cq_free((fake_cq_t *)cqx);
}

/* Attributes of an extended QP (wr_* API) sending into cq. */
static void qpx_attr(struct ibv_qp_init_attr_ex *a, fake_cq_t *cq)
{
    memset(a, 0, sizeof(*a));
    a->send_cq = (struct ibv_cq *)&cq->cqx;
    a->recv_cq = (struct ibv_cq *)&cq->cqx;
    a->cap.max_send_wr = 16;
    a->comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a->send_ops_flags = IBV_QP_EX_WITH_SEND;
}

/* One signalled send of len bytes through the wr_* API. */
static void qpx_send(struct ibv_qp *qp, uint64_t wr_id, uint32_t len)
{
    struct ibv_qp_ex *qpx = (struct ibv_qp_ex *)qp;

    ibv_wr_start(qpx);
    qpx->wr_id = wr_id;
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(qpx);
    ibv_wr_set_sge(qpx, 1, 0x1000, len);
    assert_int_equal(ibv_wr_complete(qpx), 0);
}

/* Fill hcap_g.qps with keys no QP has (1, 2, ...) until a put fails; returns how many. */
static uint64_t qps_fill(void)
{
    uint64_t k = 1;

    pthread_mutex_lock(&hcap_g.lock);
    while (hcap_map_put(&hcap_g.qps, k, &hcap_g) == 0)
        k++;
    pthread_mutex_unlock(&hcap_g.lock);
    return k - 1;
}

static void qps_unfill(uint64_t n)
{
    uint64_t k;

    pthread_mutex_lock(&hcap_g.lock);
    for (k = 1; k <= n; k++)
        hcap_map_del(&hcap_g.qps, k);
    pthread_mutex_unlock(&hcap_g.lock);
}

/* A QP created while the QP map is full is not tracked: its wr_* calls reach the provider
 * unwrapped (no wrapper without its QP in the map), and the miss is counted as dropped. */
static void test_qpx_map_full(void **state)
{
    fx_t *x = *state;
    struct ibv_qp_init_attr_ex qattr;
    uint64_t filled = qps_fill();
    struct ibv_qp *qp;

    assert_true(filled > 0);
    qpx_attr(&qattr, x->cq);
    qp = ibv_create_qp_ex(&x->f->vctx.context, &qattr);
    assert_non_null(qp);
    qpx_send(qp, 1, 64);
    assert_int_equal(((fake_qp_t *)qp)->posted, 1); /* the provider got the WR */
    assert_int_equal(poll_all(x->cq), 1);
    qps_unfill(filled);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 0);
    assert_int_equal(hcap_g.dropped, 1);
    hcap_qp_detach(&hcap_g, qp);
    fake_qp_free((fake_qp_t *)qp);
}

/* A QP the full map cannot adopt: every WR of a chain posted to it is counted lost (each
 * post counted one, however many WRs it had). */
static void test_untracked_chain_counted(void **state)
{
    fx_t *x = *state;
    uint64_t filled = qps_fill();
    fake_qp_t *q = fake_qp_new(x->f, x->cq, 31, 0);
    struct ibv_sge sge[3];
    struct ibv_send_wr wr[3], *bad = NULL;

    chain3(wr, sge, IBV_SEND_SIGNALED);
    assert_int_equal(ibv_post_send(&q->qpx.qp_base, wr, &bad), 0);
    assert_int_equal(q->posted, 3); /* the provider got them all */
    assert_int_equal(poll_all(x->cq), 3);
    qps_unfill(filled);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 0);
    assert_int_equal(hcap_g.dropped, 3);
    fake_qp_free(q);
}

/* QPs created while the map is full are not tracked, so the summary's qps_seen leaves them
 * out: it counts the QPs whose WRs could be recorded, one here. */
static void test_qps_seen_tracked_only(void **state)
{
    fx_t *x = *state;
    fake_qp_t *q = qp_make(x, 7, 0), *lost = fake_qp_new(x->f, x->cq, 8, 0);
    struct ibv_qp_init_attr_ex qattr;
    struct ibv_qp *qpx;
    uint64_t filled = qps_fill();

    assert_null(hcap_qp_attach(&hcap_g, &lost->qpx.qp_base, 0, 128, NULL));
    qpx_attr(&qattr, x->cq);
    qpx = ibv_create_qp_ex(&x->f->vctx.context, &qattr); /* through the swapped op */
    assert_non_null(qpx);
    qps_unfill(filled);
    assert_int_equal(post(q, 1, 64, IBV_SEND_SIGNALED, IBV_WR_SEND), 0);
    assert_int_equal(poll_all(x->cq), 1);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(hcap_g.summary.qps_seen, 1);
    assert_int_equal(hcap_g.summary.qps_posting, 1);
    assert_int_equal(hcap_g.summary.wrs_posted, 1);
    hcap_qp_detach(&hcap_g, qpx);
    fake_qp_free((fake_qp_t *)qpx);
    fake_qp_free(lost);
    fake_qp_free(q);
}

static fx_t *reuse_x;                         /* where destroy_and_reuse creates its QP */
static struct ibv_qp_init_attr_ex reuse_attr; /* and how */

/* A provider's destroy_qp during which another thread's ibv_create_qp_ex gets the address
 * just freed. */
static int destroy_and_reuse(struct ibv_qp *qp)
{
    reuse_x->f->qp_mem = qp;
    return ibv_create_qp_ex(&reuse_x->f->vctx.context, &reuse_attr) == qp ? 0 : -1;
}

static int destroy_busy(struct ibv_qp *qp)
{
    (void)qp;
    return EBUSY;
}

/* ibv_destroy_qp forgets the QP before the provider frees it: a QP created meanwhile at the
 * same address stays tracked, its wrappers find it. A failed destroy keeps it tracked. */
static void test_destroy_reuse(void **state)
{
    fx_t *x = *state;
    struct ibv_qp *qp;

    reuse_x = x;
    qpx_attr(&reuse_attr, x->cq);
    qp = ibv_create_qp_ex(&x->f->vctx.context, &reuse_attr);
    assert_non_null(qp);
    assert_int_equal(hcap_qp_destroy(&hcap_g, qp, destroy_busy), EBUSY);
    qpx_send(qp, 1, 100);
    assert_int_equal(poll_all(x->cq), 1);
    assert_int_equal(hcap_qp_destroy(&hcap_g, qp, destroy_and_reuse), 0);
    qpx_send(qp, 2, 200); /* the new QP at the old address */
    assert_int_equal(poll_all(x->cq), 1);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 2);
    assert_int_equal(x->sink.recs[0].size_bytes, 100);
    assert_int_equal(x->sink.recs[1].size_bytes, 200);
    assert_int_not_equal(x->sink.recs[0].qp, x->sink.recs[1].qp);
    assert_true(x->sink.recs[0].t_done_ns != TRACE_TIME_UNKNOWN);
    assert_true(x->sink.recs[1].t_done_ns != TRACE_TIME_UNKNOWN);
    assert_int_equal(hcap_g.dropped, 0);
    hcap_qp_detach(&hcap_g, qp);
    fake_qp_free((fake_qp_t *)qp);
}

/* A QP destroyed where the hooks did not see it, whose address a new QP gets: the new one
 * replaces the old tracking, and a QP that took the old one's number keeps its own. */
static void test_stale_qp_replaced(void **state)
{
    fx_t *x = *state;
    fake_qp_t *a = qp_make(x, 5, 0);
    fake_qp_t *b = qp_make(x, 5, 0); /* a is gone (unseen); b got its number */

    fake_qp_init(a, x->f, x->cq, 6, 0); /* a new QP at a's address */
    assert_non_null(hcap_qp_attach(&hcap_g, &a->qpx.qp_base, 0, 128, NULL));
    assert_int_equal(post(b, 1, 10, IBV_SEND_SIGNALED, IBV_WR_SEND), 0);
    assert_int_equal(post(a, 2, 20, IBV_SEND_SIGNALED, IBV_WR_SEND), 0);
    assert_int_equal(poll_all(x->cq), 2);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 2);
    assert_int_equal(x->sink.recs[0].size_bytes, 10);
    assert_int_equal(x->sink.recs[1].size_bytes, 20);
    assert_int_not_equal(x->sink.recs[0].qp, x->sink.recs[1].qp);
    assert_true(x->sink.recs[0].t_done_ns != TRACE_TIME_UNKNOWN);
    assert_true(x->sink.recs[1].t_done_ns != TRACE_TIME_UNKNOWN);
    hcap_qp_detach(&hcap_g, &a->qpx.qp_base);
    hcap_qp_detach(&hcap_g, &b->qpx.qp_base);
    fake_qp_free(a);
    fake_qp_free(b);
}

/* Start a capture that writes its trace file into dir (no test sink). */
static fake_ctx_t *file_start(const char *dir, const char *ring_events, const char *flush_us)
{
    fake_ctx_t *f = fake_ctx_new();

    setenv("HINTCAP_DIR", dir, 1);
    setenv("HINTCAP_RING_EVENTS", ring_events, 1);
    setenv("HINTCAP_FLUSH_US", flush_us, 1);
    setenv("RDMA_LOW_LATENCY_HINT", "16K", 1);
    setenv("OMPI_COMM_WORLD_RANK", "5", 1);
    hcap_start(&hcap_g, &test_real, NULL, NULL);
    assert_int_equal(atomic_load(&hcap_g.state), HCAP_RUNNING);
    hcap_ctx_attach(&hcap_g, &f->vctx.context);
    return f;
}

/* The summary written next to the trace (<trace>.summary.json), parsed; the file removed. */
static cJSON *summary_load(const char *trace_path)
{
    char path[1400], *text = NULL;
    size_t n = strlen(trace_path) - 4, len = 0;
    cJSON *j;

    snprintf(path, sizeof(path), "%.*s.summary.json", (int)n, trace_path);
    assert_int_equal(hs_read_file(path, &text, &len), HS_OK);
    j = cJSON_Parse(text);
    assert_non_null(j);
    free(text);
    remove(path);
    return j;
}

static double jnum(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static trace_t *file_finish(fake_ctx_t *f, const char *dir, cJSON **summary)
{
    char path[1300], host[64] = "unknown";
    trace_t *tr = NULL;
    cJSON *j;

    hcap_stop(&hcap_g, 0);
    hcap_ctx_detach(&hcap_g, &f->vctx.context);
    gethostname(host, sizeof(host) - 1);
    assert_int_equal(hcap_trace_path(path, sizeof(path), dir, host, (long)getpid(), 5), 0);
    assert_int_equal(trace_load(path, &tr), HS_OK);
    remove(path);
    j = summary_load(path);
    if (summary)
        *summary = j;
    else
        cJSON_Delete(j);
    unsetenv("HINTCAP_DIR");
    unsetenv("HINTCAP_RING_EVENTS");
    unsetenv("RDMA_LOW_LATENCY_HINT");
    unsetenv("OMPI_COMM_WORLD_RANK");
    return tr;
}

/* A capture writing its trace file into a fresh directory (file_start), with one CQ and
 * one QP of number qp_num. */
typedef struct {
    char *dir;
    fake_ctx_t *f;
    fake_cq_t *cq;
    fake_qp_t *q;
} file_fx_t;

static void file_fx_open(file_fx_t *x, const char *ring_events, const char *flush_us,
                         uint32_t qp_num)
{
    x->dir = hs_test_tmpdir();
    x->f = file_start(x->dir, ring_events, flush_us);
    x->cq = fake_cq_new(x->f, 64);
    x->q = fake_qp_new(x->f, x->cq, qp_num, 0);
}

/* Free tr (file_finish's) and what file_fx_open made; the directory removed. */
static void file_fx_close(file_fx_t *x, trace_t *tr)
{
    trace_free(tr);
    fake_qp_free(x->q);
    fake_cq_free(x->cq);
    fake_ctx_free(x->f);
    remove(x->dir);
    free(x->dir);
}

static void test_trace_file(void **state)
{
    file_fx_t x;
    trace_t *tr;
    cJSON *sum = NULL;
    int i;
    (void)state;

    file_fx_open(&x, "4096", "100", 21);
    assert_non_null(hcap_qp_attach(&hcap_g, &x.q->qpx.qp_base, 0, 64, NULL));
    for (i = 0; i < 10; i++)
        post(x.q, (uint64_t)i, 1000 + (uint32_t)i, i % 5 == 4 ? IBV_SEND_SIGNALED : 0,
             IBV_WR_SEND);
    assert_int_equal(poll_all(x.cq), 2);
    setenv("HINTCAP_RUN", "run-1", 0); /* read at start: too late here, so not in this one */
    tr = file_finish(x.f, x.dir, &sum);
    unsetenv("HINTCAP_RUN");
    /* The exit summary beside the trace: what was posted, completed, dropped. */
    assert_int_equal(jnum(sum, "qps_seen"), 1);
    assert_int_equal(jnum(sum, "qps_posting"), 1);
    assert_int_equal(jnum(sum, "wrs_posted"), 10);
    assert_int_equal(jnum(sum, "wrs_completed"), 10);
    assert_int_equal(jnum(sum, "dropped"), 0);
    assert_int_equal(jnum(sum, "rank"), 5);
    assert_int_equal(jnum(sum, "pid"), getpid());
    assert_int_equal(jnum(cJSON_GetObjectItem(sum, "outside"), "completions"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(sum, "run")), "");
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(sum, "trace")), "-r5.hst"));
    cJSON_Delete(sum);
    assert_int_equal(tr->n, 10);
    assert_int_equal(tr->hdr.mode, TRACE_MODE_PRELOAD);
    assert_string_equal(tr->hdr.producer, "libhintcap");
    assert_int_equal(tr->hdr.hint_bytes, 16384);
    assert_int_equal(tr->hdr.hint_source, TRACE_HINT_ENV);
    assert_int_equal(tr->hdr.rank, 5);
    assert_int_equal(tr->hdr.pid, (int64_t)getpid());
    assert_int_equal(tr->hdr.dropped, 0);
    for (i = 0; i < 10; i++) {
        assert_int_equal(tr->recs[i].size_bytes, 1000 + (uint64_t)i);
        assert_true(tr->recs[i].t_done_ns >= tr->recs[i].t_post_ns);
        assert_int_equal(!!(tr->recs[i].flags & TRACE_F_IMPLICIT), i % 5 != 4);
    }
    file_fx_close(&x, tr);
}

/* The writer's CPU from the header's extra.hintcap.writer_cpu; -1 when it is not there. */
static int header_writer_cpu(const trace_t *tr)
{
    cJSON *j = cJSON_Parse(tr->hdr.extra_json ? tr->hdr.extra_json : "{}");
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "hintcap"), "writer_cpu");
    int cpu = cJSON_IsNumber(v) ? v->valueint : -1;

    cJSON_Delete(j);
    return cpu;
}

/* One capture with HINTCAP_WRITER_CPU=cpu: where the writer ran (its affinity: the one CPU
 * it was pinned to, else -1), and what the header says. Every WR is still recorded. */
static void writer_cpu_run(const char *cpu, int *ran_on, int *in_header)
{
    file_fx_t x;
    cpu_set_t set;
    trace_t *tr;

    setenv("HINTCAP_WRITER_CPU", cpu, 1);
    file_fx_open(&x, "4096", "100", 23);
    unsetenv("HINTCAP_WRITER_CPU");
    assert_int_equal(pthread_getaffinity_np(hcap_g.writer, sizeof(set), &set), 0);
    *ran_on = -1;
    for (int c = 0; CPU_COUNT(&set) == 1 && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            *ran_on = c;
    assert_non_null(hcap_qp_attach(&hcap_g, &x.q->qpx.qp_base, 0, 64, NULL));
    for (int i = 0; i < 8; i++)
        post(x.q, (uint64_t)i, 64, i == 7 ? IBV_SEND_SIGNALED : 0, IBV_WR_RDMA_WRITE);
    assert_int_equal(poll_all(x.cq), 1);
    tr = file_finish(x.f, x.dir, NULL);
    assert_int_equal(tr->n, 8);
    *in_header = header_writer_cpu(tr);
    file_fx_close(&x, tr);
}

/* HINTCAP_WRITER_CPU puts the writer on that CPU from its start and says so in the header;
 * a CPU the process cannot use leaves it on the process's CPUs, with no writer_cpu. */
static void test_writer_cpu(void **state)
{
    cpu_set_t mine;
    int first = -1, ran_on, in_header;
    char cpu[16];
    (void)state;

    assert_int_equal(sched_getaffinity(0, sizeof(mine), &mine), 0);
    for (int c = CPU_SETSIZE - 1; c >= 0; c--)
        if (CPU_ISSET(c, &mine))
            first = c; /* the lowest CPU this process may use */
    snprintf(cpu, sizeof(cpu), "%d", first);
    writer_cpu_run(cpu, &ran_on, &in_header);
    assert_int_equal(ran_on, first);
    assert_int_equal(in_header, first);
    snprintf(cpu, sizeof(cpu), "%d", CPU_SETSIZE - 1); /* no host here has 1024 CPUs */
    writer_cpu_run(cpu, &ran_on, &in_header);
    assert_int_equal(in_header, -1);
    assert_int_equal(hcap_g.writer_cpu, -1);
}

static void test_overflow_counted(void **state)
{
    file_fx_t x;
    trace_t *tr;
    int i;
    (void)state;

    /* 16 events per thread and a writer that sleeps 1 s: most of the burst cannot fit. */
    file_fx_open(&x, "16", "1000000", 22);
    usleep(20000); /* let the writer reach its sleep */
    assert_non_null(hcap_qp_attach(&hcap_g, &x.q->qpx.qp_base, 0, 64, NULL));
    for (i = 0; i < 100; i++)
        post(x.q, (uint64_t)i, 64, 0, IBV_WR_RDMA_WRITE);
    tr = file_finish(x.f, x.dir, NULL);
    assert_true(tr->hdr.dropped > 0);
    assert_int_equal(tr->n + tr->hdr.dropped, 100); /* every WR is recorded or counted */
    file_fx_close(&x, tr);
}

/* A process that dies of a fatal signal still leaves its trace: the handler has the writer
 * flush and close it before the signal's default action runs. */
static void test_crash_keeps_trace(void **state)
{
    char *dir = hs_test_tmpdir();
    int status = 0, i;
    pid_t pid;
    trace_t *tr;
    cJSON *sum;
    (void)state;

    pid = fork();
    if (pid == 0) { /* no cmocka asserts here: a failure must not run the suite twice */
        fake_ctx_t *f = fake_ctx_new();
        fake_cq_t *cq = fake_cq_new(f, 64);
        fake_qp_t *q = fake_qp_new(f, cq, 23, 0);

        atomic_store(&hcap_g.state, HCAP_OFF); /* fork disabled it: this child starts anew */
        setenv("HINTCAP_DIR", dir, 1);
        setenv("OMPI_COMM_WORLD_RANK", "5", 1);
        hcap_start(&hcap_g, &test_real, NULL, NULL);
        hcap_ctx_attach(&hcap_g, &f->vctx.context);
        if (!hcap_running(&hcap_g) || !hcap_qp_attach(&hcap_g, &q->qpx.qp_base, 0, 64, NULL))
            _exit(3);
        for (i = 0; i < 40; i++)
            post(q, (uint64_t)i, 512, IBV_SEND_SIGNALED, IBV_WR_SEND);
        poll_all(cq);
        abort(); /* never returns */
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT); /* the crash stays one */
    {
        char path[1300], host[64] = "unknown";

        gethostname(host, sizeof(host) - 1);
        assert_int_equal(hcap_trace_path(path, sizeof(path), dir, host, (long)pid, 5), 0);
        assert_int_equal(trace_load(path, &tr), HS_OK);
        assert_int_equal(tr->n, 40);
        assert_int_equal(tr->recs[39].size_bytes, 512);
        trace_free(tr);
        remove(path);
        sum = summary_load(path); /* the signal's final flush writes the summary too */
        assert_int_equal(jnum(sum, "wrs_posted"), 40);
        assert_int_equal(jnum(sum, "wrs_completed"), 40);
        cJSON_Delete(sum);
    }
    remove(dir);
    free(dir);
}

/* SIGKILL leaves no chance to flush: the blocks already written to the temporary file stay
 * valid and `trace salvage` recovers them (the torn tail is dropped). */
static void test_sigkill_salvage(void **state)
{
    char *dir = hs_test_tmpdir(), path[1300], tmp[1400], out[1400], host[64] = "unknown";
    int status = 0, i;
    pid_t pid;
    trace_t *tr;
    (void)state;

    pid = fork();
    if (pid == 0) {
        fake_ctx_t *f = fake_ctx_new();
        fake_cq_t *cq = fake_cq_new(f, 64);
        fake_qp_t *q = fake_qp_new(f, cq, 24, 0);

        atomic_store(&hcap_g.state, HCAP_OFF);
        setenv("HINTCAP_DIR", dir, 1);
        setenv("HINTCAP_FLUSH_US", "100", 1);
        setenv("OMPI_COMM_WORLD_RANK", "5", 1);
        hcap_start(&hcap_g, &test_real, NULL, NULL);
        hcap_ctx_attach(&hcap_g, &f->vctx.context);
        if (!hcap_running(&hcap_g) || !hcap_qp_attach(&hcap_g, &q->qpx.qp_base, 0, 64, NULL))
            _exit(3);
        for (i = 0; i < 20000; i++) {
            post(q, (uint64_t)i, 256, IBV_SEND_SIGNALED, IBV_WR_SEND);
            poll_all(cq);
        }
        usleep(300000); /* the writer drains and writes the full blocks */
        raise(SIGKILL);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    gethostname(host, sizeof(host) - 1);
    assert_int_equal(hcap_trace_path(path, sizeof(path), dir, host, (long)pid, 5), 0);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)pid);
    snprintf(out, sizeof(out), "%s/salvaged.hst", dir);
    assert_int_equal(access(path, F_OK), -1); /* never completed */
    assert_int_equal(hs_test_run(NULL, "%s trace validate '%s'", hs_test_bin(), tmp), 1);
    assert_int_equal(hs_test_run(NULL, "%s trace salvage '%s' -o '%s'", hs_test_bin(), tmp, out),
                     0);
    assert_int_equal(trace_load(out, &tr), HS_OK);
    assert_true(tr->n >= 4096 && tr->n <= 20000); /* at least one whole block came through */
    for (i = 0; i < (int)tr->n; i++)
        assert_int_equal(tr->recs[i].size_bytes, 256);
    trace_free(tr);
    remove(out);
    remove(tmp);
    remove(dir);
    free(dir);
}

/* A thread's ring after its destructor ran: the writer frees a dead ring once drained, so a
 * destructor of a key made later (one that destroys a QP, say) must get a ring of its own,
 * not the dead one (a use after free once the writer had swept it). */
static pthread_key_t late_key;

typedef struct {
    hcap_ring_t *first, *late;
    int first_dead, rounds;
} late_t;

static void late_dtor(void *arg)
{
    late_t *l = arg;

    if (!atomic_load(&l->first->dead) && ++l->rounds < 4) { /* libhintcap's has not run */
        pthread_setspecific(late_key, l);
        return;
    }
    l->first_dead = atomic_load(&l->first->dead);
    l->late = hcap_ring_get(&hcap_g);
}

static void *late_thread(void *arg)
{
    late_t *l = arg;

    l->first = hcap_ring_get(&hcap_g);
    pthread_setspecific(late_key, l);
    return NULL;
}

static void test_ring_after_thread_exit(void **state)
{
    late_t l = {0};
    pthread_t t;
    (void)state;

    assert_int_equal(pthread_key_create(&late_key, late_dtor), 0);
    assert_int_equal(pthread_create(&t, NULL, late_thread, &l), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_non_null(l.first);
    assert_int_equal(l.first_dead, 1);
    assert_non_null(l.late);
    assert_ptr_not_equal(l.late, l.first);
    pthread_key_delete(late_key);
}

/* A child forked while a capture runs has no writer thread: a fatal signal there goes at
 * once (it waited 3 s for a flush by the parent's writer, which never comes). The capture
 * runs in a child of its own (its signal handlers stay out of the suite's process), which
 * exits 0 when its own child died of the signal within 2 s. */
static void test_fork_child_signal(void **state)
{
    char *tmp = hs_test_tmpdir(), dir[1024], cmd[1200];
    int status = 0;
    pid_t pid;
    (void)state;

    snprintf(dir, sizeof(dir), "%s", tmp);
    free(tmp); /* the children hold nothing of the test's own (valgrind's leak check) */
    pid = fork();
    if (pid == 0) { /* no cmocka asserts here: a failure must not run the suite twice */
        atomic_store(&hcap_g.state, HCAP_OFF); /* fork disabled it: this child starts anew */
        setenv("HINTCAP_DIR", dir, 1);
        hcap_start(&hcap_g, &test_real, NULL, NULL);
        if (!hcap_running(&hcap_g))
            _exit(3);
        uint64_t t0 = hs_now_ns();
        pid_t c = fork();
        if (c == 0) {
            raise(SIGTERM);
            _exit(0);
        }
        int cs = 0;
        if (c < 0 || waitpid(c, &cs, 0) != c)
            _exit(4);
        double s = (double)(hs_now_ns() - t0) * 1e-9;
        hcap_stop(&hcap_g, 1);
        if (!WIFSIGNALED(cs) || WTERMSIG(cs) != SIGTERM)
            _exit(5);
        _exit(s < 2.0 ? 0 : 6);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* Provider-direct posting: completions polled through the hooks for a tracked QP that
 * posted nothing through them, and for a QP number no hook ever saw, are counted apart
 * (not as dropped) with their QP numbers; receive completions are not. */
static void test_summary_outside(void **state)
{
    fx_t *x = *state;
    fake_qp_t *q = qp_make(x, 7, 0), *quiet = qp_make(x, 8, 0);
    const hcap_summary_t *s = &hcap_g.summary;
    int i;

    for (i = 0; i < 5; i++)
        assert_int_equal(post(q, (uint64_t)i, 64, IBV_SEND_SIGNALED, IBV_WR_SEND), 0);
    for (i = 0; i < 3; i++)
        fake_cq_push(x->cq, 8, 500 + (uint64_t)i, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
    for (i = 0; i < 2; i++)
        fake_cq_push(x->cq, 99, 600 + (uint64_t)i, IBV_WC_SUCCESS, IBV_WC_SEND);
    fake_cq_push(x->cq, 99, 700, IBV_WC_SUCCESS, IBV_WC_RECV);
    assert_int_equal(poll_all(x->cq), 11);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(x->sink.n, 5);
    assert_int_equal(s->qps_seen, 2);
    assert_int_equal(s->qps_posting, 1);
    assert_int_equal(s->wrs_posted, 5);
    assert_int_equal(s->wrs_completed, 5);
    assert_int_equal(s->dropped, 0);
    assert_int_equal(s->outside_comps, 5);
    assert_int_equal(s->outside_qps, 2);
    assert_int_equal(s->outside_n, 2);
    assert_true((s->outside_qpn[0] == 8 && s->outside_qpn[1] == 99) ||
                (s->outside_qpn[0] == 99 && s->outside_qpn[1] == 8));
    assert_int_equal(s->outside_more, 0);
    fake_qp_free(quiet);
    fake_qp_free(q);
}

static void test_unwritable_dir(void **state)
{
    char *dir = hs_test_tmpdir(), *text = NULL;
    hs_test_stderr_t cap;
    int lines = 0;
    const char *p;
    (void)state;

    hs_test_stderr_begin(&cap);
    setenv("HINTCAP_DIR", "/proc/hintcap-cannot-exist/x", 1);
    hcap_start(&hcap_g, &test_real, NULL, NULL);
    text = hs_test_stderr_end(&cap);
    assert_int_equal(atomic_load(&hcap_g.state), HCAP_DISABLED); /* the app goes on */
    for (p = text; (p = strstr(p, "libhintcap: warning")) != NULL; p++)
        lines++;
    assert_int_equal(lines, 1);
    assert_non_null(strstr(text, "/proc/hintcap-cannot-exist/x"));
    free(text);
    atomic_store(&hcap_g.state, HCAP_OFF);
    unsetenv("HINTCAP_DIR");
    remove(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_signalled_and_cold, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_unsignalled_implicit, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_sig_all_and_chain_failure, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_error_completion, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_destroy_pending, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qp_ex_and_cq_ex, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qpx_map_full, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_untracked_chain_counted, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_qps_seen_tracked_only, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_destroy_reuse, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_stale_qp_replaced, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_summary_outside, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_ring_after_thread_exit, fx_setup, fx_teardown),
        cmocka_unit_test(test_fork_child_signal),
        cmocka_unit_test(test_trace_file),
        cmocka_unit_test(test_writer_cpu),
        cmocka_unit_test(test_overflow_counted),
        cmocka_unit_test(test_crash_keeps_trace),
        cmocka_unit_test(test_sigkill_salvage),
        cmocka_unit_test(test_unwritable_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
