/* sweep_report.h - the sweep's own report, DIR/report.html: one self-contained page (the
 * CSS and pieces of plots/report_html.h) with the grid that was run, the caveat of a
 * profile of defaults only, the best points of the whole grid as a table, and the plots of
 * sweep_plot.h embedded (the heatmap, whose colour is "% worse than the best cell", and the
 * best hint against each varied parameter).
 */
#ifndef HS_SWEEP_REPORT_H
#define HS_SWEEP_REPORT_H

#include <stddef.h>

#include "common/hs_status.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"

/* The best points the table lists: the cells (trace, profile, axis values; the best hint
 * of each) ranked by the objective. */
#define SWEEP_REPORT_TOP 10

/* Write DIR/report.html (atomically). plots: 1 when DIR/plots holds the images that
 * sweep_plot_all drew, 0 when none was drawn (the page says why and has the tables). */
hs_status_t sweep_report_write(const sweep_grid_t *g, const sweep_plan_t *plan,
                               const sweep_result_t *res, const char *dir, int plots);

#endif
