/* pred_job.h - one prediction job, the library call behind `hintsim model` and `hintsim sim`:
 * a trace and a profile replayed by one engine at each of several hints, with one flow (the
 * hints in parallel on threads) or several flows into one receiver (engines with run_flows),
 * and the offered load the trace puts on the link with the warning it calls for.
 *
 *     pred_job_t job = {.eng = &model_engine_ops, .tr = tr, .p = p, .hints = h, .nhints = n};
 *     pred_job_out_t out;
 *     if (pred_job_run(&job, &out) == HS_OK) { ...out.hints[i].res...; }
 *     pred_job_out_release(&out);
 */
#ifndef HS_PRED_JOB_H
#define HS_PRED_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "common/hs_status.h"
#include "model/model.h"
#include "model/predict/predict.h"

typedef struct {
    const pred_engine_ops_t *eng;
    const trace_t *tr;
    const profile_t *p;
    pred_opts_t po;        /* po.flows > 1 needs eng->run_flows; 0 counts as 1 */
    const uint64_t *hints; /* the hints, in the order the results come */
    size_t nhints;
    unsigned threads; /* hints replayed in parallel with one flow (pred_threads); with
                       * several flows one hint at a time */
    int quiet;        /* no progress bar on stderr */
} pred_job_t;

/* One hint's figures. */
typedef struct {
    pred_result_t res;    /* one flow, or flow 0 of several (then borrowed from flows) */
    pred_result_t *flows; /* po.flows entries when po.flows > 1, else NULL */
    pred_result_t agg;    /* all flows' messages together, when flows */
} pred_hint_out_t;

typedef struct {
    pred_hint_out_t *hints; /* nhints entries, in job->hints order */
    size_t nhints;          /* entries to release */
    unsigned nflows;
    model_load_t load;  /* what the trace (all flows together) offers the link */
    char warning[480];  /* the overload warning, "" when there is none (open loop only) */
} pred_job_out_t;

/* Run the job into *out (always release with pred_job_out_release, also on failure). Logs
 * a warning when every message of the trace is flagged cold start (then counted in). Every
 * hint's figures exist before this returns HS_OK; on failure the first failing hint's
 * status, logged, and out holds what is to be released. HS_ERR_INVALID when po.flows > 1
 * and the engine replays one flow only. */
hs_status_t pred_job_run(const pred_job_t *job, pred_job_out_t *out);
void pred_job_out_release(pred_job_out_t *out);

#endif
