/* test_sim_golden.c - tesh-style golden timelines for the simulator and the model.
 *
 * Each tests/golden/sim/<name>.tesh file holds a small trace, the profile overrides, and
 * the hand-computed latency of every message (the computation is written out in the
 * file's comments, from MODEL.md's formulas). Both engines must reproduce every figure to
 * 2 ns: they share MODEL.md's semantics and model/path_rules.h's rules. One file per rule:
 *
 *   queue depth / window, forced close at a switch   ll_window_switch
 *   coalescing count, timer, forced close at the end bw_moderation, timer_event
 *   drain on switch + its fixed cost                 ll_window_switch, hysteresis_perturb
 *   hysteresis, perturbation window                  hysteresis_perturb
 *   L1 footprint term (hint set / no hint), inline   l1_term, l1_nohint
 *   segmentation, chunks, split and fixed costs      segment_split
 *   size factors, packets of a chunk                 size_factors
 *   closed loop, forced close under a timer          closed_timer
 *   the link's occupancy per WR and per packet       wr_occupancy
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "model/model.h"
#include "model/profile/profile.h"
#include "sim/sim.h"
#include "tests/hs_test.h"

#define MAX_MSGS 64
#define TOL_US 0.002

typedef struct {
    trace_t *tr;
    profile_t *prof;
    pred_opts_t opts;
    uint64_t hint;
    int path[MAX_MSGS];
    double lat_us[MAX_MSGS];
    int line[MAX_MSGS];
    char tkey[8][32];
    double tval[8];
    size_t ntotals;
} golden_t;

static void golden_setting(golden_t *g, const char *s, const char *file, int ln)
{
    char buf[128];

    if (sscanf(s, "hint %127s", buf) == 1) {
        assert_int_equal(hs_parse_size(buf, &g->hint), HS_OK);
    } else if (sscanf(s, "mode %127s", buf) == 1) {
        g->opts.mode = strcmp(buf, "closed") == 0 ? PRED_CLOSED : PRED_OPEN;
    } else if (sscanf(s, "set %127s", buf) == 1) {
        if (profile_set(g->prof, buf) != HS_OK)
            fail_msg("%s:%d: bad setting '%s'", file, ln, buf);
    } else {
        fail_msg("%s:%d: unknown setting '%s'", file, ln, s);
    }
}

static void golden_load(golden_t *g, const char *file)
{
    FILE *f = fopen(file, "r");
    char line[512], p[8];
    double lat;
    int ln = 0;

    assert_non_null(f);
    memset(g, 0, sizeof(*g));
    assert_int_equal(trace_new(&g->tr), HS_OK);
    assert_int_equal(profile_load("generic", &g->prof), HS_OK);
    g->opts.flows = 1;
    while (fgets(line, sizeof(line), f)) {
        trace_rec_t r = {0};
        unsigned long long t, sz, done;
        int nf;
        ln++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '!') {
            golden_setting(g, line + 2, file, ln);
        } else if ((nf = sscanf(line, "$ post %llu size %llu done %llu", &t, &sz, &done)) >= 2) {
            assert_true(g->tr->n < MAX_MSGS);
            r.t_post_ns = t;
            r.t_done_ns = nf == 3 ? done : TRACE_TIME_UNKNOWN;
            r.size_bytes = sz;
            assert_int_equal(trace_push(g->tr, &r), HS_OK);
        } else if (sscanf(line, "> path %7s lat_us %lf", p, &lat) == 2) {
            if (g->tr->n == 0)
                fail_msg("%s:%d: an expectation before any message", file, ln);
            g->lat_us[g->tr->n - 1] = lat;
            g->path[g->tr->n - 1] = strcmp(p, "LL") == 0 ? TRACE_F_PATH_LL : TRACE_F_PATH_BW;
            g->line[g->tr->n - 1] = ln;
        } else if (line[0] == '=' && g->ntotals < 8) {
            if (sscanf(line, "= %31s %lf", g->tkey[g->ntotals], &g->tval[g->ntotals]) == 2)
                g->ntotals++;
        }
    }
    fclose(f);
}

static double golden_total(const pred_raw_t *raw, const char *key)
{
    if (strcmp(key, "switches") == 0)
        return (double)raw->switches;
    if (strcmp(key, "drain_us_total") == 0)
        return raw->drain_us_total;
    if (strcmp(key, "sq_full_stalls") == 0)
        return (double)raw->sq_full_stalls;
    if (strcmp(key, "l1_us") == 0)
        return raw->costs.l1_us;
    fail_msg("unknown total '%s'", key);
    return 0;
}

static int golden_check(const golden_t *g, const pred_engine_ops_t *eng, const char *file)
{
    float lat[MAX_MSGS];
    uint8_t path[MAX_MSGS];
    pred_raw_t raw = {.lat_us = lat, .path = path};
    int bad = 0;
    size_t i;

    assert_int_equal(eng->replay(g->tr, g->prof, &g->opts, g->hint, &raw), HS_OK);
    for (i = 0; i < g->tr->n; i++) {
        int ok = fabs(lat[i] - g->lat_us[i]) <= TOL_US && path[i] == g->path[i];
        printf("%s %s:%d: msg %zu: expected %s %.3f us, got %s %.3f us%s\n", eng->name, file,
               g->line[i], i, g->path[i] == TRACE_F_PATH_LL ? "LL" : "BW", g->lat_us[i],
               path[i] == TRACE_F_PATH_LL ? "LL" : "BW", lat[i], ok ? "" : "   <-- MISMATCH");
        bad += !ok;
    }
    for (i = 0; i < g->ntotals; i++) {
        double v = golden_total(&raw, g->tkey[i]);
        int ok = fabs(v - g->tval[i]) <= TOL_US;
        printf("%s %s: %s expected %.3f got %.3f%s\n", eng->name, file, g->tkey[i],
               g->tval[i], v, ok ? "" : "   <-- MISMATCH");
        bad += !ok;
    }
    return bad;
}

static void run_golden(const char *name)
{
    char rel[256];
    const char *file;
    golden_t g;
    int bad;

    snprintf(rel, sizeof(rel), "tests/golden/sim/%s.tesh", name);
    file = hs_test_src(rel);
    golden_load(&g, file);
    bad = golden_check(&g, &sim_engine_ops, file);
    bad += golden_check(&g, &model_engine_ops, file);
    trace_free(g.tr);
    profile_free(g.prof);
    assert_int_equal(bad, 0);
}

#define GOLDEN(name)                                                                       \
    static void test_##name(void **state)                                                  \
    {                                                                                      \
        (void)state;                                                                       \
        run_golden(#name);                                                                 \
    }
GOLDEN(ll_window_switch)
GOLDEN(bw_moderation)
GOLDEN(hysteresis_perturb)
GOLDEN(timer_event)
GOLDEN(l1_term)
GOLDEN(l1_nohint)
GOLDEN(segment_split)
GOLDEN(size_factors)
GOLDEN(closed_timer)
GOLDEN(wr_occupancy)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ll_window_switch), cmocka_unit_test(test_bw_moderation),
        cmocka_unit_test(test_hysteresis_perturb), cmocka_unit_test(test_timer_event),
        cmocka_unit_test(test_l1_term), cmocka_unit_test(test_l1_nohint),
        cmocka_unit_test(test_segment_split), cmocka_unit_test(test_size_factors),
        cmocka_unit_test(test_closed_timer), cmocka_unit_test(test_wr_occupancy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
