/* sim.c - placeholder until the SimGrid engine lands: refuses with a clear status. */
#include "sim/sim.h"

static hs_status_t sim_replay(const trace_t *tr, const profile_t *p, const pred_opts_t *o,
                              uint64_t hint_bytes, pred_raw_t *raw)
{
    (void)tr; (void)p; (void)o; (void)hint_bytes; (void)raw;
    hs_log_error("the SimGrid engine is not built yet");
    return HS_ERR_UNSUPPORTED;
}

const pred_engine_ops_t sim_engine_ops = {"sim", sim_replay};
