/* test_model_memo.c - the memo's key (model/engine/mdl_memo.c): a kept replay matches a path
 * whose pipeline is the same relative to t0, bit for bit (also shifted in time within its
 * binade, also with link and idle CPU times before t0 that cannot matter), and no path that
 * is not an exact shift of it (by rounding, or into another binade) or differs in any one
 * thing the replay reads: CPU, link, latest report, slots, each ring batch's close and WRs, the open
 * batch (WRs, latest completion, timer, members), size, path, perturbation side or an edge
 * inside the kept span. The two O(1) comparisons give what the full one gives: a ring a memo
 * restored, popped since, matched by one exact shift d of that memo's out batches (and not
 * where some out - key only rounds to d, after a push, at a t0 not d after the restore, or
 * from a relation a keep or another restore made stale), and a key of a path holding nothing
 * (each of its four tests missed by the least amount rejects; a key with any term not 0 is
 * not such a key). tests/test_model_skip.c checks that applying a kept replay gives what
 * replaying every chunk gives. */
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

/* m matched for a message of size on path k (f's BW path's state) from t0 (absolute). */
static int match_msg(fix_t *f, mdl_memo_t *m, uint64_t size, int k, double t0)
{
    mdl_msg_t msg = {.pa = &f->s.path[1], .k = k, .size = size};

    return mdl_memo_matches(&f->s, m, &msg, t0);
}

/* m matched against f's BW path from t0 (absolute). */
static int match_at(fix_t *f, mdl_memo_t *m, double t0)
{
    return match_msg(f, m, SIZE, 1, t0);
}

static int matches(fix_t *f, mdl_memo_t *m, double shift)
{
    return match_at(f, m, T0 + shift);
}

static void test_same_and_shifted_match(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;

    setup(&f, 0);
    keep(&f, &m);
    assert_true(matches(&f, &m, 0));
    assert_false(match_msg(&f, &m, SIZE + 1, 1, T0)); /* another size */
    assert_false(match_msg(&f, &m, SIZE, 0, T0));     /* the other path */
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

/* ---- ring_shifted: a ring a memo restored, compared by one exact shift -------------- */

/* The same, with no memo noted as the ring's last restore: every batch compared. */
static int match_full(fix_t *f, mdl_memo_t *m, double t0)
{
    const mdl_memo_t *r = f->s.restored[1];

    f->s.restored[1] = NULL;
    int hit = match_at(f, m, t0);
    f->s.restored[1] = r;
    return hit;
}

/* m's relation to r (the one ring_shifted keeps, by r's slot). */
static const mdl_memo_rel_t *rel_of(fix_t *f, mdl_memo_t *m, const mdl_memo_t *r)
{
    return &m->rel[(size_t)(r - f->s.memo) & 1];
}

/* Path 1's first memo slot, the one restored from below. */
static mdl_memo_t *bw_slot(fix_t *f)
{
    return &f->s.memo[2 * MDL_MEMO_SLOTS];
}

/* Apply r at ta through mdl_memo_apply: its out view n batches of 16 WRs closing out_ns[j]
 * after ta, nothing open, the CPU free at ta and the link at its last close (a keep that
 * changes the out view also bumps r->gen: the caller's). */
static void apply_out(fix_t *f, mdl_memo_t *r, const double *out_ns, uint32_t n, double ta)
{
    mdl_path_t *pa = &f->s.path[1];
    mdl_seg_t g = {.m = {.pa = pa, .k = 1, .size = SIZE}, .t0 = ta};

    assert_true(n <= pa->mask);
    memset(&r->out, 0, sizeof(r->out));
    r->out.count = n;
    r->out.used = 16 * n;
    for (uint32_t j = 0; j < n; j++) {
        r->out.ring_ns[j] = out_ns[j];
        r->out.ring_nwr[j] = 16;
    }
    r->out.link_ns = out_ns[n - 1];
    r->out.timer_ns = HUGE_VAL;
    r->key.open_n = 0;
    r->self_close_ns = out_ns[n - 1];
    pa->nmem = 0;
    mdl_memo_apply(&f->s, &g, r);
    assert_ptr_equal(f->s.restored[1], r);
}

/* The ring's oldest batch reaped. */
static void pop(mdl_path_t *pa)
{
    pa->used -= pa->ring[pa->head].nwr;
    pa->head = (pa->head + 1) & pa->mask;
    pa->count--;
}

/* A batch of 16 WRs queued, closing at close_ns. */
static void push(mdl_path_t *pa, double close_ns)
{
    pa->ring[(pa->head + pa->count) & pa->mask] = (mdl_batch_t){close_ns, 16};
    pa->count++;
    pa->used += 16;
    pa->pushes++;
}

/* Keep in m (path 1, SIZE) the key of f's BW path seen from t0, with a shift kept at t0 and
 * a short span: only the key decides whether it matches there. */
static void key_at(fix_t *f, mdl_memo_t *m, double t0)
{
    memset(m, 0, sizeof(*m));
    assert_true(mdl_view_key(&f->s, &f->s.path[1], t0, &m->key));
    assert_true(mdl_shift_keep(&m->shift, t0, t0, t0 + 1000));
    m->valid = 1;
    m->size = SIZE;
    m->k = 1;
    m->span_ns = 1000;
    m->gen = 1;
}

/* key_at, its batches then r's out's last ones each earlier by d (exact for the values
 * used here: whole ns, a few hundred): related to r by the shift d. */
static void shifted_key(fix_t *f, mdl_memo_t *m, const mdl_memo_t *r, double d, double t0)
{
    key_at(f, m, t0);
    uint32_t p = r->out.count - m->key.count;
    for (uint32_t j = 0; j < m->key.count; j++) {
        m->key.ring_ns[j] = r->out.ring_ns[p + j] - d;
        m->key.ring_nwr[j] = r->out.ring_nwr[p + j];
    }
}

/* A ring restored from r at T0, one batch popped since, seen d later: its batches are r's
 * last two less d exactly, so ring_shifted relates them (and says why no batch need be
 * compared), and the match is the full comparison's; applied again later (no keep in
 * between), the relation kept holds with the new restore time. */
static void test_ring_shifted_exact(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;
    const double out[3] = {100, 200.5, 300.25}, d = 150.5;

    setup(&f, 0);
    mdl_memo_t *r = bw_slot(&f);
    apply_out(&f, r, out, 3, T0);
    pop(&f.s.path[1]);
    key_at(&f, &m, T0 + d);
    assert_int_equal(m.key.count, 2);
    for (uint32_t j = 0; j < 2; j++)
        assert_true(m.key.ring_ns[j] == out[j + 1] - d);
    assert_true(match_at(&f, &m, T0 + d));
    const mdl_memo_rel_t *rel = rel_of(&f, &m, r);
    assert_ptr_equal(rel->from, r);
    assert_true(rel->shift);
    assert_true(rel->d == d);
    assert_true(match_full(&f, &m, T0 + d));
    double ta = T0 + 4096; /* the same restore later: the kept relation is reused */
    apply_out(&f, r, out, 3, ta);
    pop(&f.s.path[1]);
    assert_true(match_at(&f, &m, ta + d));
    assert_true(rel->shift && rel->d == d && rel->from_gen == r->gen);
    assert_true(match_full(&f, &m, ta + d));
    teardown(&f);
}

/* Restored at 2^40 ns (ulp 2^-12), out batches at 2^20 and 2^20 + 1; the key's batch jx
 * 2^-40 later than the exact shift would put it. Each out - key rounds to one d (2^20 - 1,
 * whose ulp is 2^-33), and t0 - ta is exactly that d, but batch jx's difference is not
 * exact: the ring, seen from t0, is out - d, which is not the key. ring_shifted must not
 * relate them, and the match is rejected (the full comparison's answer). */
static void ring_inexact_case(uint32_t jx)
{
    fix_t f;
    mdl_memo_t m;
    const double ta = 0x1p40, out[2] = {0x1p20, 0x1p20 + 1};
    double key[2] = {1, 2};

    key[jx] += 0x1p-40;
    double d = out[0] - key[0], t0 = ta + d;
    /* the premise: both differences round to d, batch jx's inexactly */
    assert_true(out[1] - key[1] == d);
    assert_true(out[jx] - d != key[jx]);
    assert_true(t0 - ta == d);
    setup(&f, 0);
    mdl_memo_t *r = bw_slot(&f);
    apply_out(&f, r, out, 2, ta);
    key_at(&f, &m, t0); /* the key of the ring itself: out - d, exactly; it matches */
    assert_true(m.key.ring_ns[jx] == out[jx] - d);
    assert_true(match_at(&f, &m, t0));
    assert_true(rel_of(&f, &m, r)->shift);
    key_at(&f, &m, t0);
    m.key.ring_ns[0] = key[0];
    m.key.ring_ns[1] = key[1];
    assert_false(match_at(&f, &m, t0));
    assert_false(rel_of(&f, &m, r)->shift);
    assert_false(match_full(&f, &m, t0));
    teardown(&f);
}

static void test_ring_shifted_inexact(void **state)
{
    (void)state;
    ring_inexact_case(0);
    ring_inexact_case(1);
}

/* Case c of test_ring_shifted_guards on f (r applied at T0, out {100, 200, 300}): sets m's
 * key, related to r by d = 50, and returns the t0 to match it from. Each leaves a ring that
 * is not the key's, so a relation used where its reason does not hold would match. */
static double guard_case(fix_t *f, mdl_memo_t *m, mdl_memo_t *r, int c)
{
    const double out2[3] = {100, 201, 300};
    mdl_path_t *pa = &f->s.path[1];
    mdl_view_t other;

    switch (c) {
    case 0: /* popped, then pushed: the ring is no longer r's out's last batches */
        pop(pa);
        push(pa, T0 + 400);
        break;
    case 1: /* t0 is not d after the restore */
        shifted_key(f, m, r, 50, T0 + 60);
        return T0 + 60;
    case 2: /* m kept again (gen bumped) after a match made its relation */
        shifted_key(f, m, r, 50, T0 + 50);
        assert_true(match_at(f, m, T0 + 50));
        m->key.ring_ns[1] += 1;
        m->gen++;
        return T0 + 50;
    case 3: /* r kept again (another out) and applied after m's relation to it was made */
        shifted_key(f, m, r, 50, T0 + 50);
        assert_true(match_at(f, m, T0 + 50));
        r->gen++; /* as mdl_memo_keep */
        apply_out(f, r, out2, 3, T0);
        return T0 + 50;
    case 4: /* another restore (no memo's) of the ring since */
        mdl_view_copy(&other, &r->out);
        other.ring_ns[1] += 1;
        mdl_view_restore(&f->s, pa, &other, T0);
        break;
    }
    shifted_key(f, m, r, 50, T0 + 50);
    return T0 + 50;
}

static void test_ring_shifted_guards(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;
    const double out[3] = {100, 200, 300};

    for (int c = 0; c < 5; c++) {
        setup(&f, 0);
        mdl_memo_t *r = bw_slot(&f);
        apply_out(&f, r, out, 3, T0);
        double t0 = guard_case(&f, &m, r, c);
        if (match_at(&f, &m, t0))
            fail_msg("guard case %d matched a ring that is not the key's", c);
        assert_false(match_full(&f, &m, t0));
        teardown(&f);
    }
}

/* ---- idle_at: a key of a path holding nothing ---------------------------------------- */

/* f's BW path holding nothing, the CPU, the link and the latest report before T0. */
static void idle_path(fix_t *f)
{
    mdl_path_t *pa = &f->s.path[1];

    pa->count = pa->open_n = pa->nmem = pa->used = 0;
    f->s.cpu_free_ns = T0 - 40;
    f->s.link_free_ns = T0 - 5;
    pa->last_r_ns = T0 - 10;
}

/* Keep in m (zeroed first), through mdl_memo_keep, a message from t0 that met f's BW path as
 * it is, closed the batch it found open at entry_close (when there was one) and left the
 * path with one more batch queued (closed at t0 + 800); the path is then put back. Returns
 * whether m was kept. */
static int keep_met_at(fix_t *f, mdl_memo_t *m, double t0, double entry_close)
{
    mdl_state_t *s = &f->s;
    mdl_path_t *pa = &s->path[1], met;
    mdl_view_t key;
    mdl_seg_t g = {.m = {.pa = pa, .k = 1, .size = SIZE}, .t0 = t0, .t_last = t0 + 700,
                   .hw = t0 + 750, .d0 = s->cost_ns.drain, .sk0 = s->chunks_skipped,
                   .push0 = pa->pushes, .entry_close = entry_close, .entry_ok = 1};

    memset(m, 0, sizeof(*m));
    assert_true(mdl_view_key(s, pa, t0, &key));
    met = *pa;
    pa->open_n = pa->nmem = 0;
    push(pa, t0 + 800);
    mdl_memo_keep(s, &g, &key, m);
    *pa = met;
    return m->valid;
}

/* keep_met_at from T0; a batch it found open closed at T0. */
static void keep_met(fix_t *f, mdl_memo_t *m)
{
    assert_true(keep_met_at(f, m, T0, T0));
}

/* m from t0 as matched, asserted equal to the full comparison (the key read term by term). */
static int idle_match(fix_t *f, mdl_memo_t *m, double t0)
{
    int hit = match_at(f, m, t0);

    m->key_idle = 0;
    assert_int_equal(match_at(f, m, t0), hit);
    m->key_idle = 1;
    return hit;
}

/* Change c of test_idle_key to an idle path: the least that fails one of idle_at's tests
 * (each part of the first, then each time one ulp after t0). */
static void idle_miss(fix_t *f, int c)
{
    mdl_state_t *s = &f->s;
    mdl_path_t *pa = &s->path[1];

    switch (c) {
    case 0: pa->used = 1; break;
    case 1:
        pa->ring[pa->head] = (mdl_batch_t){T0 + 100, 16};
        pa->count = 1;
        break;
    case 2: pa->open_n = 1; break;
    case 3: pa->nmem = 1; break;
    case 4: s->cpu_free_ns = nextafter(T0, HUGE_VAL); break;
    case 5: s->link_free_ns = nextafter(T0, HUGE_VAL); break;
    case 6: pa->last_r_ns = nextafter(T0, HUGE_VAL); break;
    }
}

/* A key kept from a path holding nothing is idle; it matches such a path from t0 (times at
 * or before t0, also later within the binade), and no path that fails any one test. */
static void test_idle_key(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;

    setup(&f, 0);
    idle_path(&f);
    keep_met(&f, &m);
    assert_true(m.key_idle);
    assert_true(idle_match(&f, &m, T0));
    f.s.cpu_free_ns = f.s.link_free_ns = f.s.path[1].last_r_ns = T0; /* at t0: still idle */
    assert_true(idle_match(&f, &m, T0));
    f.s.cpu_free_ns = f.s.link_free_ns = f.s.path[1].last_r_ns = T0 + 123456.75 - 3000;
    assert_true(idle_match(&f, &m, T0 + 123456.75));
    for (int c = 0; c < 7; c++) {
        idle_path(&f);
        assert_true(idle_match(&f, &m, T0));
        idle_miss(&f, c);
        if (idle_match(&f, &m, T0))
            fail_msg("idle miss %d matched", c);
    }
    teardown(&f);
}

/* A message that found a batch open restores that batch's close (the members' report,
 * mdl_memo_apply) shifted, so the close is one of the times that must lie in t0's binade:
 * kept where it does (just above the binade's floor 2^22, t0 16 ns above it), not where it
 * lies just below (a close 2 ns before the floor, an ulp of 2^-31 ns finer than t0's: its
 * shift to a later t0 could round). The memo's previous key had no open batch (a memset
 * memo): the new key decides. */
static void test_keep_entry_close_span(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;
    const double floor = 0x1p22, t0 = floor + 16;

    setup(&f, t0 - T0);
    assert_true(f.s.path[1].open_n > 0);
    assert_true(keep_met_at(&f, &m, t0, floor + 2));
    assert_true(m.key.open_n > 0);
    assert_true(m.entry_close_ns == 2 - 16);
    if (keep_met_at(&f, &m, t0, floor - 2))
        fail_msg("kept a replay whose entry close lies below t0's binade");
    teardown(&f);
}

/* A key with any one term not 0 (the path kept from holds one thing, or one time after t0)
 * is not idle, and does not match a path holding nothing. */
static void test_not_idle_key(void **state)
{
    (void)state;
    fix_t f;
    mdl_memo_t m;

    for (int c = 0; c < 7; c++) {
        setup(&f, 0);
        idle_path(&f);
        idle_miss(&f, c);
        keep_met(&f, &m);
        if (m.key_idle)
            fail_msg("key %d kept as idle", c);
        idle_path(&f);
        assert_false(match_at(&f, &m, T0));
        teardown(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_and_shifted_match),
        cmocka_unit_test(test_any_difference_misses),
        cmocka_unit_test(test_clamps),
        cmocka_unit_test(test_perturbation),
        cmocka_unit_test(test_ring_shifted_exact),
        cmocka_unit_test(test_ring_shifted_inexact),
        cmocka_unit_test(test_ring_shifted_guards),
        cmocka_unit_test(test_idle_key),
        cmocka_unit_test(test_not_idle_key),
        cmocka_unit_test(test_keep_entry_close_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
