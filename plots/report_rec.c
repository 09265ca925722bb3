/* report_rec.c - plot_input_t from a rec_run result; see report_rec.h. */
#include "plots/report_rec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Candidates whose latency distribution the CDF and tail figures draw: the recommended,
 * the runner-up, no hint, then the next best on the objective (REP_CDF_MAX in all). */
#define REP_CDF_MAX 6

/* Whether a is better than b on the objective (throughput: higher). */
static int rep_better(const rec_report_t *r, size_t a, size_t b)
{
    double va = obj_value(r->objective, &r->results[a]);
    double vb = obj_value(r->objective, &r->results[b]);

    return obj_higher_better(r->objective) ? va > vb : va < vb;
}

/* Fill idx with the CDF candidates (distinct); returns how many. */
static size_t cdf_candidates(const rec_report_t *r, size_t idx[REP_CDF_MAX])
{
    size_t n = 0, first[3] = {r->winner, r->runner_up, r->baseline};

    for (int k = 0; k < 3; k++) {
        int dup = 0;
        for (size_t j = 0; j < n; j++)
            dup |= idx[j] == first[k];
        if (!dup)
            idx[n++] = first[k];
    }
    while (n < REP_CDF_MAX && n < r->n) { /* the best not yet taken, repeatedly */
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < r->n; i++) {
            int taken = 0;
            for (size_t j = 0; j < n; j++)
                taken |= idx[j] == i;
            if (!taken && (best == SIZE_MAX || rep_better(r, i, best)))
                best = i;
        }
        idx[n++] = best;
    }
    return n;
}

/* A shallow copy of r's results in which the CDF candidates carry lat_us (owned by kept[],
 * released by the caller). */
static hs_status_t with_latencies(const rec_report_t *r, const pred_ctx_t *c,
                                  pred_result_t *res, pred_result_t kept[REP_CDF_MAX])
{
    size_t idx[REP_CDF_MAX], n = cdf_candidates(r, idx);

    memcpy(res, r->results, r->n * sizeof(*res));
    for (size_t k = 0; k < n; k++) {
        hs_status_t st;

        if (res[idx[k]].lat_us)
            continue;
        st = pred_run(c, r->results[idx[k]].hint_bytes, 1, &kept[k]);
        if (st != HS_OK)
            return st;
        res[idx[k]].lat_us = kept[k].lat_us;
    }
    return HS_OK;
}

hs_status_t rep_write_recommend(const char *dir, const rec_report_t *r, const pred_ctx_t *c,
                                const char *trace_path)
{
    pred_result_t kept[REP_CDF_MAX];
    pred_result_t *res = malloc(r->n * sizeof(*res));
    plot_input_t in;
    hs_status_t st = HS_ERR_NOMEM;

    memset(kept, 0, sizeof(kept));
    if (!res)
        goto release_kept;
    st = with_latencies(r, c, res, kept);
    if (st != HS_OK)
        goto release_kept;
    in = (plot_input_t){.command = "recommend", .engine = c->eng->name, .profile = c->p,
                        .profile_hash = profile_hash(c->p), .trace = c->tr,
                        .trace_path = trace_path, .pred = res, .npred = r->n,
                        .rec_idx = (int)r->winner,
                        .runner_idx = r->runner_up != r->winner ? (int)r->runner_up : -1,
                        .objective = obj_name(r->objective), .why = r->why,
                        .policy = r->policy,
                        .warnings = r->warnings, .nwarnings = r->nwarnings,
                        .cost_engine = c->eng};
    st = rep_write_report(dir, &in);
release_kept:
    for (int k = 0; k < REP_CDF_MAX; k++)
        pred_result_release(&kept[k]);
    free(res);
    return st;
}
