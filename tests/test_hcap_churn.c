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

/* When set, query_qp (a QP adopted on the post path) waits here: armed for two threads,
 * both are inside the adoption at once. adopt_waiting: threads that reached it. */
static pthread_barrier_t *adopt_barrier;
static _Atomic int adopt_waiting;

static int query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                    struct ibv_qp_init_attr *init)
{
    (void)mask;
    memset(attr, 0, sizeof(*attr));
    memset(init, 0, sizeof(*init));
    init->sq_sig_all = ((fake_qp_t *)qp)->sig_all;
    init->cap.max_send_wr = 64;
    if (adopt_barrier) {
        atomic_fetch_add(&adopt_waiting, 1);
        pthread_barrier_wait(adopt_barrier);
    }
    return 0;
}

static const hcap_real_t churn_real = {.query_qp = query_qp, .qp_to_qp_ex = to_qp_ex};

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

/* The heap's growth since before, once under limit or after 2 s: the writer frees a
 * destroyed QP's matcher entry two passes over the rings after its end (HINTCAP_FLUSH_US
 * apart when idle), so it falls for a while after the last QP. */
static long long churn_growth_within(long long before, long long limit)
{
    struct timespec ts = {0, 1000000};
    long long g = atomic_load(&heap_live) - before;
    int i;

    for (i = 0; i < 2000 && g >= limit; i++) {
        nanosleep(&ts, NULL);
        g = atomic_load(&heap_live) - before;
    }
    return g;
}

/* What a destroyed QP leaves behind: nothing. Its hcap_qp_t, wr_* batch, matcher queues
 * (some 4 KiB here) and matcher entry are freed, its figures folded into the summary's:
 * the heap ends within a constant of where it began, however many QPs came and went, and
 * every QP still counts as seen and posting. */
static void test_destroyed_qps_freed(void **state)
{
    churn_t *c = *state;
    const uint64_t n = 20000;
    long long before, growth;
    uint64_t i;

    for (i = 0; i < 1000; i++) /* the thread's ring, the matcher's first tables */
        churn_cycle(c);
    churn_drain();
    before = atomic_load(&heap_live);
    for (i = 0; i < n; i++)
        churn_cycle(c);
    churn_drain();
    growth = churn_growth_within(before, 64 * 1024);
    print_message("heap growth over %llu QPs created and destroyed: %lld bytes (%.1f a QP)\n",
                  (unsigned long long)n, growth, (double)growth / (double)n);
    assert_true(growth < 64 * 1024);
    hcap_stop(&hcap_g, 0);
    assert_int_equal(c->recs, 1000 + n);
    assert_int_equal(hcap_g.dropped, 0);
    assert_int_equal(hcap_g.summary.qps_seen, 1000 + n);
    assert_int_equal(hcap_g.summary.qps_posting, 1000 + n);
    assert_int_equal(hcap_g.summary.outside_qps, 0);
}

/* 100,000 QPs, more than the QP maps' 65,536 slots, created and destroyed one after the
 * other: the maps end as they began, and take QPs still. */
static void test_map_churn(void **state)
{
    churn_t *c = *state;
    uint64_t qps = hcap_map_used(&hcap_g.qps), qpns = hcap_map_used(&hcap_g.qpns), i;
    struct ibv_qp *qp;

    for (i = 0; i < 100000; i++) {
        qp = churn_qp(c);
        assert_non_null(hcap_qp_attach(&hcap_g, qp, 0, 16, NULL));
        hcap_qp_detach(&hcap_g, qp);
    }
    print_message("QP map slots used: %llu before, %llu after; QP number map: %llu, %llu\n",
                  (unsigned long long)qps, (unsigned long long)hcap_map_used(&hcap_g.qps),
                  (unsigned long long)qpns, (unsigned long long)hcap_map_used(&hcap_g.qpns));
    assert_int_equal(hcap_map_used(&hcap_g.qps), qps);
    assert_int_equal(hcap_map_used(&hcap_g.qpns), qpns);
    qp = churn_qp(c);
    assert_non_null(hcap_qp_attach(&hcap_g, qp, 0, 16, NULL));
    hcap_qp_detach(&hcap_g, qp);
}

typedef struct {
    struct ibv_qp *qp;
    uint64_t wr_id;
} poster_t;

static void *post_one(void *arg)
{
    poster_t *p = arg;
    struct ibv_sge sge = {.addr = 0x1000, .length = 8, .lkey = 1};
    struct ibv_send_wr wr, *bad = NULL;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = p->wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    return ibv_post_send(p->qp, &wr, &bad) == 0 ? p : NULL;
}

typedef struct {
    trace_rec_t recs[2];
    size_t n;
} two_t;

static void sink_two(void *arg, const trace_rec_t *recs, size_t n)
{
    two_t *t = arg;

    for (size_t i = 0; i < n && t->n < 2; i++)
        t->recs[t->n++] = recs[i];
}

/* Two threads post the first WRs of a QP created outside the wrappers: both miss it and
 * adopt it at once, and it is tracked once (one QP index, both WRs completed). The second
 * thread starts when the first is in the adoption, past the provider (the fake provider is
 * not thread-safe, and this keeps the provider's order the order of the posts' stamps). */
static void test_adopt_race(void **state)
{
    churn_t *c = *state;
    pthread_barrier_t barrier;
    poster_t p[2];
    pthread_t th[2];
    struct ibv_wc wc[2];
    two_t two = {.n = 0};
    struct timespec ts = {0, 100000};
    fake_qp_t *q = fake_qp_new(c->f, c->cq, 77, 1);
    int i;

    hcap_stop(&hcap_g, 0); /* again, with a sink that keeps the records */
    hcap_start(&hcap_g, &churn_real, sink_two, &two);
    assert_non_null(q);
    assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
    adopt_barrier = &barrier;
    atomic_store(&adopt_waiting, 0);
    for (i = 0; i < 2; i++) {
        p[i].qp = &q->qpx.qp_base;
        p[i].wr_id = (uint64_t)i + 1;
        assert_int_equal(pthread_create(&th[i], NULL, post_one, &p[i]), 0);
        while (i == 0 && atomic_load(&adopt_waiting) == 0)
            nanosleep(&ts, NULL);
    }
    for (i = 0; i < 2; i++) {
        void *ok;

        assert_int_equal(pthread_join(th[i], &ok), 0);
        assert_non_null(ok);
    }
    adopt_barrier = NULL;
    pthread_barrier_destroy(&barrier);
    assert_int_equal(ibv_poll_cq(q->qpx.qp_base.send_cq, 2, wc), 2);
    hcap_stop(&hcap_g, 0);
    /* after the stop: its end, in this ring, could reach the matcher before the posts */
    hcap_qp_detach(&hcap_g, &q->qpx.qp_base);
    assert_int_equal(two.n, 2);
    print_message("QP indexes of the two WRs: %u, %u; QPs seen: %llu\n", two.recs[0].qp,
                  two.recs[1].qp, (unsigned long long)hcap_g.summary.qps_seen);
    assert_int_equal(two.recs[0].qp, two.recs[1].qp);
    assert_true(two.recs[0].t_done_ns != TRACE_TIME_UNKNOWN);
    assert_true(two.recs[1].t_done_ns != TRACE_TIME_UNKNOWN);
    assert_int_equal(hcap_g.summary.qps_seen, 1);
    fake_qp_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_destroyed_qps_freed, churn_setup, churn_teardown),
        cmocka_unit_test_setup_teardown(test_map_churn, churn_setup, churn_teardown),
        cmocka_unit_test_setup_teardown(test_adopt_race, churn_setup, churn_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
