/* test_model_memo.c - the memo's key (model/model_memo.c): a kept replay matches a path
 * whose pipeline is the same relative to t0, bit for bit (also shifted in time within its
 * binade, also with link and idle CPU times before t0 that cannot matter), and no path that
 * is not an exact shift of it (by rounding, or into another binade) or differs in any one
 * thing the replay reads: CPU, link, latest report, slots, each ring batch's close and WRs, the open
 * batch (WRs, latest completion, timer, members), size, path, perturbation side or an edge
 * inside the kept span. tests/test_model_skip.c checks that applying a kept replay gives
 * what replaying every chunk gives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/engine/mdl_memo.h"
#include "tests/hs_test.h"

#define T0 5.0e6
#define SIZE (1u << 20)

typedef struct {
    trace_t *tr;
    profile_t *p;
    pred_raw_t raw;
    mdl_state_t s;
} fix_t;

/* A BW path (index 1) with three closed batches, an open batch of one member, CPU and link
 * busy past t0 and a report pending, all `shift` later than the reference. */
static void setup(fix_t *f, double shift)
{
    pred_opts_t o = {.mode = PRED_OPEN};
    trace_rec_t r = {.t_post_ns = 0, .size_bytes = 64, .t_done_ns = 1000};

    memset(f, 0, sizeof(*f));
    assert_int_equal(trace_new(&f->tr), HS_OK);
    assert_int_equal(trace_push(f->tr, &r), HS_OK);
    assert_int_equal(profile_load("generic", &f->p), HS_OK);
    assert_int_equal(profile_set(f->p, "bw.seg_bytes=4096"), HS_OK);
    f->raw.lat_us = calloc(1, sizeof(float));
    f->raw.path = calloc(1, 1);
    assert_int_equal(mdl_state_init(&f->s, f->tr, f->p, &o, 0, &f->raw), HS_OK);
    mdl_state_t *s = &f->s;
    mdl_path_t *pa = &s->path[1];
    for (uint32_t j = 0; j < 3; j++)
        pa->ring[j] = (mdl_batch_t){T0 + shift + 100.0 * (j + 1), 16};
    pa->head = 0;
    pa->count = 3;
    pa->open_n = 1;
    pa->used = 3 * 16 + 1;
    pa->h1_ns = T0 + shift - 50;
    pa->timer_close_ns = T0 + shift + 2000;
    pa->nmem = 1;
    pa->mem[0] = (mdl_member_t){0, 0, T0 + shift - 50};
    pa->last_r_ns = T0 + shift + 300;
    s->cpu_free_ns = T0 + shift + 10;
    s->link_free_ns = T0 + shift + 500;
    s->pert_from_ns = s->pert_until_ns = -1;
}

static void teardown(fix_t *f)
{
    mdl_state_release(&f->s);
    free(f->raw.lat_us);
    free(f->raw.path);
    trace_free(f->tr);
    profile_free(f->p);
}

/* Keep f's BW path as seen from T0 in m (as mdl_memo_keep would; the span of the times it
 * restores: the path's, as its replay would have left it). */
static void keep(fix_t *f, mdl_memo_t *m)
{
    mdl_view_t out;

    memset(m, 0, sizeof(*m));
    assert_true(mdl_view_key(&f->s, &f->s.path[1], T0, &m->key));
    assert_true(mdl_view_out(&f->s, &f->s.path[1], T0, &out));
    assert_true(mdl_shift_keep(&m->shift, T0, out.t_min, out.t_max));
    m->valid = 1;
    m->size = SIZE;
    m->k = 1;
    m->pert = 0;
    m->span_ns = 1000;
}

static int match_msg(fix_t *f, mdl_memo_t *m, uint64_t size, int k, double shift)
{
    mdl_msg_t msg = {.pa = &f->s.path[1], .k = k, .size = size};

    return mdl_memo_matches(&f->s, m, &msg, T0 + shift);
}

static int matches(fix_t *f, mdl_memo_t *m, double shift)
{
    return match_msg(f, m, SIZE, 1, shift);
}

static void test_same_and_shifted_match(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;

    setup(&f, 0);
    keep(&f, &m);
    assert_true(matches(&f, &m, 0));
    assert_false(match_msg(&f, &m, SIZE + 1, 1, 0)); /* another size */
    assert_false(match_msg(&f, &m, SIZE, 0, 0));     /* the other path */
    m.valid = 0;
    assert_false(matches(&f, &m, 0));
    teardown(&f);
    setup(&f, 0);
    keep(&f, &m);
    teardown(&f);
    setup(&f, 123456.75); /* the same pipeline later */
    assert_true(matches(&f, &m, 123456.75));
    teardown(&f);
    /* the same pipeline to rounding only (one batch's close one ulp later): not an exact
     * shift, so not the same */
    setup(&f, 0);
    keep(&f, &m);
    f.s.path[1].ring[1].close_ns = nextafter(f.s.path[1].ring[1].close_ns, HUGE_VAL);
    assert_false(matches(&f, &m, 0));
    teardown(&f);
    /* the same pipeline in the next binade (T0 is in [2^22, 2^23) ns): each shifted time
     * would round to that binade's coarser grid */
    setup(&f, 0x1p23 - T0 + 0x1p10);
    assert_false(matches(&f, &m, 0x1p23 - T0 + 0x1p10));
    teardown(&f);
    /* a span reaching past its binade's end is not kept: no shift of it is exact */
    double t0 = 0x1p23 - 200;
    mdl_view_t out;
    setup(&f, t0 - T0);
    assert_true(mdl_view_out(&f.s, &f.s.path[1], t0, &out));
    assert_false(mdl_shift_keep(&m.shift, t0, out.t_min, out.t_max));
    teardown(&f);
}

/* Each of these changes one thing the replay reads; none may match. */
static void test_any_difference_misses(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;

    for (int c = 0; c < 12; c++) {
        setup(&f, 0);
        keep(&f, &m);
        mdl_state_t *s = &f.s;
        mdl_path_t *pa = &s->path[1];
        switch (c) {
        case 0: s->cpu_free_ns += 1; break;
        case 1: s->link_free_ns += 1; break;
        case 2: pa->last_r_ns += 1; break;
        case 3: pa->used += 1; break;
        case 4: pa->count = 2; break;
        case 5: pa->ring[1].close_ns += 1; break;
        case 6: pa->ring[2].nwr = 15; break;
        case 7: pa->open_n = 2; break;
        case 8: pa->h1_ns += 1; break;
        case 9: pa->timer_close_ns += 1; break;
        case 10: pa->mem[0].hw_ns += 1; break;
        case 11: pa->nmem = 0; break;
        }
        if (matches(&f, &m, 0))
            fail_msg("change %d matched the kept replay", c);
        teardown(&f);
    }
}

/* Times before t0 that the replay only reads through a max with later times are equal. */
static void test_clamps(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;

    setup(&f, 0);
    f.s.link_free_ns = T0 - 700;
    f.s.path[1].last_r_ns = T0 - 10;
    keep(&f, &m);
    f.s.link_free_ns = T0 - 5;
    f.s.path[1].last_r_ns = T0 - 9000;
    assert_true(matches(&f, &m, 0));
    teardown(&f);
    /* the CPU: only with nothing queued on the path (a later reap reads its exact time) */
    setup(&f, 0);
    f.s.cpu_free_ns = T0 - 40;
    keep(&f, &m);
    f.s.cpu_free_ns = T0 - 41;
    assert_false(matches(&f, &m, 0));
    mdl_path_t *pa = &f.s.path[1];
    pa->count = pa->open_n = pa->nmem = 0;
    pa->used = 0;
    keep(&f, &m);
    f.s.cpu_free_ns = T0 - 4000;
    assert_true(matches(&f, &m, 0));
    teardown(&f);
}

static void test_perturbation(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;

    setup(&f, 0);
    keep(&f, &m); /* kept outside any window */
    f.s.pert_from_ns = T0 - 100;
    f.s.pert_until_ns = T0 + 50000;
    assert_false(matches(&f, &m, 0)); /* now inside one */
    m.pert = 1;
    assert_true(matches(&f, &m, 0));
    f.s.pert_until_ns = T0 + 999; /* the window ends inside the kept span (1000 ns) */
    assert_false(matches(&f, &m, 0));
    f.s.pert_until_ns = T0 + 1001;
    assert_true(matches(&f, &m, 0));
    m.pert = 0;
    f.s.pert_from_ns = T0 + 700; /* a window starts inside the span */
    f.s.pert_until_ns = T0 + 9000;
    assert_false(matches(&f, &m, 0));
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_and_shifted_match),
        cmocka_unit_test(test_any_difference_misses),
        cmocka_unit_test(test_clamps),
        cmocka_unit_test(test_perturbation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
