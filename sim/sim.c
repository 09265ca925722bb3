/* sim.c - the SimGrid engine: run one replay in a child process, return pred_raw_t.
 *
 * Why a child process: SimGrid keeps one engine per process (simgrid_init cannot be run
 * twice) and reports a platform it rejects by printing a message and aborting. Forking per
 * replay makes every replay independent (recommend runs many hints), and lets the parent
 * turn an abort into "exit 1 with SimGrid's message and the file named". The child writes
 * its results into an anonymous shared mapping made before the fork; its stderr comes back
 * through a pipe.
 */
#include "sim/sim.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <simgrid/engine.h>
#include <simgrid/version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_mem.h"
#include "sim/sim_actors.h"
#include "sim/sim_platform.h"

#define SIM_CHILD_ERR_BASE 20 /* child exit code 20 + (-status): our own, already logged */

/* Shared memory between parent and child: per flow an out struct, then the arrays. */
typedef struct {
    void *base;
    size_t len;
    sim_flow_out_t *outs;
} sim_shm_t;

const char *sim_model_desc(void)
{
    return SIMGRID_VERSION_STRING ", network/model:CM02 (latency factor 1, bandwidth factor 1), "
                                  "network/crosstraffic:0, network/TCP-gamma:0";
}

static hs_status_t shm_map(sim_shm_t *m, unsigned nflows, size_t n)
{
    size_t per = n * (sizeof(float) + 1), head = nflows * sizeof(sim_flow_out_t);
    unsigned i;
    char *p;

    m->len = head + nflows * per + 64;
    m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m->base == MAP_FAILED) {
        hs_log_error("cannot map %zu bytes for the simulation results: %s", m->len,
                     strerror(errno));
        return HS_ERR_NOMEM;
    }
    m->outs = m->base;
    p = (char *)m->base + head;
    for (i = 0; i < nflows; i++) {
        m->outs[i].lat_us = (float *)(void *)p; /* head is a multiple of 8 */
        p += n * sizeof(float);
    }
    for (i = 0; i < nflows; i++) {
        m->outs[i].path = (uint8_t *)p;
        p += n;
    }
    return HS_OK;
}

/* Child: run the engine, exit with 0 or SIM_CHILD_ERR_BASE - status. Never returns. */
static void child_run(const sim_run_args_t *a, const char *platform, const char *shown_name)
{
    char *argv[] = {"hintsim-sim", "--log=root.thresh:critical",
                    "--log=xbt_exception.thresh:error", "--cfg=network/model:CM02",
                    "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
                    NULL};
    int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
    sim_world_t *w = NULL;
    hs_status_t st;

    simgrid_init(&argc, argv);
    simgrid_load_platform(platform);
    st = sim_world_create(a, shown_name, &w);
    if (st == HS_OK) {
        simgrid_run();
        st = sim_world_check(w);
    }
    fflush(stderr);
    _exit(st == HS_OK ? 0 : SIM_CHILD_ERR_BASE - (int)st);
}

/* Remove the stage marks from the child's stderr (in place) and copy the last one into
 * stage ("" when the last marked step returned). */
static const char *strip_stages(char *text, char *stage, size_t stage_len)
{
    char *in = text, *out = text;
    size_t mlen = strlen(SIM_STAGE_MARK);

    stage[0] = '\0';
    while (*in) {
        char *eol = strchr(in, '\n');
        size_t len = eol ? (size_t)(eol - in) + 1 : strlen(in);
        if (strncmp(in, SIM_STAGE_MARK, mlen) == 0) {
            snprintf(stage, stage_len, "%.*s", (int)(len - mlen - (eol ? 1 : 0)), in + mlen);
        } else {
            memmove(out, in, len);
            out += len;
        }
        in += len;
    }
    *out = '\0';
    return text;
}

/* Drop AddressSanitizer's notice about SimGrid's stack switching (ASan builds only: it
 * cannot follow SimGrid's own contexts, warns once per child, and nothing is wrong). The
 * thread context factory would avoid it but is 100x slower on a loaded machine. */
static void strip_asan_notice(char *text)
{
    static const char *const notes[] = {"ASan is ignoring requested __asan_handle_no_return",
                                        "False positive error reports may follow",
                                        "github.com/google/sanitizers/issues/189"};
    char *in = text, *out = text;
    size_t k;

    while (*in) {
        char *eol = strchr(in, '\n');
        size_t len = eol ? (size_t)(eol - in) + 1 : strlen(in);
        int drop = 0;
        for (k = 0; k < sizeof(notes) / sizeof(notes[0]); k++)
            drop |= memmem(in, len, notes[k], strlen(notes[k])) != NULL;
        if (!drop) {
            memmove(out, in, len);
            out += len;
        }
        in += len;
    }
    *out = '\0';
}

/* Relay SimGrid's message from a crashed child: its log lines, not its backtrace. */
static void relay_simgrid_error(const char *text, const char *stage, const char *shown_name,
                                const char *what)
{
    const char *bt = strstr(text, "Backtrace");
    int len = bt ? (int)(bt - text) : (int)strlen(text);

    while (len > 0 && strchr("\n .", text[len - 1]))
        len--;
    if (len >= 18 && strncmp(text + len - 18, "Segmentation fault", 18) == 0)
        len -= 18;
    while (len > 0 && strchr("\n .", text[len - 1]))
        len--;
    if (*stage) /* it died inside a marked step: that says more than its crash text */
        hs_log_error("%s: SimGrid failed (%s) while looking up %s: does the platform declare "
                     "it?", shown_name, what, stage);
    else
        hs_log_error("%s: SimGrid rejected the platform or the run (%s): %.*s", shown_name,
                     what, len, len ? text : "(no message)");
}

/* Messages the child has reported so far, over its flows (each flow's nseen, in the shared
 * mapping, written by the child only). */
static uint64_t child_done(const sim_flow_out_t *outs, unsigned nflows)
{
    uint64_t done = 0;

    for (unsigned i = 0; i < nflows; i++)
        done += __atomic_load_n(&outs[i].nseen, __ATOMIC_RELAXED);
    return done;
}

/* Everything the child writes to fd until it closes it; while waiting, bar (when drawn)
 * shows the messages it has reported (outs, nflows). */
static char *read_all(int fd, hs_progress_t *bar, const sim_flow_out_t *outs, unsigned nflows)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    int watch = bar && bar->enabled;

    if (!buf)
        return NULL;
    for (;;) {
        if (watch) {
            struct pollfd pfd = {fd, POLLIN, 0};
            int k = poll(&pfd, 1, 100);
            hs_progress_update(bar, child_done(outs, nflows));
            if (k == 0 || (k < 0 && errno == EINTR))
                continue;
        }
        r = read(fd, buf + len, cap - len - 1);
        if (r == 0)
            break;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
        if (cap - len < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
    }
    buf[len] = '\0';
    if (watch) /* the child closed its end: every message it got to is counted */
        hs_progress_update(bar, child_done(outs, nflows));
    return buf;
}

/* Judge the child's end; forwards its own messages, relays SimGrid's. */
static hs_status_t child_status(int wst, char *err, const char *shown_name)
{
    char what[64], stage[160];

    strip_stages(err, stage, sizeof(stage));
    strip_asan_notice(err);
    if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0) {
        if (*err)
            fputs(err, stderr);
        return HS_OK;
    }
    if (WIFEXITED(wst) && WEXITSTATUS(wst) > SIM_CHILD_ERR_BASE &&
        strstr(err, "hintsim: error:")) {
        fputs(err, stderr); /* already worded by hs_log_error in the child */
        return (hs_status_t)(SIM_CHILD_ERR_BASE - WEXITSTATUS(wst));
    }
    if (WIFSIGNALED(wst))
        snprintf(what, sizeof(what), "signal %d", WTERMSIG(wst));
    else
        snprintf(what, sizeof(what), "exit %d", WEXITSTATUS(wst));
    relay_simgrid_error(err, stage, shown_name, what);
    return HS_ERR_INVALID;
}

static hs_status_t run_child(const sim_run_args_t *a, const char *platform,
                             const char *shown_name, hs_progress_t *bar)
{
    int fds[2], wst = 0;
    pid_t pid;
    char *err;
    hs_status_t st;

    if (pipe(fds) != 0) {
        hs_log_error("cannot create a pipe for the simulator: %s", strerror(errno));
        return HS_ERR_ENV;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        hs_log_error("cannot fork the simulator: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return HS_ERR_ENV;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        dup2(fds[1], STDOUT_FILENO);
        close(fds[1]);
        child_run(a, platform, shown_name);
    }
    close(fds[1]);
    err = read_all(fds[0], bar, a->out, a->nflows);
    close(fds[0]);
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    st = err ? child_status(wst, err, shown_name) : HS_ERR_NOMEM;
    free(err);
    return st;
}

static void copy_out(const sim_flow_out_t *o, size_t n, pred_raw_t *raw)
{
    memcpy(raw->lat_us, o->lat_us, n * sizeof(float));
    memcpy(raw->path, o->path, n);
    raw->t_first_post_us = o->t_first_post_s * 1e6;
    raw->t_last_done_us = o->t_last_done_s * 1e6;
    raw->switches = o->switches;
    raw->drain_us_total = o->drain_total_s * 1e6;
    raw->sq_full_stalls = o->sq_full_stalls;
    raw->costs.queue_us = o->queue_s * 1e6;
    raw->costs.drain_us = o->drain_s * 1e6;
    raw->costs.coalesce_us = o->coalesce_s * 1e6;
    raw->costs.l1_us = o->l1_s * 1e6;
    raw->costs.base_us = (o->lat_sum_s - o->queue_s - o->drain_s - o->coalesce_s - o->l1_s) * 1e6;
}

static hs_status_t check_inputs(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                                unsigned nflows, const char *platform)
{
    if (tr->n == 0) {
        hs_log_error("the trace has no records: nothing to simulate");
        return HS_ERR_INVALID;
    }
    if (nflows < 1 || nflows > 4096) {
        hs_log_error("--flows %u: must be between 1 and 4096", nflows);
        return HS_ERR_USAGE;
    }
    if (platform && access(platform, R_OK) != 0) {
        hs_log_error("%s: cannot read the platform file: %s", platform, strerror(errno));
        return HS_ERR_IO;
    }
    return pred_check_trace(tr, p, o);
}

hs_status_t sim_replay_flows(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                             uint64_t hint_bytes, unsigned nflows, pred_raw_t *raws)
{
    const char *user = o ? o->platform : NULL;
    char *gen = NULL;
    sim_cfg_t cfg;
    sim_shm_t shm = {0};
    sim_run_args_t a;
    hs_status_t st;
    unsigned i;

    if ((st = check_inputs(tr, p, o, nflows, user)) != HS_OK)
        return st;
    if ((st = sim_cfg_init(p, hint_bytes, &cfg)) != HS_OK)
        return st;
    if (!user && (st = sim_platform_write(&cfg, nflows, &gen)) != HS_OK)
        return st;
    if ((st = shm_map(&shm, nflows, tr->n)) != HS_OK)
        goto out_platform;
    a = (sim_run_args_t){tr, &cfg, o ? o->mode : PRED_OPEN, nflows, shm.outs};
    st = run_child(&a, user ? user : gen, user ? user : "generated platform",
                   o ? o->progress : NULL);
    for (i = 0; st == HS_OK && i < nflows; i++)
        copy_out(&shm.outs[i], tr->n, &raws[i]);
    munmap(shm.base, shm.len);
out_platform:
    if (gen)
        unlink(gen);
    free(gen);
    return st;
}

static hs_status_t sim_replay(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                              uint64_t hint_bytes, pred_raw_t *raw)
{
    unsigned nflows = (o && o->flows > 1) ? o->flows : 1, i;
    pred_raw_t *raws;
    hs_status_t st;

    if (nflows == 1)
        return sim_replay_flows(tr, p, o, hint_bytes, 1, raw);
    raws = calloc(nflows, sizeof(*raws));
    if (!raws)
        return HS_ERR_NOMEM;
    raws[0] = *raw;
    for (i = 1; i < nflows; i++) {
        raws[i].lat_us = hs_alloc_big(tr->n * sizeof(float) + 1);
        raws[i].path = hs_alloc_big(tr->n + 1);
        if (!raws[i].lat_us || !raws[i].path) {
            st = HS_ERR_NOMEM;
            goto out;
        }
    }
    st = sim_replay_flows(tr, p, o, hint_bytes, nflows, raws);
    if (st == HS_OK)
        *raw = raws[0];
out:
    for (i = 1; i < nflows; i++) {
        free(raws[i].lat_us);
        free(raws[i].path);
    }
    free(raws);
    return st;
}

hs_status_t sim_flows_merge(const trace_t *tr, unsigned nflows, const pred_raw_t *raws,
                            trace_t **mtr, pred_raw_t *mraw)
{
    trace_t *m = NULL;
    size_t n = tr->n, i;
    unsigned f;
    hs_status_t st = trace_new(&m);

    if (st != HS_OK)
        return st;
    memset(mraw, 0, sizeof(*mraw));
    mraw->lat_us = hs_alloc_big(n * nflows * sizeof(float) + 1);
    mraw->path = hs_alloc_big(n * nflows + 1);
    if (!mraw->lat_us || !mraw->path) {
        st = HS_ERR_NOMEM;
        goto fail;
    }
    for (f = 0; f < nflows; f++) {
        for (i = 0; i < n && st == HS_OK; i++)
            st = trace_push(m, &tr->recs[i]);
        if (st != HS_OK)
            goto fail;
        memcpy(mraw->lat_us + f * n, raws[f].lat_us, n * sizeof(float));
        memcpy(mraw->path + f * n, raws[f].path, n);
        if (f == 0 || raws[f].t_first_post_us < mraw->t_first_post_us)
            mraw->t_first_post_us = raws[f].t_first_post_us;
        if (raws[f].t_last_done_us > mraw->t_last_done_us)
            mraw->t_last_done_us = raws[f].t_last_done_us;
        mraw->switches += raws[f].switches;
        mraw->drain_us_total += raws[f].drain_us_total;
        mraw->sq_full_stalls += raws[f].sq_full_stalls;
        mraw->costs.queue_us += raws[f].costs.queue_us;
        mraw->costs.drain_us += raws[f].costs.drain_us;
        mraw->costs.coalesce_us += raws[f].costs.coalesce_us;
        mraw->costs.l1_us += raws[f].costs.l1_us;
        mraw->costs.base_us += raws[f].costs.base_us;
    }
    *mtr = m;
    return HS_OK;
fail:
    free(mraw->lat_us);
    free(mraw->path);
    mraw->lat_us = NULL;
    mraw->path = NULL;
    trace_free(m);
    return st;
}

const pred_engine_ops_t sim_engine_ops = {"sim", sim_replay};
