/* cmd_sim.c - `hintsim sim`: the predict command with the SimGrid engine (sim/), and the
 * several-flows run behind --flows N (per-flow figures and their aggregate). */
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "sim/sim.h"

static void raws_free(pred_raw_t *raws, unsigned nflows)
{
    for (unsigned f = 0; raws && f < nflows; f++)
        pred_raw_free(&raws[f]);
    free(raws);
}

static hs_status_t raws_alloc(size_t n, unsigned nflows, pred_raw_t **out)
{
    pred_raw_t *raws = calloc(nflows, sizeof(*raws));

    if (!raws)
        return HS_ERR_NOMEM;
    for (unsigned f = 0; f < nflows; f++) {
        if (pred_raw_alloc(&raws[f], n) != HS_OK) {
            raws_free(raws, nflows);
            return HS_ERR_NOMEM;
        }
    }
    *out = raws;
    return HS_OK;
}

hs_status_t cli_sim_flows(const trace_t *tr, const profile_t *p, const pred_opts_t *po,
                          uint64_t hint, unsigned nflows, pred_result_t *flows,
                          pred_result_t *agg)
{
    pred_raw_t *raws = NULL, mraw = {0};
    trace_t *mtr = NULL;
    unsigned done = 0;
    hs_status_t st = raws_alloc(tr->n, nflows, &raws);

    if (st == HS_OK)
        st = sim_replay_flows(tr, p, po, hint, nflows, raws);
    for (; st == HS_OK && done < nflows; done++)
        st = pred_summarize(tr, po, &raws[done], hint, &flows[done]);
    if (st == HS_OK)
        st = sim_flows_merge(tr, nflows, raws, &mtr, &mraw);
    if (st == HS_OK)
        st = pred_summarize(mtr, po, &mraw, hint, agg);
    if (st != HS_OK)
        for (unsigned f = 0; f < done; f++)
            pred_result_release(&flows[f]);
    pred_raw_free(&mraw);
    trace_free(mtr);
    raws_free(raws, nflows);
    return st;
}

const char *cli_engine_detail(const pred_engine_ops_t *eng)
{
    return eng == &sim_engine_ops ? sim_model_desc() : NULL;
}

int cmd_sim(int argc, char **argv)
{
    return cli_predict_main(&sim_engine_ops, 1, argc, argv);
}
