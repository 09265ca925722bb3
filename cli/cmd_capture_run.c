/* cmd_capture_run.c - `hintsim capture run [-o DIR] -- COMMAND [ARGS...]`: run any verbs
 * application under libhintcap (LD_PRELOAD), one trace per process in DIR.
 *
 * Finds libhintcap.so (HINTCAP_LIB, next to this binary, the build tree, the install
 * tree), passes DIR and the options through HINTCAP_* environment variables (inherited by
 * launchers such as mpirun and their children), runs the command and returns its exit
 * status unchanged (128+N when killed by signal N, 127 when it cannot be started). A DIR
 * that cannot be written gives one warning and the command runs without capture.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/hs_util.h"
#include "traces/trace_check.h"

struct run_opts {
    const char *out;
    const char *cold;
    const char *ring;
    const char *config;
    const char *lib;
    int block;
};

#define O(f) offsetof(struct run_opts, f)
static const hs_opt_t g_run_opts[] = {
    {"output", 'o', HS_OPT_STR, O(out), "DIR", "hintcap", "directory of the per-process traces"},
    {"cold", 0, HS_OPT_STR, O(cold), "N", "100", "first N WRs of each QP flagged cold-start"},
    {"ring-events", 0, HS_OPT_STR, O(ring), "N", "64K", "events buffered per thread"},
    {"block", 0, HS_OPT_FLAG, O(block), NULL, NULL,
     "wait for buffer room instead of dropping (slows the application)"},
    {"config", 0, HS_OPT_STR, O(config), "FILE", NULL,
     "hint configuration file (default /etc/rdma/hint.conf)"},
    {"lib", 0, HS_OPT_STR, O(lib), "PATH", NULL, "libhintcap.so to use (default: found)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef O

static const hs_cmd_spec_t g_run_spec = {
    "hintsim capture run [-o DIR] [--cold N] [--ring-events N] [--block] -- COMMAND [ARGS...]",
    "record every send WR of any verbs application (LD_PRELOAD), one trace per process",
    g_run_opts, 1, -1,
    "Each process that opens a verbs device writes DIR/<host>-<pid>[-r<rank>].hst (rank from\n"
    "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK or SLURM_PROCID). The header holds the\n"
    "process's effective hint (RDMA_LOW_LATENCY_HINT, the config file, or the application)\n"
    "and records dropped. Under a launcher, the environment must reach the ranks (Open MPI:\n"
    "hintsim capture run -o DIR -- mpirun -x LD_PRELOAD -x HINTCAP_DIR ...). Compare the\n"
    "processes with 'hintsim trace audit DIR'. Exit status: the command's own."};

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* libhintcap.so: --lib, HINTCAP_LIB, then relative to this executable. */
static int find_lib(const char *given, char *buf, size_t len)
{
    static const char *const rel[] = {"libhintcap.so", "../capture/preload/libhintcap.so",
                                      "../lib/hintsim/libhintcap.so", "../lib/libhintcap.so"};
    char exe[PATH_MAX], *slash;
    ssize_t n;
    size_t i;

    if (!given)
        given = getenv("HINTCAP_LIB");
    if (given) {
        snprintf(buf, len, "%s", given);
        return file_exists(buf) && realpath(given, buf) ? 0 : -1;
    }
    n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char cand[PATH_MAX + 64];

        snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
        if (file_exists(cand) && realpath(cand, buf))
            return 0;
    }
    return -1;
}

/* mkdir -p without logging; returns 0 or -1 with errno. */
static int make_dir(const char *dir)
{
    char tmp[PATH_MAX], *p;

    if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
    return access(tmp, W_OK | X_OK);
}

static int set_env(const struct run_opts *o, const char *lib, const char *dir)
{
    const char *old = getenv("LD_PRELOAD");
    char pre[2 * PATH_MAX + 2];

    snprintf(pre, sizeof(pre), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    if (setenv("LD_PRELOAD", pre, 1) || setenv("HINTCAP_DIR", dir, 1) ||
        setenv("HINTCAP_COLD", o->cold, 1) || setenv("HINTCAP_RING_EVENTS", o->ring, 1) ||
        setenv("HINTCAP_BLOCK", o->block ? "1" : "0", 1) ||
        (o->config && setenv("HINTCAP_CONFIG", o->config, 1)))
        return -1;
    return 0;
}

/* Run argv, return its exit status the way a shell reports it. */
static int run_child(char **argv)
{
    struct sigaction ign, old_int, old_quit;
    pid_t pid;
    int status = 0;

    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int); /* like system(): Ctrl-C is the command's */
    sigaction(SIGQUIT, &ign, &old_quit);
    pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "hintsim: capture run: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (pid < 0) {
        fprintf(stderr, "hintsim: capture run: fork failed: %s\n", strerror(errno));
        return 127;
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* The pid of a trace writer's temporary file "<trace>.hst.tmp.<pid>" (hs_afile's; 0 if
 * name is not one); the final name "<dir>/<trace>.hst" goes to final. */
static pid_t orphan_pid(const char *dir, const char *name, char *final, size_t len)
{
    size_t n;
    long pid = hs_afile_tmp_pid(name, &n);

    if (pid == 0 || n < 4 || strncmp(name + n - 4, ".hst", 4) != 0)
        return 0;
    if (snprintf(final, len, "%s/%.*s", dir, (int)n, name) >= (int)len)
        return 0;
    return (pid_t)pid;
}

/* Salvage one orphaned temporary trace into its final name; keeps it where that fails. */
static void salvage_one(const char *tmp, const char *final, pid_t pid)
{
    trace_salvage_t res;

    if (access(final, F_OK) == 0) {
        hs_log_warn("%s: process %ld ended without closing its trace, and %s exists: left "
                    "as is (hintsim trace salvage %s OUT recovers it)", tmp, (long)pid, final,
                    tmp);
        return;
    }
    if (trace_salvage(tmp, final, &res) != HS_OK) {
        hs_log_warn("%s: process %ld ended without closing its trace and nothing in it could "
                    "be recovered; left as is", tmp, (long)pid);
        return;
    }
    unlink(tmp);
    hs_log_warn("process %ld ended without closing its trace (killed?): salvaged %llu blocks, "
                "%llu records into %s", (long)pid, (unsigned long long)res.kept_blocks,
                (unsigned long long)res.kept_records, final);
}

/* After the command: a traced process killed by SIGKILL (or ending in _exit) leaves only
 * the trace writer's temporary file; salvage every one in dir whose process is gone. */
static void salvage_orphans(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char tmp[PATH_MAX], final[PATH_MAX];

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        pid_t pid = orphan_pid(dir, e->d_name, final, sizeof(final));
        if (pid == 0 || kill(pid, 0) == 0 || errno != ESRCH)
            continue; /* not a temporary trace, or its process (or another) has the pid */
        if (snprintf(tmp, sizeof(tmp), "%s/%s", dir, e->d_name) >= (int)sizeof(tmp))
            continue;
        salvage_one(tmp, final, pid);
    }
    closedir(d);
}

/* Check what the options say before anything runs: sizes and counts must parse. */
static int check_opts(const struct run_opts *o)
{
    uint64_t v;

    if (hs_parse_u64(o->cold, &v) != HS_OK) {
        fprintf(stderr, "hintsim: capture run: --cold '%s': not a count\n", o->cold);
        return 2;
    }
    if (hs_parse_size(o->ring, &v) != HS_OK || v == 0) {
        fprintf(stderr, "hintsim: capture run: --ring-events '%s': not a count\n", o->ring);
        return 2;
    }
    return 0;
}

int cmd_capture_run(int argc, char **argv)
{
    struct run_opts o;
    char **pos = NULL, lib[PATH_MAX], dir[PATH_MAX] = "";
    int npos = 0, rc;

    memset(&o, 0, sizeof(o));
    rc = hs_cli_parse(&g_run_spec, argc, argv, &o, &pos, &npos);
    if (rc >= 0)
        goto out;
    rc = check_opts(&o);
    if (rc != 0)
        goto out;
    if (find_lib(o.lib, lib, sizeof(lib)) != 0) {
        const char *env = getenv("HINTCAP_LIB");
        if (o.lib || env) /* the path given is the only one tried */
            fprintf(stderr, "hintsim: capture run: %s %s: no such file\n",
                    o.lib ? "--lib" : "$HINTCAP_LIB", o.lib ? o.lib : env);
        else
            fprintf(stderr, "hintsim: capture run: libhintcap.so not found (looked next to "
                    "the hintsim binary, in the build tree and in ../lib/hintsim); build the "
                    "'hintcap' target or pass --lib PATH\n");
        rc = o.lib || env ? 1 : 3;
        goto out;
    }
    if (make_dir(o.out) != 0 || !realpath(o.out, dir)) {
        dir[0] = '\0';
        hs_log_warn("cannot write traces to %s: %s; running the command without capture",
                    o.out, strerror(errno));
    } else if (set_env(&o, lib, dir) != 0) {
        hs_log_warn("cannot set the environment: %s; running the command without capture",
                    strerror(errno));
    }
    rc = run_child(pos);
    if (dir[0])
        salvage_orphans(dir);
out:
    hs_opt_free(&g_run_spec, &o, pos);
    return rc;
}
