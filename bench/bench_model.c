/* bench_model.c - the analytical model's speed: replay rate in messages/s for one hint on an
 * N-message trace (default 10 M), with and without the summariser, and `recommend`'s wall
 * time with every auto candidate, evaluated in parallel on every online core.
 * Usage: bench_model [N] [profile]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "model/model.h"
#include "model/recommend.h"

/* A mixed workload: sizes 64 B - 64 KB log-uniform, posts ~1 us apart on average. */
static trace_t *make_trace(size_t n)
{
    trace_t *tr = NULL;
    uint64_t t = 0, s = 88172645463325252ULL;

    if (trace_new(&tr) != HS_OK)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
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

/* CPU time of this thread, ns: the machine may be shared, wall time would mislead. */
static uint64_t cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Messages per CPU-second of one replay (and the summary when asked). The output arrays are
 * allocated and touched once, outside the timing: page faults are the allocator's cost. */
static double replay_rate(const trace_t *tr, const profile_t *p, uint64_t hint, int summarise,
                          pred_raw_t *raw)
{
    pred_opts_t o = {.mode = PRED_OPEN};
    pred_result_t r;
    uint64_t t0 = cpu_ns();

    if (model_engine_ops.replay(tr, p, &o, hint, raw) != HS_OK)
        return 0;
    if (summarise) {
        if (pred_summarize(tr, &o, raw, hint, &r) != HS_OK)
            return 0;
        pred_result_release(&r);
    }
    return (double)tr->n / ((double)(cpu_ns() - t0) * 1e-9);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    const char *pname = argc > 2 ? argv[2] : "seed000";
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    profile_t *p = NULL;
    trace_t *tr = make_trace(n);
    rec_opts_t ro = {.objective = REC_OBJ_P99};
    rec_report_t rep;

    if (!tr || profile_load(pname, &p) != HS_OK)
        return 1;
    pred_raw_t raw = {0};
    raw.lat_us = calloc(n, sizeof(*raw.lat_us));
    raw.path = calloc(n, 1);
    if (!raw.lat_us || !raw.path)
        return 1;
    memset(raw.lat_us, 0, n * sizeof(*raw.lat_us));
    memset(raw.path, 0, n);
    printf("bench_model: %zu messages, profile %s, %ld online cores\n", n, pname, cores);
    replay_rate(tr, p, 4096, 0, &raw); /* warm-up: caches, TLB, first-touch of the trace */
    printf("  replay only, hint 4K      : %8.1f M msgs/s per core (CPU time; goal >= 50)\n",
           replay_rate(tr, p, 4096, 0, &raw) * 1e-6);
    printf("  replay only, hint 0       : %8.1f M msgs/s\n", replay_rate(tr, p, 0, 0, &raw) * 1e-6);
    printf("  replay + summary, hint 4K : %8.1f M msgs/s\n", replay_rate(tr, p, 4096, 1, &raw) * 1e-6);
    clock_t c0 = clock();
    if (rec_run(&model_engine_ops, tr, p, &ro, &rep) != HS_OK)
        return 1;
    double cpu_s = (double)(clock() - c0) / CLOCKS_PER_SEC;
    printf("  recommend, auto           : %8.2f s wall, %.2f s CPU for %zu candidates on %u "
           "threads (goal <= 10 s on 2 cores; CPU / 2 is the wall on 2 idle cores)\n",
           rep.wall_s, cpu_s, rep.n, rep.threads_used);
    rec_report_release(&rep);
    free(raw.lat_us);
    free(raw.path);
    profile_free(p);
    trace_free(tr);
    return 0;
}
