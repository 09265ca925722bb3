/* plot_probe.c - gnuplot and its PNG and SVG terminals, for `hintsim doctor`. */
#include <stdio.h>
#include <string.h>

#include "plots/plot_gnuplot.h"

void plot_gnuplot_probe(hs_probe_t *c)
{
    char path[1024], ver[128], cmd[1200], term[128];

    hs_probe_init(c, "gnuplot", "report plots (PNG + SVG)", PLOT_GNUPLOT_PACKAGE);
    if (plot_gnuplot_find(path, sizeof(path)) != HS_OK) {
        snprintf(c->detail, sizeof(c->detail), "not found");
        return;
    }
    if (plot_gnuplot_version(ver, sizeof(ver)) != HS_OK) { /* there, but it does not run */
        snprintf(c->detail, sizeof(c->detail), "found at %.300s, but 'gnuplot --version' "
                 "failed there (check $HINTSIM_GNUPLOT)", path);
        return;
    }
    snprintf(cmd, sizeof(cmd), "'%s' -e 'set terminal pngcairo; set terminal svg; "
             "print \"terminals ok\"' 2>&1", path);
    hs_probe_output_line(cmd, "", term, sizeof(term));
    c->ok = strcmp(term, "terminals ok") == 0;
    snprintf(c->detail, sizeof(c->detail), "%s at %.300s, pngcairo+svg %s", ver, path,
             c->ok ? "ok" : "MISSING");
}
