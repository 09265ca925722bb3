/* sweep_eval_none.c - sweep_eval_model_create for a build whose model library is not there
 * yet (model/ is an interface placeholder): says so, exits 3. sweep/CMakeLists.txt picks
 * this file or sweep_eval_model.c. */
#include "sweep/sweep_eval_model.h"

hs_status_t sweep_eval_model_create(const sweep_grid_t *g, sweep_eval_t *out)
{
    (void)g;
    (void)out;
    hs_log_error("sweep: this build has no prediction model yet (model/ is a placeholder); "
                 "rebuild once the model library is in the tree");
    return HS_ERR_UNSUPPORTED;
}

void sweep_eval_model_destroy(sweep_eval_t *ev)
{
    (void)ev;
}
