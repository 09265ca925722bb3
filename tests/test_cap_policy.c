/* test_cap_policy.c - the device-free logic of the two-path engine: routing with hint and
 * hysteresis, path configuration against device limits (and the moderation emulation),
 * segmenting, selective signalling, and completion bookkeeping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_path.h"
#include "capture/cap_policy.h"
#include "common/hs_util.h"
#include "model/model.h"
#include "model/predict/predict.h"
#include "traces/trace.h"
#include "tests/hs_test.h"

static void test_route_class(void **state)
{
    (void)state;
    assert_int_equal(cap_route_class(0, 8), CAP_PATH_BW);       /* no hint: all BW */
    assert_int_equal(cap_route_class(8192, 8), CAP_PATH_LL);
    assert_int_equal(cap_route_class(8192, 8192), CAP_PATH_LL); /* <= hint */
    assert_int_equal(cap_route_class(8192, 8193), CAP_PATH_BW);
}

static void test_route_switch_immediate(void **state)
{
    static const uint64_t sizes[] = {8, 16384, 16384, 8, 8};
    static const int want_path[] = {CAP_PATH_LL, CAP_PATH_BW, CAP_PATH_BW, CAP_PATH_LL,
                                    CAP_PATH_LL};
    static const int want_sw[] = {0, 1, 0, 1, 0};
    cap_route_t r;
    int sw;
    (void)state;
    cap_route_init(&r, 8192, 1);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(cap_route_next(&r, sizes[i], &sw), want_path[i]);
        assert_int_equal(sw, want_sw[i]);
    }
}

static void test_route_hysteresis(void **state)
{
    cap_route_t r;
    int sw;
    (void)state;
    cap_route_init(&r, 1024, 3);
    assert_int_equal(cap_route_next(&r, 8, &sw), CAP_PATH_LL);
    /* two large messages stay on LL; the third consecutive one switches */
    assert_int_equal(cap_route_next(&r, 4096, &sw), CAP_PATH_LL);
    assert_int_equal(sw, 0);
    assert_int_equal(cap_route_next(&r, 4096, &sw), CAP_PATH_LL);
    assert_int_equal(cap_route_next(&r, 4096, &sw), CAP_PATH_BW);
    assert_int_equal(sw, 1);
    /* an interrupted run resets the count */
    assert_int_equal(cap_route_next(&r, 8, &sw), CAP_PATH_BW);
    assert_int_equal(cap_route_next(&r, 4096, &sw), CAP_PATH_BW);
    assert_int_equal(cap_route_next(&r, 8, &sw), CAP_PATH_BW);
    assert_int_equal(cap_route_next(&r, 8, &sw), CAP_PATH_BW);
    assert_int_equal(cap_route_next(&r, 8, &sw), CAP_PATH_LL);
    assert_int_equal(sw, 1);
}

static void default_profile(profile_t *p)
{
    memset(p, 0, sizeof(*p));
#define X(field, key, kind, unit, def, doc) p->field = (def);
    PROFILE_PARAMS(X)
#undef X
}

static const cap_limits_t rxe_like = {.max_qp_wr = 1048576, .max_inline = 400,
                                      .cq_mod_supported = 0};

static void test_cfg_from_profile(void **state)
{
    profile_t p;
    cap_path_cfg_t cfg[CAP_NPATHS];
    (void)state;
    default_profile(&p);
    p.bw_depth = 256;
    p.bw_depth_hinted = 64;
    cap_path_cfg_from_profile(&p, 0, cfg);
    assert_int_equal(cfg[CAP_PATH_BW].depth, 256);
    cap_path_cfg_from_profile(&p, 4096, cfg);
    assert_int_equal(cfg[CAP_PATH_BW].depth, 64); /* hinted depth */
    assert_int_equal(cfg[CAP_PATH_LL].depth, (uint32_t)p.ll_depth);
    assert_int_equal(cfg[CAP_PATH_BW].seg_bytes, (uint64_t)p.bw_seg_bytes);
}

static void test_cfg_limits(void **state)
{
    profile_t p;
    cap_path_cfg_t cfg[CAP_NPATHS];
    cap_limits_t lim = rxe_like;
    (void)state;
    default_profile(&p);
    p.bw_signal_every = 4;
    p.bw_coal_count = 16;
    cap_path_cfg_from_profile(&p, 0, cfg);
    assert_int_equal(cap_path_cfg_apply_limits(CAP_PATH_LL, &cfg[CAP_PATH_LL], &lim), HS_OK);
    assert_int_equal(cap_path_cfg_apply_limits(CAP_PATH_BW, &cfg[CAP_PATH_BW], &lim), HS_OK);
    /* no CQ moderation on the device: emulated by signalling every coal_count WRs */
    assert_int_equal(cfg[CAP_PATH_BW].moderation_hw, 0);
    assert_int_equal(cfg[CAP_PATH_BW].signal_every, 16);
    /* with moderation the signalling interval stays as configured */
    lim.cq_mod_supported = 1;
    lim.max_cq_count = 65535;
    lim.max_cq_period_us = 4095;
    cap_path_cfg_from_profile(&p, 0, cfg);
    assert_int_equal(cap_path_cfg_apply_limits(CAP_PATH_BW, &cfg[CAP_PATH_BW], &lim), HS_OK);
    assert_int_equal(cfg[CAP_PATH_BW].moderation_hw, 1);
    assert_int_equal(cfg[CAP_PATH_BW].signal_every, 4);
    /* depth and inline above the device limits are refused */
    cfg[CAP_PATH_BW].depth = lim.max_qp_wr + 1;
    assert_int_equal(cap_path_cfg_apply_limits(CAP_PATH_BW, &cfg[CAP_PATH_BW], &lim),
                     HS_ERR_INVALID);
    cap_path_cfg_from_profile(&p, 0, cfg);
    cfg[CAP_PATH_LL].inline_bytes = 401;
    assert_int_equal(cap_path_cfg_apply_limits(CAP_PATH_LL, &cfg[CAP_PATH_LL], &lim),
                     HS_ERR_INVALID);
    /* a signalling interval above the depth could never drain */
    cap_path_cfg_from_profile(&p, 0, cfg);
    cfg[CAP_PATH_BW].depth = 8;
    cfg[CAP_PATH_BW].signal_every = 9;
    lim.cq_mod_supported = 0;
    assert_int_equal(cap_path_cfg_apply_limits(CAP_PATH_BW, &cfg[CAP_PATH_BW], &lim),
                     HS_ERR_INVALID);
}

/* One BW message every ms, 16 of them, on a device without CQ moderation. */
static double first_latency_us(const profile_t *p)
{
    trace_t *tr = NULL;
    pred_opts_t o = {.mode = PRED_OPEN, .flows = 1, .include_cold = 1};
    pred_result_t r;
    double lat;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (uint64_t i = 0; i < 16; i++) {
        trace_rec_t rec = {.t_post_ns = i * 1000000, .t_done_ns = TRACE_TIME_UNKNOWN,
                           .size_bytes = 64, .opcode = TRACE_OP_WRITE};
        assert_int_equal(trace_push(tr, &rec), HS_OK);
    }
    assert_int_equal(pred_run(&(pred_ctx_t){&model_engine_ops, tr, p, &o}, 0, 1, &r), HS_OK);
    lat = r.lat_us[0];
    pred_result_release(&r);
    trace_free(tr);
    return lat;
}

/* The live replay polls and emulates moderation by the signal interval, with no timer:
 * the effective profile makes the model predict that, where the profile as given would
 * predict the 8 us timer closing each batch. */
static void test_profile_effective(void **state)
{
    profile_t *p = NULL, *eff = NULL;
    cap_path_cfg_t cfg[CAP_NPATHS];
    cap_limits_t lim = rxe_like;
    char changes[512];
    (void)state;
    assert_int_equal(profile_load("generic", &p), HS_OK);
    assert_int_equal(profile_set(p, "bw.signal_every=4"), HS_OK);
    assert_int_equal(profile_set(p, "bw.coal_count=16"), HS_OK);
    assert_int_equal(profile_set(p, "bw.coal_period_us=8"), HS_OK);
    cap_path_cfg_from_profile(p, 0, cfg);
    for (int i = 0; i < CAP_NPATHS; i++) {
        assert_int_equal(cap_path_cfg_apply_limits((cap_path_id_t)i, &cfg[i], &lim), HS_OK);
        cfg[i].mtu_bytes = 1024; /* soft-RoCE on a 1500-byte netdev */
    }
    assert_int_equal(profile_clone(p, &eff), HS_OK);
    assert_int_equal(cap_profile_effective(eff, cfg, changes, sizeof(changes)), HS_OK);
    assert_non_null(strstr(changes, "bw.signal_every 4->16"));
    assert_non_null(strstr(changes, "link.mtu_bytes 4096->1024"));
    assert_int_equal(eff->link_mtu_bytes, 1024);
    assert_non_null(strstr(changes, "bw.coal_count 16->1"));
    assert_non_null(strstr(changes, "bw.coal_period_us 8->0"));
    /* the timer reports the first message within microseconds as given; the live
     * replay sees it only when the 16th WR, the signalled one, completes 15 ms later */
    assert_true(first_latency_us(p) < 100);
    assert_true(first_latency_us(eff) > 15000);
    /* applying it again changes nothing */
    assert_int_equal(cap_profile_effective(eff, cfg, changes, sizeof(changes)), HS_OK);
    assert_string_equal(changes, "");
    profile_free(eff);
    profile_free(p);
}

static void test_segments(void **state)
{
    uint64_t sum = 0;
    (void)state;
    assert_int_equal(cap_seg_count(8, 65536), 1);
    assert_int_equal(cap_seg_count(65536, 65536), 1);
    assert_int_equal(cap_seg_count(65537, 65536), 2);
    assert_int_equal(cap_seg_count(1 << 20, 0), 1);
    assert_int_equal(cap_seg_count(1000000, 65536), 16);
    for (uint64_t i = 0; i < 16; i++)
        sum += cap_seg_len(1000000, 65536, i);
    assert_int_equal(sum, 1000000);
    assert_int_equal(cap_seg_len(1000000, 65536, 15), 1000000 - 15 * 65536);
    assert_int_equal(cap_seg_len(1000000, 65536, 16), 0);
    assert_int_equal(cap_seg_len(100, 0, 0), 100);
}

/* signalled[w] for the WRs of messages of nwr[] WRs posted in turn (signal every k). */
static void post_all(const uint64_t *nwr, size_t n, uint32_t k, int *signalled)
{
    uint32_t run = 0;
    size_t w = 0;

    for (size_t m = 0; m < n; m++)
        for (uint64_t i = 0; i < nwr[m]; i++, w++) {
            signalled[w] = cap_sig_wr(run, k, nwr[m], i, 0);
            run = signalled[w] ? 0 : run + 1;
        }
}

/* A batch closes at the end of the message (or chunk) that brings it to k WRs or more, as
 * the model's does: messages of 1 and 4 WRs in turn (an allreduce's control and segmented
 * data), k = 16. Worked by hand: WRs 0-15 are messages 0-6 (16 WRs): WR 15 closes; the next
 * batch reaches 16 inside message 13 (WRs 31-34), so its last WR, 34, closes it (a count
 * of every 16th WR would signal 31 and leave WRs 32-34 waiting for a later batch); then
 * 35-50 (16 WRs, message 20 a single WR). */
static void test_signalling_chunks(void **state)
{
    uint64_t nwr[21];
    int sig[51];
    (void)state;
    for (size_t m = 0; m < 21; m++)
        nwr[m] = m % 2 ? 4 : 1;
    post_all(nwr, 21, 16, sig);
    for (int w = 0; w < 51; w++)
        assert_int_equal(sig[w], w == 15 || w == 34 || w == 50);
    /* a long message: chunks of k WRs from its first WR, each closing the batch once the
     * count reaches k (here after 3 single WRs: 3 + 16 = 19 at WR 18), the rest 8 WRs */
    assert_int_equal(cap_chunk_len(40, 0, 16), 16);
    assert_int_equal(cap_chunk_len(40, 32, 16), 8);
    assert_int_equal(cap_chunk_len(5, 0, 0), 1);
    uint64_t mixed[] = {1, 1, 1, 40};
    int s2[43];
    post_all(mixed, 4, 16, s2);
    for (int w = 0; w < 43; w++)
        assert_int_equal(s2[w], w == 18 || w == 34);
}

/* Counted from the last signalled WR: a WR signalled out of turn (a message the poster
 * waits for, here the single-WR message 5) starts a new batch of k WRs, as a forced close
 * does in the model (MODEL.md section 3). */
static void test_signalling_out_of_turn(void **state)
{
    uint32_t run = 0;
    int sig[40];
    (void)state;
    for (int w = 0; w < 40; w++) {
        sig[w] = cap_sig_wr(run, 16, 1, 0, w == 5);
        run = sig[w] ? 0 : run + 1;
    }
    for (int w = 0; w < 40; w++) /* 5, then 16 WRs later: 21 and 37; not 15 and 31 */
        assert_int_equal(sig[w], w == 5 || w == 21 || w == 37);
    assert_true(cap_sig_wr(0, 1, 1, 0, 0));
    assert_true(cap_sig_wr(0, 0, 1, 0, 0));
    assert_false(cap_sig_wr(14, 16, 1, 0, 0));
    assert_true(cap_sig_wr(15, 16, 1, 0, 0));
    assert_false(cap_sig_wr(20, 16, 4, 1, 0)); /* not a chunk's end */
    assert_true(cap_sig_wr(0, 16, 4, 3, 1));   /* the message's last, asked for */
}

static void test_track(void **state)
{
    cap_track_t t;
    cap_pending_t done[8];
    int impl[8];
    size_t k;
    (void)state;
    assert_int_equal(cap_track_init(&t, 8), HS_OK);
    /* message 0: 3 WRs (seq 0-2), message 1: 1 WR (seq 3), message 2: 2 WRs (seq 4-5) */
    assert_int_equal(cap_track_take(&t, 3), 0);
    assert_int_equal(cap_track_push(&t, 0, 2), HS_OK);
    assert_int_equal(cap_track_take(&t, 1), 3);
    assert_int_equal(cap_track_push(&t, 1, 3), HS_OK);
    assert_int_equal(cap_track_take(&t, 2), 4);
    assert_int_equal(cap_track_push(&t, 2, 5), HS_OK);
    assert_int_equal(cap_track_outstanding(&t), 6);
    /* a signalled completion of seq 3 covers messages 0 (implicitly) and 1 */
    k = cap_track_complete(&t, 3, done, impl, 8);
    assert_int_equal(k, 2);
    assert_int_equal(done[0].msg, 0);
    assert_int_equal(impl[0], 1);
    assert_int_equal(done[1].msg, 1);
    assert_int_equal(impl[1], 0);
    assert_int_equal(cap_track_outstanding(&t), 2);
    /* bounded hand-back: max 0 returns nothing and keeps the message */
    assert_int_equal(cap_track_complete(&t, 5, done, impl, 0), 0);
    assert_int_equal(cap_track_outstanding(&t), 0);
    k = cap_track_complete(&t, 5, done, impl, 8);
    assert_int_equal(k, 1);
    assert_int_equal(done[0].msg, 2);
    /* a full ring is an internal error, not an overwrite */
    for (int i = 0; i < 8; i++)
        assert_int_equal(cap_track_push(&t, 10 + (uint64_t)i, 6 + (uint64_t)i), HS_OK);
    assert_int_equal(cap_track_push(&t, 99, 99), HS_ERR_INTERNAL);
    cap_track_release(&t);
}

/* The bounded busy wait reads the clock only every CAP_WAIT_CHECK_MASK + 1 spins: the first
 * read starts the deadline, so with timeout 0 it expires at the second read; with a timeout,
 * never before it has passed. */
static void test_wait_expired(void **state)
{
    cap_ep_t ep = {.timeout_ns = 0};
    cap_wait_t w = {0};
    unsigned spins = 1;
    uint64_t t0;
    (void)state;
    while (!cap_wait_expired(&ep, &w))
        spins++;
    assert_int_equal(spins, 2 * (CAP_WAIT_CHECK_MASK + 1));
    ep.timeout_ns = 20000000; /* 20 ms */
    memset(&w, 0, sizeof(w));
    t0 = hs_now_ns();
    while (!cap_wait_expired(&ep, &w))
        ;
    assert_true(hs_now_ns() - t0 >= ep.timeout_ns);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_class),     cmocka_unit_test(test_route_switch_immediate),
        cmocka_unit_test(test_route_hysteresis), cmocka_unit_test(test_cfg_from_profile),
        cmocka_unit_test(test_cfg_limits),       cmocka_unit_test(test_segments),
        cmocka_unit_test(test_signalling_chunks), cmocka_unit_test(test_signalling_out_of_turn),
        cmocka_unit_test(test_track),           cmocka_unit_test(test_profile_effective),
        cmocka_unit_test(test_wait_expired),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
