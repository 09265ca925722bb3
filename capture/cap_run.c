/* cap_run.c - run a command under libhintcap, one trace per process (see cap_run.h). */
#include "capture/cap_run.h"

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
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/hs_util.h"
#include "traces/trace_check.h"

static int file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int cap_run_find_lib(const char *given, char *buf, size_t len)
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

static int set_env(const cap_run_opts_t *o, const char *lib, const char *audit,
                   const char *dir, const char *run_id)
{
    if (env_prepend("LD_PRELOAD", lib) || (audit && env_prepend("LD_AUDIT", audit)) ||
        setenv("HINTCAP_RUN", run_id, 1) || setenv("HINTCAP_DIR", dir, 1) ||
        setenv("HINTCAP_COLD", o->cold, 1) || setenv("HINTCAP_RING_EVENTS", o->ring, 1) ||
        setenv("HINTCAP_BLOCK", o->block ? "1" : "0", 1) ||
        (o->config && setenv("HINTCAP_CONFIG", o->config, 1)) ||
        (o->writer_cpu && setenv("HINTCAP_WRITER_CPU", o->writer_cpu, 1)))
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

const char *cap_run_str(const cJSON *j, const char *key)
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
static void sums_add(cap_run_result_t *s, const char *dir, const char *name,
                     const char *run_id)
{
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    cap_run_proc_t *nv;
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
    if (strcmp(cap_run_str(j, "run"), run_id) != 0) {
        cJSON_Delete(j);
        return;
    }
    nv = realloc(s->procs, (s->nprocs + 1) * sizeof(*nv));
    if (!nv) {
        hs_log_warn("%s: out of memory reading it; not reported", path);
        cJSON_Delete(j);
        return;
    }
    s->procs = nv;
    snprintf(s->procs[s->nprocs].name, sizeof(s->procs[s->nprocs].name), "%s", name);
    s->procs[s->nprocs++].j = j;
}

static int sum_cmp(const void *a, const void *b)
{
    return strcmp(((const cap_run_proc_t *)a)->name, ((const cap_run_proc_t *)b)->name);
}

double cap_run_num(const cJSON *j, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);

    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

/* Every summary of this run in dir, in name order. */
static void collect_summaries(const char *dir, const char *run_id, cap_run_result_t *res)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL)
        if (is_summary_name(e->d_name))
            sums_add(res, dir, e->d_name, run_id);
    closedir(d);
    if (res->nprocs > 1)
        qsort(res->procs, res->nprocs, sizeof(*res->procs), sum_cmp);
}

/* The directory and environment of a capture; res->dir stays "" (and a warning says why)
 * where the command is to run without capture. */
static void prepare(const cap_run_opts_t *o, const char *lib, const char *audit,
                    const char *run_id, cap_run_result_t *res)
{
    if (make_dir(o->out) != 0 || !realpath(o->out, res->dir)) {
        res->dir[0] = '\0';
        hs_log_warn("cannot write traces to %s: %s; running the command without capture",
                    o->out, strerror(errno));
    } else if (set_env(o, lib, audit, res->dir, run_id) != 0) {
        res->dir[0] = '\0';
        hs_log_warn("cannot set the environment: %s; running the command without capture",
                    strerror(errno));
    }
}

hs_status_t cap_run(const cap_run_opts_t *o, char **argv, cap_run_result_t *res)
{
    char lib[PATH_MAX], audit[PATH_MAX + 32], run_id[64];
    const char *audit_p = NULL;

    memset(res, 0, sizeof(*res));
    if (cap_run_find_lib(o->lib, lib, sizeof(lib)) != 0)
        return HS_ERR_ENV;
    if (!o->no_audit) {
        if (find_audit(lib, audit, sizeof(audit)) == 0)
            audit_p = audit;
        else
            hs_log_warn("%s: not found; programs that dlopen libibverbs (NCCL) will not be "
                        "captured", audit);
    }
    res->audit = audit_p != NULL;
    make_run_id(run_id, sizeof(run_id));
    prepare(o, lib, audit_p, run_id, res);
    res->status = run_child(argv);
    if (res->dir[0]) {
        salvage_orphans(res->dir);
        collect_summaries(res->dir, run_id, res);
    }
    return HS_OK;
}

void cap_run_result_release(cap_run_result_t *res)
{
    for (size_t i = 0; i < res->nprocs; i++)
        cJSON_Delete(res->procs[i].j);
    free(res->procs);
    res->procs = NULL;
    res->nprocs = 0;
}
