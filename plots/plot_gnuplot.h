/* plot_gnuplot.h - finding and running gnuplot (Debian gnuplot-nox) for hintsim's figures.
 *
 * Every figure is one gnuplot program: a prelude of variables written by C (data file,
 * output names, titles) followed by one of the scripts in plots/gp/ (embedded in the
 * binary at build time). The program and its data are left in the output directory so a
 * user can edit and re-run them; the images appear under their final names only when
 * gnuplot succeeded (it writes NAME.png.tmp / NAME.svg.tmp, renamed afterwards).
 */
#ifndef HS_PLOT_GNUPLOT_H
#define HS_PLOT_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

#include "common/hs_probe.h"
#include "common/hs_status.h"

/* The Debian package that provides gnuplot with the pngcairo and svg terminals. */
#define PLOT_GNUPLOT_PACKAGE "gnuplot-nox"

/* Locate gnuplot: $HINTSIM_GNUPLOT when set, else "gnuplot" searched on $PATH.
 * Writes its path to buf. Returns HS_ERR_ENV when not found (does not log). */
hs_status_t plot_gnuplot_find(char *buf, size_t len);

/* First line of `gnuplot --version` ("gnuplot 5.4 patchlevel 4") into buf.
 * HS_ERR_ENV when gnuplot is missing or does not run (does not log). */
hs_status_t plot_gnuplot_version(char *buf, size_t len);

/* gnuplot with its pngcairo and svg terminals, for `hintsim doctor` (plot_probe.c). */
void plot_gnuplot_probe(hs_probe_t *c);

/* The embedded script plots/gp/NAME.gp, or NULL if there is none. Static storage. */
const char *plot_script_get(const char *name);

/* Write "var = 'text'" to fp as gnuplot source, quoting text safely. */
void plot_gp_set_str(FILE *fp, const char *var, const char *text);

/* Render figure name in dir: writes dir/NAME.gp (prelude + embedded gp/SCRIPT.gp), runs
 * gnuplot there, renames NAME.png.tmp and NAME.svg.tmp to NAME.png and NAME.svg.
 * Logs errors (gnuplot's own message included). HS_ERR_ENV when gnuplot is missing. */
hs_status_t plot_gnuplot_render(const char *dir, const char *name, const char *script,
                                const char *prelude);

#endif
