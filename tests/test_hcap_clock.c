/* test_hcap_clock.c - libhintcap's time stamps against CLOCK_MONOTONIC over a long run.
 *
 * WRs are posted through the hook (provider double, trace written to a file) for
 * HCAP_CLOCK_TEST_S seconds (default 5), each post and each poll bracketed by two
 * CLOCK_MONOTONIC reads. The trace's post and completion times must fall inside their
 * brackets (up to a tolerance for the conversion's anchors), and the mean offset of the
 * trace's times from the brackets' midpoints must not move between the run's first and
 * last tenth (drift, over the brackets narrower than 1 us). Both stamps: the TSC (where it
 * is invariant; the header says "CLOCK_MONOTONIC via TSC") and HINTCAP_CLOCK=monotonic
 * (header "CLOCK_MONOTONIC").
 * The figures are printed: max error, share beyond 500 ns, drift, anchors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/preload/hcap.h"
#include "common/hs_host.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"
#include "tests/test_hcap_fake.h"

#define SIG_EVERY 16
#define GAP_NS 20000      /* between posts: 50 K WRs/s */
#define TOL_MAX_NS 10000  /* any record: the widest anchor bracket kept is ~5 us */
#define TOL_TAIL_NS 500   /* at most 1% of records beyond this */
#define TOL_DRIFT_NS 1000 /* first tenth to last tenth */
#define TIGHT_NS 1000     /* brackets the drift is measured on */

typedef struct {
    uint64_t lo, hi; /* CLOCK_MONOTONIC before and after */
} bracket_t;

typedef struct {
    bracket_t *post, *done; /* by WR index */
    uint64_t n;
} run_t;

static const hcap_real_t test_real = {0};

/* Post for secs seconds; every SIG_EVERY-th WR signalled and polled at once. */
static void post_for(fake_ctx_t *f, fake_cq_t *cq, fake_qp_t *q, double secs, run_t *run)
{
    struct ibv_sge sge = {.addr = 0x1000, .length = 64, .lkey = 1};
    struct ibv_send_wr wr, *bad;
    struct ibv_wc wc[4];
    uint64_t i, cap = (uint64_t)(secs * 1e9 / GAP_NS) + 1, t0 = hs_now_ns(), sig_from = 0;

    (void)f;
    run->post = calloc(cap, sizeof(bracket_t));
    run->done = calloc(cap, sizeof(bracket_t));
    assert_non_null(run->post);
    assert_non_null(run->done);
    memset(&wr, 0, sizeof(wr));
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    for (i = 0; i < cap; i++) {
        while (hs_now_ns() < t0 + i * GAP_NS)
            ;
        wr.wr_id = i + (1ULL << 40);
        wr.send_flags = i % SIG_EVERY == SIG_EVERY - 1 ? IBV_SEND_SIGNALED : 0;
        run->post[i].lo = hs_now_ns();
        assert_int_equal(ibv_post_send(&q->qpx.qp_base, &wr, &bad), 0);
        run->post[i].hi = hs_now_ns();
        if (wr.send_flags) {
            uint64_t lo = hs_now_ns(), k;
            int got = ibv_poll_cq((struct ibv_cq *)&cq->cqx, 4, wc);
            uint64_t hi = hs_now_ns();

            assert_int_equal(got, 1);
            for (k = sig_from; k <= i; k++) /* the implicit ones complete with it */
                run->done[k] = (bracket_t){lo, hi};
            sig_from = i + 1;
        }
    }
    run->n = sig_from;
}

/* How far t lies outside [b.lo, b.hi], ns (0 inside). */
static double outside(uint64_t t, bracket_t b)
{
    return t < b.lo ? (double)(b.lo - t) : t > b.hi ? (double)(t - b.hi) : 0.0;
}

static void check_trace(const char *path, const run_t *run, const char *clock_want,
                        double secs)
{
    trace_t *tr = NULL;
    double max_err = 0, off_first = 0, off_last = 0, drift;
    uint64_t i, tail = 0, n_first = 0, n_last = 0, tenth = run->n / 10, checked = 0;

    assert_int_equal(trace_load(path, &tr), HS_OK);
    assert_string_equal(tr->hdr.clock_source, clock_want);
    assert_int_equal(tr->hdr.dropped, 0);
    for (i = 0; i < tr->n; i++) {
        const trace_rec_t *r = &tr->recs[i];
        uint64_t k = i; /* one QP: records in post order (completion order) */
        double e;

        if (k >= run->n)
            break; /* the last unsignalled WRs never complete */
        assert_int_not_equal(r->t_done_ns, TRACE_TIME_UNKNOWN);
        e = fmax(outside(r->t_post_ns, run->post[k]), outside(r->t_done_ns, run->done[k]));
        max_err = fmax(max_err, e);
        tail += e > TOL_TAIL_NS;
        checked++;
        if (run->post[k].hi - run->post[k].lo > TIGHT_NS)
            continue; /* preempted inside the bracket: its midpoint says nothing */
        if (k < tenth) {
            off_first += (double)r->t_post_ns - (double)(run->post[k].lo + run->post[k].hi) / 2;
            n_first++;
        } else if (k >= run->n - tenth) {
            off_last += (double)r->t_post_ns - (double)(run->post[k].lo + run->post[k].hi) / 2;
            n_last++;
        }
    }
    assert_int_equal(checked, run->n);
    assert_true(n_first > 0 && n_last > 0);
    drift = off_last / (double)n_last - off_first / (double)n_first;
    print_message("clock %s: %llu WRs over %.1f s: max error %.0f ns, %llu beyond %d ns, "
                  "drift %.1f ns (mean offset %.1f -> %.1f ns); anchors %llu, tsc %.0f Hz, "
                  "widest anchor bracket %.0f ns\n",
                  clock_want, (unsigned long long)checked, secs, max_err,
                  (unsigned long long)tail, TOL_TAIL_NS, drift, off_first / (double)n_first,
                  off_last / (double)n_last, (unsigned long long)hcap_g.clock.taken,
                  hcap_clock_hz(&hcap_g.clock), hcap_clock_bracket_ns(&hcap_g.clock));
    assert_true(max_err <= TOL_MAX_NS);
    assert_true(tail * 100 <= checked);
    assert_true(fabs(drift) <= TOL_DRIFT_NS);
    trace_free(tr);
}

static void run_clock(const char *clock_env, const char *clock_want, double secs)
{
    char *dir = hs_test_tmpdir();
    fake_ctx_t *f = fake_ctx_new();
    fake_cq_t *cq = fake_cq_new(f, 64);
    fake_qp_t *q = fake_qp_new(f, cq, 9, 0);
    run_t run = {0};

    setenv("HINTCAP_DIR", dir, 1);
    setenv("HINTCAP_BLOCK", "1", 1); /* the check needs every record */
    setenv("HINTCAP_CLOCK", clock_env, 1);
    hcap_start(&hcap_g, &test_real, NULL, NULL);
    assert_true(hcap_running(&hcap_g));
    hcap_ctx_attach(&hcap_g, &f->vctx.context);
    assert_non_null(hcap_qp_attach(&hcap_g, &q->qpx.qp_base, 0, 1024, NULL));
    post_for(f, cq, q, secs, &run);
    hcap_qp_detach(&hcap_g, &q->qpx.qp_base);
    hcap_stop(&hcap_g, 0);
    hcap_ctx_detach(&hcap_g, &f->vctx.context);
    check_trace(hcap_g.path, &run, clock_want, secs);
    unlink(hcap_g.path);
    hs_test_run(NULL, "rm -rf '%s'", dir);
    free(run.post);
    free(run.done);
    fake_qp_free(q);
    fake_cq_free(cq);
    fake_ctx_free(f);
    free(dir);
}

static double test_secs(void)
{
    const char *s = getenv("HCAP_CLOCK_TEST_S");
    double v = s ? atof(s) : 5.0;

    return v > 0.05 ? v : 5.0;
}

static void test_tsc_long_run(void **state)
{
    (void)state;
    if (!hs_tsc_invariant())
        skip(); /* the fallback below is what such a host runs */
    run_clock("tsc", HCAP_CLOCK_TSC_NAME, test_secs());
}

/* hcap_clock_ns's inline paths (the last segment, past the last anchor) give what the
 * search gives, bit for bit, for stamps before, between, at and past real anchors taken
 * about 150 us apart (anchors kept >= HCAP_CLOCK_MIN_GAP_NS apart). */
static void test_inline_equals_search(void **state)
{
    static const int64_t offs[] = {-1000000, -1, 0, 1, 2, 1000, 123457, 1000000000,
                                   (int64_t)1 << 40};
    hcap_clock_t c;
    size_t checked = 0;

    (void)state;
    if (!hs_tsc_invariant())
        skip();
    hcap_clock_init(&c, 1);
    for (int i = 0; i < 6; i++) {
        uint64_t t0 = hs_now_ns();
        while (hs_now_ns() - t0 < 150000)
            ;
        hcap_clock_anchor(&c);
    }
    assert_true(c.n >= 3);
    assert_true(c.seg_ticks > 0);
    for (uint32_t a = 0; a < c.n; a++) {
        uint64_t at = c.a[(c.first + a) % HCAP_CLOCK_ANCHORS].tsc;
        for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
            uint64_t st = at + (uint64_t)offs[k];
            assert_int_equal(hcap_clock_ns(&c, st), hcap_clock_ns_search(&c, st));
            checked++;
        }
    }
    for (uint64_t f = 1; f < 64; f++) { /* across the last segment */
        uint64_t st = c.seg.tsc + c.seg_ticks * f / 64;
        assert_int_equal(hcap_clock_ns(&c, st), hcap_clock_ns_search(&c, st));
        checked++;
    }
    printf("inline conversion = search on %zu stamps over %u anchors\n", checked, c.n);
}

static void test_monotonic_fallback(void **state)
{
    (void)state;
    run_clock("monotonic", "CLOCK_MONOTONIC", 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tsc_long_run),
        cmocka_unit_test(test_inline_equals_search),
        cmocka_unit_test(test_monotonic_fallback),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
