/* report_html.h - report.html: one self-contained page that opens from disk.
 *
 * The page carries its own CSS, embeds each figure's PNG as a base64 data URI (so it can be
 * mailed or attached alone) and links the SVG next to it by a relative name. Every number
 * in it says whether it is measured, simulated or modelled, and the provenance block names
 * the profile (name, origin, hash), the trace (path, producer, host, device) and the tool.
 */
#ifndef HS_REPORT_HTML_H
#define HS_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "plots/plot_figs.h"
#include "plots/plot_input.h"

/* Write DIR/report.html (atomically) from in and the figures already drawn into DIR
 * (figs may be NULL or empty: tables only). Logs errors. */
hs_status_t rep_write_html(const char *dir, const plot_input_t *in, const plot_figset_t *figs);

/* The whole visual report in one call: every figure the input allows (plot_report_figures,
 * PNG + SVG into DIR), then DIR/report.html. When gnuplot is missing the page is still
 * written (tables, and a line saying the plots need gnuplot-nox), a warning naming the
 * package is printed, and the result is HS_ERR_ENV. */
hs_status_t rep_write_report(const char *dir, const plot_input_t *in);

/* The pieces every hintsim page is made of, for other reports (the sweep's): the head with
 * the shared CSS, title and generator line (the body is left open); text escaped for HTML;
 * a PNG embedded as a data URI (HS_ERR_IO when it cannot be read, logged). */
void rep_html_head(FILE *fp, const char *title);
void rep_html_esc(FILE *fp, const char *s);
hs_status_t rep_html_png(FILE *fp, const char *png_path, const char *alt);

/* Base64 (RFC 4648, padded) of buf into a malloc'ed NUL-terminated string (caller frees);
 * NULL when out of memory. */
char *rep_base64(const unsigned char *buf, size_t len);

/* v in unit as people read it: a time in "us" becomes ns, us, ms or s with 4 significant
 * digits ("28.64 s", not "2.864e+07 us"); other units are printed as given ("12.5 Gb/s");
 * "n/a" when v is not finite. Returns buf. */
const char *rep_fmt_quantity(double v, const char *unit, char *buf, size_t len);

/* The objective's value for one result ("p99" -> p99_us, "throughput" -> throughput_gbps,
 * ...) and its unit; returns 0 when the objective has no single figure (e.g. "balanced"). */
int rep_objective_value(const pred_result_t *r, const char *objective, double *val,
                        const char **unit);

#endif
