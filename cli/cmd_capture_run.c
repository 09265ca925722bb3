/* cmd_capture_run.c - `hintsim capture run [-o DIR] -- COMMAND [ARGS...]`: run any verbs
 * application under libhintcap (LD_PRELOAD, plus libhintcap-audit.so through LD_AUDIT for
 * applications that load libibverbs with dlopen/dlsym, as NCCL does), one trace per
 * process in DIR.
 *
 * Finds libhintcap.so (HINTCAP_LIB, next to this binary, the build tree, the install
 * tree), passes DIR and the options through HINTCAP_* environment variables (inherited by
 * launchers such as mpirun and their children), runs the command and returns its exit
 * status unchanged (128+N when killed by signal N, 127 when it cannot be started). A DIR
 * that cannot be written gives one warning and the command runs without capture. Afterwards
 * it prints one line per captured process from the summary each one wrote at exit, and
 * warns when a process recorded no WR, posted outside libibverbs' post_send, or dropped
 * records, and when no process opened a verbs device at all.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <time.h>

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
    int no_audit;
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
    {"no-audit", 0, HS_OPT_FLAG, O(no_audit), NULL, NULL,
     "LD_PRELOAD only, no LD_AUDIT (programs that dlopen libibverbs are then not captured)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef O

static const hs_cmd_spec_t g_run_spec = {
    "hintsim capture run [-o DIR] [--cold N] [--ring-events N] [--block] [--no-audit] -- "
    "COMMAND [ARGS...]",
    "record every send WR of any verbs application (LD_PRELOAD + LD_AUDIT), one trace per "
    "process",
    g_run_opts, 1, -1,
    "Each process that opens a verbs device writes DIR/<host>-<pid>[-r<rank>].hst (rank from\n"
    "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID or RANK) and a summary\n"
    "beside it (.summary.json); one line per process is printed at the end, with a warning\n"
    "for a process that recorded no WR or posted outside libibverbs. The header holds the\n"
    "process's effective hint (RDMA_LOW_LATENCY_HINT, the config file, or the application)\n"
    "and records dropped. Under a launcher, the environment must reach the ranks (Open MPI\n"
    "on several hosts: mpirun -x LD_PRELOAD -x LD_AUDIT -x HINTCAP_DIR -x HINTCAP_RUN ...).\n"
    "Compare the processes with 'hintsim trace audit DIR'. Exit status: the command's own."};

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

/* libhintcap-audit.so beside lib into buf; -1 if it is not there. */
static int find_audit(const char *lib, char *buf, size_t len)
{
    const char *slash = strrchr(lib, '/');
    int n = slash ? (int)(slash - lib) : 0;

    if (snprintf(buf, len, "%.*s%slibhintcap-audit.so", n, lib, slash ? "/" : "") >= (int)len)
        return -1;
    return file_exists(buf) ? 0 : -1;
}

/* Put path first in the ':'-separated list variable name. */
static int env_prepend(const char *name, const char *path)
{
    const char *old = getenv(name);
    char v[2 * PATH_MAX + 2];

    if (snprintf(v, sizeof(v), "%s%s%s", path, old && *old ? ":" : "", old ? old : "") >=
        (int)sizeof(v))
        return -1;
    return setenv(name, v, 1);
}

/* A name for this run, so that the summaries of this run are told from earlier ones. */
static void make_run_id(char *buf, size_t len)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(buf, len, "%ld-%lld.%09ld", (long)getpid(), (long long)ts.tv_sec, ts.tv_nsec);
}

static int set_env(const struct run_opts *o, const char *lib, const char *audit,
                   const char *dir, const char *run_id)
{
    if (env_prepend("LD_PRELOAD", lib) || (audit && env_prepend("LD_AUDIT", audit)) ||
        setenv("HINTCAP_RUN", run_id, 1) || setenv("HINTCAP_DIR", dir, 1) ||
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

/* ---- after the command: what each process captured -------------------------------- */

typedef struct {
    char name[256]; /* the summary's file name (sorts like the traces) */
    cJSON *j;
} proc_sum_t;

typedef struct {
    proc_sum_t *v;
    size_t n;
} sums_t;

static double jnum(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

static const char *jstr(const cJSON *j, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, key));

    return v ? v : "";
}

static int is_summary_name(const char *name)
{
    size_t n = strlen(name);

    return n > 13 && strcmp(name + n - 13, ".summary.json") == 0 && name[0] != '.';
}

/* Load DIR/name if it is a summary of this run (others are earlier runs': ignored). */
static void sums_add(sums_t *s, const char *dir, const char *name, const char *run_id)
{
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    proc_sum_t *nv;
    cJSON *j;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
        hs_read_file(path, &text, &len) != HS_OK)
        return;
    j = cJSON_Parse(text);
    free(text);
    if (!j) {
        hs_log_warn("%s: not a capture summary (bad JSON); ignored", path);
        return;
    }
    if (strcmp(jstr(j, "run"), run_id) != 0) {
        cJSON_Delete(j);
        return;
    }
    nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
    if (!nv) {
        hs_log_warn("%s: out of memory reading it; not reported", path);
        cJSON_Delete(j);
        return;
    }
    s->v = nv;
    snprintf(s->v[s->n].name, sizeof(s->v[s->n].name), "%s", name);
    s->v[s->n++].j = j;
}

static int sum_cmp(const void *a, const void *b)
{
    return strcmp(((const proc_sum_t *)a)->name, ((const proc_sum_t *)b)->name);
}

/* "0x1a, 0x2b" from the summary's outside.qp_nums. */
static void qpn_list(const cJSON *out, char *buf, size_t len)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(out, "qp_nums"), *e;
    size_t used = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(e, a) {
        int n = snprintf(buf + used, len - used, "%s0x%x", used ? ", " : "",
                         cJSON_IsNumber(e) ? (unsigned)e->valuedouble : 0u);

        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out, "more_qps")) && used + 8 < len)
        snprintf(buf + used, len - used, ", ...");
}

/* One line for a process, and its warnings. */
static void report_one(const char *dir, const cJSON *j)
{
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(j, "outside");
    const char *dev = *jstr(j, "device") ? jstr(j, "device") : "a verbs device";
    double posted = jnum(j, "wrs_posted"), dropped = jnum(j, "dropped");
    double ocomp = jnum(out, "completions");
    char rank[32] = "", qpns[200];

    if (jnum(j, "rank") >= 0)
        snprintf(rank, sizeof(rank), " rank %.0f,", jnum(j, "rank"));
    hs_log_info("capture run: process %.0f on %s,%s %s: %.0f QPs (%.0f posting), %.0f WRs "
                "posted, %.0f completed, %.0f dropped -> %s/%s", jnum(j, "pid"), jstr(j, "host"),
                rank, dev, jnum(j, "qps_seen"), jnum(j, "qps_posting"), posted,
                jnum(j, "wrs_completed"), dropped, dir, jstr(j, "trace"));
    if (posted == 0)
        hs_log_warn("process %.0f opened %s but recorded no WR: nothing was posted through "
                    "libibverbs' post_send; either it only served as a target (of RDMA writes "
                    "or reads) or it posted around libibverbs (mlx5 direct verbs / DevX, "
                    "UCX's accelerated transports, GPU-initiated IBGDA/NVSHMEM), which the "
                    "interposer cannot see", jnum(j, "pid"), dev);
    if (ocomp > 0) {
        qpn_list(out, qpns, sizeof(qpns));
        hs_log_warn("process %.0f: posted outside libibverbs: %.0f send completions on %.0f "
                    "QP%s (qp_num %s) that posted nothing through the hooks; those WRs are not "
                    "in the trace", jnum(j, "pid"), ocomp, jnum(out, "qps"),
                    jnum(out, "qps") == 1 ? "" : "s", qpns);
    }
    if (dropped > 0)
        hs_log_warn("process %.0f dropped %.0f records (its ring was full: --ring-events N, "
                    "or --block)", jnum(j, "pid"), dropped);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "trace_written")))
        hs_log_warn("process %.0f could not write its trace %s/%s", jnum(j, "pid"), dir,
                    jstr(j, "trace"));
}

/* Every summary of this run in dir, one line each in name order; or the message that no
 * process opened a device. Only prints: the exit status stays the command's. */
static void report_run(const char *dir, const char *run_id, int audit)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    sums_t s = {NULL, 0};
    size_t i;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL)
        if (is_summary_name(e->d_name))
            sums_add(&s, dir, e->d_name, run_id);
    closedir(d);
    if (s.n == 0) {
        hs_log_warn("capture run: no process opened a verbs device: nothing was captured in "
                    "%s%s", dir, audit ? "" : " (without LD_AUDIT, programs that dlopen "
                    "libibverbs are not seen)");
        return;
    }
    qsort(s.v, s.n, sizeof(*s.v), sum_cmp);
    for (i = 0; i < s.n; i++) {
        report_one(dir, s.v[i].j);
        cJSON_Delete(s.v[i].j);
    }
    free(s.v);
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
    char **pos = NULL, lib[PATH_MAX], audit[PATH_MAX + 32], dir[PATH_MAX] = "", run_id[64];
    const char *audit_p = NULL;
    int npos = 0, rc;

    memset(&o, 0, sizeof(o));
    rc = hs_cli_parse(&g_run_spec, argc, argv, &o, &pos, &npos);
    if (rc >= 0)
        goto free_opts;
    rc = check_opts(&o);
    if (rc != 0)
        goto free_opts;
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
        goto free_opts;
    }
    if (!o.no_audit) {
        if (find_audit(lib, audit, sizeof(audit)) == 0)
            audit_p = audit;
        else
            hs_log_warn("%s: not found; programs that dlopen libibverbs (NCCL) will not be "
                        "captured", audit);
    }
    make_run_id(run_id, sizeof(run_id));
    if (make_dir(o.out) != 0 || !realpath(o.out, dir)) {
        dir[0] = '\0';
        hs_log_warn("cannot write traces to %s: %s; running the command without capture",
                    o.out, strerror(errno));
    } else if (set_env(&o, lib, audit_p, dir, run_id) != 0) {
        dir[0] = '\0';
        hs_log_warn("cannot set the environment: %s; running the command without capture",
                    strerror(errno));
    }
    rc = run_child(pos);
    if (dir[0]) {
        salvage_orphans(dir);
        report_run(dir, run_id, audit_p != NULL);
    }
free_opts:
    hs_opt_free(&g_run_spec, &o, pos);
    return rc;
}
