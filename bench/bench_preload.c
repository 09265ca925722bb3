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
 * Usage: bench_preload [WRS]   (default 5000000 per timed run)
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

/* A cost run's records and drops: a dropped event's slot is never written, so a run that
 * dropped some reads low (the writer did not keep up with the unpaced posts). */
static void print_that_run(uint64_t rec, uint64_t drop)
{
    printf("%-34s %10llu records %8llu dropped%s\n", "  (that run)", (unsigned long long)rec,
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

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
    uint64_t t_direct, p_direct, polls = n / SIG_EVERY;
    hooked_t hook = {NULL, NULL, 0, 0, 0, 0}, every = {"HINTCAP_BLOCK", "1", 0, 0, 0, 0}, apart;
    int cpu[2];
    double post_direct, post_hook, poll_direct, poll_hook;
    char dir[] = "/tmp/bench-preload-XXXXXX";
    bench_t b;

    hs_host_print(stdout);
    if (!n || !mkdtemp(dir))
        return 1;
    b.f = fake_ctx_new();
    b.cq = fake_cq_new(b.f, 64);
    b.qp = fake_qp_new(b.f, b.cq, 7, 0);
    b.post_direct = b.f->vctx.context.ops.post_send;
    b.poll_direct = b.f->vctx.context.ops.poll_cq;
    run(&b, n / 10, 1, 0, NULL); /* warm up */
    t_direct = run(&b, n, 1, 0, &p_direct);
    hooked_run(&b, dir, n, &hook);
    printf("bench_preload: %llu WRs, 1 in %d signalled; provider double, no device\n",
           (unsigned long long)n, SIG_EVERY);
    post_direct = per_op(t_direct - p_direct, n);
    post_hook = per_op(hook.t_ns - hook.poll_ns, n);
    poll_direct = per_op(p_direct, polls);
    poll_hook = per_op(hook.poll_ns, polls);
    /* Differences of per-operation figures, in signed floating point: the hooked run can be
     * the faster one on a noisy host (the figure is then negative, never a wrapped one). */
    printf("%-34s %10.1f ns/WR   (provider alone %.1f, hooked %.1f; goal <= 50)\n",
           "added cost per posted WR", post_hook - post_direct, post_direct, post_hook);
    printf("%-34s %10.1f ns/poll (provider alone %.1f, hooked %.1f)\n",
           "added cost per polled completion", poll_hook - poll_direct, poll_direct, poll_hook);
    print_that_run(hook.rec, hook.drop);
    printf("%-34s %10.1f ns         (one per posted WR, one per poll that returns work)\n",
           atomic_load(&hcap_stamp_tsc) ? "  of which the time stamp (TSC)"
                                         : "  of which the time stamp (CLOCK_MONOTONIC)",
           stamp_cost_ns());
    hooked_run(&b, dir, n, &every); /* 1a */
    double post_every = per_op(every.t_ns - every.poll_ns, n);
    printf("%-34s %10.1f ns/WR   (hooked %.1f; HINTCAP_BLOCK=1: a full ring waits for the "
           "writer)\n", "  every WR kept", post_every - post_direct, post_every);
    print_that_run(every.rec, every.drop);
    two_cpus(cpu);
    if (cpu[1] >= 0) {
        hooked_run_apart(&b, dir, n, cpu, &apart);
        double post_apart = per_op(apart.t_ns - apart.poll_ns, n);
        printf("%-34s %10.1f ns/WR   (hooked %.1f; posting thread on CPU %d, writer on CPU "
               "%d: HINTCAP_WRITER_CPU)\n", "  posting thread alone", post_apart - post_direct,
               post_apart, cpu[0], cpu[1]);
        print_that_run(apart.rec, apart.drop);
    } else {
        printf("%-34s %10s         (one CPU: the writer takes its turns on it)\n",
               "  posting thread alone", "-");
    }
    report_drops(&b, dir, 10000000, 100);
    report_drops(&b, dir, n, 0);
    fake_qp_free(b.qp);
    fake_cq_free(b.cq);
    fake_ctx_free(b.f);
    rmdir(dir);
    return 0;
}
