/* sim_flows.c - several flows into one receiver, summarised per flow and all together: the
 * engine's run_flows (sim_engine_ops, model/predict/predict.h). */
#include <stdlib.h>

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

/* Each flow's figures into flows[]; *done counts those to release. */
static hs_status_t summarize_flows(const pred_ctx_t *c, uint64_t hint, unsigned nflows,
                                   const pred_raw_t *raws, pred_result_t *flows,
                                   unsigned *done)
{
    hs_status_t st = HS_OK;

    for (*done = 0; *done < nflows; (*done)++)
        if ((st = pred_summarize(c->tr, c->o, &raws[*done], hint, &flows[*done])) != HS_OK)
            break;
    return st;
}

hs_status_t sim_run_flows(const pred_ctx_t *c, uint64_t hint, unsigned nflows,
                          pred_result_t *flows, pred_result_t *agg)
{
    pred_raw_t *raws = NULL, mraw = {0};
    trace_t *mtr = NULL;
    unsigned done = 0;
    hs_status_t st = raws_alloc(c->tr->n, nflows, &raws);

    if (st != HS_OK)
        return st;
    if ((st = sim_replay_flows(c->tr, c->p, c->o, hint, nflows, raws)) != HS_OK)
        goto free_raws;
    if ((st = summarize_flows(c, hint, nflows, raws, flows, &done)) != HS_OK)
        goto release_flows;
    if ((st = sim_flows_merge(c->tr, nflows, raws, &mtr, &mraw)) != HS_OK)
        goto release_flows;
    st = pred_summarize(mtr, c->o, &mraw, hint, agg);
    pred_raw_free(&mraw);
    trace_free(mtr);
    if (st != HS_OK)
        goto release_flows;
    raws_free(raws, nflows);
    return HS_OK;
release_flows:
    for (unsigned f = 0; f < done; f++)
        pred_result_release(&flows[f]);
free_raws:
    raws_free(raws, nflows);
    return st;
}
