/* recommend.h - hint recommendation: evaluate candidate hints with one prediction engine,
 * rank them by an objective, say which cost term separates the winner from the runner-up,
 * and flag what the source documents warn about. Reused by validate and sweep. */
#ifndef HS_RECOMMEND_H
#define HS_RECOMMEND_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "model/predict/objective.h"
#include "model/predict/predict.h"

typedef struct {
    obj_t objective;
    const uint64_t *candidates; /* NULL: auto (rec_candidates_auto) */
    size_t ncandidates;
    unsigned threads;           /* 0: one per online CPU */
    pred_opts_t pred;           /* mode, include_cold (default 0: cold start apart), ... */
    int progress;               /* 1: progress bar over candidates on stderr (terminal only) */
    double margin;              /* relative margin (0.02 = 2%) by which a hint must beat every
                                 * smaller one to be recommended over it; 0: REC_MARGIN_DEFAULT,
                                 * REC_MARGIN_NONE: rank strictly (model/README.md, "How
                                 * recommend picks") */
} rec_opts_t;

/* The margin of the recommendation policy when none is given, and the value that asks for
 * none (the strictly best candidate is recommended). */
#define REC_MARGIN_DEFAULT 0.02
#define REC_MARGIN_NONE (-1.0)

/* What one path can carry for the messages a hint routes to it, against what the trace
 * offers it (open loop): the path's sustained rate is the lower of two bounds, each from
 * model/path_rules.h: the CPU (post, doorbell and completion events per message) and the
 * window (W_P slots, each held for a WR's round trip). The link, which both paths share,
 * is model_offered_load's. */
typedef struct {
    int path;               /* PRULES_LL or PRULES_BW */
    uint64_t hint_bytes;
    size_t count;           /* messages of the path's class */
    double bytes;
    double span_us;         /* the trace's span (first to last post) */
    double offered_gbps;    /* bytes * 8 / span */
    double sustained_gbps;  /* bytes * 8 / the binding bound's time */
    double cpu_us, window_us; /* time each bound needs for these messages */
    const char *bound;      /* "CPU" or "window": the binding one */
    uint32_t window;        /* W_P, WRs */
    uint32_t batch;         /* E_P, WRs per completion event */
    double event_us;        /* e_P, per completion event */
    int saturated;          /* more than one message and the binding time exceeds the span */
} rec_path_load_t;

typedef struct {
    pred_result_t *results;  /* owned, one per candidate, sorted by hint */
    size_t n;
    size_t winner, runner_up; /* indices into results (runner_up == winner when n == 1:
                               * no runner-up, "runner_up": null in JSON); runner_up is best
                               * when the margin passed it over */
    size_t best;              /* the strictly best candidate on the objective */
    double margin;            /* the margin applied (0: strict) */
    char policy[400];         /* why the winner and not the best, or how far it beats every
                               * smaller hint: "hint 65536 (64K) is 0.7% better than hint
                               * 4096 (4K) on p99, under the 2% margin: 4096 (4K) is
                               * recommended" */
    size_t baseline;          /* index of hint 0 (always evaluated) */
    obj_t objective;
    char why[512];            /* the cost term that separates winner and runner-up */
    const char *why_term;     /* "queue", "drain", "coalesce", "l1", "base"; "tie" when the
                               * two are equal on the objective, "none" for one candidate */
    char **warnings;          /* owned strings: the source documents' pitfalls found here */
    size_t nwarnings;
    double wall_s;            /* time spent evaluating */
    unsigned threads_used;
    int overloaded;           /* open loop and the trace offers more than the link carries */
    model_load_t load;        /* the offered-load check (open loop only) */
    rec_path_load_t *path_load; /* owned: each candidate's saturated paths (open loop) */
    size_t npath_load;
    const char *engine_detail; /* borrowed, may be NULL: e.g. the simulator's network model */
} rec_report_t;

/* The auto candidates: 0, powers of two across the trace's size range, the trace's size
 * quantiles (p10..p99) and "everything LL" (the largest size), sorted, one per class of
 * model/recommend/hint_class.h (the smallest of hints that are one configuration over tr).
 * The caller frees *out. */
hs_status_t rec_candidates_auto(const trace_t *tr, uint64_t **out, size_t *n_out);

/* A size in short form: "8K", "64K", "1M" when exact, else bytes ("1075B", "0B"). */
void rec_format_hint(uint64_t hint_bytes, char *buf, size_t len);
/* A hint as a user copies it into RDMA_LOW_LATENCY_HINT, the way every report prints it:
 * "4096 (4K)", "0" (no hint), "1075". */
void rec_label_hint(uint64_t hint_bytes, char *buf, size_t len);

/* Each path's load under hint_bytes (out[PRULES_LL], out[PRULES_BW]); HS_ERR_INVALID when
 * the profile's rules cannot be derived (logged). */
hs_status_t rec_path_load(const trace_t *tr, const profile_t *p, uint64_t hint_bytes,
                          rec_path_load_t out[2]);
/* When l is saturated, write "hint 8192 (8K): the LL path sustains X Gb/s for these
 * messages (bound by ...), this trace offers Y Gb/s on it ..." into buf and return 1;
 * else 0. */
int rec_path_load_warning(const rec_path_load_t *l, char *buf, size_t len);

/* The caveat every report made with p opens with, or NULL: a profile with no measurement
 * behind it (the built-in generic one, or one whose every parameter is a default) gives
 * figures that mean nothing for a real host. */
const char *rec_profile_caveat(const profile_t *p);

/* v for a text table column of width characters: 3 decimals, fewer when the number is
 * wider (4406702.0 in 9), an exponent when even none fits, so that no cell runs into the
 * next. Returns buf. */
const char *rec_fmt_cell(double v, int width, char *buf, size_t len);

/* Evaluate every candidate (in parallel) with eng, pick winner and runner-up, explain,
 * warn. The caller releases *out with rec_report_release. */
hs_status_t rec_run(const pred_engine_ops_t *eng, const trace_t *tr, const profile_t *p,
                    const rec_opts_t *o, rec_report_t *out);
void rec_report_release(rec_report_t *r);

/* The report as JSON: engine, profile, trace, objective, results, "recommended" (CLI.md),
 * warnings. The caller owns it. */
struct cJSON *rec_report_to_json(const rec_report_t *r, const pred_engine_ops_t *eng,
                                 const profile_t *p, const char *trace_path,
                                 const trace_t *tr);
/* Write report.json and report.md into dir (created), each atomically. */
hs_status_t rec_report_write(const rec_report_t *r, const pred_engine_ops_t *eng,
                             const profile_t *p, const char *trace_path, const trace_t *tr,
                             const char *dir);

#endif
