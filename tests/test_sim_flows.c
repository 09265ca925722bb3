/* test_sim_flows.c - what the model cannot do: N senders sharing the receiver's switch
 * port (issue 4, item 3). The LL p99 must rise with incast; the figures are printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile/profile.h"
#include "sim/sim.h"
#include "tests/hs_test.h"

#define NMSG 2000

/* 2 KB messages every 400 ns: 41 Gb/s per sender on a 100 Gb/s port. */
static trace_t *incast_trace(void)
{
    trace_t *tr = NULL;
    size_t i;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (i = 0; i < NMSG; i++) {
        trace_rec_t r = {.t_post_ns = i * 400, .t_done_ns = TRACE_TIME_UNKNOWN,
                         .size_bytes = 2048};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* p99 over every message of every flow (the aggregate), by sorting. */
static double p99_all(const pred_raw_t *raws, unsigned nflows, size_t n)
{
    float *all = malloc(n * nflows * sizeof(float));
    double v;
    unsigned f;

    assert_non_null(all);
    for (f = 0; f < nflows; f++)
        memcpy(all + f * n, raws[f].lat_us, n * sizeof(float));
    qsort(all, n * nflows, sizeof(float), cmp_float);
    v = all[(size_t)(0.99 * (double)(n * nflows - 1))];
    free(all);
    return v;
}

static double run_flows(const trace_t *tr, const profile_t *p, unsigned nflows, double *gbps)
{
    pred_opts_t o = {.mode = PRED_OPEN, .flows = nflows};
    pred_raw_t *raws = calloc(nflows, sizeof(*raws));
    double p99, first = 1e300, last = 0;
    unsigned f;

    assert_non_null(raws);
    for (f = 0; f < nflows; f++) {
        raws[f].lat_us = malloc(tr->n * sizeof(float));
        raws[f].path = malloc(tr->n);
    }
    assert_int_equal(sim_replay_flows(tr, p, &o, 4096, nflows, raws), HS_OK);
    for (f = 0; f < nflows; f++) {
        assert_int_equal(raws[f].path[0], TRACE_F_PATH_LL);
        first = raws[f].t_first_post_us < first ? raws[f].t_first_post_us : first;
        last = raws[f].t_last_done_us > last ? raws[f].t_last_done_us : last;
    }
    p99 = p99_all(raws, nflows, tr->n);
    *gbps = (double)tr->n * nflows * 2048 * 8 / ((last - first) * 1e3);
    for (f = 0; f < nflows; f++) {
        free(raws[f].lat_us);
        free(raws[f].path);
    }
    free(raws);
    return p99;
}

static void test_incast_raises_ll_p99(void **state)
{
    trace_t *tr = incast_trace();
    profile_t *p = NULL;
    unsigned n[] = {1, 2, 4, 8}, k;
    double p99[4], gbps[4];

    (void)state;
    assert_int_equal(profile_load("generic", &p), HS_OK);
    for (k = 0; k < 4; k++) {
        p99[k] = run_flows(tr, p, n[k], &gbps[k]);
        printf("flows %u: LL p99 %.3f us (x%.2f of one flow), aggregate %.1f Gb/s\n", n[k],
               p99[k], p99[k] / p99[0], gbps[k]);
    }
    /* two senders fit (82 of 100 Gb/s): queueing only; four and eight overload the port */
    assert_true(p99[1] >= p99[0] * 0.999);
    assert_true(p99[2] > p99[1] * 1.5);
    assert_true(p99[3] > p99[2]);
    assert_true(gbps[3] <= 100.5); /* the shared port caps the aggregate */
    profile_free(p);
    trace_free(tr);
}

static void test_one_flow_equals_engine(void **state)
{
    trace_t *tr = incast_trace();
    profile_t *p = NULL;
    pred_opts_t o = {.mode = PRED_OPEN, .flows = 1};
    float a[NMSG], b[NMSG];
    uint8_t pa[NMSG], pb[NMSG];
    pred_raw_t ra = {.lat_us = a, .path = pa}, rb = {.lat_us = b, .path = pb};

    (void)state;
    assert_int_equal(profile_load("generic", &p), HS_OK);
    assert_int_equal(sim_engine_ops.replay(tr, p, &o, 4096, &ra), HS_OK);
    assert_int_equal(sim_replay_flows(tr, p, &o, 4096, 1, &rb), HS_OK);
    assert_memory_equal(a, b, sizeof(a));
    profile_free(p);
    trace_free(tr);
}

/* The aggregate of two flows: every latency once, the span of both, summarisable. */
static void test_merge_two_flows(void **state)
{
    trace_t *tr = incast_trace(), *mtr = NULL;
    profile_t *p = NULL;
    pred_opts_t o = {.mode = PRED_OPEN, .flows = 2};
    pred_raw_t raws[2] = {{0}}, m;
    pred_result_t r;
    unsigned f;

    (void)state;
    assert_int_equal(profile_load("generic", &p), HS_OK);
    for (f = 0; f < 2; f++) {
        raws[f].lat_us = malloc(tr->n * sizeof(float));
        raws[f].path = malloc(tr->n);
    }
    assert_int_equal(sim_replay_flows(tr, p, &o, 4096, 2, raws), HS_OK);
    assert_int_equal(sim_flows_merge(tr, 2, raws, &mtr, &m), HS_OK);
    assert_int_equal(mtr->n, 2 * tr->n);
    assert_memory_equal(m.lat_us + tr->n, raws[1].lat_us, tr->n * sizeof(float));
    assert_true(m.t_last_done_us >= raws[0].t_last_done_us);
    assert_true(m.t_last_done_us >= raws[1].t_last_done_us);
    assert_int_equal(pred_summarize(mtr, &o, &m, 4096, &r), HS_OK);
    printf("2 flows merged: %llu messages, p99 %.3f us, %.1f Gb/s\n",
           (unsigned long long)r.count, r.p99_us, r.throughput_gbps);
    assert_int_equal(r.count, 2 * tr->n);
    assert_true(r.throughput_gbps > 70 && r.throughput_gbps <= 100.5); /* 2 x 41 Gb/s */
    pred_result_release(&r);
    free(m.lat_us);
    free(m.path);
    trace_free(mtr);
    for (f = 0; f < 2; f++) {
        free(raws[f].lat_us);
        free(raws[f].path);
    }
    profile_free(p);
    trace_free(tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_incast_raises_ll_p99),
        cmocka_unit_test(test_one_flow_equals_engine),
        cmocka_unit_test(test_merge_two_flows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
