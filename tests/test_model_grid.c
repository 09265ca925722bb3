/* test_model_grid.c - the model's shortcuts (the skip, the entry, the memo, the closed
 * forms) against its chunk-by-chunk replay (pred_opts_t.every_chunk), over the grid the
 * GPU engine is checked on (tests/hs_points.h): every sample trace x built-in profile x
 * open and closed loop, HS_POINTS_N what-if points each. Every message's latency and path,
 * the switches, the stalls, the last completion, the switches' drain and the queue cost
 * must be equal bit for bit (an accelerator moves a time only where the move is exact:
 * MODEL.md section 3), and each other cost term within 1e-9 of the replay's (the
 * perturbation's drain and the L1 term summed in another order). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "tests/hs_points.h"
#include "tests/hs_test.h"

#define REL 1e-9

static uint64_t g_rng = 0x243F6A8885A308D3ull;
static size_t g_points;
static uint64_t g_memo, g_skipped, g_bound, g_entry, g_serial;

static void replay(const trace_t *tr, const profile_t *p, const pred_opts_t *o, uint64_t hint,
                   pred_raw_t *raw)
{
    memset(raw, 0, sizeof(*raw));
    raw->lat_us = calloc(tr->n, sizeof(*raw->lat_us));
    raw->path = calloc(tr->n, 1);
    assert_non_null(raw->lat_us);
    assert_non_null(raw->path);
    assert_int_equal(model_engine_ops.replay(tr, p, o, hint, raw), HS_OK);
}

static void raw_free(pred_raw_t *r)
{
    free(r->lat_us);
    free(r->path);
}

/* What differs between b (the shortcuts) and a (every chunk), into msg; 0 when nothing. */
static int differ(const trace_t *tr, const pred_raw_t *a, const pred_raw_t *b, char *msg,
                  size_t len)
{
    for (size_t i = 0; i < tr->n; i++)
        if (memcmp(&a->lat_us[i], &b->lat_us[i], sizeof(float)) || a->path[i] != b->path[i])
            return snprintf(msg, len, "message %zu: %.9g us (path %u) chunk by chunk, %.9g us "
                            "(path %u) with the shortcuts", i, a->lat_us[i], a->path[i],
                            b->lat_us[i], b->path[i]);
    if (a->switches != b->switches || a->sq_full_stalls != b->sq_full_stalls ||
        a->t_last_done_us != b->t_last_done_us || a->drain_us_total != b->drain_us_total)
        return snprintf(msg, len, "switches %llu/%llu, stalls %llu/%llu, last completion "
                        "%.17g/%.17g, drain %.17g/%.17g (chunk by chunk/shortcuts)",
                        (unsigned long long)a->switches, (unsigned long long)b->switches,
                        (unsigned long long)a->sq_full_stalls,
                        (unsigned long long)b->sq_full_stalls, a->t_last_done_us,
                        b->t_last_done_us, a->drain_us_total, b->drain_us_total);
    if (a->costs.queue_us != b->costs.queue_us) /* one term a message, added alike */
        return snprintf(msg, len, "costs.queue_us %.17g chunk by chunk, %.17g with the "
                        "shortcuts", a->costs.queue_us, b->costs.queue_us);
    double scale = a->t_last_done_us - a->t_first_post_us; /* the costs' magnitude */
#define CMP(f)                                                                                   if (fabs(a->costs.f - b->costs.f) > REL * fmax(fabs(a->costs.f), scale))                       return snprintf(msg, len, "costs." #f " %.17g chunk by chunk, %.17g with the "                               "shortcuts", a->costs.f, b->costs.f);
    CMP(drain_us) CMP(coalesce_us) CMP(l1_us) CMP(base_us)
#undef CMP
    return 0;
}

/* Which shortcuts, each on its own, differ from a (the failure's diagnosis). */
static void which_alone(const trace_t *tr, const profile_t *p, pred_opts_t o, uint64_t hint,
                        const pred_raw_t *a)
{
    static const char *const names[] = {"skip", "entry", "memo", "bound", "steady", "serial"};
    static const unsigned on[] = {MODEL_ACCEL_SKIP, MODEL_ACCEL_SKIP | MODEL_ACCEL_ENTRY,
                                  MODEL_ACCEL_MEMO, MODEL_ACCEL_BOUND,
                                  MODEL_ACCEL_BOUND | MODEL_ACCEL_STEADY, MODEL_ACCEL_SERIAL};
    char msg[512];

    for (size_t k = 0; k < sizeof(on) / sizeof(on[0]); k++) {
        pred_raw_t c;
        o.model_off = MODEL_ACCEL_ALL & ~on[k];
        replay(tr, p, &o, hint, &c);
        if (differ(tr, a, &c, msg, sizeof(msg)))
            print_message("  %s alone: %s\n", names[k], msg);
        raw_free(&c);
    }
}

static void run_grid(const hs_cell_t *c)
{
    const trace_t *tr = c->tr;
    pred_opts_t o = c->o;
    char msg[512];

    for (size_t i = 0; i < HS_POINTS_N; i++) {
        uint64_t hint;
        profile_t *p = hs_point_draw(c, &g_rng, &hint);
        pred_raw_t a, b;
        pred_opts_t every = {.mode = o.mode, .every_chunk = 1};
        replay(tr, p, &every, hint, &a);
        replay(tr, p, &o, hint, &b);
        if (differ(tr, &a, &b, msg, sizeof(msg))) {
            which_alone(tr, p, o, hint, &a);
            fail_msg("%s %s %s point %zu hint %llu: %s", strrchr(c->path, '/') + 1, c->profile,
                     o.mode == PRED_OPEN ? "open" : "closed", i, (unsigned long long)hint, msg);
        }
        g_memo += b.memo_hits;
        g_skipped += b.chunks_skipped;
        g_bound += b.bound_hits;
        g_entry += b.entry_hits;
        g_serial += b.serial_hits;
        g_points++;
        raw_free(&a);
        raw_free(&b);
        profile_free(p);
    }
}

static void test_grid(void **state)
{
    (void)state;
    size_t ntraces = hs_points_samples(run_grid);

    print_message("%zu points on %zu traces equal to the chunk-by-chunk replay; the shortcuts "
                  "applied: %llu memo, %llu entry, %llu closed form, %llu serial, %llu chunks "
                  "skipped\n", g_points, ntraces, (unsigned long long)g_memo,
                  (unsigned long long)g_entry, (unsigned long long)g_bound,
                  (unsigned long long)g_serial, (unsigned long long)g_skipped);
    assert_true(ntraces >= 8);
    /* each shortcut ran on the grid, so each was compared */
    assert_true(g_memo > 0 && g_entry > 0 && g_bound > 0 && g_serial > 0 && g_skipped > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
