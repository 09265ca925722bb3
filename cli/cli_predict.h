/* cli_predict.h - what `model`, `sim`, `recommend` and `profile show` share on the command
 * line (cli_predict.c): opening a profile with --set overrides and a trace, and the predict
 * command with the engine as a parameter. No cmd_*.c file calls another's functions. */
#ifndef HS_CLI_PREDICT_H
#define HS_CLI_PREDICT_H

#include "common/hs_opt.h"
#include "model/predict/predict.h"

/* Load profile name (built-in or file), apply each "KEY=VALUE" of set, validate.
 * Returns 0 with *out (caller frees with profile_free) or the exit code after logging. */
int cli_profile_open(const char *name, const hs_strlist_t *set, profile_t **out);

/* Load a trace and check it is usable for a replay (non-empty). Returns 0 or an exit code. */
int cli_trace_open(const char *path, trace_t **out);

/* `hintsim model|sim TRACE ...` with engine eng: parse, one pred_job_run, print. An engine
 * with run_flows takes --flows and --platform; --curves is the other engines'. */
int cli_predict_main(const pred_engine_ops_t *eng, int argc, char **argv);

#endif
