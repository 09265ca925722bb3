/* trace_stats.h - the summary `trace info` prints: sizes (with a power-of-two
 * histogram), time span, completion coverage, cold-start count, path split. */
#ifndef HS_TRACE_STATS_H
#define HS_TRACE_STATS_H

#include <stdint.h>
#include <stdio.h>

#include "common/hs_util.h"
#include "traces/trace.h"

#define TRACE_STATS_BUCKETS HS_SIZE_CLASSES /* hs_size_class: (2^(k-1), 2^k] */

typedef struct {
    uint64_t records;
    uint64_t size_min, size_max, size_p50;
    double size_mean;
    double total_bytes; /* summed as a double: exact below 2^53 B (8 PiB), never wraps */
    uint64_t hist[TRACE_STATS_BUCKETS];
    uint64_t t_first_post_ns, t_last_post_ns, t_last_done_ns; /* last_done: 0 if none known */
    uint64_t done_known;
    uint64_t cold, errors, inline_n, signaled;
    uint64_t path_ll, path_bw, path_unknown;
    uint64_t qps;         /* distinct QP numbers */
    uint64_t unordered;   /* trace_unordered: records out of post order (replays sort) */
    uint64_t ops[16];     /* per opcode (low 4 bits) */
} trace_stats_t;

/* Compute the summary of tr (O(n log n) for the median). */
hs_status_t trace_stats_compute(const trace_t *tr, trace_stats_t *out);
/* Human-readable report (header + summary) to fp. */
void trace_stats_print(FILE *fp, const char *path, const trace_t *tr, const trace_stats_t *s);
/* The same as a JSON object text (malloc'ed, caller frees); NULL on allocation failure. */
char *trace_stats_json(const char *path, const trace_t *tr, const trace_stats_t *s);

#endif
