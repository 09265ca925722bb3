/* sweep_plot.h - the sweep's plots, drawn with gnuplot (pngcairo) from the merged results:
 *   DIR/plots/heatmap.png          the objective over the first two varied parameters
 *   DIR/plots/best_hint_<KEY>.png  the best hint against each varied parameter
 * and DIR/report.html (sweep_report.h) that shows them with the grid's best points.
 * Each slice holds every other dimension at its first value (first trace, profile and
 * value of the other axes); "best" is over the grid's hints per the objective. The .dat
 * and .gp files stay next to the images so a plot can be redrawn or restyled.
 */
#ifndef HS_SWEEP_PLOT_H
#define HS_SWEEP_PLOT_H

#include "common/hs_status.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"

/* Write the data and scripts, run gnuplot on each script, then write DIR/report.html.
 * Returns HS_ERR_ENV (logged, naming the package) when gnuplot is not installed; the
 * .dat/.gp files and the report (tables only) are there anyway. *nplots gets the number of
 * images drawn. */
hs_status_t sweep_plot_all(const sweep_grid_t *g, const sweep_plan_t *plan,
                           const sweep_result_t *res, const char *dir, int *nplots);

#endif
