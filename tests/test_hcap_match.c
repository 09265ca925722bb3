/* test_hcap_match.c - libhintcap's writer-side matching (posts to completions), its
 * per-thread ring, its lock-free map and its configuration (hint precedence, config file,
 * rank, trace names). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/preload/hcap_config.h"
#include "capture/preload/hcap_map.h"
#include "capture/preload/hcap_match.h"
#include "capture/preload/hcap_ring.h"
#include "tests/hs_test.h"

typedef struct {
    trace_rec_t recs[256];
    size_t n;
    size_t calls, most; /* emit calls, the most records one call gave */
} sink_t;

static void sink_rec(void *arg, const trace_rec_t *recs, size_t n)
{
    sink_t *s = arg;

    assert_true(n >= 1);
    s->calls++;
    s->most = n > s->most ? n : s->most;
    for (size_t i = 0; i < n && s->n < 256; i++)
        s->recs[s->n++] = recs[i];
}

static hcap_ev_t ev(uint8_t kind, uint64_t t, uint32_t qp, uint64_t wr_id, uint16_t flags)
{
    hcap_ev_t e;

    memset(&e, 0, sizeof(e));
    e.kind = kind;
    e.t_ns = t;
    e.qp = qp;
    e.wr_id = wr_id;
    e.flags = flags;
    e.size_bytes = wr_id * 10;
    return e;
}

static void feed(hcap_match_t *m, hcap_ev_t e)
{
    assert_int_equal(hcap_match_event(m, &e), HS_OK);
}

static void test_match_orders(void **state)
{
    sink_t s = {.n = 0};
    hcap_match_t *m;
    (void)state;

    assert_int_equal(hcap_match_new(1, sink_rec, &s, &m), HS_OK);
    /* A completion seen before its post (another thread's ring) waits for it. */
    feed(m, ev(HCAP_EV_COMP, 50, 0, 2, 0));
    assert_int_equal(s.n, 0);
    feed(m, ev(HCAP_EV_POST, 10, 0, 1, 0));
    assert_int_equal(s.n, 0);
    feed(m, ev(HCAP_EV_POST, 20, 0, 2, TRACE_F_SIGNALED));
    assert_int_equal(s.n, 2);
    assert_int_equal(s.recs[0].t_done_ns, 50);
    assert_true(s.recs[0].flags & TRACE_F_IMPLICIT);
    assert_true(s.recs[0].flags & TRACE_F_COLD); /* cold_n = 1: only the first */
    assert_false(s.recs[1].flags & TRACE_F_COLD);
    assert_int_equal(s.recs[1].size_bytes, 20);
    /* Posts of one QP from two threads, drained out of order, are put back in order. */
    feed(m, ev(HCAP_EV_POST, 70, 1, 4, TRACE_F_SIGNALED));
    feed(m, ev(HCAP_EV_POST, 60, 1, 3, TRACE_F_SIGNALED));
    feed(m, ev(HCAP_EV_COMP, 80, 1, 3, 0));
    assert_int_equal(s.n, 3);
    assert_int_equal(s.recs[2].t_post_ns, 60);
    /* A completion whose post was lost (a later post exists) is unmatched, not misplaced. */
    feed(m, ev(HCAP_EV_COMP, 65, 1, 9, 0));
    assert_int_equal(hcap_match_unmatched(m), 1);
    feed(m, ev(HCAP_EV_COMP, 90, 1, 4, 0));
    assert_int_equal(s.n, 4);
    assert_int_equal(s.recs[3].t_done_ns, 90);
    /* What is left at the end has no completion time. */
    feed(m, ev(HCAP_EV_POST, 100, 2, 5, 0));
    hcap_match_flush(m);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.recs[4].t_done_ns, TRACE_TIME_UNKNOWN);
    assert_int_equal(s.recs[4].qp, 2);
    hcap_match_free(m);
}

typedef struct {
    uint64_t recs, qps, posted, comps;
} retired_t;

static void sink_count(void *arg, const trace_rec_t *recs, size_t n)
{
    (void)recs;
    ((retired_t *)arg)->recs += n;
}

static void on_retire(void *arg, const hcap_match_qp_t *q)
{
    retired_t *r = arg;

    r->qps++;
    r->posted += q->posted;
    r->comps += q->comps;
}

/* QPs made and destroyed by the hundred thousand, 100 to a pass over the rings: the
 * matcher's memory stays that of a pass's QPs, and each QP's figures reach the retire
 * callback once, with the events that came after its end in the same pass (another
 * thread's ring drained later) and in the next one. */
static void test_match_churn_bounded(void **state)
{
    retired_t r = {0};
    hcap_match_t *m;
    size_t most = 0;
    uint32_t qp;
    (void)state;

    assert_int_equal(hcap_match_new(0, sink_count, &r, &m), HS_OK);
    hcap_match_on_retire(m, on_retire, &r);
    for (qp = 0; qp < 100000; qp++) {
        uint64_t t = (uint64_t)qp * 10;

        feed(m, ev(HCAP_EV_POST, t + 1, qp, 1, TRACE_F_SIGNALED));
        feed(m, ev(HCAP_EV_POST, t + 2, qp, 2, 0));
        feed(m, ev(HCAP_EV_GONE, t + 4, qp, 0, 0));
        feed(m, ev(HCAP_EV_COMP, t + 3, qp, 1, 0)); /* drained after the end */
        if (qp % 100 == 99) {
            if (qp >= 200)
                feed(m, ev(HCAP_EV_COMP, t, qp - 150, 2, 0)); /* a pass later */
            hcap_match_sweep(m);
            if (hcap_match_mem_bytes(m) > most)
                most = hcap_match_mem_bytes(m);
        }
    }
    hcap_match_sweep(m);
    hcap_match_sweep(m);
    print_message("matcher: at most %zu bytes over 100000 QPs, %zu at the end\n", most,
                  hcap_match_mem_bytes(m));
    assert_true(most < 1024 * 1024); /* 200 QPs with a waiting completion: not 100000 */
    assert_true(hcap_match_mem_bytes(m) < 4096);
    assert_int_equal(r.qps, 100000);
    assert_int_equal(r.posted, 200000);
    assert_int_equal(r.comps, 100000 + 998);
    assert_int_equal(r.recs, 200000);
    hcap_match_free(m);
}

/* A completion closing a long run of unsignalled WRs: every one of them, in post order, in
 * more than one call to emit (each call bounded); an error completion closes the run up to
 * its own WR, signalled or not. */
static void test_match_long_run(void **state)
{
    sink_t s = {.n = 0};
    hcap_match_t *m;
    uint64_t i;
    (void)state;

    assert_int_equal(hcap_match_new(0, sink_rec, &s, &m), HS_OK);
    for (i = 1; i <= 150; i++)
        feed(m, ev(HCAP_EV_POST, 100 + i, 0, i, i == 150 ? TRACE_F_SIGNALED : 0));
    feed(m, ev(HCAP_EV_COMP, 1000, 0, 150, 0));
    assert_int_equal(s.n, 150);
    assert_true(s.calls >= 3);
    assert_true(s.most <= 64);
    for (i = 0; i < 150; i++) {
        assert_int_equal(s.recs[i].t_post_ns, 101 + i);
        assert_int_equal(s.recs[i].t_done_ns, 1000);
        assert_int_equal(s.recs[i].size_bytes, (i + 1) * 10);
        assert_int_equal(!!(s.recs[i].flags & TRACE_F_IMPLICIT), i < 149);
        assert_int_equal(s.recs[i].status, 0);
    }
    /* an error completion (status 5) for the 3rd of 4 unsignalled WRs */
    for (i = 1; i <= 4; i++)
        feed(m, ev(HCAP_EV_POST, 2000 + i, 0, 200 + i, 0));
    hcap_ev_t c = ev(HCAP_EV_COMP, 3000, 0, 203, 0);
    c.op = 5;
    feed(m, c);
    assert_int_equal(s.n, 153);
    assert_int_equal(s.recs[152].t_post_ns, 2003);
    assert_int_equal(s.recs[152].status, 5);
    assert_true(s.recs[152].flags & TRACE_F_ERROR);
    assert_false(s.recs[152].flags & TRACE_F_IMPLICIT);
    assert_true(s.recs[151].flags & TRACE_F_IMPLICIT);
    assert_int_equal(s.recs[151].status, 0);
    hcap_match_flush(m);
    assert_int_equal(s.n, 154);
    assert_int_equal(s.recs[153].t_post_ns, 2004);
    assert_int_equal(s.recs[153].t_done_ns, TRACE_TIME_UNKNOWN);
    hcap_match_free(m);
}

static void test_ring_drops(void **state)
{
    hcap_ring_t *r = hcap_ring_new(4, 0);
    hcap_ev_t *ev;
    uint64_t i, slot;
    (void)state;

    assert_non_null(r);
    for (i = 0; i < 20; i++) {
        slot = hcap_ring_reserve(r, 1);
        if (slot == UINT64_MAX)
            continue;
        hcap_ring_slot(r, slot)->wr_id = i;
        hcap_ring_publish(r, 1);
    }
    assert_int_equal(atomic_load(&r->dropped), 4); /* 16 fit, 4 counted */
    assert_int_equal(hcap_ring_peek(r, &ev, 32), 16);
    assert_int_equal(ev[15].wr_id, 15);
    assert_int_equal(hcap_ring_reserve(r, 1), UINT64_MAX); /* still full: not released */
    hcap_ring_release(r, 10);
    for (i = 20; i < 26; i++) { /* 10 free: 6 more, at the ring's start (it wraps) */
        slot = hcap_ring_reserve(r, 1);
        assert_int_not_equal(slot, UINT64_MAX);
        hcap_ring_slot(r, slot)->wr_id = i;
        hcap_ring_publish(r, 1);
    }
    /* in place: the 6 left at the ring's end, then the 6 that wrapped to its start */
    assert_int_equal(hcap_ring_peek(r, &ev, 32), 6);
    assert_int_equal(ev[0].wr_id, 10);
    assert_int_equal(ev[5].wr_id, 15);
    hcap_ring_release(r, 6);
    assert_int_equal(hcap_ring_peek(r, &ev, 3), 3); /* and max */
    assert_int_equal(ev[0].wr_id, 20);
    hcap_ring_release(r, 3);
    assert_int_equal(hcap_ring_peek(r, &ev, 32), 3);
    assert_int_equal(ev[2].wr_id, 25);
    hcap_ring_release(r, 3);
    assert_int_equal(hcap_ring_peek(r, &ev, 32), 0);
    free(r);
}

static void test_map(void **state)
{
    hcap_map_t m;
    int a, b;
    uint64_t k;
    (void)state;

    assert_int_equal(hcap_map_init(&m, 4), 0);
    for (k = 1; k <= 16; k++)
        assert_int_equal(hcap_map_put(&m, k, &a), 0);
    assert_int_equal(hcap_map_put(&m, 99, &a), -1); /* full */
    assert_ptr_equal(hcap_map_del(&m, 5), &a);
    assert_null(hcap_map_get(&m, 5));
    assert_int_equal(hcap_map_put(&m, 99, &b), 0); /* reuses the tombstone */
    assert_ptr_equal(hcap_map_get(&m, 99), &b);
    assert_ptr_equal(hcap_map_get(&m, 16), &a);
    hcap_map_release(&m);
}

/* Keys coming and going (QPs created and destroyed): every lookup stays right against a
 * plain model, and a map emptied again has no slot left used, so a miss ends at once
 * rather than scanning a map full of tombstones. */
static void test_map_churn(void **state)
{
    enum { ORDER = 8, POOL = 300, OPS = 200000 };
    static int vals[POOL];
    int live[POOL] = {0};
    uint64_t seed = 42, k, op;
    hcap_map_t m;
    int n_live = 0;
    (void)state;

    assert_int_equal(hcap_map_init(&m, ORDER), 0);
    for (op = 0; op < OPS; op++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        k = (seed >> 33) % POOL;
        if (live[k]) {
            assert_ptr_equal(hcap_map_del(&m, k + 1), &vals[k]);
            live[k] = 0;
            n_live--;
        } else if (n_live < 200) {
            assert_int_equal(hcap_map_put(&m, k + 1, &vals[k]), 0);
            live[k] = 1;
            n_live++;
        }
        if (op % 97 == 0)
            for (k = 0; k < POOL; k++)
                assert_ptr_equal(hcap_map_get(&m, k + 1), live[k] ? &vals[k] : NULL);
    }
    for (k = 0; k < POOL; k++)
        if (live[k])
            assert_ptr_equal(hcap_map_del(&m, k + 1), &vals[k]);
    print_message("slots used in the emptied map: %llu of %u\n",
                  (unsigned long long)hcap_map_used(&m), 1u << ORDER);
    assert_int_equal(hcap_map_used(&m), 0);
    hcap_map_release(&m);
}

static void test_config_precedence(void **state)
{
    hcap_config_t cfg;
    char warn[512], path[256];
    char *dir = hs_test_tmpdir();
    uint64_t bytes;
    trace_hint_src_t src;
    FILE *fp;
    (void)state;

    snprintf(path, sizeof(path), "%s/hint.conf", dir);
    setenv("RDMA_LOW_LATENCY_HINT", "4K", 1);
    setenv("HINTCAP_CONFIG", path, 1);
    hcap_config_load(&cfg, warn, sizeof(warn));
    assert_non_null(strstr(warn, "cannot read hint config")); /* named but missing */
    hcap_config_effective(&cfg, &bytes, &src);
    assert_int_equal(bytes, 4096);
    assert_int_equal(src, TRACE_HINT_ENV);
    fp = fopen(path, "w");
    fprintf(fp, "# site default\n  low_latency_hint = 64K\nother = x\n");
    fclose(fp);
    hcap_config_load(&cfg, warn, sizeof(warn));
    assert_string_equal(warn, "");
    hcap_config_effective(&cfg, &bytes, &src);
    assert_int_equal(bytes, 65536); /* seed 000 pitfall 3: the file overrides the env */
    assert_int_equal(src, TRACE_HINT_CONFIG);
    setenv("RDMA_LOW_LATENCY_HINT", "8192", 1); /* the application, before opening */
    hcap_config_note_code(&cfg);
    hcap_config_effective(&cfg, &bytes, &src);
    assert_int_equal(bytes, 8192);
    assert_int_equal(src, TRACE_HINT_CODE);
    fp = fopen(path, "w");
    fprintf(fp, "RDMA_LOW_LATENCY_HINT = lots\n");
    fclose(fp);
    hcap_config_load(&cfg, warn, sizeof(warn));
    assert_non_null(strstr(warn, "line 1"));
    assert_false(cfg.config.set);
    unsetenv("RDMA_LOW_LATENCY_HINT");
    unsetenv("HINTCAP_CONFIG");
    remove(path);
    remove(dir);
    free(dir);
}

/* HINTCAP_FLUSH_US: at most 1 s (warned), and always a sleep nanosleep takes: a period of
 * 1 s or more once made tv_nsec 1e9, so every nanosleep failed at once and the writer spun. */
static void test_config_flush(void **state)
{
    static const struct {
        const char *env;
        uint64_t us;
        int warned;
    } c[] = {{"0", 1, 0}, {"250", 250, 0}, {"999999", 999999, 0}, {"1000000", 1000000, 0},
             {"5000000", HCAP_MAX_FLUSH_US, 1}, {"18446744073709551615", HCAP_MAX_FLUSH_US, 1}};
    hcap_config_t cfg;
    char warn[512];
    (void)state;

    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        setenv("HINTCAP_FLUSH_US", c[i].env, 1);
        hcap_config_load(&cfg, warn, sizeof(warn));
        assert_int_equal(cfg.flush_us, c[i].us);
        assert_int_equal(strstr(warn, "HINTCAP_FLUSH_US") != NULL, c[i].warned);
        struct timespec ts = hcap_config_flush_ts(&cfg);
        assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
        assert_int_equal((uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000, c[i].us);
    }
    cfg.flush_us = 1; /* the kernel takes it: 0, not EINVAL */
    struct timespec ts = hcap_config_flush_ts(&cfg);
    assert_int_equal(nanosleep(&ts, NULL), 0);
    unsetenv("HINTCAP_FLUSH_US");
}

static void test_rank_and_name(void **state)
{
    char buf[256];
    (void)state;

    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMI_RANK");
    unsetenv("PMIX_RANK");
    setenv("SLURM_PROCID", "12", 1);
    assert_int_equal(hcap_rank_from_env(), 12);
    setenv("PMI_RANK", "3", 1);
    assert_int_equal(hcap_rank_from_env(), 3);
    setenv("PMI_RANK", "x", 1);
    assert_int_equal(hcap_rank_from_env(), 12);
    setenv("RANK", "7", 1); /* torchrun: only when no launcher-specific variable is set */
    assert_int_equal(hcap_rank_from_env(), 12);
    unsetenv("SLURM_PROCID");
    unsetenv("PMI_RANK");
    assert_int_equal(hcap_rank_from_env(), 7);
    unsetenv("RANK");
    assert_int_equal(hcap_rank_from_env(), -1);
    assert_int_equal(hcap_trace_path(buf, sizeof(buf), "d", "n1", 42, 3), 0);
    assert_string_equal(buf, "d/n1-42-r3.hst");
    assert_int_equal(hcap_trace_path(buf, sizeof(buf), "d", "n1", 42, -1), 0);
    assert_string_equal(buf, "d/n1-42.hst");
    assert_int_equal(hcap_trace_path(buf, sizeof(buf), "d", "(none)", 7, -1), 0);
    assert_string_equal(buf, "d/_none_-7.hst");
    assert_int_equal(hcap_trace_path(buf, 8, "d", "n1", 42, -1), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_match_orders),
        cmocka_unit_test(test_match_long_run),
        cmocka_unit_test(test_match_churn_bounded),
        cmocka_unit_test(test_ring_drops),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_map_churn),
        cmocka_unit_test(test_config_precedence),
        cmocka_unit_test(test_config_flush),
        cmocka_unit_test(test_rank_and_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
