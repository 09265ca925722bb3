/* bench_preload.c - libhintcap's added cost, against a minimal in-process provider double
 * (tests/test_hcap_fake.c: post_send and poll_cq that only queue completions):
 *   1. ns per posted WR: ibv_post_send through the hook minus the provider called directly
 *   2. ns per polled completion: ibv_poll_cq through the hook minus the provider directly
 *   1a. 1 again with every event kept (HINTCAP_BLOCK=1: a full ring waits for the writer),
 *      so that no dropped event makes the figure low: what recording every WR costs
 *   1b. where the process may use two CPUs or more: 1 again with the posting thread on the
 *      first and the writer on the second (HINTCAP_WRITER_CPU), so that the figure is the
 *      posting thread's own; in 1 the writer shares whatever CPUs it is given
 *   3. drops when WRs arrive at a paced 10 M WR/s for a second (in bursts of PACE_EVERY),
 *      the writer streaming the trace to a file (goal: zero), and at the unpaced maximum
 *      rate (reported).
 * Every 64th WR is signalled and polled, as a selective-signalling application would.
 * 1, 1a, 1b and 2 are measured in ROUNDS rounds (default 3), each round the provider alone
 * and then each hooked run, so that a slow spell of a shared host takes one round's sample
 * and not all of them: each added cost is the median over the rounds of the round's hooked
 * figure minus its provider-alone one, printed with the rounds' range.
 * Usage: bench_preload [--rounds ROUNDS] [WRS]   (default 5000000 per timed run)
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/preload/hcap.h"
#include "common/hs_host.h"
#include "common/hs_util.h"
#include "tests/test_hcap_fake.h"

#define SIG_EVERY 64
/* Paced runs read the clock once per this many WRs (one read per WR would cost as much as
 * the hook, and cap the rate the run can offer below 10 M WR/s on some hosts). */
#define PACE_EVERY 8
#define MAX_ROUNDS 15

typedef struct {
    fake_ctx_t *f;
    fake_cq_t *cq;
    fake_qp_t *qp;
    int (*post_direct)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
    int (*poll_direct)(struct ibv_cq *, int, struct ibv_wc *);
} bench_t;

/* Post n WRs (every SIG_EVERY-th signalled, then polled); ns_per_wr pacing if non-zero.
 * Through the context's ops (hooked or not) or the provider's functions directly. */
static uint64_t run(bench_t *b, uint64_t n, int direct, uint64_t ns_per_wr, uint64_t *poll_ns)
{
    struct ibv_sge sge = {.addr = 0x1000, .length = 4096, .lkey = 1};
    struct ibv_send_wr wr, *bad;
    struct ibv_wc wc[4];
    struct ibv_qp *qp = &b->qp->qpx.qp_base;
    struct ibv_cq *cq = (struct ibv_cq *)&b->cq->cqx;
    uint64_t i, t0 = hs_now_ns(), tp = 0;

    memset(&wr, 0, sizeof(wr));
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    for (i = 0; i < n; i++) {
        wr.wr_id = i + (1ULL << 40); /* never FAKE_BAD_WRID */
        wr.send_flags = (i % SIG_EVERY == SIG_EVERY - 1) ? IBV_SEND_SIGNALED : 0;
        while (ns_per_wr && i % PACE_EVERY == 0 && hs_now_ns() < t0 + i * ns_per_wr)
            ;
        if (direct)
            b->post_direct(qp, &wr, &bad);
        else
            ibv_post_send(qp, &wr, &bad);
        if (wr.send_flags) {
            uint64_t tq = hs_now_ns();
            if (direct)
                b->poll_direct(cq, 4, wc);
            else
                ibv_poll_cq(cq, 4, wc);
            tp += hs_now_ns() - tq;
        }
    }
    if (poll_ns)
        *poll_ns = tp;
    return hs_now_ns() - t0;
}

/* Start a capture into dir, with env=val set while it reads its configuration (env NULL:
 * none); a capture that does not start ends the benchmark (exit 1). */
static void capture_begin(bench_t *b, const char *dir, const char *env, const char *val)
{
    static const hcap_real_t real = {0};

    setenv("HINTCAP_DIR", dir, 1);
    setenv("HINTCAP_COLD", "100", 1);
    if (env)
        setenv(env, val, 1);
    hcap_start(&hcap_g, &real, NULL, NULL);
    if (env)
        unsetenv(env);
    if (hcap_running(&hcap_g)) {
        hcap_ctx_attach(&hcap_g, &b->f->vctx.context);
        if (hcap_qp_attach(&hcap_g, &b->qp->qpx.qp_base, 0, 1024, NULL))
            return;
    }
    fprintf(stderr, "bench_preload: capture did not start in %s\n", dir);
    exit(1);
}

static void capture_end(bench_t *b, uint64_t *records, uint64_t *dropped)
{
    hcap_qp_detach(&hcap_g, &b->qp->qpx.qp_base);
    hcap_stop(&hcap_g, 0);
    hcap_ctx_detach(&hcap_g, &b->f->vctx.context);
    *records = hcap_g.records;
    *dropped = hcap_g.dropped;
    unlink(hcap_g.path);
}

static void report_drops(bench_t *b, const char *dir, uint64_t n, uint64_t pace_ns)
{
    uint64_t rec, drop, ns;

    capture_begin(b, dir, NULL, NULL);
    ns = run(b, n, 0, pace_ns, NULL);
    capture_end(b, &rec, &drop);
    printf("%-34s %10.2f M WR/s %10llu records %8llu dropped%s\n",
           pace_ns ? "paced 10 M WR/s, trace to file" : "unpaced maximum, trace to file",
           (double)n * 1e3 / (double)ns, (unsigned long long)rec, (unsigned long long)drop,
           pace_ns && drop ? "   <- goal is zero" : "");
}

/* The first two CPUs this process may use (-1 where there are fewer). */
static void two_cpus(int cpu[2])
{
    cpu_set_t set;
    int k = 0;

    cpu[0] = cpu[1] = -1;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &set))
            cpu[k++] = c;
}

/* One timed run through the hooks (after a warm-up of a tenth), the capture started with
 * env=val (env NULL: none): its total and polling times, its records and drops. */
typedef struct {
    const char *env, *val;
    uint64_t t_ns, poll_ns, rec, drop;
} hooked_t;

static void hooked_run(bench_t *b, const char *dir, uint64_t n, hooked_t *h)
{
    capture_begin(b, dir, h->env, h->val);
    run(b, n / 10, 0, 0, NULL);
    h->t_ns = run(b, n, 0, 0, &h->poll_ns);
    capture_end(b, &h->rec, &h->drop);
}

/* 1b: hooked_run with this thread on cpu[0] and the writer on cpu[1] (HINTCAP_WRITER_CPU);
 * the thread's CPUs are given back afterwards. */
static void hooked_run_apart(bench_t *b, const char *dir, uint64_t n, const int cpu[2],
                             hooked_t *h)
{
    cpu_set_t all, one;
    char v[16];

    pthread_getaffinity_np(pthread_self(), sizeof(all), &all);
    CPU_ZERO(&one);
    CPU_SET(cpu[0], &one);
    pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    snprintf(v, sizeof(v), "%d", cpu[1]);
    h->env = "HINTCAP_WRITER_CPU";
    h->val = v;
    hooked_run(b, dir, n, h);
    h->val = NULL; /* v goes out of scope */
    pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
}

/* A cost's runs' records and drops: a dropped event's slot is never written, so a run that
 * dropped some reads low (the writer did not keep up with the unpaced posts). */
static void print_those_runs(uint64_t rec, uint64_t drop)
{
    printf("%-34s %10llu records %8llu dropped%s\n", "  (those runs)", (unsigned long long)rec,
           (unsigned long long)drop, drop ? "   <- the figure above is low by those" : "");
}

/* ns per operation of a total (0 when there were none: a tiny WR count has no polls). */
static double per_op(uint64_t total_ns, uint64_t ops)
{
    return ops ? (double)total_ns / (double)ops : 0.0;
}

/* What the hooks' time stamp (hcap_stamp: the TSC, or CLOCK_MONOTONIC where the TSC is
 * not invariant; set when a capture started) costs here: a floor of the per-WR cost. */
static double stamp_cost_ns(void)
{
    uint64_t i, t0 = hs_now_ns(), sink = 0;

    for (i = 0; i < 2000000; i++)
        sink += hcap_stamp();
    return (double)(hs_now_ns() - t0 - (sink & 1)) / 2e6;
}

/* One cost over the rounds: per round the hooked figure and its provider-alone baseline
 * (ns per operation), and the runs' records and drops. */
typedef struct {
    double hooked[MAX_ROUNDS], alone[MAX_ROUNDS];
    uint64_t rec, drop;
} cost_t;

/* The median over the rounds of hooked - alone (signed floating point: the hooked run can be
 * the faster one on a noisy host, the figure is then negative, never a wrapped one), its
 * range, and the medians of both sides. */
typedef struct {
    double added, lo, hi, alone, hooked;
} cost_sum_t;

static cost_sum_t cost_sum(const cost_t *c, int rounds)
{
    double d[MAX_ROUNDS], a[MAX_ROUNDS], h[MAX_ROUNDS];
    cost_sum_t r;

    for (int i = 0; i < rounds; i++) {
        d[i] = c->hooked[i] - c->alone[i];
        a[i] = c->alone[i];
        h[i] = c->hooked[i];
    }
    r.added = hs_median_double(d, (size_t)rounds); /* sorts d: its ends are the range */
    r.lo = d[0];
    r.hi = d[rounds - 1];
    r.alone = hs_median_double(a, (size_t)rounds);
    r.hooked = hs_median_double(h, (size_t)rounds);
    return r;
}

/* Rounds of: the provider alone, then through the hooks as it is (hook, with its polls in
 * poll), with every event kept (every), and where there are two CPUs with the writer on
 * the second (apart). */
typedef struct {
    cost_t hook, poll, every, apart;
    int cpu[2];
} costs_t;

/* Round r of cost c; h: the run whose records and drops it counts (NULL: they are another
 * cost's, as the polls' are the posts' run's). */
static void cost_add(cost_t *c, int r, double alone, double hooked, const hooked_t *h)
{
    c->alone[r] = alone;
    c->hooked[r] = hooked;
    if (h) {
        c->rec += h->rec;
        c->drop += h->drop;
    }
}

static void measure_round(bench_t *b, const char *dir, uint64_t n, int r, costs_t *c)
{
    uint64_t p_direct, t_direct, polls = n / SIG_EVERY;
    hooked_t hook = {NULL, NULL, 0, 0, 0, 0}, every = {"HINTCAP_BLOCK", "1", 0, 0, 0, 0}, apart;

    t_direct = run(b, n, 1, 0, &p_direct);
    double post_direct = per_op(t_direct - p_direct, n);
    hooked_run(b, dir, n, &hook);
    cost_add(&c->hook, r, post_direct, per_op(hook.t_ns - hook.poll_ns, n), &hook);
    cost_add(&c->poll, r, per_op(p_direct, polls), per_op(hook.poll_ns, polls), NULL);
    hooked_run(b, dir, n, &every); /* 1a */
    cost_add(&c->every, r, post_direct, per_op(every.t_ns - every.poll_ns, n), &every);
    if (c->cpu[1] >= 0) { /* 1b */
        hooked_run_apart(b, dir, n, c->cpu, &apart);
        cost_add(&c->apart, r, post_direct, per_op(apart.t_ns - apart.poll_ns, n), &apart);
    }
}

static void costs_print(costs_t *c, int rounds)
{
    cost_sum_t s = cost_sum(&c->hook, rounds), p = cost_sum(&c->poll, rounds);

    printf("%-34s %10.1f ns/WR   (range %.1f..%.1f; provider alone %.1f, hooked %.1f; goal "
           "<= 50)\n", "added cost per posted WR", s.added, s.lo, s.hi, s.alone, s.hooked);
    printf("%-34s %10.1f ns/poll (range %.1f..%.1f; provider alone %.1f, hooked %.1f)\n",
           "added cost per polled completion", p.added, p.lo, p.hi, p.alone, p.hooked);
    print_those_runs(c->hook.rec, c->hook.drop);
    printf("%-34s %10.1f ns         (one per posted WR, one per poll that returns work)\n",
           atomic_load(&hcap_stamp_tsc) ? "  of which the time stamp (TSC)"
                                         : "  of which the time stamp (CLOCK_MONOTONIC)",
           stamp_cost_ns());
    s = cost_sum(&c->every, rounds);
    printf("%-34s %10.1f ns/WR   (range %.1f..%.1f; hooked %.1f; HINTCAP_BLOCK=1: a full ring "
           "waits for the writer)\n", "  every WR kept", s.added, s.lo, s.hi, s.hooked);
    print_those_runs(c->every.rec, c->every.drop);
    if (c->cpu[1] < 0) {
        printf("%-34s %10s         (one CPU: the writer takes its turns on it)\n",
               "  posting thread alone", "-");
        return;
    }
    s = cost_sum(&c->apart, rounds);
    printf("%-34s %10.1f ns/WR   (range %.1f..%.1f; hooked %.1f; posting thread on CPU %d, "
           "writer on CPU %d: HINTCAP_WRITER_CPU)\n", "  posting thread alone", s.added, s.lo,
           s.hi, s.hooked, c->cpu[0], c->cpu[1]);
    print_those_runs(c->apart.rec, c->apart.drop);
}

int main(int argc, char **argv)
{
    uint64_t n = 5000000;
    int rounds = 3, a = 1;
    char dir[] = "/tmp/bench-preload-XXXXXX";
    costs_t *c = calloc(1, sizeof(*c));
    bench_t b;

    if (a + 1 < argc && strcmp(argv[a], "--rounds") == 0) {
        rounds = atoi(argv[a + 1]);
        a += 2;
    }
    if (a < argc)
        n = strtoull(argv[a], NULL, 10);
    if (!c || !n || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "usage: bench_preload [--rounds 1..%d] [WRS]\n", MAX_ROUNDS);
        free(c);
        return 2;
    }
    hs_host_print(stdout);
    if (!mkdtemp(dir)) {
        free(c);
        return 1;
    }
    b.f = fake_ctx_new();
    b.cq = fake_cq_new(b.f, 64);
    b.qp = fake_qp_new(b.f, b.cq, 7, 0);
    b.post_direct = b.f->vctx.context.ops.post_send;
    b.poll_direct = b.f->vctx.context.ops.poll_cq;
    two_cpus(c->cpu);
    run(&b, n / 10, 1, 0, NULL); /* warm up */
    for (int r = 0; r < rounds; r++)
        measure_round(&b, dir, n, r, c);
    printf("bench_preload: %llu WRs a run, %d rounds (each figure: the median over the "
           "rounds), 1 in %d signalled; provider double, no device\n",
           (unsigned long long)n, rounds, SIG_EVERY);
    costs_print(c, rounds);
    report_drops(&b, dir, 10000000, 100);
    report_drops(&b, dir, n, 0);
    fake_qp_free(b.qp);
    fake_cq_free(b.cq);
    fake_ctx_free(b.f);
    free(c);
    rmdir(dir);
    return 0;
}
