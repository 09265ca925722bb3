/* test_hcap_churn.c - libhintcap under QP churn, as in a server that makes one QP per
 * client: QPs created and destroyed by the hundred thousand through the fake provider,
 * each at its own address. What libhintcap keeps per destroyed QP is measured with its
 * allocations counted (this executable links with -Wl,--wrap for the allocator, which
 * redirects the calls of the statically linked hs_hcap and the fake). */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/preload/hcap.h"
#include "tests/hs_test.h"
#include "tests/test_hcap_fake.h"

/* ---- the allocator, counted: bytes live (malloc_usable_size of each block) ---- */

static _Atomic long long heap_live;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void __wrap_free(void *p);

static void *counted(void *p)
{
    if (p)
        atomic_fetch_add(&heap_live, (long long)malloc_usable_size(p));
    return p;
}

void *__wrap_malloc(size_t n)
{
    return counted(__real_malloc(n));
}

void *__wrap_calloc(size_t k, size_t n)
{
    return counted(__real_calloc(k, n));
}

void *__wrap_realloc(void *p, size_t n)
{
    size_t old = p ? malloc_usable_size(p) : 0;
    void *q = __real_realloc(p, n);

    if (q || n == 0)
        atomic_fetch_sub(&heap_live, (long long)old);
    return counted(q);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    int rc = __real_posix_memalign(p, align, n);

    if (rc == 0)
        counted(*p);
    return rc;
}

void __wrap_free(void *p)
{
    if (p)
        atomic_fetch_sub(&heap_live, (long long)malloc_usable_size(p));
    __real_free(p);
}

/* ---- the fixture ---- */

#define CHURN_ARENA_QPS 100000

typedef struct {
    fake_ctx_t *f;
    fake_cq_t *cq;
    char *arena;    /* QP i lives at arena + 8 i: a new address each, little memory */
    uint64_t recs;  /* records the sink got */
    uint64_t next;  /* the next arena position */
} churn_t;

static void sink_count(void *arg, const trace_rec_t *recs, size_t n)
{
    churn_t *c = arg;

    (void)recs;
    c->recs += n;
}

static struct ibv_qp_ex *to_qp_ex(struct ibv_qp *qp)
{
    return (struct ibv_qp_ex *)qp; /* the fake's QP starts with its ibv_qp_ex */
}

static const hcap_real_t churn_real = {.qp_to_qp_ex = to_qp_ex};

static int churn_setup(void **state)
{
    churn_t *c = calloc(1, sizeof(*c));

    setenv("HINTCAP_FLUSH_US", "100", 1);
    setenv("HINTCAP_BLOCK", "1", 1); /* every event, a QP's end included, reaches the matcher */
    unsetenv("HINTCAP_RING_EVENTS");
    c->f = fake_ctx_new();
    c->cq = fake_cq_new(c->f, 64);
    c->arena = calloc(1, sizeof(fake_qp_t) + (size_t)CHURN_ARENA_QPS * 8);
    assert_true(c->f && c->cq && c->arena);
    hcap_start(&hcap_g, &churn_real, sink_count, c);
    assert_true(hcap_running(&hcap_g));
    hcap_ctx_attach(&hcap_g, &c->f->vctx.context);
    *state = c;
    return 0;
}

static int churn_teardown(void **state)
{
    churn_t *c = *state;

    hcap_stop(&hcap_g, 0);
    hcap_ctx_detach(&hcap_g, &c->f->vctx.context);
    free(c->arena);
    fake_cq_free(c->cq);
    fake_ctx_free(c->f);
    free(c);
    return 0;
}

/* The next QP in the arena, built by the fake. */
static struct ibv_qp *churn_qp(churn_t *c)
{
    fake_qp_t *q = (fake_qp_t *)(c->arena + (c->next % CHURN_ARENA_QPS) * 8);

    fake_qp_init(q, c->f, c->cq, (uint32_t)(c->next % CHURN_ARENA_QPS) + 1, 1);
    c->next++;
    return &q->qpx.qp_base;
}

/* One client: an extended QP (so with a wr_* batch) created, one signalled send posted and
 * polled, the QP destroyed. */
static void churn_cycle(churn_t *c)
{
    struct ibv_qp_init_attr_ex a;
    struct ibv_qp *qp = churn_qp(c);
    struct ibv_sge sge = {.addr = 0x1000, .length = 64, .lkey = 1};
    struct ibv_send_wr wr, *bad = NULL;
    struct ibv_wc wc;

    memset(&a, 0, sizeof(a));
    a.cap.max_send_wr = 64;
    a.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a.send_ops_flags = IBV_QP_EX_WITH_SEND;
    assert_non_null(hcap_qp_attach(&hcap_g, qp, 1, 64, &a));
    memset(&wr, 0, sizeof(wr));
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    assert_int_equal(ibv_post_send(qp, &wr, &bad), 0);
    assert_int_equal(ibv_poll_cq(qp->send_cq, 1, &wc), 1);
    hcap_qp_detach(&hcap_g, qp);
}

/* Wait until the writer has taken every event of this thread (no assert on time). */
static void churn_drain(void)
{
    struct timespec ts = {0, 1000000};

    while (atomic_load(&hcap_t_ring->head) != atomic_load(&hcap_t_ring->tail))
        nanosleep(&ts, NULL);
}

/* What a destroyed QP leaves behind: its hcap_qp_t, wr_* batch and matcher queues (some
 * 4 KiB here) are freed; only the matcher's counters of the QP for the exit summary stay
 * (under 100 bytes, their table grown by doubling: at most 256 bytes a QP on average). */
static void test_destroyed_qps_freed(void **state)
{
    churn_t *c = *state;
    const uint64_t n = 20000;
    long long before, after;
    uint64_t i;

    for (i = 0; i < 1000; i++) /* the thread's ring, the matcher's first tables */
        churn_cycle(c);
    churn_drain();
    before = atomic_load(&heap_live);
    for (i = 0; i < n; i++)
        churn_cycle(c);
    churn_drain();
    after = atomic_load(&heap_live);
    print_message("heap growth over %llu QPs created and destroyed: %lld bytes (%.0f a QP)\n",
                  (unsigned long long)n, after - before, (double)(after - before) / (double)n);
    assert_true(after - before < (long long)(n * 256));
    hcap_stop(&hcap_g, 0);
    assert_int_equal(c->recs, 1000 + n);
    assert_int_equal(hcap_g.dropped, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_destroyed_qps_freed, churn_setup, churn_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
