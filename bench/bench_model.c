/* bench_model.c - the analytical model's speed: replay rate in messages/s for one hint on an
 * N-message trace (default 10 M) of each workload (a mixed synthetic one, then every
 * `trace gen` workload, generated into a temporary file and loaded), with and without the
 * summariser, and `recommend`'s wall time with every auto candidate on the mixed trace,
 * evaluated in parallel on every online core. Rates are in CPU time, the best of R rounds
 * over all rows (the traces are held meanwhile: N x 32 bytes each).
 * Usage: bench_model [--once HINT | --rounds R] [N] [profile] [workload[:KEY=VALUE...]...]
 * (default: 3 rounds; mixed, cycle and every workload with its defaults; --once: one
 * replay of each at HINT, for profilers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "common/hs_host.h"
#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "model/model.h"
#include "model/recommend.h"
#include "traces/trace_gen.h"

#define GOAL_MPS 50.0

/* "mixed": sizes 64 B - 64 KB log-uniform, independent per message, posts ~1 us apart on
 * average: at hint 4K the path changes on about half the messages (the worst case for the
 * replay: every size-dependent branch is unpredictable). "cycle": the same gaps, the same
 * eleven sizes in turn (the same work, but a pattern the CPU's branch predictor learns:
 * the gap between the two rows is what mispredicted branches cost). */
static trace_t *make_trace(size_t n, int cycle)
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
                         .size_bytes = 64u << (cycle ? i % 11 : s % 11)};
        t += 200 + (s >> 40) % 1600;
        if (trace_push(tr, &r) != HS_OK) {
            trace_free(tr);
            return NULL;
        }
    }
    return tr;
}

/* The CPU's model name (/proc/cpuinfo), "unknown CPU" where it cannot be read: a per-core
 * rate means little without it. */
static void cpu_model(char *buf, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];

    snprintf(buf, n, "unknown CPU");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(buf, n, "%s", colon + 1 + (colon[1] == ' '));
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
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
static double replay_rate(const trace_t *tr, const profile_t *p, uint64_t hint, pred_mode_t mode,
                          int summarise, pred_raw_t *raw)
{
    pred_opts_t o = {.mode = mode};
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

/* The workload's trace: "mixed" is built here, others by trace_gen_run into a temp file;
 * "NAME:KEY=VALUE[:KEY=VALUE...]" sets workload parameters (as trace gen --set). */
static trace_t *workload_trace(const char *spec, size_t n, pred_mode_t *mode)
{
    char path[] = "/tmp/bench_model.XXXXXX.hst", name[256];
    const char *sets[17];
    size_t nsets = 0;
    trace_t *tr = NULL;
    int fd;

    *mode = PRED_OPEN;
    if (strcmp(spec, "mixed") == 0 || strcmp(spec, "cycle") == 0)
        return make_trace(n, strcmp(spec, "cycle") == 0);
    snprintf(name, sizeof(name), "%s", spec);
    /* phased and wide as generated before max_load (trace gen's default is 0.5): 1 MB
     * every 2 us and 64 MB every 50 messages overload the link, the saturated path the
     * replay's closed forms serve; the rows keep measuring the same traces. A max_load in
     * the spec comes later and wins. */
    sets[nsets++] = "max_load=0";
    for (char *c = strchr(name, ':'); c && nsets < 17; c = strchr(c + 1, ':')) {
        *c = '\0';
        sets[nsets++] = c + 1;
    }
    size_t first = strcmp(name, "phased") == 0 || strcmp(name, "wide") == 0 ? 0 : 1;
    if (strcmp(name, "pingpong") == 0 || strcmp(name, "coldstart") == 0)
        *mode = PRED_CLOSED;
    fd = mkstemps(path, 4);
    if (fd < 0)
        return NULL;
    close(fd);
    if (trace_gen_run(name, n, 1, sets + first, nsets - first, path) != HS_OK ||
        trace_load(path, &tr) != HS_OK)
        tr = NULL;
    unlink(path);
    if (!tr)
        fprintf(stderr, "bench_model: cannot generate workload '%s'\n", spec);
    return tr;
}

/* One row of the table: its trace and the best rate of each column so far (M msgs/s). */
typedef struct {
    const char *name;
    trace_t *tr;
    pred_mode_t mode;
    double best[3]; /* hint 4K, hint 0, hint 4K with the summariser */
} row_t;

static const uint64_t col_hint[3] = {4096, 0, 4096};

/* Every row's trace, generated and held for the rounds; 0 when all are. */
static int rows_load(row_t *rows, size_t nr, size_t n)
{
    for (size_t w = 0; w < nr; w++) {
        rows[w].tr = workload_trace(rows[w].name, n, &rows[w].mode);
        if (!rows[w].tr)
            return 1;
    }
    return 0;
}

/* ROUNDS rounds over the rows, each replaying every row once per column, so that a row's
 * samples lie a round apart instead of back to back: a slow spell of a shared host takes
 * one sample of a row, not all of them (this host's spells last seconds to minutes:
 * model/README.md). A warm-up replay of each row comes first (caches, first touch). */
static int rows_run(row_t *rows, size_t nr, int rounds, const profile_t *p, pred_raw_t *raw)
{
    hs_progress_t bar;
    int rc = 0;

    for (size_t w = 0; w < nr; w++)
        replay_rate(rows[w].tr, p, 4096, rows[w].mode, 0, raw);
    hs_progress_start(&bar, "bench_model", (uint64_t)rounds * nr);
    for (int r = 0; r < rounds; r++) {
        for (size_t w = 0; w < nr; w++) {
            for (int c = 0; c < 3; c++) {
                double m = replay_rate(rows[w].tr, p, col_hint[c], rows[w].mode, c == 2, raw);
                if (m <= 0)
                    rc = 1;
                m *= 1e-6;
                rows[w].best[c] = m > rows[w].best[c] ? m : rows[w].best[c];
            }
            hs_progress_update(&bar, (uint64_t)r * nr + w + 1);
        }
    }
    hs_progress_finish(&bar);
    for (size_t w = 0; w < nr; w++) {
        const double *b = rows[w].best;
        printf("  %-10s %-6s %10.1f %10.1f %12.1f   %s\n", rows[w].name,
               rows[w].mode == PRED_OPEN ? "open" : "closed", b[0], b[1], b[2],
               b[0] >= GOAL_MPS && b[1] >= GOAL_MPS ? "met" : "NOT met");
    }
    return rc;
}

/* The table over the named workloads (every one when nw is 0); returns 0 when every row
 * ran. */
static int bench_table(char **names, int nw, size_t n, int rounds, const profile_t *p,
                       pred_raw_t *raw)
{
    size_t nwl, nr = 0;
    const trace_gen_workload_t *wl = trace_gen_workloads(&nwl);
    row_t *rows = calloc((size_t)nw + nwl + 2, sizeof(*rows));
    int rc = 1;

    if (!rows)
        return 1;
    if (nw > 0) {
        for (int a = 0; a < nw; a++)
            rows[nr++].name = names[a];
    } else {
        rows[nr++].name = "mixed";
        rows[nr++].name = "cycle";
        for (size_t w = 0; w < nwl; w++)
            rows[nr++].name = wl[w].name;
    }
    if (rows_load(rows, nr, n) == 0)
        rc = rows_run(rows, nr, rounds, p, raw);
    for (size_t w = 0; w < nr; w++)
        trace_free(rows[w].tr);
    free(rows);
    return rc;
}

static int bench_recommend(size_t n, const profile_t *p)
{
    trace_t *tr = make_trace(n, 0);
    rec_opts_t ro = {.objective = OBJ_P99};
    rec_report_t rep;

    if (!tr)
        return 1;
    clock_t c0 = clock();
    if (rec_run(&model_engine_ops, tr, p, &ro, &rep) != HS_OK) {
        trace_free(tr);
        return 1;
    }
    double cpu_s = (double)(clock() - c0) / CLOCKS_PER_SEC;
    printf("recommend, auto, mixed: %.2f s wall, %.2f s CPU for %zu candidates on %u threads "
           "(goal <= 10 s on 2 cores; CPU / 2 is the wall on 2 idle cores)\n",
           rep.wall_s, cpu_s, rep.n, rep.threads_used);
    rec_report_release(&rep);
    trace_free(tr);
    return 0;
}

/* --once HINT: one replay per workload at HINT, nothing else, for a profiler
 * (valgrind --tool=callgrind --toggle-collect=model_replay, perf) to count one replay. */
static int bench_once(uint64_t hint, int nw, char **names, size_t n, const profile_t *p,
                      pred_raw_t *raw)
{
    for (int a = 0; a < nw; a++) {
        pred_mode_t mode;
        trace_t *tr = workload_trace(names[a], n, &mode);
        if (!tr)
            return 1;
        struct rusage ru0, ru1;
        getrusage(RUSAGE_SELF, &ru0);
        double r = replay_rate(tr, p, hint, mode, 0, raw);
        getrusage(RUSAGE_SELF, &ru1);
        printf("  %-10s %-6s hint %llu: %.1f M msgs/s (one replay, CPU time; %ld page faults); "
               "chunks skipped %llu, memo hits %llu, idle starts applied %llu, closed-form "
               "messages %llu (steady %llu, lazy %llu), serial %llu\n", names[a],
               mode == PRED_OPEN ? "open" : "closed", (unsigned long long)hint, r * 1e-6,
               ru1.ru_minflt - ru0.ru_minflt,
               (unsigned long long)raw->chunks_skipped, (unsigned long long)raw->memo_hits,
               (unsigned long long)raw->entry_hits, (unsigned long long)raw->bound_hits,
               (unsigned long long)raw->steady_hits, (unsigned long long)raw->lazy_hits,
               (unsigned long long)raw->serial_hits);
        trace_free(tr);
        if (r <= 0)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t once = UINT64_MAX;
    int rounds = 3;

    hs_host_print(stdout);
    if (argc > 2 && strcmp(argv[1], "--once") == 0) {
        once = strtoull(argv[2], NULL, 10);
        argc -= 2;
        argv += 2;
    } else if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
        rounds = atoi(argv[2]);
        argc -= 2;
        argv += 2;
        if (rounds < 1) {
            fprintf(stderr, "bench_model: --rounds takes a count of at least 1\n");
            return 2;
        }
    }
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    const char *pname = argc > 2 ? argv[2] : "seed000";
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    profile_t *p = NULL;
    pred_raw_t raw = {0};
    int rc = 0;

    if (n == 0 || profile_load(pname, &p) != HS_OK)
        return 1;
    raw.lat_us = malloc(n * sizeof(*raw.lat_us));
    raw.path = malloc(n);
    if (!raw.lat_us || !raw.path)
        return 1;
    /* touched once, outside the timing; not with zeros, which the compiler may fold into
     * calloc's untouched pages (it did: the first replay took 3 661 page faults at 3 M) */
    memset(raw.lat_us, 0xff, n * sizeof(*raw.lat_us));
    memset(raw.path, 0xff, n);
    if (once != UINT64_MAX) {
        static char *mixed[] = {"mixed"};
        rc = argc > 3 ? bench_once(once, argc - 3, argv + 3, n, p, &raw)
                      : bench_once(once, 1, mixed, n, p, &raw);
        goto out;
    }
    char cpu[128];
    cpu_model(cpu, sizeof(cpu));
    printf("bench_model: %zu messages per trace, profile %s, %ld online cores (%s); replay rate "
           "in M msgs/s per core (CPU time, best of %d rounds over the rows), goal >= %.0f\n", n,
           pname, cores, cpu, rounds, GOAL_MPS);
    printf("  %-10s %-6s %10s %10s %12s   %s\n", "workload", "mode", "hint 4K", "hint 0",
           "4K+summary", "goal");
    fflush(stdout);
    rc |= bench_table(argv + 3, argc > 3 ? argc - 3 : 0, n, rounds, p, &raw);
    rc |= bench_recommend(n, p);
out:
    free(raw.lat_us);
    free(raw.path);
    profile_free(p);
    return rc;
}
