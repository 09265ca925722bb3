/* test_sim_agree.c - the simulator agrees with the analytical model (issue 4, item 2).
 *
 * For every sample trace in traces/samples/ and every built-in profile: p50, p99 and
 * throughput of one flow within 5% for hint 0, the model's recommended hint (objective
 * p99) and "everything LL" (the largest size), in open loop, and in closed loop for hint 0
 * and everything-LL where the trace has completion times. Every comparison is printed with both
 * numbers, so a disagreement shows which figure and by how much.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "model/profile/profile.h"
#include "model/recommend/recommend.h"
#include "sim/sim.h"
#include "traces/trace_gen.h"
#include "tests/hs_test.h"

#define AGREE_TOL 0.05

static int close_enough(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return m == 0 || fabs(a - b) / m <= AGREE_TOL;
}

static int compare(const char *what, double model, double sim)
{
    int ok = close_enough(model, sim);
    printf("    %-16s model %12.3f  sim %12.3f  %+6.2f%%%s\n", what, model, sim,
           model != 0 ? (sim - model) / model * 100 : 0, ok ? "" : "   <-- DISAGREE");
    return !ok;
}

static int agree_one(const trace_t *tr, const profile_t *p, uint64_t hint, const char *label,
                     pred_mode_t mode)
{
    pred_opts_t o = {.mode = mode, .flows = 1};
    pred_ctx_t cm = {&model_engine_ops, tr, p, &o}, cs = {&sim_engine_ops, tr, p, &o};
    pred_result_t rm, rs;
    int bad = 0;

    assert_int_equal(pred_run(&cm, hint, 0, &rm), HS_OK);
    assert_int_equal(pred_run(&cs, hint, 0, &rs), HS_OK);
    printf("  hint %llu (%s), %s loop\n", (unsigned long long)hint, label,
           mode == PRED_OPEN ? "open" : "closed");
    bad += compare("p50_us", rm.p50_us, rs.p50_us);
    bad += compare("p99_us", rm.p99_us, rs.p99_us);
    bad += compare("throughput_gbps", rm.throughput_gbps, rs.throughput_gbps);
    pred_result_release(&rm);
    pred_result_release(&rs);
    return bad;
}

static int closed_ok(const trace_t *tr)
{
    size_t i;

    for (i = 0; i + 1 < tr->n; i++)
        if (tr->recs[i].t_done_ns == TRACE_TIME_UNKNOWN)
            return 0;
    return 1;
}

static uint64_t recommended_hint(const trace_t *tr, const profile_t *p)
{
    rec_opts_t ro = {.objective = OBJ_P99, .threads = 2, .pred = {.flows = 1}};
    rec_report_t rep;
    uint64_t h;

    assert_int_equal(rec_run(&model_engine_ops, tr, p, &ro, &rep), HS_OK);
    h = rep.results[rep.winner].hint_bytes;
    rec_report_release(&rep);
    return h;
}

static int agree_trace(const char *path, const char *prof_name)
{
    trace_t *tr = NULL;
    profile_t *p = NULL;
    uint64_t all_ll = 0, rec;
    size_t i;
    int bad = 0;

    assert_int_equal(trace_load(path, &tr), HS_OK);
    assert_int_equal(profile_load(prof_name, &p), HS_OK);
    for (i = 0; i < tr->n; i++)
        if (tr->recs[i].size_bytes > all_ll)
            all_ll = tr->recs[i].size_bytes;
    rec = recommended_hint(tr, p);
    printf("%s, profile %s (%zu records)\n", path, prof_name, tr->n);
    bad += agree_one(tr, p, 0, "no hint", PRED_OPEN);
    bad += agree_one(tr, p, rec, "recommended by the model, p99", PRED_OPEN);
    bad += agree_one(tr, p, all_ll, "everything LL", PRED_OPEN);
    if (closed_ok(tr)) { /* ping-pong replay needs every completion time */
        bad += agree_one(tr, p, 0, "no hint", PRED_CLOSED);
        bad += agree_one(tr, p, all_ll, "everything LL", PRED_CLOSED);
    }
    profile_free(p);
    trace_free(tr);
    return bad;
}

static void test_agree_samples(void **state)
{
    const char *dir = hs_test_src("traces/samples");
    const char *const *profs = profile_builtin_names();
    char dir_copy[1024], path[1300];
    struct dirent *de;
    int bad = 0, ntraces = 0;
    DIR *d;

    (void)state;
    snprintf(dir_copy, sizeof(dir_copy), "%s", dir);
    d = opendir(dir_copy);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name), k;
        if (len < 5 || strcmp(de->d_name + len - 4, ".hst") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir_copy, de->d_name);
        for (k = 0; profs[k]; k++)
            bad += agree_trace(path, profs[k]);
        ntraces++;
    }
    closedir(d);
    printf("%d sample traces, %d disagreement(s) beyond %.0f%%\n", ntraces, bad,
           AGREE_TOL * 100);
    assert_true(ntraces > 0);
    assert_int_equal(bad, 0);
}

/* A path switch before every message, each followed by seed 000's perturbation window
 * (every message 2.5x its own latency): 64 B messages on the LL path and 8 KB and 20 KB
 * ones (2 and 5 WRs of 4 KB, so split into segments, which costs bw.split_ns) on the BW
 * path. The model once added the split cost after the perturbation and the simulator
 * before it (MODEL.md 3 and 4 put it inside): p50 39 us against 118 us at hint 64. Both
 * loops, hints 64 and 4K; the perturbation must have been applied (drain cost > 0). */
static void test_agree_switch_split(void **state)
{
    static const uint64_t hints[] = {64, 4096};
    trace_t *tr = NULL;
    profile_t *p = NULL;
    int bad = 0;

    (void)state;
    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < 300; i++) {
        trace_rec_t r = {.t_post_ns = 1000000 + i * 20000,
                         .size_bytes = i % 2 ? (i % 3 ? 8192 : 20480) : 64};
        r.t_done_ns = r.t_post_ns + 15000;
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    assert_int_equal(profile_load("seed000", &p), HS_OK);
    for (size_t h = 0; h < 2; h++) {
        for (int closed = 0; closed < 2; closed++) {
            pred_opts_t o = {.mode = closed ? PRED_CLOSED : PRED_OPEN, .flows = 1};
            pred_ctx_t c = {&model_engine_ops, tr, p, &o};
            pred_result_t rm;
            assert_int_equal(pred_run(&c, hints[h], 0, &rm), HS_OK);
            assert_true(rm.costs.drain_us > 0 && rm.switches > 100);
            pred_result_release(&rm);
            bad += agree_one(tr, p, hints[h], "a switch before every message",
                             closed ? PRED_CLOSED : PRED_OPEN);
        }
    }
    profile_free(p);
    trace_free(tr);
    assert_int_equal(bad, 0);
}

/* Messages of tr whose latency differs between the model and the simulator by more than
 * 0.1% (of at least 1 us), under profile p, hint and mode; the first few are printed. */
static size_t messages_apart(const trace_t *tr, const profile_t *p, uint64_t hint,
                             pred_mode_t mode)
{
    pred_opts_t o = {.mode = mode, .flows = 1};
    pred_raw_t m = {0}, s = {0};
    size_t apart = 0;

    m.lat_us = calloc(tr->n, sizeof(float));
    s.lat_us = calloc(tr->n, sizeof(float));
    m.path = calloc(tr->n, 1);
    s.path = calloc(tr->n, 1);
    assert_true(m.lat_us && s.lat_us && m.path && s.path);
    assert_int_equal(model_engine_ops.replay(tr, p, &o, hint, &m), HS_OK);
    assert_int_equal(sim_engine_ops.replay(tr, p, &o, hint, &s), HS_OK);
    for (size_t i = 0; i < tr->n; i++) {
        float a = m.lat_us[i], b = s.lat_us[i];
        if (fabsf(a - b) <= 1e-3f * (a > 1 ? a : 1) && m.path[i] == s.path[i])
            continue;
        if (apart++ < 3)
            printf("    message %zu (%llu B): model %.4f us, sim %.4f us\n", i,
                   (unsigned long long)tr->recs[i].size_bytes, a, b);
    }
    free(m.lat_us);
    free(s.lat_us);
    free(m.path);
    free(s.path);
    return apart;
}

/* Message by message, on seeded random traces of the workloads whose batches close by the
 * moderation timer (they mix one-WR messages, bursts, phases, cold starts and large
 * messages), every built-in profile, hint 0 (the BW path, timer and all) and 4K, open and
 * closed loop: the same latency and path for every message. The simulator's timer once ran
 * as an actor of its own, and where its firing and a chunk's completion fell at one
 * instant, the two engines ordered them apart: 56 messages over these replays were
 * reported one moderation period apart. */
static void test_agree_messages(void **state)
{
    static const char *const workloads[] = {"kv", "burst", "phased", "coldstart", "wide"};
    static const uint64_t hints[] = {0, 4096};
    const char *const *profs = profile_builtin_names();
    char *dir = hs_test_tmpdir(), path[4200];
    size_t apart = 0, replays = 0;

    (void)state;
    snprintf(path, sizeof(path), "%s/t.hst", dir);
    for (size_t w = 0; w < sizeof(workloads) / sizeof(workloads[0]); w++) {
        for (uint64_t seed = 11; seed <= 23; seed += 12) {
            trace_t *tr = NULL;
            assert_int_equal(trace_gen_run(workloads[w], 3000, seed, NULL, 0, path), HS_OK);
            assert_int_equal(trace_load(path, &tr), HS_OK);
            for (size_t k = 0; profs[k]; k++) {
                profile_t *p = NULL;
                assert_int_equal(profile_load(profs[k], &p), HS_OK);
                for (size_t h = 0; h < 2; h++) {
                    for (int closed = 0; closed < 1 + closed_ok(tr); closed++) {
                        size_t n = messages_apart(tr, p, hints[h],
                                                  closed ? PRED_CLOSED : PRED_OPEN);
                        if (n)
                            printf("  %s seed %llu, %s, hint %llu, %s loop: %zu message(s) "
                                   "apart\n", workloads[w], (unsigned long long)seed,
                                   profs[k], (unsigned long long)hints[h],
                                   closed ? "closed" : "open", n);
                        apart += n;
                        replays++;
                    }
                }
                profile_free(p);
            }
            trace_free(tr);
        }
    }
    printf("%zu replays message by message, %zu message(s) apart\n", replays, apart);
    unlink(path);
    rmdir(dir);
    free(dir);
    assert_true(replays >= 60);
    assert_int_equal(apart, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agree_samples),
        cmocka_unit_test(test_agree_switch_split),
        cmocka_unit_test(test_agree_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
