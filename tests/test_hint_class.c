/* test_hint_class.c - hint equivalence classes (model/recommend/hint_class.h) against a brute force
 * over seeded random traces: two hints are one class exactly when they route every message
 * alike and agree on "hinted or not"; every hint lies in its class's [lo, hi]; the count is
 * the number of distinct configurations; the spread keeps what it must and spans the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/recommend/hint_class.h"
#include "common/hs_util.h"
#include "model/recommend/recommend.h"
#include "tests/hs_test.h"

/* The brute-force configuration key of a hint: hinted or not, and each message's class. */
static int same_config(const uint64_t *sizes, size_t n, uint64_t a, uint64_t b)
{
    if ((a > 0) != (b > 0))
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((a > 0 && sizes[i] <= a) != (b > 0 && sizes[i] <= b))
            return 0;
    return 1;
}

/* Random sizes from a random small alphabet (0 included at times). */
static size_t random_sizes(uint64_t *seed, uint64_t *sizes, size_t cap)
{
    uint64_t alpha[8];
    size_t na = 1 + hs_xorshift64(seed) % 8, n = 1 + hs_xorshift64(seed) % cap;

    for (size_t i = 0; i < na; i++)
        alpha[i] = hs_xorshift64(seed) % 200;
    for (size_t i = 0; i < n; i++)
        sizes[i] = alpha[hs_xorshift64(seed) % na];
    return n;
}

static void test_against_brute_force(void **state)
{
    uint64_t seed = 0x5eed22ULL, sizes[300];
    (void)state;
    for (int iter = 0; iter < 400; iter++) {
        size_t n = random_sizes(&seed, sizes, 300), distinct = 0;
        rec_class_sizes_t s;
        assert_int_equal(rec_class_scan_sizes(sizes, n, &s), HS_OK);
        assert_int_equal(s.msgs, n);
        /* the count is the number of distinct configurations among hints 0..250 (every
         * size is below 200, so 250 reaches the last class) */
        for (uint64_t h = 0; h <= 250; h++) {
            int fresh = 1;
            for (uint64_t g = 0; g < h && fresh; g++)
                fresh = !same_config(sizes, n, g, h);
            distinct += (size_t)fresh;
        }
        assert_int_equal(rec_class_count(&s), distinct);
        for (int k = 0; k < 200; k++) {
            uint64_t a = hs_xorshift64(&seed) % 251, b = hs_xorshift64(&seed) % 251;
            rec_class_t c;
            assert_int_equal(rec_class_same(&s, a, b), same_config(sizes, n, a, b));
            rec_class_get(&s, rec_class_index(&s, a), &c);
            assert_true(c.lo <= a && a <= c.hi);
            assert_int_equal(rec_class_index(&s, c.canonical), c.index);
            assert_true(same_config(sizes, n, a, c.canonical));
            if (c.hi != UINT64_MAX) /* one past the range is another class */
                assert_false(same_config(sizes, n, a, c.hi + 1));
            if (c.lo > 0) /* one below it too */
                assert_false(same_config(sizes, n, a, c.lo - 1));
            uint64_t ll = 0;
            for (size_t i = 0; i < n; i++)
                ll += a > 0 && sizes[i] <= a;
            assert_int_equal(c.ll_msgs, ll);
        }
        rec_class_release(&s);
    }
}

/* The cases of the issue: 57344 and 65536 over a trace whose largest size is 57344 are one
 * class (everything LL); hint 0 and a hint below the smallest size are not (bw.depth_hinted
 * differs from bw.depth). */
static void test_issue_cases(void **state)
{
    const uint64_t sizes[] = {64, 4096, 57344, 64, 4096};
    rec_class_sizes_t s;
    rec_class_t c;
    (void)state;
    assert_int_equal(rec_class_scan_sizes(sizes, 5, &s), HS_OK);
    assert_true(rec_class_same(&s, 57344, 65536));
    assert_false(rec_class_same(&s, 0, 32));
    assert_true(rec_class_same(&s, 1, 63));
    assert_false(rec_class_same(&s, 63, 64));
    assert_int_equal(rec_class_count(&s), 5); /* 0, [1,63], [64,4095], [4096,57343], [57344,max] */
    rec_class_get(&s, rec_class_index(&s, 65536), &c);
    assert_true(c.lo == 57344 && c.hi == UINT64_MAX && c.canonical == 57344);
    assert_int_equal(c.ll_msgs, 5);
    rec_class_get(&s, rec_class_index(&s, 5000), &c);
    assert_true(c.lo == 4096 && c.hi == 57343 && c.ll_sizes == 2 && c.ll_msgs == 4);
    rec_class_get(&s, 0, &c);
    assert_true(c.lo == 0 && c.hi == 0 && c.ll_msgs == 0);
    rec_class_release(&s);
    /* sizes 0 and 1 route alike for every hint: one class past hint 0 */
    const uint64_t tiny[] = {0, 1, 0};
    assert_int_equal(rec_class_scan_sizes(tiny, 3, &s), HS_OK);
    assert_int_equal(rec_class_count(&s), 2);
    rec_class_release(&s);
    /* no messages: hint 0 and the hinted rest */
    assert_int_equal(rec_class_scan_sizes(NULL, 0, &s), HS_OK);
    assert_int_equal(rec_class_count(&s), 2);
    rec_class_release(&s);
}

static void test_spread(void **state)
{
    uint64_t seed = 0x22ULL, sizes[2000];
    size_t out[40];
    (void)state;
    for (size_t i = 0; i < 2000; i++)
        sizes[i] = 1 + hs_xorshift64(&seed) % 1000;
    rec_class_sizes_t s;
    assert_int_equal(rec_class_scan_sizes(sizes, 2000, &s), HS_OK);
    size_t count = rec_class_count(&s), must[2] = {5, 5};
    assert_true(count > 100);
    for (size_t k = 1; k <= 20; k++) {
        size_t n = rec_class_spread(&s, must, 2, k, out);
        assert_int_equal(n, k < 3 ? (k == 1 ? 1 : 2) : k);
        for (size_t i = 0; i + 1 < n; i++)
            assert_true(out[i] < out[i + 1]); /* ascending, distinct */
        int has5 = 0;
        for (size_t i = 0; i < n; i++)
            has5 |= out[i] == 5;
        assert_true(has5);
        if (k >= 3) { /* both ends, and no gap wider than twice the even spacing */
            assert_int_equal(out[0], 0);
            assert_int_equal(out[n - 1], count - 1);
            for (size_t i = 0; i + 1 < n; i++)
                assert_true(out[i + 1] - out[i] <= 2 * (count - 1) / (k - 2) + 1);
        }
    }
    rec_class_release(&s);
    /* fewer classes than asked: all of them */
    const uint64_t few[] = {8, 16};
    assert_int_equal(rec_class_scan_sizes(few, 2, &s), HS_OK);
    assert_int_equal(rec_class_spread(&s, must, 0, 6, out), 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(out[i], i);
    rec_class_release(&s);
}

/* A trace's scan equals the array's; 10 M records would take the same path. */
static void test_trace_scan(void **state)
{
    trace_t *tr = NULL;
    rec_class_sizes_t a, b;
    uint64_t seed = 9, sizes[5000];
    (void)state;
    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < 5000; i++) {
        trace_rec_t r = {0};
        r.size_bytes = sizes[i] = (hs_xorshift64(&seed) % 3 == 0) ? 64 : hs_xorshift64(&seed) % 100000;
        r.t_post_ns = i * 1000;
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    assert_int_equal(rec_class_scan(tr, &a), HS_OK);
    assert_int_equal(rec_class_scan_sizes(sizes, 5000, &b), HS_OK);
    assert_int_equal(a.n, b.n);
    assert_memory_equal(a.size, b.size, a.n * sizeof(*a.size));
    assert_memory_equal(a.cum, b.cum, a.n * sizeof(*a.cum));
    assert_int_equal(a.cum[a.n - 1], 5000);
    for (size_t i = 0; i + 1 < a.n; i++)
        assert_true(a.size[i] < a.size[i + 1]);
    rec_class_release(&a);
    rec_class_release(&b);
    trace_free(tr);
}

/* recommend's auto candidates hold one hint per class: over seeded random traces (the
 * issue's 57344 among them, whose power-of-two neighbour 65536 is the same class) no two
 * candidates are one configuration, and the largest size stands for everything LL. */
static void test_recommend_auto_one_per_class(void **state)
{
    uint64_t seed = 0xc1a55ULL;
    (void)state;
    for (int iter = 0; iter < 50; iter++) {
        trace_t *tr = NULL;
        uint64_t *c = NULL, top = 0;
        size_t n = 0;
        rec_class_sizes_t s;
        assert_int_equal(trace_new(&tr), HS_OK);
        for (size_t i = 0; i < 400; i++) {
            trace_rec_t r = {0};
            uint64_t pick = hs_xorshift64(&seed) % 4;
            r.size_bytes = pick == 0 ? 57344 : pick == 1 ? 64 : 1 + hs_xorshift64(&seed) % 60000;
            r.t_post_ns = i * 10000;
            top = r.size_bytes > top ? r.size_bytes : top;
            assert_int_equal(trace_push(tr, &r), HS_OK);
        }
        assert_int_equal(rec_candidates_auto(tr, &c, &n), HS_OK);
        assert_int_equal(rec_class_scan(tr, &s), HS_OK);
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                assert_false(rec_class_same(&s, c[i], c[j]));
        assert_int_equal(c[n - 1], top);
        rec_class_release(&s);
        free(c);
        trace_free(tr);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Many distinct sizes (past the hash's limit: the radix path), some repeated, some huge:
 * the same distinct sizes and counts as a sort of a copy. */
static void test_many_sizes(void **state)
{
    size_t n = 300000;
    uint64_t seed = 0xabcdefULL, *v = malloc(n * sizeof(*v)), *ref = malloc(n * sizeof(*v));
    rec_class_sizes_t s;
    (void)state;
    assert_non_null(v);
    assert_non_null(ref);
    for (size_t i = 0; i < n; i++) {
        uint64_t x = hs_xorshift64(&seed);
        v[i] = (x & 3) == 0 ? 4096 : (x & 3) == 1 ? x >> 20 : (x >> 8) % 200000;
        ref[i] = v[i] ? v[i] : 1;
    }
    qsort(ref, n, sizeof(*ref), cmp_u64);
    assert_int_equal(rec_class_scan_sizes(v, n, &s), HS_OK);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && ref[i] == ref[i - 1])
            continue;
        assert_true(m < s.n);
        assert_true(s.size[m] == ref[i]);
        size_t j = i;
        while (j < n && ref[j] == ref[i])
            j++;
        assert_true(s.cum[m] == j); /* messages at or below this size */
        m++;
    }
    assert_int_equal(m, s.n);
    assert_true(s.n > 65536); /* the radix path ran */
    rec_class_release(&s);
    free(v);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_issue_cases),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_trace_scan),
        cmocka_unit_test(test_many_sizes),
        cmocka_unit_test(test_recommend_auto_one_per_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
