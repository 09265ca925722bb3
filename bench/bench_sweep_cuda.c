/* bench_sweep_cuda.c - the CUDA sweep engine against the CPU sweep on all host cores, in one
 * run: an N-message trace (default 10 M; "mixed": sizes 64 B - 64 KB log-uniform, posts
 * 0.2-1.8 us apart) against P what-if points (default 4096: hint x ll.depth x bw.depth_hinted
 * x link.gbps on the generic profile, 8 values each), open loop.
 *
 * GPU: every point in batches (scu_replay_batch), wall time from the call to the summaries
 * back, and the kernels' own time (CUDA events). CPU: what the CPU sweep computes per point
 * (pred_run with model_engine_ops, its shortcuts on), one point per worker thread on every
 * core the process may use, over C of the points spread over the grid (cpu_points; default
 * 2 per core, at least one per core, fewer only when P is: then the ratio is not judged; a
 * whole 4096-point CPU sweep of 10 M messages takes minutes); its rate is points x N /
 * wall, the wall the fastest of CPU_ROUNDS rounds (a round lasts about a second, so that a
 * shared host's slow spell would otherwise move the ratio by half; the fastest flatters the
 * CPU, not the GPU). The GPU's answers on those C points are checked against the CPU's
 * (every figure within 1e-9 relative).
 * Prints the host line, the device, a table and the goals (>= 10 G message-evaluations/s,
 * >= 20x the CPU sweep); --results FILE writes the same table with the date, to paste.
 * Usage: bench_sweep_cuda [--results FILE] [N] [P] [C]
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hs_host.h"
#include "common/hs_util.h"
#include "model/model.h"
#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "sweep/sweep_eval_cuda.h"

#define GOAL_GEVALS 10.0
#define GOAL_RATIO 20.0
#define CPU_ROUNDS 3 /* the CPU sweep's rounds: its fastest is the rate the ratio is over */

typedef struct {
    const trace_t *tr;
    profile_t **ps;
    const uint64_t *hints;
    const size_t *pts; /* the points (cpu_points): res[i] is point pts[i]'s */
    pred_result_t *res;
    size_t n, next;
    pthread_mutex_t lock;
    hs_status_t st;
} cpu_pool_t;

static trace_t *make_trace(size_t n)
{
    trace_t *tr = NULL;
    uint64_t t = 0, s = 88172645463325252ULL;

    if (trace_new(&tr) != HS_OK)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        hs_xorshift64(&s);
        trace_rec_t r = {.t_post_ns = t, .t_done_ns = TRACE_TIME_UNKNOWN,
                         .size_bytes = 64u << (s % 11)};
        t += 200 + (s >> 40) % 1600;
        if (trace_push(tr, &r) != HS_OK) {
            trace_free(tr);
            return NULL;
        }
    }
    return tr;
}

/* Point i of the 8 x 8 x 8 x 8 grid (cycling past 4096). */
static hs_status_t make_point(const profile_t *base, size_t i, profile_t **out, uint64_t *hint)
{
    static const uint64_t hints[8] = {0, 256, 1024, 2048, 4096, 8192, 16384, 65536};
    static const double lld[8] = {4, 8, 16, 32, 64, 128, 256, 512};
    static const double bwd[8] = {8, 16, 32, 64, 128, 256, 512, 1024};
    static const double gbps[8] = {25, 50, 100, 200, 400, 800, 12.5, 56};
    profile_t *p;
    hs_status_t st = profile_clone(base, &p);

    if (st != HS_OK)
        return st;
    *hint = hints[i % 8];
    p->ll_depth = lld[(i / 8) % 8];
    p->bw_depth_hinted = bwd[(i / 64) % 8];
    p->link_gbps = gbps[(i / 512) % 8];
    if ((st = profile_validate(p)) != HS_OK) {
        profile_free(p);
        return st;
    }
    *out = p;
    return HS_OK;
}

/* The CPU's cp points of the np: j x stride mod np for j < cp, the stride coprime with np
 * and near np over the golden ratio, so that any cp of them mix the grid's hints, depths
 * and link rates as the whole grid does (the first cp points alone hold one link rate and
 * one BW depth, whose points the CPU replays at another rate than the grid's mean). */
static void cpu_points(size_t *pts, size_t cp, size_t np)
{
    size_t stride = (size_t)((double)np * 0.6180339887498949);

    for (;; stride++) {
        size_t a = stride, b = np;
        while (b) {
            size_t t = a % b;
            a = b;
            b = t;
        }
        if (a == 1)
            break;
    }
    for (size_t j = 0; j < cp; j++)
        pts[j] = (size_t)((uint64_t)j * stride % np);
}

static void *cpu_worker(void *arg)
{
    cpu_pool_t *pool = arg;
    pred_opts_t o;

    memset(&o, 0, sizeof(o));
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        size_t i = pool->next++;
        pthread_mutex_unlock(&pool->lock);
        if (i >= pool->n)
            break;
        size_t k = pool->pts[i];
        pred_ctx_t c = {&model_engine_ops, pool->tr, pool->ps[k], &o};
        hs_status_t st = pred_run(&c, pool->hints[k], 0, &pool->res[i]);
        if (st != HS_OK)
            pool->st = st;
    }
    return NULL;
}

/* The CPU sweep's work on points [0, n) on every allowed core; wall seconds. */
static double cpu_run(cpu_pool_t *pool, int threads)
{
    pthread_t tid[1024];
    uint64_t t0 = hs_now_ns();
    int started = 0;

    for (; started < threads && started < 1024; started++)
        if (pthread_create(&tid[started], NULL, cpu_worker, pool) != 0)
            break;
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    return (double)(hs_now_ns() - t0) * 1e-9;
}

static int close_rel(double a, double b)
{
    return a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* The GPU's figures on the CPU's points (c[i] is point pts[i]'s): how many points differ
 * (beyond 1e-9). */
static size_t check(const pred_result_t *g, const pred_result_t *c, const size_t *pts, size_t n)
{
    size_t bad = 0;

    for (size_t i = 0; i < n; i++) {
        const pred_result_t *x = &g[pts[i]];
        bad += !(close_rel(x->p50_us, c[i].p50_us) && close_rel(x->p99_us, c[i].p99_us) &&
                 close_rel(x->mean_us, c[i].mean_us) &&
                 close_rel(x->throughput_gbps, c[i].throughput_gbps) &&
                 close_rel(x->ll_fraction, c[i].ll_fraction) && x->switches == c[i].switches);
    }
    return bad;
}

/* What the table reports: the run's sizes and times. */
typedef struct {
    size_t n, np, cp;          /* messages, GPU points, CPU points */
    int threads;               /* the CPU sweep's */
    double g_wall;             /* the GPU's wall seconds */
    double c_wall, c_slowest;  /* the CPU sweep's fastest and slowest round */
    size_t bad;                /* CPU points whose GPU figures differ */
} run_t;

static void print_table(FILE *f, const hs_host_t *h, const scu_stats_t *gs, const run_t *r)
{
    char date[64];
    time_t now = time(NULL);
    size_t n = r->n, np = r->np, cp = r->cp;
    int threads = r->threads;
    double g_wall = r->g_wall, c_wall = r->c_wall;
    double g_rate = (double)n * (double)np / g_wall, c_rate = (double)n * (double)cp / c_wall;
    double k_rate = (double)n * (double)np / gs->kernel_s;

    strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fprintf(f, "bench_sweep_cuda %s: %zu-message trace (mixed), %zu points, open loop\n", date,
            n, np);
    fprintf(f, "host: cpu=\"%s\" cores_allowed=%d; device %d: %s\n", h->cpu, h->cores_allowed,
            gs->device, gs->device_name);
    fprintf(f, "| engine | points | wall s | G msg-evals/s | s per point |\n|---|---|---|---|---|\n");
    fprintf(f, "| GPU (%zu per launch, %zu launches, %zu B per point) | %zu | %.3f (kernels %.3f) "
            "| %.2f (kernels %.2f) | %.5f |\n", gs->batch, gs->launches, gs->bytes_per_replay,
            np, g_wall, gs->kernel_s, g_rate * 1e-9, k_rate * 1e-9, g_wall / (double)np);
    fprintf(f, "| CPU sweep, %d threads (fastest of %d rounds; slowest %.3f s) | %zu | %.3f | "
            "%.3f | %.4f |\n", threads, CPU_ROUNDS, r->c_slowest, cp, c_wall, c_rate * 1e-9,
            c_wall / (double)cp * (double)threads);
    fprintf(f, "GPU / CPU: %.1fx (goal >= %.0fx: %s); GPU %.2f G msg-evals/s (goal >= %.0f: "
            "%s); GPU figures on the CPU's %zu points: %zu differ beyond 1e-9\n",
            g_rate / c_rate, GOAL_RATIO,
            cp < (size_t)threads ? "not judged, fewer CPU points than cores"
                                 : g_rate / c_rate >= GOAL_RATIO ? "met" : "NOT met",
            g_rate * 1e-9, GOAL_GEVALS, g_rate * 1e-9 >= GOAL_GEVALS ? "met" : "NOT met", cp,
            r->bad);
}

int main(int argc, char **argv)
{
    const char *results = NULL;
    size_t n = 10000000, np = 4096, cp = 0;
    scu_ctx_t *cu = NULL;
    scu_stats_t gs;
    hs_host_t host;
    profile_t *base;
    int a = 1, rc = 1;

    hs_host_print(stdout);
    hs_host_probe(&host);
    if (a + 1 < argc && strcmp(argv[a], "--results") == 0) {
        results = argv[a + 1];
        a += 2;
    }
    if (a < argc)
        n = strtoull(argv[a++], NULL, 10);
    if (a < argc)
        np = strtoull(argv[a++], NULL, 10);
    cp = a < argc ? strtoull(argv[a++], NULL, 10) : 2 * (size_t)host.cores_allowed;
    /* at least a point per core: fewer would time the CPU sweep on fewer cores than it has */
    cp = cp < (size_t)host.cores_allowed ? (size_t)host.cores_allowed : cp;
    cp = cp > np ? np : cp < 1 ? 1 : cp;
    if (scu_open(-1, &cu) != HS_OK) {
        printf("SKIP: no CUDA device\n");
        return 0;
    }
    trace_t *tr = make_trace(n);
    profile_t **ps = calloc(np, sizeof(*ps));
    uint64_t *hints = calloc(np, sizeof(*hints));
    pred_result_t *g = calloc(np, sizeof(*g)), *c = calloc(cp, sizeof(*c));
    size_t *pts = calloc(cp, sizeof(*pts));
    if (!tr || !ps || !hints || !g || !c || !pts || profile_load("generic", &base) != HS_OK)
        goto out;
    for (size_t i = 0; i < np; i++)
        if (make_point(base, i, &ps[i], &hints[i]) != HS_OK)
            goto out;
    uint64_t t0 = hs_now_ns();
    if (scu_replay_batch(cu, tr, PRED_OPEN, 0, (const profile_t *const *)ps, hints, np, g, &gs) !=
        HS_OK)
        goto out;
    double g_wall = (double)(hs_now_ns() - t0) * 1e-9;
    cpu_points(pts, cp, np);
    cpu_pool_t pool = {tr, ps, hints, pts, c, cp, 0, PTHREAD_MUTEX_INITIALIZER, HS_OK};
    run_t run = {n, np, cp, host.cores_allowed, g_wall, HUGE_VAL, 0, 0};
    for (int k = 0; k < CPU_ROUNDS && pool.st == HS_OK; k++) {
        for (size_t i = 0; k > 0 && i < cp; i++)
            pred_result_release(&c[i]);
        pool.next = 0;
        double w = cpu_run(&pool, host.cores_allowed);
        run.c_wall = w < run.c_wall ? w : run.c_wall;
        run.c_slowest = w > run.c_slowest ? w : run.c_slowest;
    }
    if (pool.st != HS_OK)
        goto out;
    run.bad = check(g, c, pts, cp);
    print_table(stdout, &host, &gs, &run);
    if (results) {
        FILE *f = fopen(results, "w");
        if (f) {
            print_table(f, &host, &gs, &run);
            fclose(f);
        }
    }
    rc = run.bad ? 1 : 0;
out:
    for (size_t i = 0; ps && i < np; i++) {
        profile_free(ps[i]);
        pred_result_release(&g[i]);
    }
    for (size_t i = 0; c && i < cp; i++)
        pred_result_release(&c[i]);
    free(ps);
    free(hints);
    free(pts);
    free(g);
    free(c);
    trace_free(tr);
    scu_close(cu);
    return rc;
}
