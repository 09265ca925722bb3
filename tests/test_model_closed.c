/* test_model_closed.c - the replay engine against hand-computed closed forms
 * (model/MODEL.md): one message on each path, a depth-limited stream, coalescing bounds,
 * one forced switch, the L1 term, and the summariser's percentiles. Expected values are
 * computed here from the profile's parameters with the formulas, not taken from the code. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "tests/hs_test.h"

static trace_t *mk_trace(size_t n, uint64_t size, uint64_t gap_ns)
{
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < n; i++) {
        trace_rec_t r = {.t_post_ns = i * gap_ns, .t_done_ns = TRACE_TIME_UNKNOWN,
                         .size_bytes = size};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

static profile_t *mk_profile(const char *const *sets)
{
    profile_t *p = NULL;

    assert_int_equal(profile_load("generic", &p), HS_OK);
    for (; sets && *sets; sets++)
        assert_int_equal(profile_set(p, *sets), HS_OK);
    assert_int_equal(profile_validate(p), HS_OK);
    return p;
}

static pred_result_t run(const trace_t *tr, const profile_t *p, uint64_t hint, pred_mode_t m)
{
    pred_opts_t o = {.mode = m};
    pred_result_t r;

    assert_int_equal(pred_run(&(pred_ctx_t){&model_engine_ops, tr, p, &o}, hint, 1, &r), HS_OK);
    return r;
}

/* One 8 B message on LL (inline, signalled, polled): post + doorbell + L1 + ser + packet +
 * two base latencies + poll. */
static void test_one_message_ll(void **state)
{
    (void)state;
    profile_t *p = mk_profile(NULL);
    trace_t *tr = mk_trace(1, 8, 0);
    pred_result_t r = run(tr, p, 8192, PRED_OPEN);
    double slot_ll = 64 * ceil((48 + p->ll_inline_bytes) / 64), slot_bw = 64;
    double foot = p->ll_depth * slot_ll + p->bw_depth_hinted * slot_bw;
    double l1 = p->host_l1d_bytes * p->host_l1_sq_share;
    double l1x = foot > l1 ? p->host_sq_lines_per_post * (p->host_l1_miss_ns - p->host_l1_hit_ns) *
                                 (1 - l1 / foot) : 0;
    double want_ns = p->host_post_ns + l1x + p->host_doorbell_ns + 8 * 8 / p->link_gbps +
                     p->link_pkt_ns + 2 * p->link_base_lat_ns + p->host_poll_ns;
    assert_true(l1x > 0); /* the generic LL + BW footprint exceeds half of L1d */
    assert_float_equal(r.lat_us[0], want_ns * 1e-3, 1e-3);
    assert_float_equal(r.ll_fraction, 1.0, 0);
    assert_float_equal(r.costs.l1_us, l1x * 1e-3, 1e-6);
    pred_result_release(&r);
    trace_free(tr);
    profile_free(p);
}

/* One 64 KB message on BW with hint 0: not inline (DMA), the batch is never full, so the
 * moderation timer reports it bw.coal_period_us after its hardware completion. */
static void test_one_message_bw_timer(void **state)
{
    (void)state;
    profile_t *p = mk_profile(NULL);
    trace_t *tr = mk_trace(1, 65536, 0);
    pred_result_t r = run(tr, p, 0, PRED_OPEN);
    double hw_ns = p->host_post_ns + p->host_doorbell_ns + p->link_dma_ns +
                   65536 * 8 / p->link_gbps + 16 * p->link_pkt_ns + 2 * p->link_base_lat_ns;
    double want_ns = hw_ns + p->bw_coal_period_us * 1e3 + p->host_poll_ns;
    assert_float_equal(r.lat_us[0], want_ns * 1e-3, 1e-3);
    assert_float_equal(r.costs.coalesce_us, p->bw_coal_period_us, 1e-6);
    assert_float_equal(r.ll_fraction, 0.0, 0);
    pred_result_release(&r);
    trace_free(tr);
    profile_free(p);
}

/* A back-to-back stream limited by the window: each slot is reused once per round trip, so
 * throughput = min(link, depth x size / round trip). */
static void test_depth_limited_stream(void **state)
{
    (void)state;
    static const char *const sets[] = {"host.post_ns=10", "host.doorbell_ns=0",
        "host.poll_ns=0", "link.dma_ns=0", "link.pkt_ns=0", "link.base_lat_ns=5000",
        "ll.depth=4", "ll.inline_bytes=0", "host.sq_lines_per_post=0", NULL};
    profile_t *p = mk_profile(sets);
    trace_t *tr = mk_trace(20000, 4096, 0);
    pred_result_t r = run(tr, p, 1 << 20, PRED_OPEN);
    double rtt_ns = 10 + 4096 * 8 / p->link_gbps + 2 * 5000;
    double want = fmin(p->link_gbps, 4 * 4096 * 8 / rtt_ns);
    assert_true(fabs(r.throughput_gbps - want) / want < 0.01);
    assert_true(r.sq_full_stalls > 19000);
    pred_result_release(&r);
    profile_free(p);
    /* the same stream with a deep queue is link bound */
    static const char *const deep[] = {"host.post_ns=10", "host.doorbell_ns=0",
        "host.poll_ns=0", "link.dma_ns=0", "link.pkt_ns=0", "link.base_lat_ns=5000",
        "ll.depth=4096", "ll.inline_bytes=0", "host.sq_lines_per_post=0", NULL};
    p = mk_profile(deep);
    r = run(tr, p, 1 << 20, PRED_OPEN);
    assert_true(fabs(r.throughput_gbps - p->link_gbps) / p->link_gbps < 0.01);
    pred_result_release(&r);
    trace_free(tr);
    profile_free(p);
}

/* Coalescing: in a sparse stream every BW message waits exactly the timer; in a dense one
 * the added delay per message stays within [0, period] and batches close on count. */
static void test_coalescing_bounds(void **state)
{
    (void)state;
    profile_t *p = mk_profile(NULL);
    trace_t *sparse = mk_trace(100, 1024, 1000000); /* 1 ms apart */
    trace_t *dense = mk_trace(10000, 1024, 0);
    pred_result_t rs = run(sparse, p, 0, PRED_OPEN);
    pred_result_t rd = run(dense, p, 0, PRED_OPEN);
    double period = p->bw_coal_period_us;

    assert_float_equal(rs.costs.coalesce_us / 100, period, 1e-6);
    assert_true(rd.costs.coalesce_us / 10000 >= 0);
    assert_true(rd.costs.coalesce_us / 10000 <= period);
    for (size_t i = 0; i < 100; i++) /* every sparse message sees the same latency */
        assert_float_equal(rs.lat_us[i], rs.lat_us[0], 1e-3);
    pred_result_release(&rs);
    pred_result_release(&rd);
    trace_free(sparse);
    trace_free(dense);
    profile_free(p);
}

/* One forced switch: 8 B (LL) then 64 KB (BW) at the same instant. The BW message waits
 * for the LL message's report plus switch.drain_fixed_us. */
static void test_single_switch(void **state)
{
    (void)state;
    static const char *const sets[] = {"host.sq_lines_per_post=0", NULL};
    profile_t *p = mk_profile(sets);
    trace_t *tr = mk_trace(1, 8, 0);
    trace_rec_t big = {.t_post_ns = 0, .t_done_ns = TRACE_TIME_UNKNOWN, .size_bytes = 65536};
    assert_int_equal(trace_push(tr, &big), HS_OK);
    pred_result_t r = run(tr, p, 1024, PRED_OPEN);
    double r0 = p->host_post_ns + p->host_doorbell_ns + 8 * 8 / p->link_gbps + p->link_pkt_ns +
                2 * p->link_base_lat_ns + p->host_poll_ns;
    double drain_done = r0 + p->switch_drain_fixed_us * 1e3;
    double hw1 = drain_done + p->host_post_ns + p->host_doorbell_ns + p->link_dma_ns +
                 65536 * 8 / p->link_gbps + 16 * p->link_pkt_ns + 2 * p->link_base_lat_ns;
    double want1 = hw1 + p->bw_coal_period_us * 1e3 + p->host_poll_ns;

    assert_int_equal(r.switches, 1);
    assert_float_equal(r.lat_us[0], r0 * 1e-3, 1e-3);
    assert_float_equal(r.drain_us_total, drain_done * 1e-3, 1e-3);
    assert_float_equal(r.lat_us[1], want1 * 1e-3, 1e-3);
    pred_result_release(&r);
    profile_free(p);
    /* hysteresis 2: a single BW message does not switch, it rides the LL path */
    static const char *const hyst[] = {"switch.hysteresis=2", NULL};
    p = mk_profile(hyst);
    r = run(tr, p, 1024, PRED_OPEN);
    assert_int_equal(r.switches, 0);
    assert_float_equal(r.ll_fraction, 1.0, 0);
    pred_result_release(&r);
    trace_free(tr);
    profile_free(p);
}

/* Hysteresis counts other-class messages in a row: a message of the current class between
 * them starts the count again, also inside a run of that class's messages (replay_run). */
static void test_hysteresis_count(void **state)
{
    (void)state;
    static const char *const hyst[] = {"switch.hysteresis=3", NULL};
    /* 8 B x4, 64 KB x2, 8 B, 64 KB x3 at hint 1 KB: the last 64 KB switches, nothing else */
    static const uint64_t sizes[] = {8, 8, 8, 8, 65536, 65536, 8, 65536, 65536, 65536};
    trace_t *tr = NULL;
    profile_t *p = mk_profile(hyst);

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        trace_rec_t r = {.t_post_ns = i * 100000, .t_done_ns = TRACE_TIME_UNKNOWN,
                         .size_bytes = sizes[i]};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    for (int m = 0; m < 2; m++) {
        if (m == 1) /* closed loop: completion times one message apart */
            for (size_t i = 0; i < tr->n; i++)
                tr->recs[i].t_done_ns = tr->recs[i].t_post_ns + 50000;
        pred_result_t r = run(tr, p, 1024, m ? PRED_CLOSED : PRED_OPEN);
        assert_int_equal(r.switches, 1);
        assert_float_equal(r.ll_fraction, 0.9, 1e-12); /* messages 0-8 on LL */
        pred_result_release(&r);
    }
    trace_free(tr);
    profile_free(p);
}

/* Perturbation: after a switch, latencies inside the window are inflated by the factor. */
static void test_perturbation(void **state)
{
    (void)state;
    static const char *const base_sets[] = {"host.sq_lines_per_post=0", NULL};
    static const char *const pert[] = {"host.sq_lines_per_post=0",
        "switch.perturb_window_us=1000", "switch.perturb_factor=3", NULL};
    trace_t *tr = mk_trace(1, 65536, 0);
    for (int i = 1; i <= 10; i++) {
        trace_rec_t r8 = {.t_post_ns = (uint64_t)i * 100000, .t_done_ns = TRACE_TIME_UNKNOWN,
                          .size_bytes = 8};
        assert_int_equal(trace_push(tr, &r8), HS_OK);
    }
    profile_t *p0 = mk_profile(base_sets), *p1 = mk_profile(pert);
    pred_result_t a = run(tr, p0, 1024, PRED_OPEN), b = run(tr, p1, 1024, PRED_OPEN);
    /* message 1 (8 B, 100 us later, well after the drain) is in the window with pert */
    double hwlat = a.lat_us[2]; /* undisturbed 8 B latency, from the run without it */
    assert_float_equal(b.lat_us[2], 3 * hwlat - 2 * p0->host_poll_ns * 1e-3, 1e-3);
    assert_true(b.costs.drain_us > a.costs.drain_us);
    pred_result_release(&a);
    pred_result_release(&b);
    trace_free(tr);
    profile_free(p0);
    profile_free(p1);
}

/* The cost terms add up to the latencies. */
static void test_costs_sum(void **state)
{
    (void)state;
    profile_t *p = mk_profile(NULL);
    trace_t *tr = NULL;
    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < 5000; i++) {
        trace_rec_t r = {.t_post_ns = i * 700, .t_done_ns = TRACE_TIME_UNKNOWN,
                         .size_bytes = (i % 7) ? 64 : 200000};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    pred_result_t r = run(tr, p, 4096, PRED_OPEN);
    const pred_costs_t *c = &r.costs;
    double sum = 0;
    for (size_t i = 0; i < tr->n; i++)
        sum += r.lat_us[i];
    double terms = c->queue_us + c->drain_us + c->coalesce_us + c->l1_us + c->base_us;
    assert_true(fabs(terms - sum) / sum < 1e-4);
    assert_true(r.switches > 0);
    assert_float_equal(r.mean_us, sum / tr->n, 1e-3 * r.mean_us);
    pred_result_release(&r);
    trace_free(tr);
    profile_free(p);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Summariser percentiles are within 0.4% of the exact nearest-rank order statistics, at
 * microseconds and at latencies of minutes to months (an overloaded open-loop replay's
 * queue: the bins once stopped at 2^26 us, 67 s, and every percentile above read 67 s). */
static void test_summary_percentiles(void **state)
{
    (void)state;
    trace_t *tr = mk_trace(100000, 100, 0);
    pred_raw_t raw = {0};
    pred_opts_t o = {0};
    float *sorted = malloc(tr->n * sizeof(*sorted));
    raw.lat_us = malloc(tr->n * sizeof(*raw.lat_us));
    raw.path = calloc(tr->n, 1);
    const double scales[] = {1, 1e5, 1e10};
    for (int sc = 0; sc < 3; sc++) {
        pred_result_t r;
        unsigned s = 7;
        for (size_t i = 0; i < tr->n; i++) {
            s = s * 1103515245u + 12345u;
            raw.lat_us[i] = (float)((0.5 + (s >> 8) % 100000 / 100.0) * scales[sc]);
            sorted[i] = raw.lat_us[i];
        }
        raw.t_last_done_us = 1000;
        qsort(sorted, tr->n, sizeof(*sorted), cmp_float);
        assert_int_equal(pred_summarize(tr, &o, &raw, 0, &r), HS_OK);
        double q[] = {0.5, 0.9, 0.99, 0.999}, got[] = {r.p50_us, r.p90_us, r.p99_us, r.p999_us};
        for (int k = 0; k < 4; k++) {
            double exact = sorted[(size_t)ceil(q[k] * tr->n) - 1];
            assert_true(fabs(got[k] - exact) / exact < 0.004);
        }
        assert_float_equal(r.max_us, sorted[tr->n - 1], 1e-6 * scales[sc]);
        assert_float_equal(r.throughput_gbps, 100000.0 * 100 * 8 / 1e6, 1e-9);
        assert_int_equal(r.nclasses, 1);
        assert_int_equal(r.classes[0].min_bytes, 65);
        assert_int_equal(r.classes[0].max_bytes, 128);
        assert_true(fabs(r.classes[0].p99_us - r.p99_us) / r.p99_us < 1e-12);
        pred_result_release(&r);
    }
    free(raw.lat_us);
    free(raw.path);
    free(sorted);
    trace_free(tr);
}

/* Closed loop: latencies are measured from the replayed post; records without a
 * completion time are refused with the record named. */
static void test_closed_loop(void **state)
{
    (void)state;
    profile_t *p = mk_profile(NULL);
    trace_t *tr = mk_trace(3, 8, 0);
    pred_opts_t o = {.mode = PRED_CLOSED};
    pred_ctx_t c = {&model_engine_ops, tr, p, &o};
    pred_result_t r;

    assert_int_equal(pred_run(&c, 64, 1, &r), HS_ERR_INVALID);
    for (size_t i = 0; i < tr->n; i++)
        tr->recs[i].t_done_ns = tr->recs[i].t_post_ns;
    assert_int_equal(pred_run(&c, 64, 1, &r), HS_OK);
    assert_float_equal(r.lat_us[1], r.lat_us[0], 1e-4);
    assert_float_equal(r.lat_us[2], r.lat_us[0], 1e-4);
    pred_result_release(&r);
    trace_free(tr);
    assert_int_equal(trace_new(&tr), HS_OK); /* empty */
    c.tr = tr;
    assert_int_equal(pred_run(&c, 64, 1, &r), HS_ERR_INVALID);
    trace_free(tr);
    profile_free(p);
}

/* The isolated curves agree with the one-message closed forms, and a crossover is the first
 * size where BW is faster. */
static void test_curves(void **state)
{
    (void)state;
    static const char *const sets[] = {"host.sq_lines_per_post=0", "bw.coal_period_us=0",
                                       "ll.fixed_ns=20000", NULL};
    profile_t *p = mk_profile(sets);
    model_curve_pt_t *pts = NULL;
    size_t n = 0;
    uint64_t cross = 0;

    assert_int_equal(model_curves(p, 1 << 20, &pts, &n, &cross), HS_OK);
    assert_int_equal(n, 21); /* 1 B .. 1 MB */
    double ll8 = p->host_post_ns + p->host_doorbell_ns + 8 * 8 / p->link_gbps + p->link_pkt_ns +
                 2 * p->link_base_lat_ns + p->ll_fixed_ns + p->host_poll_ns;
    assert_int_equal(pts[3].size_bytes, 8);
    assert_float_equal(pts[3].ll_lat_us, ll8 * 1e-3, 1e-3);
    /* a 20 us LL overhead makes BW faster at every size: the crossover is the first size */
    assert_int_equal(cross, 1);
    for (size_t i = 0; i < n; i++)
        assert_true(pts[i].bw_lat_us < pts[i].ll_lat_us);
    free(pts);
    profile_free(p);
}

/* The moderation timer closes a batch on its own (MODEL.md section 3): message A sits alone
 * on BW (interrupt events, batches of 2 WRs); its timer report R_A lies before B's post, so
 * A's event costs the CPU at B's post (CPU idle then: no delay) and C, 300 ns after B, is not
 * delayed by it. B and C close their batch by count at C's completion. (Closing A only when
 * B's chunk is added charged A's event at C's post: C 1450 ns later.) */
static void test_timer_closes_before_next_post(void **state)
{
    (void)state;
    static const char *const sets[] = {"bw.irq=1", "bw.seg_bytes=0", "bw.coal_period_us=8",
                                       "bw.signal_every=2", "bw.coal_count=1", NULL};
    profile_t *p = mk_profile(sets);
    trace_t *tr = NULL;
    static const uint64_t t[] = {0, 20000, 20300};

    assert_int_equal(trace_new(&tr), HS_OK);
    for (int i = 0; i < 3; i++) {
        trace_rec_t r = {.t_post_ns = t[i], .t_done_ns = TRACE_TIME_UNKNOWN, .size_bytes = 64};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    pred_result_t r = run(tr, p, 0, PRED_OPEN);
    double post = p->host_post_ns + p->host_doorbell_ns; /* one WR, L1 fits (BW only) */
    double ser = 64 * 8 / p->link_gbps + p->link_pkt_ns;
    double wire = 2 * p->link_base_lat_ns, per = p->bw_coal_period_us * 1e3;
    double ev = p->host_interrupt_ns;
    double hw_a = post + p->link_dma_ns + ser + wire;           /* A posted at 0 */
    double r_a = hw_a + per + ev;                                 /* closed by its timer */
    double hw_c = t[2] + post + p->link_dma_ns + ser + wire;     /* C: CPU idle, link free */
    double r_bc = hw_c + ev;                                      /* B + C: closed by count */
    assert_true(r_a < (double)t[1]);                              /* the premise */
    assert_true(fabs(r.lat_us[0] - r_a * 1e-3) < 1e-3);
    assert_true(fabs(r.lat_us[1] - (r_bc - (double)t[1]) * 1e-3) < 1e-3);
    assert_true(fabs(r.lat_us[2] - (r_bc - (double)t[2]) * 1e-3) < 1e-3);
    pred_result_release(&r);
    trace_free(tr);
    profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_message_ll),
        cmocka_unit_test(test_one_message_bw_timer),
        cmocka_unit_test(test_depth_limited_stream),
        cmocka_unit_test(test_coalescing_bounds),
        cmocka_unit_test(test_single_switch),
        cmocka_unit_test(test_hysteresis_count),
        cmocka_unit_test(test_perturbation),
        cmocka_unit_test(test_costs_sum),
        cmocka_unit_test(test_summary_percentiles),
        cmocka_unit_test(test_closed_loop),
        cmocka_unit_test(test_curves),
        cmocka_unit_test(test_timer_closes_before_next_post),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
