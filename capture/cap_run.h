/* cap_run.h - `hintsim capture run`: run any verbs application under libhintcap
 * (LD_PRELOAD, plus libhintcap-audit.so through LD_AUDIT for applications that load
 * libibverbs with dlopen/dlsym, as NCCL does), one trace per process in a directory.
 *
 * libhintcap.so is found from the option, HINTCAP_LIB, or beside this executable (the build
 * tree, the install tree); the directory and options reach it through HINTCAP_* environment
 * variables, inherited by launchers such as mpirun and their children. A directory that
 * cannot be written gives one warning and the command runs without capture. Afterwards a
 * trace whose process died without closing it is salvaged, and the summary each process
 * wrote at exit (DIR/<trace>.summary.json, capture/preload/README.md) is read back.
 */
#ifndef HS_CAP_RUN_H
#define HS_CAP_RUN_H

#include <limits.h>
#include <stddef.h>

#include "common/hs_status.h"

struct cJSON;

/* What the command line gives (the members are option targets of hs_opt.h). */
typedef struct {
    const char *out;    /* DIR: the traces and summaries */
    const char *cold;   /* HINTCAP_COLD: first WRs per QP flagged cold-start (a count) */
    const char *ring;   /* HINTCAP_RING_EVENTS: ring size per process (a size) */
    const char *config; /* HINTCAP_CONFIG, NULL: none */
    const char *writer_cpu; /* HINTCAP_WRITER_CPU, NULL: unset (the process's CPUs) */
    const char *lib;    /* libhintcap.so; NULL: HINTCAP_LIB, then beside this executable */
    int block;          /* HINTCAP_BLOCK: wait for ring space instead of dropping */
    int no_audit;       /* no LD_AUDIT module */
} cap_run_opts_t;

/* One captured process: its summary's file name (sorts like the traces) and content. */
typedef struct {
    char name[256];
    struct cJSON *j;
} cap_run_proc_t;

typedef struct {
    int status;      /* the command's exit status as a shell reports it (128+N: signal N,
                      * 127: it could not be started) */
    char dir[PATH_MAX]; /* the directory, absolute; "" when the command ran without capture */
    int audit;       /* LD_AUDIT was set */
    cap_run_proc_t *procs; /* this run's summaries in name order (not earlier runs') */
    size_t nprocs;
} cap_run_result_t;

/* Run argv (NULL-terminated) under libhintcap; fills *res (release it with
 * cap_run_result_release). HS_ERR_ENV, with nothing run and nothing logged, when
 * libhintcap.so is not found; else HS_OK whatever the command's status. */
hs_status_t cap_run(const cap_run_opts_t *o, char **argv, cap_run_result_t *res);
void cap_run_result_release(cap_run_result_t *res);

/* libhintcap.so's absolute path into buf: given, else HINTCAP_LIB, else beside this
 * executable. 0, or -1 when it is not there. */
int cap_run_find_lib(const char *given, char *buf, size_t len);

/* A summary's number (0 when absent or not finite) and string ("" when absent). */
double cap_run_num(const struct cJSON *j, const char *key);
const char *cap_run_str(const struct cJSON *j, const char *key);

#endif
