/* cli_predict.h - what `model`, `sim` and `recommend` share on the command line: opening a
 * profile with --set overrides, and the predict command with the engine as a parameter. */
#ifndef HS_CLI_PREDICT_H
#define HS_CLI_PREDICT_H

#include "common/hs_opt.h"
#include "model/predict.h"

/* Load profile name (built-in or file), apply each "KEY=VALUE" of set, validate.
 * Returns 0 with *out (caller frees with profile_free) or the exit code after logging. */
int cli_profile_open(const char *name, const hs_strlist_t *set, profile_t **out);

/* Load a trace and check it is usable for a replay (non-empty). Returns 0 or an exit code. */
int cli_trace_open(const char *path, trace_t **out);

/* `hintsim model|sim TRACE ...`: is_sim adds --flows and --platform. */
int cli_predict_main(const pred_engine_ops_t *eng, int is_sim, int argc, char **argv);


/* --flows N: replay nflows senders with the simulator; fill flows[0..nflows-1] (per
 * flow) and *agg (all flows' messages together). Caller releases each result. */
hs_status_t cli_sim_flows(const trace_t *tr, const profile_t *p, const pred_opts_t *po,
                          uint64_t hint, unsigned nflows, pred_result_t *flows,
                          pred_result_t *agg);
/* What an engine's output must name besides its name (the simulator's network model and
 * factors, sim_model_desc()); NULL when nothing. Static string. */
const char *cli_engine_detail(const pred_engine_ops_t *eng);

#endif
