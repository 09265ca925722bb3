/* sweep_out.h - the merged outputs of a sweep, read only from the point files:
 * DIR/sweep.csv and DIR/sweep.json (one row per point, in plan order), and the plots
 * (sweep_plot.h). Byte-identical for the same grid whichever engine computed the points.
 */
#ifndef HS_SWEEP_OUT_H
#define HS_SWEEP_OUT_H

#include <stddef.h>

#include "common/hs_status.h"
#include "sweep/sweep_eval.h"
#include "sweep/sweep_grid.h"

/* Read every point's result into *res (malloc'ed, plan->n entries, caller frees).
 * *nmissing counts points without a result file (their entries are zero). */
hs_status_t sweep_out_collect(const sweep_plan_t *plan, const char *dir, sweep_result_t **res,
                              size_t *nmissing);

/* Write DIR/sweep.csv and DIR/sweep.json atomically from complete results. */
hs_status_t sweep_out_write(const sweep_grid_t *g, const sweep_plan_t *plan,
                            const sweep_result_t *res, const char *dir);

/* Remove DIR/sweep.csv and DIR/sweep.json unless they are this plan's merged outputs
 * (another grid's, or damaged), so that a merge left incomplete leaves no stale result;
 * when one is removed, so are its views (sweep_out_drop_views).
 * Each is renamed aside and checked there: a merge that another process (a Slurm task)
 * commits meanwhile is put back, not lost. *removed counts the files removed. */
hs_status_t sweep_out_drop_stale(const sweep_grid_t *g, const sweep_plan_t *plan,
                                 const char *dir, int *removed);

/* Remove what sweep_plot_all made of an earlier merged output in DIR: DIR/report.html and
 * the plots in DIR/plots (the folder too, when nothing else is in it), all of them, or with
 * keep those that keep's plots do not replace. A complete merge calls it before writing its
 * own (keep: its grid, NULL with --no-plots), so no earlier grid's view survives it. */
hs_status_t sweep_out_drop_views(const char *dir, const sweep_grid_t *keep);

/* Index of the best point among those sharing pt's trace, profile and axis values (that is,
 * over the hints), per the objective. */
size_t sweep_out_best_hint(const sweep_grid_t *g, const sweep_plan_t *plan,
                           const sweep_result_t *res, size_t pt);

#endif
