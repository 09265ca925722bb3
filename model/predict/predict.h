/* predict.h - what a prediction engine computes for one (trace, profile, hint), and the
 * ops table through which the analytical model and the SimGrid simulator plug in.
 *
 * An engine only replays: it fills per-message latencies and a few counters (pred_raw_t).
 * pred_run() turns that into the figures of CLI.md (percentiles, throughput, size classes,
 * cold start apart) with one shared summariser, so both engines report the same way.
 */
#ifndef HS_PREDICT_H
#define HS_PREDICT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hs_field.h"
#include "common/hs_progress.h"
#include "common/hs_status.h"
#include "model/profile/profile.h"
#include "traces/trace.h"

typedef enum {
    PRED_OPEN = 0,   /* post at the trace's own post times (or later, if the queue is full) */
    PRED_CLOSED = 1, /* post when the previous message completed, plus the trace's think time */
} pred_mode_t;

typedef struct {
    pred_mode_t mode;
    int include_cold;     /* count cold-start messages in the figures (default 0: apart) */
    unsigned flows;       /* sim only: senders replaying the trace into one receiver (>= 1) */
    const char *platform; /* sim only: SimGrid platform XML, NULL = generated from profile */
    int every_chunk;      /* model only: replay every chunk of every segmented message
                           * through the general step, no steady-state skip, no memo (what
                           * the shortcuts are tested against) */
    int no_bound;         /* model only: no closed form for link-bound segmented messages
                           * (tests: the skip and the memo on their own) */
    unsigned model_off;   /* model only: MODEL_ACCEL_* bits (model.h) of the accelerators
                           * to leave off (tests: each against the chunk-by-chunk replay) */
    const char *trace_name; /* the trace's file, for messages (NULL: "the trace") */
    hs_progress_t *progress; /* sim only: a bar over the messages of each replay (all flows),
                              * updated while the simulator runs; the caller starts and
                              * finishes it (NULL: none) */
} pred_opts_t;

/* The largest message a replay takes (1 TiB; verbs devices cap a message at 2 GiB). */
#define PRED_MAX_MSG_BYTES ((uint64_t)1 << 40)
/* The longest open-loop trace a replay takes, first post to last (2^50 ns, 13 days): its
 * times are doubles of ns from the first post, which keep a quarter of a ns up to there and
 * round latencies away beyond (at 1.8e19 ns a 2.3 us p50 came out as 0.001 us). */
#define PRED_MAX_SPAN_NS ((uint64_t)1 << 50)

/* Summed cost terms over all messages, in us: what "why" compares. X(member, JSON key in
 * "costs_us"):
 *   queue_us     waiting for a send-queue slot (depth window)
 *   drain_us     path-switch drain, fixed cost and perturbation
 *   coalesce_us  completion reported late by moderation / selective signalling
 *   l1_us        extra post cost from the SQ footprint exceeding L1d
 *   base_us      everything else: post, doorbell, DMA, wire, serialisation, poll */
#define PRED_COSTS(X)                                                                       \
    X(queue_us, "queue") X(drain_us, "drain") X(coalesce_us, "coalesce") X(l1_us, "l1")       \
    X(base_us, "base")

typedef struct {
#define PRED_COST_MEMBER_(member, key) double member;
    PRED_COSTS(PRED_COST_MEMBER_)
#undef PRED_COST_MEMBER_
} pred_costs_t;

/* Raw output of one replay. lat_us and path are caller-allocated with tr->n entries. */
typedef struct {
    float *lat_us;          /* per message: completion seen by poster - trace post time */
    uint8_t *path;          /* per message: TRACE_F_PATH_LL or TRACE_F_PATH_BW */
    double t_first_post_us; /* first post of the replay */
    double t_last_done_us;  /* last completion of the replay */
    uint64_t switches;
    double drain_us_total;
    uint64_t sq_full_stalls; /* posts that waited for a free send-queue slot */
    pred_costs_t costs;
    uint64_t chunks_skipped; /* model: chunks of segmented messages not replayed one by one:
                              * those the steady-state skip or the closed form for link-bound
                              * messages jumped over (also in the replays
                              * the memo applied again) and those of a start on an idle path
                              * applied again (0 with pred_opts_t.every_chunk) */
    uint64_t memo_hits;      /* model: segmented messages replayed as an earlier one shifted
                              * (the memo; 0 with pred_opts_t.every_chunk) */
    uint64_t entry_hits;     /* model: segmented messages whose start on an idle path was an
                              * earlier one's shifted (0 with pred_opts_t.every_chunk) */
    uint64_t bound_hits;     /* model: segmented messages replayed in closed form, every
                              * chunk link-bound (0 with pred_opts_t.every_chunk) */
    uint64_t steady_hits;    /* model: of those, the ones that met the ring the previous
                              * one left on a saturated path, replayed by formulas */
    uint64_t lazy_hits;      /* model: of those, the ones whose ring the previous one left
                              * unwritten (its next reader wrote nothing of it first) */
    uint64_t serial_hits;    /* model: segmented messages on a path whose window holds one
                              * full batch, replayed in closed form (0 with every_chunk or
                              * no_bound) */
} pred_raw_t;

/* One power-of-two size class of a result ("by_size_class"): X(member, kind of hs_field.h),
 * the JSON key being the member's name. */
#define PRED_CLASS_FIELDS(X)                                                                \
    X(min_bytes, U64) X(max_bytes, U64) X(count, U64) X(p50_us, F64) X(p99_us, F64)

typedef struct {
    PRED_CLASS_FIELDS(HS_FIELD_MEMBER)
} pred_class_t;

/* raw's per-message arrays for n messages (at least one entry; large ones on huge pages:
 * hs_mem.h), its other fields zeroed; HS_ERR_NOMEM with nothing held. Release with
 * pred_raw_free. */
hs_status_t pred_raw_alloc(pred_raw_t *raw, size_t n);
/* Free raw's per-message arrays and clear the pointers. */
void pred_raw_free(pred_raw_t *raw);

/* The scalar figures of CLI.md for one hint, each defined here once: X(member, kind of
 * hs_field.h, text heading, text width, text form), the JSON key being the member's name.
 * They drive pred_result_t's members, pred_figures_to_json and the columns of the text
 * table of `hintsim model` and `sim` (cli_predict.c), in this order; a measured result
 * (validate) has them too. Text forms, each right-aligned in its width: num, a number with
 * as many of 3 decimals as fit (then an exponent: rec_fmt_cell); pct, a fraction as a
 * percentage with one decimal and '%'; count, an integer. */
#define PRED_FIGURES(X)                                                                     \
    X(p50_us, F64, "p50_us", 9, num) X(p90_us, F64, "p90_us", 9, num)                        \
    X(p99_us, F64, "p99_us", 9, num) X(p999_us, F64, "p999_us", 9, num)                      \
    X(max_us, F64, "max_us", 10, num) X(mean_us, F64, "mean_us", 9, num)                     \
    X(throughput_gbps, F64, "Gb/s", 8, num) X(ll_fraction, F64, "LL", 6, pct)                \
    X(switches, U64, "switches", 8, count) X(drain_us_total, F64, "drain_us", 10, num)       \
    X(sq_full_stalls, U64, "stalls", 8, count)

/* The cold-start messages' figures, reported apart ("cold"): X(member, kind, JSON key). */
#define PRED_COLD_FIGURES(X)                                                                \
    X(cold_count, U64, "count") X(cold_p50_us, F64, "p50_us") X(cold_p99_us, F64, "p99_us")   \
    X(cold_max_us, F64, "max_us")

/* The figures of CLI.md for one hint. */
typedef struct {
    uint64_t hint_bytes;
    uint64_t count; /* messages the figures cover (cold start excluded unless asked) */
#define PRED_FIGURE_MEMBER_(member, kind, head, width, form) HS_FIELD_MEMBER(member, kind)
    PRED_FIGURES(PRED_FIGURE_MEMBER_)
#undef PRED_FIGURE_MEMBER_
    pred_costs_t costs;
    pred_class_t *classes; /* owned; power-of-two size classes present in the trace */
    size_t nclasses;
#define PRED_COLD_MEMBER_(member, kind, key) HS_FIELD_MEMBER(member, kind)
    PRED_COLD_FIGURES(PRED_COLD_MEMBER_)
#undef PRED_COLD_MEMBER_
    float *lat_us; /* owned, per message (tr->n), only when pred_run was asked to keep it */
} pred_result_t;

struct pred_ctx; /* pred_ctx_t, below */

/* What an engine's figures are. */
typedef enum {
    PRED_MODELLED = 0,  /* computed by the analytical model (the default of an ops table) */
    PRED_SIMULATED = 1, /* computed by a discrete-event simulation */
} pred_engine_kind_t;

/* An engine, and what it is: callers ask the table, never the engine's name. Members after
 * replay may be left out (zero: modelled, one flow only, no detail). */
typedef struct pred_engine_ops {
    const char *name; /* "model" or "sim" */
    /* Replay tr under p with hint (0 = no hint); fill raw (arrays preallocated). */
    hs_status_t (*replay)(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                          uint64_t hint_bytes, pred_raw_t *raw);
    pred_engine_kind_t kind;
    /* nflows senders replaying c->tr into one receiver (c->o->flows is ignored): each
     * flow's figures into flows[0..nflows-1] and all flows' messages together into *agg,
     * every one to be released by the caller on HS_OK (nothing held on failure). NULL: the
     * engine replays one flow only. */
    hs_status_t (*run_flows)(const struct pred_ctx *c, uint64_t hint_bytes, unsigned nflows,
                             pred_result_t *flows, pred_result_t *agg);
    /* What an output must name besides the engine's name (the simulator's network model
     * and factors); static string. NULL: nothing. */
    const char *(*detail)(void);
} pred_engine_ops_t;

/* "modelled" or "simulated": what eng's figures are, as outputs say it. */
const char *pred_engine_figures(const pred_engine_ops_t *eng);
/* eng->detail(), or NULL when the engine has none. */
const char *pred_engine_detail(const pred_engine_ops_t *eng);

/* What a run replays, with which engine and under which options: what stays the same from
 * one hint to the next. Every member is borrowed. */
typedef struct pred_ctx {
    const pred_engine_ops_t *eng;
    const trace_t *tr;
    const profile_t *p;
    const pred_opts_t *o;
} pred_ctx_t;

/* Run c->eng over c->tr for one hint and summarise into *out (caller releases with
 * pred_result_release). keep_lat keeps the per-message latencies in out->lat_us. */
hs_status_t pred_run(const pred_ctx_t *c, uint64_t hint_bytes, int keep_lat,
                     pred_result_t *out);
/* pred_run into the caller's per-message arrays buf->lat_us and buf->path (c->tr->n entries
 * each, reused across calls: recommend's workers); buf's other fields are ignored. */
hs_status_t pred_run_into(const pred_ctx_t *c, uint64_t hint_bytes, const pred_raw_t *buf,
                          pred_result_t *out);
/* What a replay needs of a trace, checked in one pass before any hint is replayed: sizes of
 * at most PRED_MAX_MSG_BYTES and at most 2^32 - 1 WRs of p's segment size on either path;
 * in open loop, records in post order (trace_sort_posts) over at most PRED_MAX_SPAN_NS;
 * in closed loop (o->mode), every record's completion but the last's (each next post
 * follows it) and think times (trace_think_ns) adding up to at most PRED_MAX_SPAN_NS. HS_ERR_INVALID naming
 * the trace (o->trace_name) and the first record that fails, logged; else HS_OK. */
hs_status_t pred_check_trace(const trace_t *tr, const profile_t *p, const pred_opts_t *o);
/* Whether every record of tr is flagged cold-start: then, cold-start messages being
 * reported apart by default, no message would be left in the figures, so pred_summarize
 * counts them in as include_cold does (callers say so). Stops at the first steady one. */
int pred_all_cold(const trace_t *tr);
/* Whether message r, of latency lat_us, counts in pred_summarize's figures: measured (not
 * NAN), and not cold-start unless include_cold (pred_opts_t.include_cold, or the whole trace
 * is cold: pred_all_cold). */
static inline int pred_in_figures(const trace_rec_t *r, float lat_us, int include_cold)
{
    return !isnan(lat_us) && (!(r->flags & TRACE_F_COLD) || include_cold);
}
/* The threads pred_run_hints is given: asked, or one per online CPU when asked is 0. */
unsigned pred_threads(unsigned asked);
/* pred_run for each of n hints into results[i] (filled or zeroed; the caller releases all
 * n), on up to nthreads threads (capped at n and 64; 0 = 1), each replaying into
 * per-message arrays of its own; bar (NULL: none) counts finished hints. Returns the first
 * failing hint's status, in hint order, else HS_OK. */
hs_status_t pred_run_hints(const pred_ctx_t *c, const uint64_t *hints, size_t n,
                           unsigned nthreads, pred_result_t *results, hs_progress_t *bar);
/* Jitter (MODEL.md section 8): a message's latency beyond its modelled figure, as the
 * profile's jitter.* quantiles say. pred_jitter_at: the first set's at quantile u in
 * [0, 1]: 0 up to the median, then linear through (0.9, p90), (0.99, p99), (0.999, p999),
 * and p999 above (each point at least the one before); pred_jitter_long_at: the
 * jitter.long_* set's. pred_jitter_weight: the long set's weight for a message of latency
 * lat_us, 0 at jitter.cycle_us and below, 1 at jitter.long_cycle_us and above (0 without a
 * long set). pred_jitter_cycle_us: message i of c's trace, its cycle: lat_us plus the time
 * before its post that a stall of stall_us reaches across (in closed loop the profile's
 * jitter.think_reach share of its think time, at most the stall; the whole stall in open
 * loop). pred_jitter_for: the jitter at u of a message of that
 * latency and cycle (the rule itself: pred_jitter_rule.h, shared with the CUDA engine):
 * each set's stall share (the top PRED_JITTER_STALL_SHARE of the first,
 * that times its cycle ratio of the long one) scaled by the cycle over the set's own, the
 * body below it keeping its shape; the two interpolated by the weight; at u = 1, the
 * stall's size. pred_jitter_apply adds to each
 * message i of raw the jitter at u_i, a uniform draw from i alone (hs_splitmix64), so every
 * engine and every run gives message i the same; nothing when the profile has none.
 * pred_run and pred_run_into apply it to predictions; measured latencies (validate) never
 * get it. */
double pred_jitter_at(const profile_t *p, double u);
double pred_jitter_long_at(const profile_t *p, double u);
double pred_jitter_weight(const profile_t *p, float lat_us);
int pred_has_jitter(const profile_t *p);
double pred_jitter_cycle_us(const pred_ctx_t *c, size_t i, float lat_us, double stall_us);
double pred_jitter_for(const profile_t *p, double u, float lat_us, double cycle_us);
void pred_jitter_apply(const pred_ctx_t *c, const pred_raw_t *raw);

/* The summariser on its own (used by pred_run, and by validate on measured latencies). */
hs_status_t pred_summarize(const trace_t *tr, const pred_opts_t *o, const pred_raw_t *raw,
                           uint64_t hint_bytes, pred_result_t *out);
void pred_result_release(pred_result_t *r);

/* One result as the JSON object of CLI.md ("hint", "p50_us", ..., "by_size_class") plus
 * "count", "costs_us" and "cold". The caller owns it (cJSON_Delete); NULL if out of memory. */
struct cJSON *pred_result_to_json(const pred_result_t *r);
/* c as parent's "costs_us": {"queue": .., ...} (PRED_COSTS' keys, us). */
void pred_costs_to_json(struct cJSON *parent, const pred_costs_t *c);
/* parent's "costs_us" back into *c: an object with every PRED_COSTS key a finite number,
 * else HS_ERR_INVALID (nothing logged). */
hs_status_t pred_costs_from_json(const struct cJSON *parent, pred_costs_t *c);
/* Add r's PRED_FIGURES to o, in table order (what a measured result has too). */
void pred_figures_to_json(struct cJSON *o, const pred_result_t *r);
/* Provenance objects of the JSON outputs (caller owns; NULL if out of memory): the
 * profile as {"name", "origin", "hash"} (profile_hash, 16 hex digits) and the trace as
 * {"path", "records", "producer", "workload", "hint_bytes"}. */
struct cJSON *pred_profile_json(const profile_t *p);
struct cJSON *pred_trace_json(const char *path, const trace_t *tr);
/* Parse "open" / "closed". Does not log. */
hs_status_t pred_mode_parse(const char *text, pred_mode_t *out);

#endif
