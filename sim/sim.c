/* sim.c - the SimGrid engine: run one replay in a child process, return pred_raw_t.
 *
 * Why a child process: SimGrid keeps one engine per process (simgrid_init cannot be run
 * twice) and reports a platform it rejects by printing a message and aborting. A process
 * per replay makes every replay independent (recommend runs many hints), and lets the
 * parent turn an abort into "exit 1 with SimGrid's message and the file named". The parent
 * writes the inputs (profile, hint, trace records) into a shared memory file, the child its
 * results; its stderr comes back through a pipe. From a parent with threads (recommend's
 * workers) the child is this program executed afresh (fork, then exec of /proc/self/exe,
 * nothing but async-signal-safe calls between the two, so no other thread can leave it a
 * lock held forever), told by the environment where the memory file is (sim_child_entry,
 * run before main); from a single-threaded parent it is only forked.
 */
#include "sim/sim.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <simgrid/engine.h>
#include <simgrid/version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/hs_mem.h"
#include "sim/sim_actors.h"
#include "sim/sim_platform.h"

#define SIM_CHILD_ERR_BASE 20 /* child exit code 20 + (-status): our own, already logged */
#define SIM_CHILD_NOEXEC 19   /* the child could not be executed (it says why) */
#define SIM_CHILD_ENV "HINTSIM_SIM_CHILD" /* in the child's environment: its memory file's fd */
#define SIM_CHILD_FD 200      /* that fd, in the child */
#define SIM_CHILD_ARGV0 "hintsim-sim" /* and its only argument */
#define SIM_IO_MAGIC 0x6f69736d69736868ull

/* The shared memory file (memfd) of one replay: this header, the profile as JSON, the
 * platform file's path and shown name (NUL-terminated), the trace's records, then per flow
 * an out struct, then the flows' latency arrays and path arrays. Offsets from the start. */
typedef struct {
    uint64_t magic, len, n, hint_bytes;
    uint32_t mode, nflows;
    uint64_t off_profile, off_platform, off_shown, off_recs, off_outs;
} sim_io_hdr_t;

/* That file mapped in this process; outs' array pointers point into this mapping. */
typedef struct {
    int fd;
    void *base;
    size_t len;
    sim_flow_out_t *outs;
} sim_shm_t;

const char *sim_model_desc(void)
{
    return SIMGRID_VERSION_STRING ", network/model:CM02 (latency factor 1, bandwidth factor 1), "
                                  "network/crosstraffic:0, network/TCP-gamma:0";
}

static size_t align8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

/* Point m's out structs at this mapping's arrays (each process sets its own: the structs
 * are shared, so the parent does it again before it reads them). */
static void shm_point(sim_shm_t *m, const sim_io_hdr_t *h)
{
    char *p = (char *)m->base + h->off_outs + h->nflows * sizeof(sim_flow_out_t);

    m->outs = (sim_flow_out_t *)(void *)((char *)m->base + h->off_outs);
    for (unsigned i = 0; i < h->nflows; i++) {
        m->outs[i].lat_us = (float *)(void *)p; /* offsets are multiples of 8 */
        p += h->n * sizeof(float);
    }
    for (unsigned i = 0; i < h->nflows; i++) {
        m->outs[i].path = (uint8_t *)p;
        p += h->n;
    }
}

/* What one replay is given: the child reads it from the memory file. */
typedef struct {
    const trace_t *tr;
    const profile_t *p;
    uint64_t hint_bytes;
    pred_mode_t mode;
    unsigned nflows;
    const char *platform; /* the platform file */
    const char *shown;    /* its name in messages */
} shm_in_t;

/* Create the replay's memory file and write in's inputs (the profile as JSON, hint, mode,
 * platform and shown name, the trace's records); outs zeroed. Release with shm_unmap. */
static hs_status_t shm_make(sim_shm_t *m, const shm_in_t *in)
{
    const trace_t *tr = in->tr;
    const char *platform = in->platform, *shown = in->shown;
    unsigned nflows = in->nflows;
    cJSON *pj = profile_to_json(in->p);
    char *ptext = pj ? cJSON_PrintUnformatted(pj) : NULL;
    hs_status_t st = HS_ERR_NOMEM;
    sim_io_hdr_t h = {.magic = SIM_IO_MAGIC, .n = tr->n, .hint_bytes = in->hint_bytes,
                      .mode = (uint32_t)in->mode, .nflows = nflows};

    cJSON_Delete(pj);
    m->fd = -1;
    m->base = MAP_FAILED;
    if (!ptext)
        goto out;
    h.off_profile = align8(sizeof(h));
    h.off_platform = h.off_profile + strlen(ptext) + 1;
    h.off_shown = h.off_platform + strlen(platform) + 1;
    h.off_recs = align8(h.off_shown + strlen(shown) + 1);
    h.off_outs = align8(h.off_recs + tr->n * sizeof(trace_rec_t));
    h.len = h.off_outs + nflows * (sizeof(sim_flow_out_t) + tr->n * (sizeof(float) + 1)) + 64;
    m->len = h.len;
    m->fd = memfd_create("hintsim-sim", MFD_CLOEXEC);
    if (m->fd < 0 || ftruncate(m->fd, (off_t)m->len) != 0) {
        hs_log_error("cannot make a %zu-byte memory file for the simulator: %s", m->len,
                     strerror(errno));
        st = HS_ERR_ENV;
        goto out;
    }
    m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
    if (m->base == MAP_FAILED) {
        hs_log_error("cannot map %zu bytes for the simulator: %s", m->len, strerror(errno));
        goto out;
    }
    char *b = m->base;
    memcpy(b, &h, sizeof(h));
    strcpy(b + h.off_profile, ptext);
    strcpy(b + h.off_platform, platform);
    strcpy(b + h.off_shown, shown);
    memcpy(b + h.off_recs, tr->recs, tr->n * sizeof(trace_rec_t));
    shm_point(m, &h);
    st = HS_OK;
out:
    free(ptext);
    return st;
}

static void shm_unmap(sim_shm_t *m)
{
    if (m->base != MAP_FAILED)
        munmap(m->base, m->len);
    if (m->fd >= 0)
        close(m->fd);
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
    if ((st = sim_world_create(a, shown_name, &w)) != HS_OK)
        goto report;
    simgrid_run();
    st = sim_world_check(w);
report:
    fflush(stderr);
    _exit(st == HS_OK ? 0 : SIM_CHILD_ERR_BASE - (int)st);
}

/* The child (forked, or executed with SIM_CHILD_ENV set): map the memory file at fd,
 * rebuild the profile, the configuration and the trace from it, run. Never returns. */
static void child_main(int fd)
{
    struct stat sb;
    sim_shm_t m = {.fd = fd};
    profile_t *p = NULL;
    sim_cfg_t cfg;

    if (fstat(fd, &sb) != 0 || sb.st_size < (off_t)sizeof(sim_io_hdr_t)) {
        hs_log_error("simulator child: no input file at fd %d", fd);
        _exit(SIM_CHILD_ERR_BASE - (int)HS_ERR_ENV);
    }
    m.len = (size_t)sb.st_size;
    m.base = mmap(NULL, m.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    const sim_io_hdr_t *h = m.base;
    if (m.base == MAP_FAILED || h->magic != SIM_IO_MAGIC || h->len != m.len) {
        hs_log_error("simulator child: fd %d is not a replay's input file", fd);
        _exit(SIM_CHILD_ERR_BASE - (int)HS_ERR_ENV);
    }
    const char *b = m.base;
    hs_status_t st = profile_json_parse("the simulator's profile", b + h->off_profile, &p);
    if (st != HS_OK || (st = sim_cfg_init(p, h->hint_bytes, &cfg)) != HS_OK)
        _exit(SIM_CHILD_ERR_BASE - (int)st);
    trace_t tr = {.recs = (trace_rec_t *)(void *)(b + h->off_recs), .n = h->n};
    shm_point(&m, h);
    sim_run_args_t a = {&tr, &cfg, (pred_mode_t)h->mode, h->nflows, m.outs};
    child_run(&a, b + h->off_platform, b + h->off_shown);
}

/* Before main, in every program that has this engine: a process executed as a replay's
 * child (argv exactly {SIM_CHILD_ARGV0}, SIM_CHILD_ENV set) runs it and exits; any other
 * returns at once. glibc passes main's arguments to constructors. */
__attribute__((constructor)) static void sim_child_entry(int argc, char **argv, char **envp)
{
    (void)envp;
    const char *v = getenv(SIM_CHILD_ENV);

    if (v && *v && argc == 1 && argv && argv[0] && strcmp(argv[0], SIM_CHILD_ARGV0) == 0)
        child_main(atoi(v));
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
    if (WIFEXITED(wst) && WEXITSTATUS(wst) == SIM_CHILD_NOEXEC) {
        hs_log_error("cannot start the simulator process%s%s", *err ? ": " : "", err);
        return HS_ERR_ENV;
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

/* The child's environment: this one without SIM_CHILD_ENV, plus SIM_CHILD_ENV=fd
 * (allocated: made before the fork, after which the child may not allocate). */
static char **child_env(char *var)
{
    extern char **environ;
    size_t n = 0, k = 0;

    while (environ[n])
        n++;
    char **env = malloc((n + 2) * sizeof(*env));
    if (!env)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], SIM_CHILD_ENV "=", strlen(SIM_CHILD_ENV) + 1) != 0)
            env[k++] = environ[i];
    env[k++] = var;
    env[k] = NULL;
    return env;
}

/* Child side of the fork: stdout and stderr to the pipe, then the replay: in this process
 * when the parent had no other thread (env NULL), else in this program executed again
 * (/proc/self/exe: the running file, even if replaced since) with the memory file at
 * SIM_CHILD_FD (only async-signal-safe calls until then). */
static void child_start(char **env, int pipe_w, int mem_fd)
{
    static const char msg[] = "cannot execute this program again (/proc/self/exe)";
    char *argv[] = {SIM_CHILD_ARGV0, NULL};

    if (dup2(pipe_w, STDERR_FILENO) < 0 || dup2(pipe_w, STDOUT_FILENO) < 0)
        _exit(SIM_CHILD_NOEXEC);
    if (!env)
        child_main(mem_fd);
    /* dup2 clears close-on-exec, except onto itself */
    if (mem_fd == SIM_CHILD_FD ? fcntl(mem_fd, F_SETFD, 0) < 0 : dup2(mem_fd, SIM_CHILD_FD) < 0)
        _exit(SIM_CHILD_NOEXEC);
    execve("/proc/self/exe", argv, env);
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
        _exit(SIM_CHILD_NOEXEC);
    _exit(SIM_CHILD_NOEXEC);
}

/* Threads of this process (/proc/self/stat's num_threads), 0 when it cannot be read. */
static long process_threads(void)
{
    char buf[1024];
    long n = 0;
    FILE *f = fopen("/proc/self/stat", "r");

    if (!f)
        return 0;
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *p = strrchr(buf, ')'); /* after the command name, which may hold spaces */
    /* fields 3 .. 20 after it: state ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime stime cutime cstime priority nice num_threads */
    for (int field = 3; p && field <= 20; field++) {
        p = strchr(p + 1, ' ');
        if (p && field == 20)
            n = strtol(p + 1, NULL, 10);
    }
    return n;
}

static hs_status_t run_child(const sim_shm_t *m, unsigned nflows, const char *shown_name,
                             hs_progress_t *bar)
{
    int fds[2] = {-1, -1}, wst = 0;
    char var[64], **env = NULL;
    pid_t pid;
    char *err;
    hs_status_t st;

    /* alone, the child may run the replay itself (saves ~70 ms of program start per replay:
     * sweeps' workers, a single hint); with other threads it must execute afresh */
    if (process_threads() != 1) {
        snprintf(var, sizeof(var), SIM_CHILD_ENV "=%d", SIM_CHILD_FD);
        if (!(env = child_env(var)))
            return HS_ERR_NOMEM;
    }
    /* close-on-exec: a child forked by another thread meanwhile must not hold this pipe
     * open (its end of file would wait for that child) */
    if (pipe2(fds, O_CLOEXEC) != 0) {
        hs_log_error("cannot create a pipe for the simulator: %s", strerror(errno));
        free(env);
        return HS_ERR_ENV;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0)
        child_start(env, fds[1], m->fd);
    free(env);
    close(fds[1]);
    if (pid < 0) {
        hs_log_error("cannot fork the simulator: %s", strerror(errno));
        close(fds[0]);
        return HS_ERR_ENV;
    }
    err = read_all(fds[0], bar, m->outs, nflows);
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
    sim_shm_t shm = {.fd = -1, .base = MAP_FAILED};
    hs_status_t st;
    unsigned i;

    if ((st = check_inputs(tr, p, o, nflows, user)) != HS_OK)
        return st;
    if ((st = sim_cfg_init(p, hint_bytes, &cfg)) != HS_OK)
        return st;
    if (!user && (st = sim_platform_write(&cfg, nflows, &gen)) != HS_OK)
        return st;
    const char *shown = user ? user : "generated platform";
    st = shm_make(&shm, &(shm_in_t){tr, p, hint_bytes, o ? o->mode : PRED_OPEN, nflows,
                                    user ? user : gen, shown});
    if (st != HS_OK)
        goto out_shm;
    st = run_child(&shm, nflows, shown, o ? o->progress : NULL);
    shm_point(&shm, shm.base); /* the child pointed the shared structs at its own mapping */
    if (st != HS_OK)
        goto out_shm;
    for (i = 0; i < nflows; i++)
        copy_out(&shm.outs[i], tr->n, &raws[i]);
out_shm:
    shm_unmap(&shm);
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
    if ((st = sim_replay_flows(tr, p, o, hint_bytes, nflows, raws)) != HS_OK)
        goto out;
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
        for (i = 0; i < n; i++)
            if ((st = trace_push(m, &tr->recs[i])) != HS_OK)
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
#define SIM_ADD_COST_(member, key) mraw->costs.member += raws[f].costs.member;
        PRED_COSTS(SIM_ADD_COST_)
#undef SIM_ADD_COST_
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

const pred_engine_ops_t sim_engine_ops = {
    .name = "sim",
    .replay = sim_replay,
    .kind = PRED_SIMULATED,
    .run_flows = sim_run_flows,
    .detail = sim_model_desc,
};
