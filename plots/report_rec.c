/* report_rec.c - plot_input_t from a rec_run result; see report_rec.h. */
#include "plots/report_rec.h"

#include <stdlib.h>
#include <string.h>

/* A shallow copy of r's results in which the three CDF candidates carry lat_us (owned by
 * kept[], released by the caller). */
static hs_status_t with_latencies(const rec_report_t *r, const pred_engine_ops_t *eng,
                                  const pred_opts_t *po, const profile_t *p, const trace_t *tr,
                                  pred_result_t *res, pred_result_t kept[3])
{
    const size_t idx[3] = {r->winner, r->runner_up, r->baseline};
    hs_status_t st = HS_OK;

    memcpy(res, r->results, r->n * sizeof(*res));
    for (int k = 0; k < 3 && st == HS_OK; k++) {
        if (res[idx[k]].lat_us)
            continue;
        st = pred_run(eng, tr, p, po, r->results[idx[k]].hint_bytes, 1, &kept[k]);
        if (st == HS_OK)
            res[idx[k]].lat_us = kept[k].lat_us;
    }
    return st;
}

hs_status_t rep_write_recommend(const char *dir, const rec_report_t *r,
                                const pred_engine_ops_t *eng, const pred_opts_t *po,
                                const profile_t *p, const char *trace_path, const trace_t *tr)
{
    pred_result_t kept[3];
    pred_result_t *res = malloc(r->n * sizeof(*res));
    plot_input_t in;
    hs_status_t st = res ? HS_OK : HS_ERR_NOMEM;

    memset(kept, 0, sizeof(kept));
    if (st == HS_OK)
        st = with_latencies(r, eng, po, p, tr, res, kept);
    if (st == HS_OK) {
        in = (plot_input_t){.command = "recommend", .engine = eng->name, .profile = p,
                            .profile_hash = profile_hash(p), .trace = tr,
                            .trace_path = trace_path, .pred = res, .npred = r->n,
                            .rec_idx = (int)r->winner,
                            .runner_idx = r->runner_up != r->winner ? (int)r->runner_up : -1,
                            .objective = rec_objective_name(r->objective), .why = r->why,
                            .warnings = r->warnings, .nwarnings = r->nwarnings,
                            .cost_engine = eng};
        st = rep_write_report(dir, &in);
    }
    for (int k = 0; k < 3; k++)
        pred_result_release(&kept[k]);
    free(res);
    return st;
}
