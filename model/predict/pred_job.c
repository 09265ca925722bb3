/* pred_job.c - one prediction job (see pred_job.h), and what an engine's ops table says. */
#include "model/predict/pred_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_progress.h"
#include "common/hs_util.h"

const char *pred_engine_figures(const pred_engine_ops_t *eng)
{
    return eng->kind == PRED_SIMULATED ? "simulated" : "modelled";
}

const char *pred_engine_detail(const pred_engine_ops_t *eng)
{
    return eng->detail ? eng->detail() : NULL;
}

static unsigned job_flows(const pred_job_t *j)
{
    return j->po.flows > 1 ? j->po.flows : 1;
}

static void hint_out_release(pred_hint_out_t *h, unsigned nflows)
{
    if (!h->flows) {
        pred_result_release(&h->res);
        return;
    }
    for (unsigned f = 0; f < nflows; f++)
        pred_result_release(&h->flows[f]);
    free(h->flows);
    pred_result_release(&h->agg);
}

void pred_job_out_release(pred_job_out_t *out)
{
    for (size_t i = 0; out->hints && i < out->nhints; i++)
        hint_out_release(&out->hints[i], out->nflows);
    free(out->hints);
    out->hints = NULL;
    out->nhints = 0;
}

/* One hint of several flows. */
static hs_status_t run_flows(const pred_job_t *j, uint64_t hint, pred_hint_out_t *h)
{
    pred_ctx_t c = {.eng = j->eng, .tr = j->tr, .p = j->p, .o = &j->po};
    hs_status_t st;

    h->flows = calloc(j->po.flows, sizeof(*h->flows));
    if (!h->flows)
        return HS_ERR_NOMEM;
    st = j->eng->run_flows(&c, hint, j->po.flows, h->flows, &h->agg);
    if (st != HS_OK)
        goto free_flows;
    h->res = h->flows[0]; /* borrowed: released through flows */
    return HS_OK;
free_flows:
    free(h->flows);
    h->flows = NULL;
    return st;
}

/* One flow: the hints at once (pred_run_hints: on j->threads threads, each replaying into
 * arrays of its own). */
static hs_status_t run_one_flow(const pred_job_t *j, pred_job_out_t *out, hs_progress_t *bar)
{
    pred_ctx_t c = {j->eng, j->tr, j->p, &j->po};
    pred_result_t *res = calloc(j->nhints, sizeof(*res));
    hs_status_t st;

    if (!res)
        return HS_ERR_NOMEM;
    st = pred_run_hints(&c, j->hints, j->nhints, j->threads, res, bar);
    for (size_t i = 0; i < j->nhints; i++)
        out->hints[i].res = res[i];
    out->nhints = j->nhints;
    free(res);
    return st;
}

/* Several flows: one hint after the other. */
static hs_status_t run_many_flows(const pred_job_t *j, pred_job_out_t *out, hs_progress_t *bar)
{
    hs_status_t st = HS_OK;

    while (out->nhints < j->nhints) {
        st = run_flows(j, j->hints[out->nhints], &out->hints[out->nhints]);
        if (st != HS_OK)
            break;
        out->nhints++;
        hs_progress_update(bar, out->nhints);
    }
    return st;
}

/* Every hint's figures: a bar over the hints, or with one hint a bar over its messages
 * where the engine draws one (sim). */
static hs_status_t run_hints(const pred_job_t *job, pred_job_out_t *out)
{
    hs_progress_t bar, msgs;
    pred_job_t one = *job, *j = &one;
    hs_status_t st;

    hs_progress_start(&bar, "hints", j->nhints);
    bar.enabled = bar.enabled && !j->quiet && j->nhints > 1;
    hs_progress_start(&msgs, "messages", j->tr->n * out->nflows);
    msgs.enabled = msgs.enabled && !j->quiet && j->nhints == 1;
    one.po.progress = msgs.enabled ? &msgs : NULL;
    st = out->nflows > 1 ? run_many_flows(j, out, &bar) : run_one_flow(j, out, &bar);
    hs_progress_finish(&bar);
    hs_progress_finish(&msgs);
    return st;
}

/* The offered load of nflows copies of the trace sharing the port to the receiver, and the
 * warning an overload calls for in open loop. */
static void job_load(const pred_job_t *j, pred_job_out_t *out)
{
    model_load_t *load = &out->load;
    double f = (double)out->nflows;
    int off = 0;

    model_offered_load(j->tr, j->p, load);
    if (out->nflows > 1) {
        load->bytes *= f;
        load->link_busy_us *= f;
        load->offered_gbps *= f;
        load->overloaded = j->tr->n > 1 && load->link_busy_us > load->span_us;
        off = snprintf(out->warning, sizeof(out->warning), "%u flows into one port: ",
                       out->nflows);
    }
    if (j->po.mode != PRED_OPEN ||
        !model_load_warning(load, out->warning + off, sizeof(out->warning) - (size_t)off))
        out->warning[0] = '\0';
}

hs_status_t pred_job_run(const pred_job_t *job, pred_job_out_t *out)
{
    hs_status_t st;

    memset(out, 0, sizeof(*out));
    out->nflows = job_flows(job);
    if (out->nflows > 1 && !job->eng->run_flows) {
        hs_log_error("engine %s replays one flow only (%u flows asked)", job->eng->name,
                     out->nflows);
        return HS_ERR_INVALID;
    }
    out->hints = calloc(job->nhints ? job->nhints : 1, sizeof(*out->hints));
    if (!out->hints)
        return HS_ERR_NOMEM;
    if (!job->po.include_cold && pred_all_cold(job->tr)) /* pred_summarize counts them in */
        hs_log_warn("%s: every one of the %zu messages is flagged cold-start: counted in the "
                    "figures, as with --include-cold",
                    job->po.trace_name ? job->po.trace_name : "the trace", job->tr->n);
    st = run_hints(job, out);
    if (st != HS_OK)
        return st;
    job_load(job, out);
    return HS_OK;
}
