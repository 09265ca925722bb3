/* profile.h - every number of the model, with its unit and where it came from.
 *
 * A profile is a flat set of named parameters ("ll.depth", "host.l1d_bytes", ...) plus
 * an optional piecewise table of size-dependent bandwidth/latency factors (as SimGrid's
 * bw-factor / lat-factor). Built-in profiles come from the seeds' test beds; user
 * profiles are JSON files (see profile_load); `--set KEY=VALUE` overrides one value.
 * The parameter list below is the contract shared by model, sim, capture and calibrate:
 * add parameters freely, never change a key's meaning or unit.
 */
#ifndef HS_PROFILE_H
#define HS_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"

typedef enum {
    PROF_INT,    /* a whole number >= 0 (depths, counts, bytes) */
    PROF_REAL,   /* a finite number >= 0 */
} prof_kind_t;

/* X(field, key, kind, unit, default, doc) — defaults are a generic RoCE host. */
#define PROFILE_PARAMS(X)                                                                    \
    X(host_l1d_bytes, "host.l1d_bytes", PROF_INT, "B", 32768, "L1 data cache size")           \
    X(host_l1_hit_ns, "host.l1_hit_ns", PROF_REAL, "ns", 1, "cost of one SQ cache-line access that hits L1") \
    X(host_l1_miss_ns, "host.l1_miss_ns", PROF_REAL, "ns", 12, "cost of one SQ cache-line access that misses L1") \
    X(host_post_ns, "host.post_ns", PROF_REAL, "ns", 150, "CPU cost of building and posting one WR") \
    X(host_doorbell_ns, "host.doorbell_ns", PROF_REAL, "ns", 100, "doorbell (MMIO) cost per post") \
    X(host_poll_ns, "host.poll_ns", PROF_REAL, "ns", 50, "CPU cost of polling one completion") \
    X(host_interrupt_ns, "host.interrupt_ns", PROF_REAL, "ns", 1500, "cost of one completion event (interrupt/wakeup) when not polled busily") \
    X(host_wqe_bb_bytes, "host.wqe_bb_bytes", PROF_INT, "B", 64, "WQE basic block size")     \
    X(host_l1_sq_share, "host.l1_sq_share", PROF_REAL, "frac", 0.5, "share of L1d the send queues can keep before they miss (the rest is the application's working set)") \
    X(host_sq_lines_per_post, "host.sq_lines_per_post", PROF_REAL, "lines", 4, "SQ cache lines touched per WR post (0 turns the L1 term off)") \
    X(link_gbps, "link.gbps", PROF_REAL, "Gb/s", 100, "link bandwidth (10^9 bit/s)")         \
    X(link_mtu_bytes, "link.mtu_bytes", PROF_INT, "B", 4096, "path MTU")                    \
    X(link_base_lat_ns, "link.base_lat_ns", PROF_REAL, "ns", 1000, "one-way wire + NIC latency for a minimal packet") \
    X(link_dma_ns, "link.dma_ns", PROF_REAL, "ns", 300, "payload DMA read (PCIe round trip) per non-inline message") \
    X(link_pkt_ns, "link.pkt_ns", PROF_REAL, "ns", 20, "per-packet (per MTU) processing overhead") \
    X(link_wr_ns, "link.wr_ns", PROF_REAL, "ns", 0, "the device's occupancy of the link per WR (its message rate)") \
    X(conn_qps, "conn.qps", PROF_INT, "QPs", 1, "live QPs per path (send-queue footprint is summed over them)") \
    X(ll_depth, "ll.depth", PROF_INT, "WRs", 32, "LL path send-queue depth (max_send_wr)")   \
    X(ll_inline_bytes, "ll.inline_bytes", PROF_INT, "B", 220, "LL path inline limit (max_inline_data)") \
    X(ll_signal_every, "ll.signal_every", PROF_INT, "WRs", 1, "LL path: one signalled WR every k") \
    X(ll_coal_count, "ll.coal_count", PROF_INT, "CQEs", 1, "LL path CQ moderation count (1 = off)") \
    X(ll_coal_period_us, "ll.coal_period_us", PROF_REAL, "us", 0, "LL path CQ moderation period (0 = off)") \
    X(ll_seg_bytes, "ll.seg_bytes", PROF_INT, "B", 0, "LL path segment size (0 = one WR per message)") \
    X(ll_fixed_ns, "ll.fixed_ns", PROF_REAL, "ns", 0, "LL path fixed per-message overhead")  \
    X(ll_split_ns, "ll.split_ns", PROF_REAL, "ns", 0, "LL path: added to the completion of a message split into several WRs (multi-segment setup)") \
    X(ll_irq, "ll.irq", PROF_INT, "0/1", 0, "LL path completion events: 1 = interrupt (host.interrupt_ns), 0 = busy poll (host.poll_ns)") \
    X(bw_depth, "bw.depth", PROF_INT, "WRs", 128, "BW path send-queue depth when no hint is set") \
    X(bw_depth_hinted, "bw.depth_hinted", PROF_INT, "WRs", 128, "BW path depth while a hint is set (hinting provisions for latency, seed 000)") \
    X(bw_inline_bytes, "bw.inline_bytes", PROF_INT, "B", 0, "BW path inline limit")          \
    X(bw_signal_every, "bw.signal_every", PROF_INT, "WRs", 16, "BW path: one signalled WR every k") \
    X(bw_coal_count, "bw.coal_count", PROF_INT, "CQEs", 16, "BW path CQ moderation count")   \
    X(bw_coal_period_us, "bw.coal_period_us", PROF_REAL, "us", 8, "BW path CQ moderation period") \
    X(bw_seg_bytes, "bw.seg_bytes", PROF_INT, "B", 65536, "BW path segment size (0 = no split)") \
    X(bw_fixed_ns, "bw.fixed_ns", PROF_REAL, "ns", 0, "BW path fixed per-message overhead (generic multi-segment setup)") \
    X(bw_split_ns, "bw.split_ns", PROF_REAL, "ns", 0, "BW path: added to the completion of a message split into several WRs (multi-segment setup)") \
    X(bw_irq, "bw.irq", PROF_INT, "0/1", 0, "BW path completion events: 1 = interrupt (host.interrupt_ns), 0 = busy poll (host.poll_ns)") \
    X(switch_drain_fixed_us, "switch.drain_fixed_us", PROF_REAL, "us", 5, "fixed reconfiguration cost of a path switch") \
    X(switch_perturb_window_us, "switch.perturb_window_us", PROF_REAL, "us", 0, "window after a switch in which latency is inflated") \
    X(switch_perturb_factor, "switch.perturb_factor", PROF_REAL, "x", 1, "latency factor inside the perturbation window") \
    X(switch_hysteresis, "switch.hysteresis", PROF_INT, "msgs", 1, "switch only after k consecutive messages of the other class") \
    X(jitter_p90_us, "jitter.p90_us", PROF_REAL, "us", 0, "a message's latency beyond its modelled figure at the 90th percentile (the host's and device's tail; MODEL.md section 8)") \
    X(jitter_p99_us, "jitter.p99_us", PROF_REAL, "us", 0, "the same at the 99th percentile") \
    X(jitter_p999_us, "jitter.p999_us", PROF_REAL, "us", 0, "the same at the 99.9th percentile; also the size of the stall behind the tail") \
    X(jitter_cycle_us, "jitter.cycle_us", PROF_REAL, "us", 0, "the message cycle the jitter.* quantiles were measured at: a message's share of the tail scales by its own cycle over this one (MODEL.md section 8); 0 = the same share for every message") \
    X(jitter_long_p90_us, "jitter.long_p90_us", PROF_REAL, "us", 0, "jitter.p90_us measured again with longer messages (jitter.long_cycle_us); a message's jitter is interpolated between the two sets by its latency") \
    X(jitter_long_p99_us, "jitter.long_p99_us", PROF_REAL, "us", 0, "the same at the 99th percentile") \
    X(jitter_long_p999_us, "jitter.long_p999_us", PROF_REAL, "us", 0, "the same at the 99.9th percentile") \
    X(jitter_long_cycle_us, "jitter.long_cycle_us", PROF_REAL, "us", 0, "the cycle the jitter.long_* quantiles were measured at; at most jitter.cycle_us = no second set") \
    X(jitter_think_reach, "jitter.think_reach", PROF_REAL, "frac", 1, "closed loop: the share of a message's think time (at most the stall) that counts in its cycle: how far back before its post a stall still delays it (MODEL.md section 8); 1 = all of it")

typedef enum {
#define X(field, key, kind, unit, def, doc) PROF_P_##field,
    PROFILE_PARAMS(X)
#undef X
    PROF_NPARAMS
} prof_param_id_t;

/* One segment of the piecewise size factors: for sizes <= max_bytes (the first match),
 * effective bandwidth = link.gbps * bw_factor, latency = base * lat_factor. */
typedef struct {
    uint64_t max_bytes;
    double bw_factor;
    double lat_factor;
} prof_factor_t;

#define PROF_MAX_FACTORS 16

typedef struct {
    char name[64];        /* built-in name or file base name */
    char origin[256];     /* "builtin:NAME" or the file path */
    char *notes;          /* owned; where the documents disagree, what could not be fit */
#define X(field, key, kind, unit, def, doc) double field;
    PROFILE_PARAMS(X)
#undef X
    prof_factor_t factors[PROF_MAX_FACTORS];
    size_t nfactors;
    char *src[PROF_NPARAMS]; /* owned; source string per parameter (NULL = default) */
} profile_t;

/* Static description of one parameter. */
typedef struct {
    const char *key;
    prof_kind_t kind;
    const char *unit;
    double def;
    const char *doc;
    size_t offset; /* offsetof(profile_t, field) */
} prof_param_info_t;

/* The parameter table (PROF_NPARAMS entries). */
const prof_param_info_t *profile_params(void);
/* Find a parameter by key; NULL if unknown. */
const prof_param_info_t *profile_param_find(const char *key);
/* Value of a parameter by id. */
double profile_get(const profile_t *p, prof_param_id_t id);

/* Names of the built-in profiles, NULL-terminated; and a one-line source for each. */
const char *const *profile_builtin_names(void);
const char *profile_builtin_summary(const char *name);

/* Load a built-in by name, or a JSON file by path. Errors are logged naming the file and
 * key. The caller owns *out (profile_free). */
hs_status_t profile_load(const char *name_or_path, profile_t **out);
/* Apply one "KEY=VALUE" override; unknown keys and bad values are logged and rejected. */
hs_status_t profile_set(profile_t *p, const char *assignment);
/* Check every value against its kind and the model's constraints (depth >= 1, ...). */
hs_status_t profile_validate(const profile_t *p);
/* Stable hash of every value (not of names or notes): identifies "the same numbers". */
uint64_t profile_hash(const profile_t *p);
/* Deep copy. */
hs_status_t profile_clone(const profile_t *p, profile_t **out);
void profile_free(profile_t *p);

/* Set one parameter by key to value, with a source string (copied; NULL keeps the old one).
 * Checks the value like profile_validate does for that key; logs and rejects otherwise. */
hs_status_t profile_set_value(profile_t *p, const char *key, double value, const char *source);
/* Source string of a parameter ("default ..." when none was given); never NULL. */
const char *profile_source(const profile_t *p, prof_param_id_t id);
/* The profile as the JSON of model/MODEL.md (name, notes, params with value/unit/source,
 * factors). The caller owns the result (cJSON_Delete); NULL on allocation failure. */
struct cJSON *profile_to_json(const profile_t *p);
/* Add p's identity to the JSON object o: "name", "origin" and "hash" (profile_hash, 16 hex
 * digits): what profile_to_json starts with and what an output names as its provenance. */
void profile_ident_json(struct cJSON *o, const profile_t *p);
/* Parse the JSON of profile_to_json (text read from path, which errors name) and validate
 * it; the caller owns *out (profile_free). */
hs_status_t profile_json_parse(const char *path, const char *text, profile_t **out);
/* Write profile_to_json to path atomically. Logs on error. */
hs_status_t profile_save(const profile_t *p, const char *path);
/* Effective bandwidth factor and latency factor for a message of size bytes. */
double profile_bw_factor(const profile_t *p, uint64_t size_bytes);
double profile_lat_factor(const profile_t *p, uint64_t size_bytes);

#endif
