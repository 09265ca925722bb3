/* trace_gen.h - synthetic workloads (`trace gen`, `trace workloads`).
 *
 * Each workload is a deterministic function of (count, seed, parameters): the same inputs
 * give a byte-identical file. Parameters have defaults and are overridden by "KEY=VALUE"
 * strings; the effective values are recorded in the header's extra_json. Completion times
 * are synthetic: t_done = t_post + lat_base_ns + size * 8 / bw_gbps (times a cold-start
 * factor where the workload says so), no queueing (see WORKLOADS.md). */
#ifndef HS_TRACE_GEN_H
#define HS_TRACE_GEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "traces/trace.h"
#include "traces/trace_convert.h"

typedef enum { TRACE_GEN_SIZE, TRACE_GEN_U64, TRACE_GEN_DOUBLE } trace_gen_ptype_t;

typedef struct {
    const char *key;
    trace_gen_ptype_t type;
    double def, lo, hi; /* default and accepted range */
    const char *help;
} trace_gen_param_t;

typedef struct trace_gen_ctx trace_gen_ctx_t;

typedef struct {
    const char *name;
    const char *summary;  /* one line for `trace workloads` */
    const char *source;   /* the source-document passage it stands for (seed id) */
    const trace_gen_param_t *params; /* NULL-key terminated */
    void (*run)(trace_gen_ctx_t *g);
} trace_gen_workload_t;

/* All workloads (static table); *n gets their number. */
const trace_gen_workload_t *trace_gen_workloads(size_t *n);
/* The workload called name, or NULL. */
const trace_gen_workload_t *trace_gen_find(const char *name);
/* Parameters every workload shares (timing model, jitter). */
const trace_gen_param_t *trace_gen_common_params(void);

/* Generate count records of workload name into path (.hst, streaming; other extensions
 * through trace_save). sets are "KEY=VALUE" overrides; an unknown workload or key or a bad
 * value is logged naming it and returns HS_ERR_INVALID. */
hs_status_t trace_gen_run(const char *name, uint64_t count, uint64_t seed,
                          const char *const *sets, size_t nsets, const char *path);
/* The same in format fmt (HST, CSV, JSONL) whatever path's name ("-": standard output);
 * TRACE_FMT_UNKNOWN: by path's extension, as trace_gen_run. */
hs_status_t trace_gen_run_as(const char *name, uint64_t count, uint64_t seed,
                             const char *const *sets, size_t nsets, trace_fmt_t fmt,
                             const char *path);

/* Print the workload list, one line each, to fp; with verbose also every parameter. */
void trace_gen_print_workloads(FILE *fp, int verbose);

#endif
