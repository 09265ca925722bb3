/* plot_input.h - everything a report is drawn from, borrowed from the caller.
 *
 * recommend and validate fill one plot_input_t from what they computed (the trace, the
 * profile, one pred_result_t per candidate hint, and for validate the measured figures)
 * and hand it to plot_report_figures() and rep_write_html(). Nothing here is owned: the
 * caller keeps every pointer alive until those calls return.
 */
#ifndef HS_PLOT_INPUT_H
#define HS_PLOT_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "model/predict/predict.h"
#include "model/profile/profile.h"
#include "traces/trace.h"

/* Where a figure's numbers come from; every figure and table says which. */
typedef enum {
    PLOT_SRC_MEASURED = 0,  /* a live device (validate, a captured trace) */
    PLOT_SRC_SIMULATED = 1, /* the SimGrid engine */
    PLOT_SRC_MODELLED = 2,  /* the analytical model */
    PLOT_SRC_SYNTHETIC = 3, /* a generated trace (trace gen) */
} plot_source_t;

typedef struct {
    const char *command;    /* "recommend" or "validate" (report title) */
    const char *engine;     /* "model" or "sim": the source of pred[] */
    const profile_t *profile;
    uint64_t profile_hash;  /* profile_hash(profile): shown with the name in every figure */
    const trace_t *trace;
    const char *trace_path; /* as the user gave it */
    const pred_result_t *pred; /* predicted figures, one per candidate hint, ascending hint */
    size_t npred;
    const pred_result_t *meas; /* validate: measured figures, meas[i] is pred[i]'s hint; or NULL */
    int rec_idx;            /* index in pred of the recommended hint; -1 if none */
    int runner_idx;         /* index of the runner-up; -1 if none */
    const char *objective;  /* "p99", "p50", "mean", "throughput", "balanced"; NULL = unknown */
    const char *why;        /* one sentence: which cost term decides; NULL = none */
    const char *policy;     /* one sentence: why this hint under the margin; NULL = none */
    char *const *warnings;  /* what the report warns about (recommend's); may be NULL */
    size_t nwarnings;
    /* For the per-size cost curves of both paths: the engine to replay single-size
     * messages through (model_engine_ops or sim_engine_ops); NULL skips that figure. */
    const pred_engine_ops_t *cost_engine;
} plot_input_t;

/* "measured", "simulated", "modelled", "synthetic"; "unknown" out of range. */
const char *plot_source_str(plot_source_t src);
/* The source of the predicted figures: simulated for engine "sim", else modelled. */
plot_source_t plot_input_pred_source(const plot_input_t *in);
/* The source of the trace's sizes: synthetic for generated traces, else measured. */
plot_source_t plot_input_trace_source(const plot_input_t *in);
/* Index in in->pred of hint 0 (no hint), or -1 when it was not a candidate. */
int plot_input_hint0_idx(const plot_input_t *in);
/* A size label that is exact: "16K" for multiples of 1 KiB, "4095B" otherwise (so two
 * candidate hints never print alike). */
void plot_size_label(uint64_t bytes, char *buf, size_t len);
/* Check the input is usable (trace, profile, pred non-empty, indexes in range);
 * logs what is wrong and returns HS_ERR_INVALID. */
hs_status_t plot_input_check(const plot_input_t *in);

#endif
