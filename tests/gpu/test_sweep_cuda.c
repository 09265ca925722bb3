/* test_sweep_cuda.c - the CUDA sweep engine against the CPU model (label gpu; exits 77 with
 * a message where there is no CUDA device).
 *
 * Every sample trace x built-in profile x open and closed loop, HS_POINTS_N points each
 * (tests/hs_points.h: every profile parameter varied at random within its bounds, segments
 * and MTUs that are not powers of two among them, the size factors and the jitter.*
 * quantiles too (MODEL.md section 8: the points with jitter counted, a tenth at least
 * required), and hints from none to everything-LL). Each point is replayed on the GPU in
 * one batch and by model_engine_ops on the CPU: against the CPU's base replay
 * (pred_opts_t.every_chunk, what the GPU runs) every figure equal, bit for bit; against the
 * CPU model as the sweep runs it (its shortcuts on, which move times only where the move is
 * exact: tests/test_model_grid.c) every figure equal too, and each cost term within 1e-9
 * (its sums added in another order).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "tests/hs_points.h"
#include "tests/hs_test.h"
#include "model/model.h"
#include "model/path_rules.h"
#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "sweep/sweep_eval_cuda.h"
#include "traces/trace_stats.h"

#define NPOINTS HS_POINTS_N
#define REL 1e-9

static scu_ctx_t *g_cu;
static uint64_t g_rng = 0x243F6A8885A308D3ull;
static size_t g_checked, g_bad_base, g_bad, g_jitter;

static int close_rel(double a, double b, double scale)
{
    return a == b || fabs(a - b) <= REL * fmax(fmax(fabs(a), fabs(b)), scale);
}

#define FIGS(X)                                                                              \
    X(p50_us) X(p90_us) X(p99_us) X(p999_us) X(max_us) X(mean_us) X(throughput_gbps)          \
    X(ll_fraction) X(drain_us_total)
#define COSTS(X) X(queue_us) X(drain_us) X(coalesce_us) X(l1_us) X(base_us)

/* The figures of g that differ from c's (at all; the cost terms beyond REL unless exact);
 * the first few are printed when say is set. */
static int differ(const char *what, size_t i, const pred_result_t *g, const pred_result_t *c,
                  int exact, int say)
{
    double scale = c->mean_us * (double)c->count * 1e-3; /* the costs' magnitude */
    int n = 0;

#define CMP(f)                                                                               \
    if (g->f != c->f) {                                                                      \
        if (say && n < 3)                                                                    \
            printf("%s point %zu hint %llu: " #f " GPU %.17g CPU %.17g%s\n", what, i,         \
                   (unsigned long long)c->hint_bytes, g->f, c->f, exact ? " (base)" : "");   \
        n++;                                                                                 \
    }
    FIGS(CMP)
#undef CMP
#define CMPC(f)                                                                              \
    if (exact ? g->costs.f != c->costs.f : !close_rel(g->costs.f, c->costs.f, scale)) {      \
        if (say && n < 3)                                                                    \
            printf("%s point %zu: costs." #f " GPU %.17g CPU %.17g%s\n", what, i, g->costs.f, \
                   c->costs.f, exact ? " (base)" : "");                                      \
        n++;                                                                                 \
    }
    COSTS(CMPC)
#undef CMPC
    n += g->count != c->count;
    n += g->switches != c->switches;
    n += g->sq_full_stalls != c->sq_full_stalls;
    return n;
}

static void run_grid(const hs_cell_t *cell)
{
    const trace_t *tr = cell->tr;
    pred_mode_t mode = cell->o.mode;
    profile_t *pts[NPOINTS];
    uint64_t hints[NPOINTS];
    pred_result_t gpu[NPOINTS];
    pred_opts_t o = cell->o;
    char what[256];
    for (size_t i = 0; i < NPOINTS; i++)
        pts[i] = hs_point_draw(cell, &g_rng, &hints[i]);
    snprintf(what, sizeof(what), "%s %s %s", cell->path, cell->profile,
             mode == PRED_OPEN ? "open" : "closed");
    assert_int_equal(scu_replay_batch(g_cu, tr, mode, pred_all_cold(tr),
                                      (const profile_t *const *)pts, hints, NPOINTS, gpu, NULL),
                     HS_OK);
    for (size_t i = 0; i < NPOINTS; i++) {
        pred_ctx_t ctx = {&model_engine_ops, tr, pts[i], &o};
        pred_result_t c, b;
        assert_int_equal(pred_run(&ctx, hints[i], 0, &c), HS_OK);
        o.every_chunk = 1; /* the base replay, every chunk: what the GPU runs */
        assert_int_equal(pred_run(&ctx, hints[i], 0, &b), HS_OK);
        o.every_chunk = 0;
        g_bad_base += differ(what, i, &gpu[i], &b, 1, 1) > 0;
        g_bad += differ(what, i, &gpu[i], &c, 0, 1) > 0;
        g_checked++;
        g_jitter += pred_has_jitter(pts[i]) != 0;
        pred_result_release(&c);
        pred_result_release(&b);
        pred_result_release(&gpu[i]);
        profile_free(pts[i]);
    }
}

static void test_samples(void **state)
{
    (void)state;
    size_t ntraces = hs_points_samples(run_grid);

    printf("%zu points on %zu traces: %zu differ from the CPU's base replay (bit for bit), %zu "
           "from the CPU model (its costs beyond %g); %zu points with jitter\n", g_checked,
           ntraces, g_bad_base, g_bad, REL, g_jitter);
    assert_true(ntraces >= 8);
    assert_true(g_jitter >= g_checked / 10);
    assert_int_equal(g_bad_base, 0);
    assert_int_equal(g_bad, 0);
}

/* One replay alone and among others: the same answers whatever the batch. */
static void test_batch_sizes(void **state)
{
    trace_t *tr;
    profile_t *p;
    const profile_t *ps[3];
    uint64_t hints[3] = {0, 4096, 0};
    pred_result_t r[3], c;
    pred_opts_t o;

    (void)state;
    memset(&o, 0, sizeof(o));
    assert_int_equal(trace_load_posts(hs_test_src("traces/samples/phased.hst"), 0, &tr), HS_OK);
    assert_int_equal(profile_load("seed000", &p), HS_OK);
    ps[0] = ps[1] = ps[2] = p;
    /* one replay, then three: the same answers whatever the batch */
    assert_int_equal(scu_replay_batch(g_cu, tr, PRED_OPEN, 0, ps, hints, 1, r, NULL), HS_OK);
    assert_int_equal(pred_run(&(pred_ctx_t){&model_engine_ops, tr, p, &o}, 0, 0, &c), HS_OK);
    assert_int_equal(differ("phased seed000 alone", 0, &r[0], &c, 0, 1), 0);
    pred_result_release(&r[0]);
    assert_int_equal(scu_replay_batch(g_cu, tr, PRED_OPEN, 0, ps, hints, 3, r, NULL), HS_OK);
    assert_int_equal(differ("phased seed000 of 3", 0, &r[0], &c, 0, 1), 0);
    assert_int_equal(differ("phased seed000 of 3", 2, &r[2], &c, 0, 1), 0);
    assert_true(r[1].ll_fraction > 0);
    for (int i = 0; i < 3; i++)
        pred_result_release(&r[i]);
    pred_result_release(&c);
    profile_free(p);
    trace_free(tr);
}

/* A trace changed in place between two batches (the same address, length and mode): the
 * second batch replays the changed records, not the copy the first left on the device. */
static void test_trace_changed(void **state)
{
    trace_t *tr;
    profile_t *p;
    const profile_t *ps[1];
    uint64_t hints[1] = {4096};
    pred_result_t g0, g1, c;
    pred_opts_t o;

    (void)state;
    memset(&o, 0, sizeof(o));
    assert_int_equal(trace_load_posts(hs_test_src("traces/samples/phased.hst"), 0, &tr), HS_OK);
    assert_int_equal(profile_load("generic", &p), HS_OK);
    ps[0] = p;
    assert_int_equal(scu_replay_batch(g_cu, tr, PRED_OPEN, 0, ps, hints, 1, &g0, NULL), HS_OK);
    for (size_t i = 0; i < tr->n; i++)
        tr->recs[i].size_bytes = tr->recs[i].size_bytes * 3 + 1;
    assert_int_equal(scu_replay_batch(g_cu, tr, PRED_OPEN, 0, ps, hints, 1, &g1, NULL), HS_OK);
    assert_int_equal(pred_run(&(pred_ctx_t){&model_engine_ops, tr, p, &o}, hints[0], 0, &c),
                     HS_OK);
    assert_true(g1.mean_us != g0.mean_us);
    assert_int_equal(differ("phased, sizes changed in place", 0, &g1, &c, 0, 1), 0);
    pred_result_release(&g0);
    pred_result_release(&g1);
    pred_result_release(&c);
    profile_free(p);
    trace_free(tr);
}

/* Every warp shape the kernel has code for (a path is direct when its batch is one WR and it
 * has no timer): the generic profile (LL direct), both paths direct, BW direct with LL
 * batched, a direct LL path whose messages are split into chunks, the first two with a
 * switch's perturbation, and the first with a perturbation window of factor 1 (the plain
 * code, SCU_PLAIN, as with no window: its term is 0); one point per shape and hint, so
 * each launch's warps hold one replay and run that shape's code. Each on two traces:
 * pingpong's 8 B messages take one WR on both paths everywhere (SCU_ONEWR on both),
 * phased's up to 2 MB are segmented on the BW path (64 KB) and, with ll.seg_bytes, on the
 * LL path (one WR on LL alone, or on neither). Every figure equals the CPU's base replay bit
 * for bit, open and closed loop. */
static void test_shapes(void **state)
{
    static const char *const sets[][5] = {
        {NULL},
        {"bw.coal_count=1", "bw.signal_every=1", "bw.coal_period_us=0", NULL},
        {"bw.coal_count=1", "bw.signal_every=1", "ll.coal_count=4", NULL},
        {"ll.seg_bytes=1024", "bw.coal_period_us=0", NULL},
        {"switch.perturb_window_us=20", "switch.perturb_factor=1.5", NULL},
        {"bw.coal_count=1", "bw.signal_every=1", "bw.coal_period_us=0",
         "switch.perturb_window_us=20", "switch.perturb_factor=1.5"},
        {"switch.perturb_window_us=20", "switch.perturb_factor=1", NULL},
    };
    static const uint64_t hint_set[] = {0, 256, 4096, 65536, 1000000000000ull};
    enum { NS = sizeof(sets) / sizeof(sets[0]), NH = sizeof(hint_set) / sizeof(hint_set[0]) };
    const char *const traces[] = {"traces/samples/phased.hst", "traces/samples/pingpong.hst"};
    size_t checked = 0;

    (void)state;
    for (size_t t = 0; t < 2; t++) {
        for (int mode = PRED_OPEN; mode <= PRED_CLOSED; mode++) {
            trace_t *tr;
            profile_t *ps[NS * NH];
            uint64_t hints[NS * NH];
            pred_result_t gpu[NS * NH];
            pred_opts_t o;
            memset(&o, 0, sizeof(o));
            o.mode = (pred_mode_t)mode;
            o.every_chunk = 1;
            assert_int_equal(trace_load_posts(hs_test_src(traces[t]), 0, &tr), HS_OK);
            trace_stats_t ts;
            assert_int_equal(trace_stats_compute(tr, &ts), HS_OK);
            if (t == 0) /* the premises above */
                assert_true(ts.size_max > 65536);
            else
                assert_true(ts.size_max <= 1024);
            for (size_t k = 0; k < NS * NH; k++) {
                assert_int_equal(profile_load("generic", &ps[k]), HS_OK);
                for (int j = 0; j < 5 && sets[k / NH][j]; j++)
                    assert_int_equal(profile_set(ps[k], sets[k / NH][j]), HS_OK);
                hints[k] = hint_set[k % NH];
            }
            if (pred_check_trace(tr, ps[0], &o) != HS_OK) { /* closed loop, no completions */
                for (size_t k = 0; k < NS * NH; k++)
                    profile_free(ps[k]);
                trace_free(tr);
                continue;
            }
            assert_int_equal(scu_replay_batch(g_cu, tr, (pred_mode_t)mode, pred_all_cold(tr),
                                              (const profile_t *const *)ps, hints, NS * NH, gpu,
                                              NULL),
                             HS_OK);
            for (size_t k = 0; k < NS * NH; k++) {
                pred_result_t b;
                char what[128];
                snprintf(what, sizeof(what), "%s shape %zu %s", traces[t], k / NH,
                         mode == PRED_OPEN ? "open" : "closed");
                assert_int_equal(pred_run(&(pred_ctx_t){&model_engine_ops, tr, ps[k], &o},
                                          hints[k], 0, &b),
                                 HS_OK);
                assert_int_equal(differ(what, k, &gpu[k], &b, 1, 1), 0);
                checked++;
                pred_result_release(&b);
                pred_result_release(&gpu[k]);
                profile_free(ps[k]);
            }
            trace_free(tr);
        }
    }
    printf("%zu points of %d warp shapes: every figure equal to the CPU's base replay\n",
           checked, (int)NS);
    assert_true(checked >= 2 * NS * NH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_sizes),
        cmocka_unit_test(test_trace_changed),
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_shapes),
    };

    if (scu_open(-1, &g_cu) != HS_OK) {
        printf("SKIP: no CUDA device (the CUDA sweep engine needs one)\n");
        return 77;
    }
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    scu_close(g_cu);
    return rc;
}
