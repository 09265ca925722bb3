/* test_model_skip.c - the replay's steady-state skip over the chunks of segmented messages
 * (model/MODEL.md section 3) against the chunk-by-chunk replay it replaces
 * (pred_opts_t.every_chunk), and every other accelerator of model/engine/, all together and
 * each alone (pred_opts_t.model_off): on traces of large messages mixed with small ones,
 * under every built-in profile, several hints, open and closed loop, and with the
 * perturbation window ending inside a message, every message's latency and path, every
 * counter and every cost term must agree, and each accelerator must actually have run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "tests/hs_test.h"

/* n messages: every third of big bytes, the others small, posts gap_ns apart; completion
 * times (for closed loop) as if each took 10 us. */
static trace_t *mk_trace(size_t n, uint64_t small, uint64_t big, uint64_t gap_ns)
{
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < n; i++) {
        trace_rec_t r = {.t_post_ns = 1000000 + i * gap_ns, .size_bytes = i % 3 ? small : big};
        r.t_done_ns = r.t_post_ns + 10000;
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    return tr;
}

/* Replays without the closed form for link-bound messages, so that the skip alone is seen. */
static int g_no_bound;

/* Replays tr with the accelerators off leaves off (MODEL_ACCEL_*; every_chunk: all, by
 * pred_opts_t.every_chunk). */
static void replay(const trace_t *tr, const profile_t *p, pred_mode_t mode, uint64_t hint,
                   int every_chunk, unsigned off, pred_raw_t *raw)
{
    pred_opts_t o = {.mode = mode, .every_chunk = every_chunk, .no_bound = g_no_bound,
                     .model_off = off};

    memset(raw, 0, sizeof(*raw));
    raw->lat_us = calloc(tr->n, sizeof(*raw->lat_us));
    raw->path = calloc(tr->n, 1);
    assert_non_null(raw->lat_us);
    assert_non_null(raw->path);
    assert_int_equal(model_engine_ops.replay(tr, p, &o, hint, raw), HS_OK);
}

static void raw_free(pred_raw_t *r)
{
    free(r->lat_us);
    free(r->path);
}

static int close_rel(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fmax(fabs(a), fabs(b)), 1e-3);
}

/* Segmented messages the memo replayed, and whose start on an idle path was applied, over
 * every compare() so far. */
static uint64_t g_memo_hits, g_entry_hits, g_bound_hits, g_steady_hits, g_serial_hits;
static uint64_t g_lazy_hits;

/* Each accelerator on its own (with the one it needs), as compare() replays it besides all
 * of them, and what it did over every compare() so far (its counter in pred_raw_t). */
#define N_ALONE 6
static const struct {
    const char *name;
    unsigned on;
} g_alone[N_ALONE] = {
    {"skip", MODEL_ACCEL_SKIP},
    {"entry", MODEL_ACCEL_SKIP | MODEL_ACCEL_ENTRY},
    {"memo", MODEL_ACCEL_MEMO},
    {"bound", MODEL_ACCEL_BOUND},
    {"steady", MODEL_ACCEL_BOUND | MODEL_ACCEL_STEADY},
    {"serial", MODEL_ACCEL_SERIAL},
};
static uint64_t g_alone_hits[N_ALONE];

/* The counter of accelerator a (g_alone's index) in r. */
static uint64_t alone_hits(size_t a, const pred_raw_t *r)
{
    const uint64_t hits[N_ALONE] = {r->chunks_skipped, r->entry_hits, r->memo_hits,
                                    r->bound_hits, r->steady_hits, r->serial_hits};
    return hits[a];
}

/* b (with the accelerators named by what) against a, the chunk-by-chunk replay: every
 * message's latency and path, every counter and every cost term. */
static void compare_raw(const trace_t *tr, const profile_t *p, pred_mode_t mode, uint64_t hint,
                        const pred_raw_t *a, const pred_raw_t *b, const char *what)
{
    for (size_t i = 0; i < tr->n; i++) {
        if (!close_rel(a->lat_us[i], b->lat_us[i], 1e-5) || a->path[i] != b->path[i])
            fail_msg("%s hint %llu %s: message %zu: latency %.6f us (path %u) chunk by chunk, "
                     "%.6f us (path %u) with %s", p->name, (unsigned long long)hint,
                     mode == PRED_OPEN ? "open" : "closed", i, a->lat_us[i], a->path[i],
                     b->lat_us[i], b->path[i], what);
    }
    assert_int_equal(a->switches, b->switches);
    assert_int_equal(a->sq_full_stalls, b->sq_full_stalls);
    assert_true(close_rel(a->t_last_done_us, b->t_last_done_us, 1e-9));
    assert_true(close_rel(a->drain_us_total, b->drain_us_total, 1e-9));
    assert_true(close_rel(a->costs.queue_us, b->costs.queue_us, 1e-9));
    assert_true(close_rel(a->costs.drain_us, b->costs.drain_us, 1e-9));
    assert_true(close_rel(a->costs.coalesce_us, b->costs.coalesce_us, 1e-9));
    assert_true(close_rel(a->costs.l1_us, b->costs.l1_us, 1e-9));
    assert_true(close_rel(a->costs.base_us, b->costs.base_us, 1e-7));
}

/* Replays tr chunk by chunk, with every accelerator, and with each alone, and compares;
 * returns the chunks the skip jumped over with every accelerator. */
static uint64_t compare(const trace_t *tr, const profile_t *p, pred_mode_t mode, uint64_t hint)
{
    pred_raw_t a, b;

    replay(tr, p, mode, hint, 1, 0, &a);
    replay(tr, p, mode, hint, 0, 0, &b);
    assert_int_equal(a.chunks_skipped, 0);
    assert_int_equal(a.memo_hits, 0);
    assert_int_equal(a.entry_hits, 0);
    assert_int_equal(a.bound_hits, 0);
    assert_int_equal(a.steady_hits, 0);
    assert_int_equal(a.lazy_hits, 0);
    assert_int_equal(a.serial_hits, 0);
    if (g_no_bound)
        assert_int_equal(b.serial_hits, 0);
    assert_true(b.steady_hits <= b.bound_hits);
    assert_true(b.lazy_hits <= b.steady_hits);
    g_memo_hits += b.memo_hits;
    g_entry_hits += b.entry_hits;
    g_bound_hits += b.bound_hits;
    g_steady_hits += b.steady_hits;
    g_lazy_hits += b.lazy_hits;
    g_serial_hits += b.serial_hits;
    compare_raw(tr, p, mode, hint, &a, &b, "every accelerator");
    for (size_t x = 0; x < N_ALONE; x++) {
        pred_raw_t c;
        replay(tr, p, mode, hint, 0, MODEL_ACCEL_ALL & ~g_alone[x].on, &c);
        /* the others did nothing (chunks are counted skipped by the closed forms too) */
        for (size_t y = 1; y < N_ALONE; y++)
            if (!(g_alone[y].on & g_alone[x].on))
                assert_int_equal(alone_hits(y, &c), 0);
        g_alone_hits[x] += alone_hits(x, &c);
        compare_raw(tr, p, mode, hint, &a, &c, g_alone[x].name);
        raw_free(&c);
    }
    raw_free(&a);
    raw_free(&b);
    return b.chunks_skipped;
}

static profile_t *load(const char *name, const char *set)
{
    profile_t *p = NULL;

    assert_int_equal(profile_load(name, &p), HS_OK);
    if (set)
        assert_int_equal(profile_set(p, set), HS_OK);
    assert_int_equal(profile_validate(p), HS_OK);
    return p;
}

/* A point found by a scan of the shortcuts against the chunk-by-chunk replay: seed 000
 * with sets (NULL-terminated) on sample trace name, replayed at each of n hints and
 * compared (compare); returns the chunks the skip jumped over. */
static uint64_t compare_point(const char *const *sets, const char *name, pred_mode_t mode,
                              const uint64_t *hints, size_t n)
{
    profile_t *p = load("seed000", NULL);
    trace_t *tr = NULL;
    char path[64];
    uint64_t skipped = 0;

    for (size_t k = 0; sets[k]; k++)
        assert_int_equal(profile_set(p, sets[k]), HS_OK);
    assert_int_equal(profile_validate(p), HS_OK);
    snprintf(path, sizeof(path), "traces/samples/%s", name);
    assert_int_equal(trace_load_posts(hs_test_src(path), 0, &tr), HS_OK);
    for (size_t h = 0; h < n; h++)
        skipped += compare(tr, p, mode, hints[h]);
    trace_free(tr);
    profile_free(p);
    return skipped;
}

/* 1 MB and 64 B messages, back to back and spread out, every profile, hint and mode. */
static void test_skip_matches_every_chunk(void **state)
{
    (void)state;
    static const char *const profiles[] = {"generic", "seed000", "seed003"};
    static const uint64_t hints[] = {0, 4096, 65536};
    static const uint64_t gaps[] = {2000, 500000};
    uint64_t skipped = 0;

    for (size_t pi = 0; pi < 3; pi++) {
        profile_t *p = load(profiles[pi], "bw.seg_bytes=4096");
        for (size_t gi = 0; gi < 2; gi++) {
            trace_t *tr = mk_trace(60, 64, 1 << 20, gaps[gi]);
            for (size_t hi = 0; hi < 3; hi++) {
                skipped += compare(tr, p, PRED_OPEN, hints[hi]);
                skipped += compare(tr, p, PRED_CLOSED, hints[hi]);
            }
            trace_free(tr);
        }
        profile_free(p);
    }
    assert_true(skipped > 1000); /* the skip ran: 20 x 256-WR messages per replay */
}

/* seed 000's switch perturbation (every message slower for a window after a switch) ends
 * in the middle of a 16 MB message: the skip must stop at the window's edge. */
static void test_skip_stops_at_perturbation_edge(void **state)
{
    (void)state;
    static const char *const windows[] = {"switch.perturb_window_us=37", "switch.perturb_window_us=400",
                                          "switch.perturb_window_us=2500"};
    uint64_t skipped = 0;

    for (size_t w = 0; w < 3; w++) {
        profile_t *p = load("seed000", windows[w]);
        trace_t *tr = mk_trace(30, 64, 16 << 20, 3000);
        skipped += compare(tr, p, PRED_OPEN, 8192);
        skipped += compare(tr, p, PRED_CLOSED, 8192);
        trace_free(tr);
        profile_free(p);
    }
    assert_true(skipped > 0);
}

/* Many queue pairs (a deep window, a long ring) and a moderation timer. */
static void test_skip_long_ring_and_timer(void **state)
{
    (void)state;
    profile_t *p = load("generic", "conn.qps=8");
    trace_t *tr = mk_trace(45, 4096, 8 << 20, 10000);

    assert_int_equal(profile_set(p, "bw.signal_every=4"), HS_OK);
    assert_int_equal(profile_set(p, "bw.seg_bytes=4096"), HS_OK);
    uint64_t skipped = compare(tr, p, PRED_OPEN, 0);
    skipped += compare(tr, p, PRED_OPEN, 16384);
    skipped += compare(tr, p, PRED_CLOSED, 0);
    assert_true(skipped > 0);
    trace_free(tr);
    profile_free(p);
}

/* Every WR signalled, coalescing off and a deep queue: the ring holds up to 512 batches of
 * one WR (the skip once compared rings of at most 64 and skipped nothing here: one step per
 * WR). 8 MB messages are 2048 chunks; in open loop the first messages fill the window (the
 * link backlog grows, nothing repeats), later ones repeat after ~537 chunks (a ring's
 * turnover) and jump ~1510; closed loop starts each message on an empty ring that never
 * fills, so it never repeats. */
static void test_skip_deep_ring(void **state)
{
    (void)state;
    profile_t *p = load("generic", "bw.depth=512");
    trace_t *tr = mk_trace(30, 64, 8 << 20, 3000);

    assert_int_equal(profile_set(p, "bw.signal_every=1"), HS_OK);
    assert_int_equal(profile_set(p, "bw.coal_count=1"), HS_OK);
    assert_int_equal(profile_set(p, "bw.seg_bytes=4096"), HS_OK);
    uint64_t skipped = compare(tr, p, PRED_OPEN, 0);
    skipped += compare(tr, p, PRED_CLOSED, 0);
    skipped += compare(tr, p, PRED_OPEN, 16384);
    assert_true(skipped > 20000); /* measured 23063 */
    trace_free(tr);
    profile_free(p);
}

/* n messages posted gap_ns apart of ever-different sizes, 1 MB to 2 MB (16 to 32 chunks of
 * 64 KB, any last chunk), every small_every-th (from the first; 0: none) of 64 B instead;
 * *big and *chunks (when not NULL) get the large messages and their 64 KB chunks. */
static trace_t *mk_distinct(size_t n, uint64_t gap_ns, size_t small_every, uint64_t *big,
                            uint64_t *chunks)
{
    uint64_t x = 88172645463325252ull, nbig = 0, nchunks = 0;
    trace_t *tr = NULL;

    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t size = small_every && i % small_every == 0 ? 64 : (1 << 20) + x % (1 << 20);
        trace_rec_t r = {.t_post_ns = 1000000 + i * gap_ns, .size_bytes = size};
        r.t_done_ns = r.t_post_ns + 10000;
        assert_int_equal(trace_push(tr, &r), HS_OK);
        nbig += size > 64;
        nchunks += size > 64 ? (size + 65535) / 65536 : 0;
    }
    if (big)
        *big = nbig;
    if (chunks)
        *chunks = nchunks;
    return tr;
}

/* A saturated path fed long messages of ever-different sizes (as `trace gen --workload
 * phased`'s third phase): each message's first chunks pop the batches the previous one left,
 * the last of them shorter (its last chunk), so the ring is never one run of equally spaced
 * batches until that batch is gone; the roll (chunks_skip's second case) jumps the chunks
 * that pop the batches before it. seed 000 at hint 0: 64 KB chunks (16 WRs of 4 KB), 8 in
 * flight. Each message must agree with the chunk-by-chunk replay and take about 6 chunk
 * steps: the first two, then the roll over the batches before the shorter one, the chunk
 * that pops it, the next two (the second finds the ring one run: the plain skip) and the
 * last chunk, a few more where a jump stops at a binade's end or short of an odd shift
 * (mdl_skip.c). Measured 6.4; 7.0 when the roll stops one batch short (as it must when the
 * reaping, not the slot wait, popped the batch), 7.9 when it does not carry the run of
 * equally spaced batches at the ring's tail over to the plain skip, 11.0 with no roll. */
static void test_skip_roll_distinct_sizes(void **state)
{
    (void)state;
    profile_t *p = load("seed000", NULL);
    uint64_t chunks;
    size_t n = 200;
    trace_t *tr = mk_distinct(n, 2000, 0, NULL, &chunks);

    g_no_bound = 1;
    uint64_t skipped = compare(tr, p, PRED_OPEN, 0);
    g_no_bound = 0;
    double steps = (double)(chunks - skipped) / (double)n;
    print_message("without the closed form: %.2f chunk steps per message (%llu chunks, %llu "
                  "skipped)\n", steps, (unsigned long long)chunks, (unsigned long long)skipped);
    assert_true(steps < 6.5);
    /* the closed form (chunks_bound): every chunk is link-bound from the second message
     * on; its steps are the first chunk, the jump over the previous message's equally
     * spaced batches, the chunk that pops the shorter one, the one that pops its own first
     * batch, the jump over the rest and the last chunk, of which the jumps are counted
     * skipped; but not for a message whose link time crosses into the next binade of time
     * (mdl_link_step: the replay runs from 2^20 ns to past 2^24 ns, a few messages) */
    uint64_t bound0 = g_bound_hits, steady0 = g_steady_hits, lazy0 = g_lazy_hits;
    skipped = compare(tr, p, PRED_OPEN, 0);
    steps = (double)(chunks - skipped) / (double)n;
    print_message("closed form: %llu messages (%llu by formulas on the ring the previous one "
                  "left), %.2f chunks not jumped per message\n",
                  (unsigned long long)(g_bound_hits - bound0),
                  (unsigned long long)(g_steady_hits - steady0), steps);
    assert_true(g_bound_hits - bound0 > (n - 1) * 9 / 10);
    assert_true(steps < 5);
    /* chunks_steady: the messages that meet the ring the previous closed-form one left (its
     * own batches, its last chunk's batch open or closed) */
    assert_true(g_steady_hits - steady0 > (n - 1) * 8 / 10);
    /* and of those, every one after a chunks_steady one meets the ring it left unwritten */
    print_message("on a ring left unwritten: %llu\n", (unsigned long long)(g_lazy_hits - lazy0));
    assert_true(g_lazy_hits - lazy0 > (n - 1) * 8 / 10);
    trace_free(tr);
    profile_free(p);
}

/* The roll where the CPU, not the link, sets the pace: posts are a full chunk's post cost
 * apart (16 x 150 ns + doorbell, more than its 1.3 us on a 400 Gb/s link), batches are
 * reaped as they are reported (20 us of base latency, a 32-batch window that never fills),
 * so the chunks the roll jumps were not waiting for a slot, and each looked at the batch
 * after the one it reaped. Every message must agree with the chunk-by-chunk replay; the
 * roll jumps most of the chunks here (measured: 3721 skipped, 1302 without the roll). */
static void test_skip_roll_reaped(void **state)
{
    (void)state;
    static const char *const sets[] = {"bw.seg_bytes=4096", "bw.depth=512",
                                       "link.base_lat_ns=20000", "link.gbps=400",
                                       "bw.coal_period_us=0", "bw.coal_count=1"};
    profile_t *p = load("generic", NULL);
    trace_t *tr = mk_distinct(200, 2000, 0, NULL, NULL);

    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
        assert_int_equal(profile_set(p, sets[i]), HS_OK);
    uint64_t skipped = compare(tr, p, PRED_OPEN, 0);
    assert_true(skipped > 3000);
    trace_free(tr);
    profile_free(p);
}

/* The binades of time ([2^e, 2^(e+1)) ns) that tr's big messages are posted in. */
static uint64_t binades_of_big(const trace_t *tr)
{
    uint64_t n = 0;
    int last = -1, e;

    for (size_t i = 0; i < tr->n; i++) {
        if (tr->recs[i].size_bytes <= 64)
            continue;
        (void)frexp((double)tr->recs[i].t_post_ns, &e);
        n += e != last;
        last = e;
    }
    return n;
}

/* Long messages of ever-different sizes, each starting on an idle path (posts 3 ms apart,
 * 64 B ones between): the first chunks of each replay the same relative to its start until
 * the skip takes over, so later ones long enough apply the start an earlier one kept
 * (mdl_entry_t). seed 000 and generic (4 KB segments, 16-WR batches), hints 0 and 8K (the
 * 64 B messages switch paths there, so the big message after each starts inside the
 * perturbation window, where no start is kept or applied), open and closed loop: every
 * message must agree with the chunk-by-chunk replay. On seed 000 at hint 0 every big
 * message but the first of each binade of time must have applied it (the skip takes over
 * after the first 10 of their 16 or more chunks; a start is applied only where its times
 * shift exactly, mdl_shift_t); elsewhere some must. */
static void test_entry_idle_distinct_sizes(void **state)
{
    (void)state;
    static const char *const profiles[] = {"seed000", "generic"};
    static const uint64_t hints[] = {0, 8192};
    uint64_t big, chunks;
    trace_t *tr = mk_distinct(120, 3000000, 3, &big, &chunks);

    for (size_t pi = 0; pi < 2; pi++) {
        profile_t *p = load(profiles[pi], "bw.seg_bytes=4096");
        assert_int_equal(profile_set(p, "switch.perturb_window_us=1500"), HS_OK);
        for (size_t hi = 0; hi < 2; hi++) {
            for (int mode = 0; mode < 2; mode++) {
                uint64_t hits0 = g_entry_hits;
                uint64_t skipped = compare(tr, p, mode ? PRED_CLOSED : PRED_OPEN, hints[hi]);
                uint64_t hits = g_entry_hits - hits0;
                if (pi == 0 && hi == 0) {
                    /* 64 KB chunks; the skip takes over at once after the start: the chunks
                     * but the last jumped */
                    print_message("%llu of %llu chunks stepped\n",
                                  (unsigned long long)(chunks - skipped),
                                  (unsigned long long)chunks);
                    /* kept again in each binade of time (mdl_shift_t): the first big
                     * message of each keeps it (open loop: posts at whole ns, so t0's
                     * last bit is 0); a closed loop's starts, at any time, keep one per
                     * last bit of t0, and drift a little */
                    uint64_t nbin = binades_of_big(tr);
                    print_message("%llu of %llu applied the start, %llu binades\n",
                                  (unsigned long long)hits, (unsigned long long)big,
                                  (unsigned long long)nbin);
                    if (mode == 0)
                        assert_int_equal(hits, big - nbin);
                    else
                        assert_true(hits < big && hits + 2 * nbin + 1 >= big);
                    /* about 2 chunks stepped where the start applied, 11 where not */
                    assert_true(chunks - skipped < 16 + 2 * hits + 12 * (big - hits));
                } else {
                    assert_true(hits > 0);
                }
            }
        }
        profile_free(p);
    }
    trace_free(tr);
}

/* The memo: a segmented message that meets the pipeline an earlier one of its size met
 * (relative to when it can start) is replayed as that one shifted. Repeated 1 MB messages
 * with 64 B ones between (those sit in the BW path's open batch at hint 0), back to back
 * (a saturated path: each meets the same backlog) and far apart (an idle path), every
 * profile, hint and mode, and a perturbation window that ends inside the series; every
 * message must agree with the chunk-by-chunk replay, and the memo must have been used. */
static void test_memo_repeats(void **state)
{
    (void)state;
    static const char *const profiles[] = {"generic", "seed000", "seed003"};
    static const uint64_t hints[] = {0, 4096, 65536};
    static const uint64_t gaps[] = {1000, 40000000};
    uint64_t hits0 = g_memo_hits;

    for (size_t pi = 0; pi < 3; pi++) {
        profile_t *p = load(profiles[pi], "bw.seg_bytes=4096");
        for (size_t gi = 0; gi < 2; gi++) {
            trace_t *tr = mk_trace(90, 64, 1 << 20, gaps[gi]);
            for (size_t hi = 0; hi < 3; hi++) {
                compare(tr, p, PRED_OPEN, hints[hi]);
                compare(tr, p, PRED_CLOSED, hints[hi]);
            }
            trace_free(tr);
        }
        profile_free(p);
    }
    uint64_t hits = g_memo_hits - hits0;
    assert_true(hits > 3 * 2 * 3 * 2 * 10); /* of 30 big messages per replay, most */
    /* seed 000's window after a switch ends inside runs of big messages: a 64 B message
     * (LL at hint 8K) then six 1 MB ones back to back, ten times; the window (2 ms) starts
     * at each run's first big message and ends at its third or fourth */
    profile_t *p = load("seed000", "switch.perturb_window_us=2000");
    trace_t *tr = NULL;
    assert_int_equal(trace_new(&tr), HS_OK);
    for (size_t i = 0; i < 70; i++) {
        trace_rec_t r = {.t_post_ns = 1000000 + i * 1000, .size_bytes = i % 7 ? 1 << 20 : 64};
        r.t_done_ns = r.t_post_ns + 10000;
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    hits0 = g_memo_hits;
    compare(tr, p, PRED_OPEN, 8192);
    compare(tr, p, PRED_CLOSED, 8192);
    assert_true(g_memo_hits > hits0);
    trace_free(tr);
    profile_free(p);
}

/* A closed loop with no think time: each message is ready at the previous one's report,
 * the report of that message's newest batch, so its reaping meets a tie (that batch due
 * exactly then). The memo restores a segmented message's pipeline shifted; the report it
 * restores must stay that batch's, bit for bit, or the tie breaks the other way and the next
 * message reaps one batch fewer. The case test_sweep_cuda's grid met (3000-byte LL
 * segments): kv's 4 KB messages after 64 B ones; the memo alone was 4e-4 off in the queue
 * cost and 368 ns in the message after each hit. */
static void test_memo_closed_tie(void **state)
{
    (void)state;
    static const char *const sets[] = {
        "host.l1d_bytes=8192", "host.post_ns=400", "link.base_lat_ns=1200",
        "link.dma_ns=1000", "link.wr_ns=0.5", "ll.depth=4", "ll.inline_bytes=440",
        "ll.coal_period_us=3", "ll.seg_bytes=3000", "bw.signal_every=4", "bw.split_ns=8460",
        "switch.perturb_factor=5", NULL};
    static const uint64_t hints[] = {1000000000000ull, 0};
    uint64_t hits0 = g_memo_hits;

    compare_point(sets, "kv.hst", PRED_CLOSED, hints, 2);
    assert_true(g_memo_hits > hits0);
}

/* A memo kept in one binade of time and applied in another, on a path so backlogged that a
 * short message's post waits for a slot whose report ties with the CPU's free time: shifted
 * with rounding, the tie broke and a stall went uncounted (1702 of 1703). Kept and applied
 * only where the shift is exact (mdl_shift_t), the stalls are the chunk-by-chunk replay's. */
static void test_memo_shift_exact(void **state)
{
    (void)state;
    static const char *const sets[] = {
        "host.l1d_bytes=8192", "host.l1_hit_ns=4", "host.interrupt_ns=4000",
        "host.wqe_bb_bytes=128", "link.gbps=60.28", "ll.depth=8", "ll.seg_bytes=4096",
        "ll.fixed_ns=0.5", "bw.signal_every=4", "bw.coal_period_us=0.5125", NULL};
    uint64_t hits0 = g_memo_hits;

    compare_point(sets, "wide.hst", PRED_OPEN, (const uint64_t[]){64}, 1);
    assert_true(g_memo_hits > hits0);
}

/* The skip on a path backlogged by 64 MB messages, whose jumps each added m lambda to
 * every time: where a jump's times cross into the next binade of time, the chunk-by-chunk
 * sums there round to a coarser grid and the shifted ones had not, and a short message's
 * slot wait later met a tie one ulp apart (912 stalls against 911). The skip jumps only
 * within a binade (mdl_skip.c, binade_edge), so the stalls are the chunk-by-chunk
 * replay's. */
static void test_skip_binade(void **state)
{
    (void)state;
    static const char *const sets[] = {
        "host.l1_miss_ns=24", "host.interrupt_ns=2000", "host.l1_sq_share=0.125",
        "link.mtu_bytes=9000", "link.base_lat_ns=1200", "link.wr_ns=3", "ll.seg_bytes=3000",
        "bw.depth=512", "bw.irq=0", "switch.drain_fixed_us=1.25", NULL};

    assert_true(compare_point(sets, "wide.hst", PRED_OPEN, (const uint64_t[]){16384}, 1) >
                100000);
}

/* Random traces (sizes 64 B to 1 MB + 4 KB, and any length from 512 KB to 2 MB; gaps from
 * 200 ns to 2 ms, so paths go idle, saturate and switch at random), random perturbation
 * windows and moderation: the skip and the memo against the chunk-by-chunk replay, message
 * by message. */
static void test_random_against_every_chunk(void **state)
{
    (void)state;
    static const char *const profiles[] = {"generic", "seed000", "seed003"};
    static const uint64_t sizes[] = {64, 4096, 65536, 1 << 20, (1 << 20) + 4096, 0};
    static const uint64_t gaps[] = {200, 3000, 100000, 2000000};
    static const char *const windows[] = {"switch.perturb_window_us=37",
                                          "switch.perturb_window_us=900",
                                          "switch.perturb_window_us=100000"};
    static const char *const signals[] = {"bw.signal_every=16", "bw.signal_every=4",
                                          "bw.signal_every=1"};
    static const uint64_t hints[] = {0, 4096, 8192, 65536};
    uint64_t x = 88172645463325252ull, hits0 = g_memo_hits, entry0 = g_entry_hits;
    uint64_t bound0 = g_bound_hits, steady0 = g_steady_hits;

    for (int seed = 0; seed < 48; seed++) {
        profile_t *p = load(profiles[seed % 3], "bw.seg_bytes=4096");
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        assert_int_equal(profile_set(p, windows[x % 3]), HS_OK);
        assert_int_equal(profile_set(p, signals[(x >> 8) % 3]), HS_OK);
        trace_t *tr = NULL;
        uint64_t t = 1000000;
        assert_int_equal(trace_new(&tr), HS_OK);
        for (size_t i = 0; i < 150; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* runs: the size repeats with probability 1/2, so repeats meet similar states */
            uint64_t size = (x >> 20) % 2 && i ? tr->recs[i - 1].size_bytes : sizes[x % 6];
            if (size == 0) /* any length: the last chunk of any WRs and bytes */
                size = (512 << 10) + (x >> 24) % (3 << 19);
            trace_rec_t r = {.t_post_ns = t, .size_bytes = size};
            r.t_done_ns = t + 10000;
            t += gaps[(x >> 40) % 4];
            assert_int_equal(trace_push(tr, &r), HS_OK);
        }
        compare(tr, p, seed % 2 ? PRED_CLOSED : PRED_OPEN, hints[(seed / 2) % 4]);
        trace_free(tr);
        profile_free(p);
    }
    assert_true(g_memo_hits > hits0);
    assert_true(g_entry_hits > entry0);
    assert_true(g_bound_hits > bound0);
    print_message("random traces: %llu memo hits, %llu idle starts, %llu closed-form messages "
                  "(%llu by formulas)\n",
                  (unsigned long long)(g_memo_hits - hits0), (unsigned long long)(g_entry_hits - entry0),
                  (unsigned long long)(g_bound_hits - bound0),
                  (unsigned long long)(g_steady_hits - steady0));
}

/* The closed form on the ring the previous link-bound message left (chunks_steady) under
 * random profiles and traces: depth and signalling (windows of 3 to 32 batches, some not a
 * multiple of the batch), moderation timer, link speed, base latency, event and post costs,
 * sizes 256 KB to 2 MB with any last chunk (some a whole batch), 64 B messages and idle gaps
 * now and then, perturbation windows at times, a quarter of the seeds in closed loop; every
 * message against the chunk-by-chunk replay; hinted BW windows of one batch (10, 16 and 31
 * WRs) for the closed form of chunks_serial. Seeds: HINTSIM_TEST_SEEDS (default 200; 20000 run here: 31001 messages by
 * formulas and 164430 on a one-batch window, all agreeing). */
static void test_steady_random(void **state)
{
    (void)state;
    static const char *const depths[] = {"bw.depth=48", "bw.depth=128", "bw.depth=136",
                                         "bw.depth=512", "bw.depth=64"};
    static const char *const signals[] = {"bw.signal_every=16", "bw.signal_every=8",
                                          "bw.signal_every=4"};
    static const char *const periods[] = {"bw.coal_period_us=2.05", "bw.coal_period_us=0.3",
                                          "bw.coal_period_us=40", "bw.coal_period_us=0"};
    static const char *const links[] = {"link.gbps=15.07", "link.gbps=100", "link.gbps=400"};
    static const char *const lats[] = {"link.base_lat_ns=600", "link.base_lat_ns=20000",
                                       "link.base_lat_ns=50"};
    static const char *const events[] = {"host.interrupt_ns=1000", "host.interrupt_ns=30000"};
    static const char *const posts[] = {"host.post_ns=200", "host.post_ns=2000"};
    static const char *const windows[] = {"switch.perturb_window_us=0",
                                          "switch.perturb_window_us=300",
                                          "switch.perturb_window_us=100000"};
    static const char *const hinted[] = {"bw.depth_hinted=10", "bw.depth_hinted=31",
                                         "bw.depth_hinted=16"};
    const char *env = getenv("HINTSIM_TEST_SEEDS");
    int seeds = env ? atoi(env) : 200;
    uint64_t x = 0x2545F4914F6CDD1Dull, steady0 = g_steady_hits, bound0 = g_bound_hits;
    uint64_t serial0 = g_serial_hits, lazy0 = g_lazy_hits;

    for (int seed = 0; seed < seeds; seed++) {
        profile_t *p = load("seed000", NULL);
        const char *const *sets[] = {depths, signals, periods, links, lats, events, posts,
                                     windows, hinted};
        const size_t nsets[] = {5, 3, 4, 3, 3, 2, 2, 3, 3};
        for (size_t k = 0; k < 9; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            assert_int_equal(profile_set(p, sets[k][x % nsets[k]]), HS_OK);
        }
        assert_int_equal(profile_validate(p), HS_OK);
        trace_t *tr = NULL;
        uint64_t t = 1000000;
        assert_int_equal(trace_new(&tr), HS_OK);
        for (size_t i = 0; i < 120; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint64_t size = (256 << 10) + (x >> 8) % (7 << 18);
            if ((x >> 40) % 16 == 0)
                size = 64;
            else if ((x >> 44) % 8 == 0)
                size &= ~(uint64_t)0xFFFF; /* a whole last batch: no open batch left */
            trace_rec_t r = {.t_post_ns = t, .size_bytes = size};
            r.t_done_ns = t + 10000;
            t += (x >> 48) % 32 == 0 ? 50000000 : 2000;
            assert_int_equal(trace_push(tr, &r), HS_OK);
        }
        compare(tr, p, seed % 4 == 3 ? PRED_CLOSED : PRED_OPEN, (x >> 20) % 3 == 0 ? 8192 : 0);
        trace_free(tr);
        profile_free(p);
    }
    print_message("steady random: %d seeds, %llu closed-form messages, %llu by formulas (%llu "
                  "on a ring left unwritten), %llu on a one-batch window\n", seeds,
                  (unsigned long long)(g_bound_hits - bound0),
                  (unsigned long long)(g_steady_hits - steady0),
                  (unsigned long long)(g_lazy_hits - lazy0),
                  (unsigned long long)(g_serial_hits - serial0));
    if (seeds >= 100) { /* measured 1.6 and ... per seed */
        assert_true(g_steady_hits - steady0 > (uint64_t)seeds);
        assert_true(g_serial_hits - serial0 > (uint64_t)seeds);
        assert_true(g_lazy_hits - lazy0 > (uint64_t)seeds); /* 337 of 408 at 200 seeds */
    }
}

/* chunks_serial for a message of one full chunk and the rest (nfull == 1: E < WRs <= 2E)
 * on seed 000's hinted BW path, whose window holds one batch: random window (10, 16 or 31
 * WRs, batches of 10 or 16), moderation timer, link speed, event cost and perturbation
 * window, 64 B messages and idle gaps now and then, a quarter of the seeds in closed loop;
 * every message against the chunk-by-chunk replay. Most such messages must take the closed
 * form (the measured share is printed). */
static void test_serial_one_full_chunk(void **state)
{
    (void)state;
    static const char *const hinted[] = {"bw.depth_hinted=10", "bw.depth_hinted=16",
                                         "bw.depth_hinted=31"};
    static const uint32_t batch_of[] = {10, 16, 16}; /* min(signal_every 16, window) */
    static const char *const periods[] = {"bw.coal_period_us=2.05", "bw.coal_period_us=0.3",
                                          "bw.coal_period_us=40", "bw.coal_period_us=0"};
    static const char *const links[] = {"link.gbps=15.07", "link.gbps=100", "link.gbps=400"};
    static const char *const events[] = {"host.interrupt_ns=1000", "host.interrupt_ns=30000"};
    static const char *const windows[] = {"switch.perturb_window_us=0",
                                          "switch.perturb_window_us=300",
                                          "switch.perturb_window_us=100000"};
    uint64_t x = 0x9E3779B97F4A7C15ull, serial0 = g_serial_hits, segmented = 0;

    for (int seed = 0; seed < 120; seed++) {
        profile_t *p = load("seed000", "bw.signal_every=16");
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t w = x % 3;
        assert_int_equal(profile_set(p, hinted[w]), HS_OK);
        assert_int_equal(profile_set(p, periods[(x >> 8) % 4]), HS_OK);
        assert_int_equal(profile_set(p, links[(x >> 16) % 3]), HS_OK);
        assert_int_equal(profile_set(p, events[(x >> 24) % 2]), HS_OK);
        assert_int_equal(profile_set(p, windows[(x >> 32) % 3]), HS_OK);
        assert_int_equal(profile_validate(p), HS_OK);
        uint64_t full = (uint64_t)batch_of[w] * 4096, t = 1000000;
        trace_t *tr = NULL;
        assert_int_equal(trace_new(&tr), HS_OK);
        for (size_t i = 0; i < 100; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* one full chunk and a last one of 1 byte to a whole batch */
            uint64_t size = full + 1 + (x >> 8) % full;
            if ((x >> 40) % 16 == 0)
                size = 64;
            else
                segmented++;
            trace_rec_t r = {.t_post_ns = t, .size_bytes = size};
            r.t_done_ns = t + 10000;
            t += (x >> 48) % 32 == 0 ? 50000000 : (x >> 44) % 4 == 0 ? 200 : 2000;
            assert_int_equal(trace_push(tr, &r), HS_OK);
        }
        compare(tr, p, seed % 4 == 3 ? PRED_CLOSED : PRED_OPEN, 8192);
        trace_free(tr);
        profile_free(p);
    }
    uint64_t serial = g_serial_hits - serial0;
    print_message("one full chunk: %llu of %llu segmented messages on a one-batch window in "
                  "closed form\n", (unsigned long long)serial, (unsigned long long)segmented);
    assert_true(serial * 3 > segmented); /* 5 797 of 11 259 measured */
}

/* Each accelerator on its own replayed some messages in the compares above (run last):
 * otherwise its comparison against the chunk-by-chunk replay tested nothing. */
static void test_each_accelerator_alone_ran(void **state)
{
    (void)state;
    for (size_t x = 0; x < N_ALONE; x++) {
        print_message("%s alone: %llu\n", g_alone[x].name, (unsigned long long)g_alone_hits[x]);
        assert_true(g_alone_hits[x] > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_matches_every_chunk),
        cmocka_unit_test(test_skip_stops_at_perturbation_edge),
        cmocka_unit_test(test_skip_long_ring_and_timer),
        cmocka_unit_test(test_skip_deep_ring),
        cmocka_unit_test(test_skip_roll_distinct_sizes),
        cmocka_unit_test(test_skip_roll_reaped),
        cmocka_unit_test(test_entry_idle_distinct_sizes),
        cmocka_unit_test(test_memo_repeats),
        cmocka_unit_test(test_memo_closed_tie),
        cmocka_unit_test(test_memo_shift_exact),
        cmocka_unit_test(test_skip_binade),
        cmocka_unit_test(test_random_against_every_chunk),
        cmocka_unit_test(test_steady_random),
        cmocka_unit_test(test_serial_one_full_chunk),
        cmocka_unit_test(test_each_accelerator_alone_ran),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
