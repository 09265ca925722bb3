/* hcap_config.h - libhintcap's configuration: environment variables set by
 * `hintsim capture run` (or by hand), the hint configuration file, the process's rank,
 * and the name of its trace file.
 *
 * Effective hint precedence (documented in README.md): the application (it changed
 * RDMA_LOW_LATENCY_HINT in its own environment before opening the device) > the
 * configuration file (HINTCAP_CONFIG, default /etc/rdma/hint.conf) > the environment the
 * process started with (RDMA_LOW_LATENCY_HINT) > none.
 */
#ifndef HCAP_CONFIG_H
#define HCAP_CONFIG_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/hs_util.h"
#include "traces/trace.h"

#define HCAP_DEFAULT_DIR "hintcap"
#define HCAP_DEFAULT_CONFIG "/etc/rdma/hint.conf"
#define HCAP_DEFAULT_COLD 100
#define HCAP_DEFAULT_RING_EVENTS 262144
#define HCAP_DEFAULT_FLUSH_US 1000
#define HCAP_MAX_FLUSH_US 1000000 /* 1 s: a longer idle period only fills the rings */

/* One source of a hint: set, its value, or a parse problem. */
typedef struct {
    int set;         /* 1 when the source gave a valid value */
    uint64_t bytes;
    int invalid;     /* 1 when the source had a value that did not parse */
} hcap_hint_val_t;

typedef struct {
    char dir[1024];          /* HINTCAP_DIR: where traces go */
    uint64_t cold_n;         /* HINTCAP_COLD: WRs per QP flagged cold-start */
    unsigned ring_order;     /* log2 of HINTCAP_RING_EVENTS, events per thread buffer */
    int blocking;            /* HINTCAP_BLOCK=1: wait for room instead of dropping */
    uint64_t flush_us;       /* HINTCAP_FLUSH_US: writer's idle poll period, 1..1 s */
    int writer_cpu;          /* HINTCAP_WRITER_CPU: the writer thread's CPU; -1: any the
                              * process may use */
    char config_path[1024];  /* the hint configuration file consulted */
    hcap_hint_val_t env;     /* RDMA_LOW_LATENCY_HINT at process start */
    hcap_hint_val_t config;  /* the configuration file */
    hcap_hint_val_t code;    /* RDMA_LOW_LATENCY_HINT changed by the application */
    char env_text[64];       /* raw RDMA_LOW_LATENCY_HINT at start ("" if unset) */
} hcap_config_t;

/* A HINTCAP_WRITER_CPU value as a CPU number (below CPU_SETSIZE), or -1 when it is not one:
 * the rule libhintcap and `capture run --writer-cpu` both apply. */
static inline int hcap_cpu_parse(const char *v)
{
    uint64_t x;

    return hs_parse_u64(v, &x) == HS_OK && x < CPU_SETSIZE ? (int)x : -1;
}

/* Fill cfg from the environment (getenv) and the configuration file. Problems (bad
 * numbers, unreadable or malformed configuration file) are described in warn (one line,
 * "" when none) and the offending value is ignored. */
void hcap_config_load(hcap_config_t *cfg, char *warn, size_t warn_len);
/* The writer's idle sleep, cfg->flush_us as a timespec nanosleep accepts (tv_nsec < 1e9). */
struct timespec hcap_config_flush_ts(const hcap_config_t *cfg);

/* Parse a hint configuration file's text: lines "RDMA_LOW_LATENCY_HINT = 64K" (also
 * "low_latency_hint"), '#' comments, blank lines. Returns 0 and sets *out (unset if the
 * file names no hint), or -1 with a message naming path, line and problem in err. */
int hcap_config_parse_hint(const char *path, const char *text, hcap_hint_val_t *out,
                           char *err, size_t err_len);

/* Called when the device is opened: an RDMA_LOW_LATENCY_HINT different from the one the
 * process started with was set by the application. */
void hcap_config_note_code(hcap_config_t *cfg);

/* The effective hint and its source under the precedence above. */
void hcap_config_effective(const hcap_config_t *cfg, uint64_t *bytes, trace_hint_src_t *src);

/* The process's rank from OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID or RANK
 * (torchrun), the first that is set and parses; -1. */
int hcap_rank_from_env(void);

/* "<dir>/<host>-<pid>[-r<rank>].hst" into buf (characters of host other than letters,
 * digits, '.', '_', '-' become '_'). Returns -1 if it does not fit. */
int hcap_trace_path(char *buf, size_t len, const char *dir, const char *host, long pid,
                    int rank);

#endif
