/* sim.h - the SimGrid discrete-event simulator of the two paths, as a prediction engine.
 * Plug it into pred_run() / recommend through sim_engine_ops (see model/predict/predict.h).
 *
 * Each replay runs in a child process (SimGrid allows one engine per process and reports
 * fatal platform errors by aborting): results come back through shared memory, SimGrid's
 * own error message is relayed naming the platform file, never a backtrace. From a parent
 * with threads the child is this program executed afresh: every program that links this
 * engine starts through its constructor, which returns at once unless HINTSIM_SIM_CHILD is
 * set (sim/README.md).
 * What is modelled, and every known difference from the analytical model: sim/README.md.
 */
#ifndef HS_SIM_H
#define HS_SIM_H

#include "common/hs_probe.h"
#include "model/predict/predict.h"

/* replay: one flow's figures. With o->flows = N > 1 it replays N senders sharing the
 * receiver's switch port and returns flow 0 (use sim_replay_flows for all of them). */
extern const pred_engine_ops_t sim_engine_ops;

/* Replay tr from nflows senders at once into one receiver (o->flows is ignored).
 * raws[0..nflows-1] are caller-owned, each with lat_us and path arrays of tr->n entries.
 * Errors (empty trace, bad platform, missing host) are logged naming the file. */
hs_status_t sim_replay_flows(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                             uint64_t hint_bytes, unsigned nflows, pred_raw_t *raws);

/* The aggregate of several flows as one trace + raw (N copies of tr, all latencies), so
 * pred_summarize gives aggregate percentiles and throughput. *mtr is owned by the caller
 * (trace_free), mraw->lat_us and mraw->path are malloc'ed (caller frees). */
hs_status_t sim_flows_merge(const trace_t *tr, unsigned nflows, const pred_raw_t *raws,
                            trace_t **mtr, pred_raw_t *mraw);

/* sim_engine_ops.run_flows: nflows senders into one receiver, each flow's figures into
 * flows[] and all flows' messages together into *agg (caller releases every one on HS_OK;
 * nothing held on failure). */
hs_status_t sim_run_flows(const pred_ctx_t *c, uint64_t hint_bytes, unsigned nflows,
                          pred_result_t *flows, pred_result_t *agg);

/* The SimGrid library (version, headers) for `hintsim doctor`. */
void sim_probe_simgrid(hs_probe_t *c);

/* One line naming the SimGrid version, network model and factors every replay uses. */
const char *sim_model_desc(void);

#endif
