/* sweep_run.c - the local engine (worker processes), slices, and the MPI split.
 *
 * Local workers are forked processes, not threads: the SimGrid engine keeps global state
 * and is not re-entrant, and a worker that crashes cannot take the others' results with
 * it. Workers take the next point from a shared atomic counter (dynamic balance: points
 * differ in cost) and write one byte per finished point to a pipe that drives the
 * progress bar in the parent. MPI ranks do the same with an MPI one-sided counter.
 */
#include "sweep/sweep_run.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_progress.h"
#include "common/hs_util.h"
#include "sweep/sweep_mpi.h"
#include "sweep/sweep_point.h"

hs_status_t sweep_run_todo(const sweep_plan_t *plan, const char *dir, unsigned slice_i,
                           unsigned slice_n, size_t **todo, size_t *ntodo, size_t *nmine)
{
    size_t *v = malloc((plan->n ? plan->n : 1) * sizeof(*v)), n = 0, mine = 0;
    sweep_result_t r;

    if (!v)
        return HS_ERR_NOMEM;
    for (size_t i = 0; i < plan->n; i++) {
        if (slice_n && i % slice_n != slice_i)
            continue;
        mine++;
        if (sweep_point_load(dir, plan->pts[i].key, &r) != HS_OK)
            v[n++] = i;
    }
    *todo = v;
    *ntodo = n;
    *nmine = mine;
    return HS_OK;
}

/* State shared between the parent and its forked workers. */
typedef struct {
    atomic_size_t next;
    atomic_int status; /* first failure, HS_OK while none */
} sweep_shared_t;

static void worker_loop(const sweep_grid_t *g, const sweep_plan_t *plan, const size_t *todo,
                        size_t ntodo, const sweep_eval_t *ev, const char *dir,
                        sweep_shared_t *sh, int progress_fd)
{
    char one = 1;

    while (atomic_load(&sh->status) == HS_OK) {
        size_t k = atomic_fetch_add(&sh->next, 1);
        hs_status_t st;

        if (k >= ntodo)
            break;
        st = sweep_point_run(g, &plan->pts[todo[k]], ev, dir);
        if (st != HS_OK) {
            int expect = HS_OK;
            atomic_compare_exchange_strong(&sh->status, &expect, (int)st);
            break;
        }
        if (progress_fd >= 0 && write(progress_fd, &one, 1) != 1)
            break;
    }
}

static hs_status_t run_inline(const sweep_grid_t *g, const sweep_plan_t *plan,
                              const size_t *todo, size_t ntodo, const sweep_eval_t *ev,
                              const char *dir)
{
    hs_progress_t pb;
    hs_status_t st = HS_OK;

    hs_progress_start(&pb, "sweep", ntodo);
    for (size_t k = 0; k < ntodo && st == HS_OK; k++) {
        st = sweep_point_run(g, &plan->pts[todo[k]], ev, dir);
        hs_progress_update(&pb, k + 1);
    }
    hs_progress_finish(&pb);
    return st;
}

/* Read one byte per finished point until every worker closed the pipe. */
static void follow_progress(int fd, size_t ntodo)
{
    hs_progress_t pb;
    char buf[256];
    size_t done = 0;
    ssize_t n;

    hs_progress_start(&pb, "sweep", ntodo);
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        done += (size_t)n;
        hs_progress_update(&pb, done);
    }
    hs_progress_finish(&pb);
}

static hs_status_t reap_workers(const pid_t *pids, unsigned n, sweep_shared_t *sh)
{
    hs_status_t st = HS_OK;

    for (unsigned w = 0; w < n; w++) {
        int ws;
        if (pids[w] <= 0)
            continue;
        while (waitpid(pids[w], &ws, 0) < 0 && errno == EINTR)
            ;
        if (WIFSIGNALED(ws)) {
            hs_log_error("sweep worker %u (pid %ld) was killed by signal %d", w,
                         (long)pids[w], WTERMSIG(ws));
            st = HS_ERR_INTERNAL;
        }
    }
    if (atomic_load(&sh->status) != HS_OK)
        st = (hs_status_t)atomic_load(&sh->status);
    return st;
}

static hs_status_t run_forked(const sweep_grid_t *g, const sweep_plan_t *plan,
                              const size_t *todo, size_t ntodo, const sweep_eval_t *ev,
                              const char *dir, unsigned jobs)
{
    sweep_shared_t *sh;
    pid_t *pids = calloc(jobs, sizeof(*pids));
    int fds[2] = {-1, -1};
    hs_status_t st = HS_ERR_IO;

    sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (!pids || sh == MAP_FAILED || pipe(fds) != 0) {
        hs_log_error("sweep: cannot set up workers: %s", strerror(errno));
        goto out;
    }
    atomic_init(&sh->next, 0);
    atomic_init(&sh->status, HS_OK);
    fflush(NULL);
    for (unsigned w = 0; w < jobs; w++) {
        pids[w] = fork();
        if (pids[w] == 0) {
            close(fds[0]);
            worker_loop(g, plan, todo, ntodo, ev, dir, sh, fds[1]);
            _exit(0); /* no atexit handlers: the parent owns everything inherited */
        }
        if (pids[w] < 0) {
            hs_log_error("sweep: fork: %s", strerror(errno));
            atomic_store(&sh->status, HS_ERR_IO);
            break;
        }
    }
    close(fds[1]);
    fds[1] = -1;
    follow_progress(fds[0], ntodo);
    st = reap_workers(pids, jobs, sh);
out:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    if (sh != MAP_FAILED && sh)
        munmap(sh, sizeof(*sh));
    free(pids);
    return st;
}

hs_status_t sweep_run_local(const sweep_grid_t *g, const sweep_plan_t *plan, const size_t *todo,
                            size_t ntodo, const sweep_eval_t *ev, const char *dir,
                            unsigned jobs)
{
    char sub[4096];
    hs_status_t st;

    snprintf(sub, sizeof(sub), "%s/points", dir);
    if ((st = hs_mkdir_p(sub)) != HS_OK)
        return st;
    if (jobs > ntodo)
        jobs = (unsigned)ntodo;
    if (ntodo == 0)
        return HS_OK;
    if (jobs <= 1)
        return run_inline(g, plan, todo, ntodo, ev, dir);
    return run_forked(g, plan, todo, ntodo, ev, dir, jobs);
}

/* The merge step, in the one process that merges. */
static hs_status_t run_merge(const sweep_run_opts_t *o, sweep_stats_t *stats)
{
    if (!o->merge)
        return HS_OK;
    stats->merged = 1;
    return o->merge(o->merge_ctx);
}

/* Take points from the shared counter until none is left; *n counts this rank's, whose plan
 * indices go to done[0..*n) (room for ntodo; NULL: count only). */
static hs_status_t mpi_take_points(const sweep_grid_t *g, const sweep_plan_t *plan,
                                   const size_t *todo, size_t ntodo, const sweep_eval_t *ev,
                                   const char *dir, size_t *done, size_t *n)
{
    sweep_mpi_counter_t *ctr = NULL;
    hs_status_t st = sweep_mpi_counter_create(&ctr), cst;
    uint64_t k;

    if (st != HS_OK)
        return st;
    while ((cst = sweep_mpi_counter_next(ctr, &k)) == HS_OK && k < ntodo) {
        if ((st = sweep_point_run(g, &plan->pts[todo[k]], ev, dir)) != HS_OK)
            break;
        if (done)
            done[*n] = todo[k];
        (*n)++;
    }
    sweep_mpi_counter_free(ctr);
    return st != HS_OK ? st : cst;
}

static hs_status_t run_mpi(const sweep_grid_t *g, const sweep_plan_t *plan, const size_t *todo,
                           size_t ntodo, const sweep_eval_t *ev, const sweep_run_opts_t *o,
                           sweep_stats_t *stats)
{
    char sub[4096];
    hs_status_t st = HS_OK, all;
    uint64_t t0;
    size_t n = 0;

    /* Every rank listed what is left before any rank writes a result: same lists. */
    snprintf(sub, sizeof(sub), "%s/points", o->dir);
    if (stats->rank == 0)
        st = hs_mkdir_p(sub);
    /* Without memory for the list this rank still computes (and counts) its share. */
    stats->done_idx = malloc((ntodo ? ntodo : 1) * sizeof(*stats->done_idx));
    if (sweep_mpi_barrier() != HS_OK)
        return HS_ERR_ENV;
    t0 = hs_now_ns();
    if (st == HS_OK)
        st = mpi_take_points(g, plan, todo, ntodo, ev, o->dir, stats->done_idx, &n);
    stats->ndone = stats->done_idx ? n : 0;
    /* An all-reduce: past it every rank has finished, so rank 0 alone may merge. */
    if (sweep_mpi_combine(st, n, &all, &stats->computed) != HS_OK)
        return HS_ERR_ENV;
    stats->run_s = (double)(hs_now_ns() - t0) / 1e9;
    return all; /* every rank's combined: each rank gets the same */
}

hs_status_t sweep_run(const sweep_grid_t *g, const sweep_plan_t *plan, const sweep_eval_t *ev,
                      const sweep_run_opts_t *opts, sweep_stats_t *stats)
{
    size_t *todo = NULL, ntodo = 0;
    uint64_t t0;
    hs_status_t st;

    memset(stats, 0, sizeof(*stats));
    stats->total = plan->n;
    stats->nranks = 1;
    if (opts->mpi && (st = sweep_mpi_init(&stats->rank, &stats->nranks)) != HS_OK)
        return st;
    st = sweep_run_todo(plan, opts->dir, opts->slice_i, opts->slice_n, &todo, &ntodo,
                        &stats->mine);
    if (st != HS_OK)
        return st;
    stats->reused = stats->mine - ntodo;
    if (ev->ops->prepare) { /* a batch engine (the GPU): sweep_batch.c */
        st = sweep_run_batched(g, plan, todo, ntodo, ev, opts, stats);
        free(todo);
    } else if (opts->mpi) {
        st = run_mpi(g, plan, todo, ntodo, ev, opts, stats);
        free(todo);
    } else {
        t0 = hs_now_ns();
        st = sweep_run_local(g, plan, todo, ntodo, ev, opts->dir, opts->jobs);
        stats->run_s = (double)(hs_now_ns() - t0) / 1e9;
        if (st == HS_OK) {
            stats->computed = ntodo;
            stats->done_idx = todo;
            stats->ndone = ntodo;
        } else {
            free(todo);
        }
    }
    /* Past here every worker has exited (reaped) and, under MPI, every rank has finished
     * (st is the all-reduced status, the same on every rank): one process merges. */
    if (st != HS_OK || opts->slice_n || stats->rank != 0)
        return st;
    return run_merge(opts, stats);
}

void sweep_stats_release(sweep_stats_t *stats)
{
    free(stats->done_idx);
    stats->done_idx = NULL;
    stats->ndone = 0;
}
