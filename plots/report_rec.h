/* report_rec.h - the visual report of `recommend -o DIR`: one call from the command. */
#ifndef HS_REPORT_REC_H
#define HS_REPORT_REC_H

#include "model/recommend/recommend.h"
#include "plots/report_html.h"

/* Draw every figure of r into dir and write dir/report.html (see rep_write_report); c is
 * the engine, trace, profile and options r was run with, trace_path the trace's name. The
 * recommended, runner-up and hint-0 candidates are replayed once more through c with
 * per-message latencies kept (for the CDF) when r does not carry them. Logs errors;
 * HS_ERR_ENV when gnuplot is missing (the message names gnuplot-nox). */
hs_status_t rep_write_recommend(const char *dir, const rec_report_t *r, const pred_ctx_t *c,
                                const char *trace_path);

#endif
