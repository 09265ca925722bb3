/* report_html.c - the self-contained report.html; see report_html.h.
 *
 * Written as one pass to an atomic file: head and CSS, the recommendation, provenance, the
 * per-hint table, then the figures (PNG inline as data URIs, SVG linked).
 */
#include "plots/report_html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hs_util.h"
#include "model/predict/objective.h"
#include "model/recommend/recommend.h"
#include "plots/plot_gnuplot.h"

static const char g_css[] =
    "body{font-family:system-ui,sans-serif;max-width:1040px;margin:1.5em auto;padding:0 1em;"
    "color:#222;background:#fff}h1{font-size:1.6em;margin-bottom:.2em}"
    "h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}"
    ".rec{background:#eef6ee;border-left:5px solid #2ca02c;padding:.6em 1em}"
    ".warn{background:#fff4e5;border-left:5px solid #d97706;padding:.6em 1em;margin:.6em 0}"
    "table{border-collapse:collapse;font-size:.9em;margin:.5em 0}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}"
    "th{background:#f3f3f3}td.l,th.l{text-align:left}tr.best td{background:#fff4d6;"
    "font-weight:bold}figure{margin:1.2em 0}figure img{max-width:100%;border:1px solid #ddd}"
    "figcaption{font-size:.9em;color:#444}.src{font-size:.85em;color:#666}"
    ".tag{display:inline-block;padding:0 .4em;border-radius:3px;background:#e8e8f8;"
    "font-size:.8em}";

static void esc(FILE *fp, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '&': fputs("&amp;", fp); break;
        case '"': fputs("&quot;", fp); break;
        default: fputc(*s, fp);
        }
    }
}

char *rep_base64(const unsigned char *buf, size_t len)
{
    static const char tbl[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)buf[i] << 16;
        size_t rem = len - i;
        if (rem > 1)
            v |= (uint32_t)buf[i + 1] << 8;
        if (rem > 2)
            v |= buf[i + 2];
        *o++ = tbl[(v >> 18) & 63];
        *o++ = tbl[(v >> 12) & 63];
        *o++ = rem > 1 ? tbl[(v >> 6) & 63] : '=';
        *o++ = rem > 2 ? tbl[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

int rep_objective_value(const pred_result_t *r, const char *objective, double *val,
                        const char **unit)
{
    obj_t obj;

    if (obj_parse(objective, &obj) != HS_OK || !obj_is_figure(obj))
        return 0;
    *val = obj_value(obj, r);
    *unit = obj_unit(obj);
    return 1;
}

/* "<p>title</p>" and the n items as a list, escaped; nothing when n is 0. */
static void esc_list(FILE *fp, const char *title, const char *const *items, size_t n)
{
    if (!n)
        return;
    fprintf(fp, "<p>%s</p>\n<ul>\n", title);
    for (size_t i = 0; i < n; i++) {
        fputs("<li>", fp);
        esc(fp, items[i]);
        fputs("</li>\n", fp);
    }
    fputs("</ul>\n", fp);
}

static void hint_text(uint64_t hint, char *buf, size_t len)
{
    char lab[32];

    plot_size_label(hint, lab, sizeof(lab));
    if (hint == 0)
        snprintf(buf, len, "0 (no hint)");
    else if (strtoull(lab, NULL, 10) == hint)
        snprintf(buf, len, "%s", lab); /* the label is the exact byte count already */
    else
        snprintf(buf, len, "%s (%llu B)", lab, (unsigned long long)hint);
}

/* A table figure as people read it: no exponent below 10^9 (2.1e+04 reads worse than
 * 21064), 4 significant digits below 1000. */
static void num(FILE *fp, double v)
{
    if (fabs(v) >= 1000 && fabs(v) < 1e9)
        fprintf(fp, "<td>%.0f</td>", v);
    else
        fprintf(fp, "<td>%.4g</td>", v);
}

const char *rep_fmt_quantity(double v, const char *unit, char *buf, size_t len)
{
    static const struct { double below, div; const char *unit; } times[] = {
        {1.0, 1e-3, "ns"}, {1e3, 1.0, "us"}, {1e6, 1e3, "ms"}, {INFINITY, 1e6, "s"},
    };

    if (!isfinite(v)) {
        snprintf(buf, len, "n/a");
        return buf;
    }
    if (strcmp(unit, "us") != 0) {
        snprintf(buf, len, "%.4g %s", v, unit);
        return buf;
    }
    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        /* 999.96 us rounds to "1000 us" at 4 digits: it belongs to the next unit */
        if (fabs(v) < times[i].below * 0.99995 || i + 1 == sizeof(times) / sizeof(times[0])) {
            snprintf(buf, len, "%.4g %s", v / times[i].div, times[i].unit);
            break;
        }
    }
    return buf;
}

/* "hint 16K: p99 = 12.3 us" for one role of the summary. */
static void summary_line(FILE *fp, const plot_input_t *in, int idx, const char *role)
{
    char h[64], q[64];
    double v;
    const char *unit;

    if (idx < 0)
        return;
    hint_text(in->pred[idx].hint_bytes, h, sizeof(h));
    fprintf(fp, "<li>%s: <b>%s</b>", role, h);
    if (rep_objective_value(&in->pred[idx], in->objective, &v, &unit))
        fprintf(fp, " &mdash; %s = %s", in->objective, rep_fmt_quantity(v, unit, q, sizeof(q)));
    fprintf(fp, " <span class=\"tag\">%s</span></li>\n",
            plot_source_str(plot_input_pred_source(in)));
}

static void write_summary(FILE *fp, const plot_input_t *in)
{
    fputs("<div class=\"rec\">\n", fp);
    if (in->rec_idx < 0)
        fputs("<p>No recommendation was made.</p>\n", fp);
    fprintf(fp, "<p>Objective: <b>%s</b></p>\n<ul>\n", in->objective ? in->objective : "?");
    summary_line(fp, in, in->rec_idx, "Recommended hint");
    if (in->rec_idx >= 0)
        fprintf(fp, "<li>Set <code>RDMA_LOW_LATENCY_HINT=%llu</code> (bytes).</li>\n",
                (unsigned long long)in->pred[in->rec_idx].hint_bytes);
    summary_line(fp, in, in->runner_idx, "Runner-up");
    summary_line(fp, in, plot_input_hint0_idx(in), "Without a hint");
    fputs("</ul>\n", fp);
    if (in->policy) {
        fputs("<p>Policy: ", fp);
        esc(fp, in->policy);
        fputs("</p>\n", fp);
    }
    if (in->why) {
        fputs("<p>Why: ", fp);
        esc(fp, in->why);
        fputs("</p>\n", fp);
    }
    fputs("</div>\n", fp);
}

/* Above everything else: the profile's caveat (a profile of defaults only) and the
 * warnings, so that nobody reads a figure before them. */
static void write_cautions(FILE *fp, const plot_input_t *in)
{
    const char *caveat = rec_profile_caveat(in->profile);

    if (!caveat && !in->nwarnings)
        return;
    fputs("<div class=\"warn\" id=\"cautions\">\n", fp);
    if (caveat) {
        fputs("<p><b>Profile ", fp);
        esc(fp, in->profile->name);
        fputs(":</b> ", fp);
        esc(fp, caveat);
        fputs(".</p>\n", fp);
    }
    esc_list(fp, "<b>Warnings</b> (read these before the figures):",
             (const char *const *)in->warnings, in->nwarnings);
    fputs("</div>\n", fp);
}

static void prov_row(FILE *fp, const char *key, const char *val)
{
    fprintf(fp, "<tr><th class=\"l\">%s</th><td class=\"l\">", key);
    esc(fp, val && *val ? val : "(unknown)");
    fputs("</td></tr>\n", fp);
}

static void write_provenance(FILE *fp, const plot_input_t *in)
{
    static const char *const modes[] = {"capture bench (measured)", "LD_PRELOAD capture "
                                        "(measured)", "synthetic (trace gen)", "converted"};
    const trace_hdr_t *h = &in->trace->hdr;
    char buf[128];

    fputs("<h2>Where these numbers come from</h2>\n<table>\n", fp);
    snprintf(buf, sizeof(buf), "%s (%s)", in->engine ? in->engine : "?",
             plot_source_str(plot_input_pred_source(in)));
    prov_row(fp, "predictions", buf);
    if (in->meas)
        prov_row(fp, "measurements", "live device (validate)");
    prov_row(fp, "profile", in->profile->name);
    prov_row(fp, "profile origin", in->profile->origin);
    snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)in->profile_hash);
    prov_row(fp, "profile hash", buf);
    prov_row(fp, "trace", in->trace_path);
    snprintf(buf, sizeof(buf), "%zu", in->trace->n);
    prov_row(fp, "trace records", buf);
    prov_row(fp, "trace mode", (unsigned)h->mode < 4 ? modes[h->mode] : "?");
    snprintf(buf, sizeof(buf), "%s %s", h->producer, h->producer_version);
    prov_row(fp, "trace producer", buf);
    prov_row(fp, "trace host", h->host);
    prov_row(fp, "trace device", h->device);
    prov_row(fp, "workload", h->workload);
    fputs("</table>\n", fp);
}

static void write_row(FILE *fp, const plot_input_t *in, size_t i)
{
    const pred_result_t *r = &in->pred[i];
    char h[64];

    hint_text(r->hint_bytes, h, sizeof(h));
    fprintf(fp, "<tr%s><td class=\"l\">%s%s</td>", (int)i == in->rec_idx ? " class=\"best\"" : "",
            h, (int)i == in->rec_idx ? " &#9733;" : "");
    num(fp, r->p50_us);
    num(fp, r->p90_us);
    num(fp, r->p99_us);
    num(fp, r->p999_us);
    num(fp, r->mean_us);
    num(fp, r->throughput_gbps);
    fprintf(fp, "<td>%.3f</td><td>%llu</td>", r->ll_fraction, (unsigned long long)r->switches);
    num(fp, r->drain_us_total);
    fprintf(fp, "<td>%llu</td>", (unsigned long long)r->sq_full_stalls);
    if (in->meas) {
        num(fp, in->meas[i].p50_us);
        num(fp, in->meas[i].p99_us);
        num(fp, in->meas[i].throughput_gbps);
    }
    fputs("</tr>\n", fp);
}

static void write_table(FILE *fp, const plot_input_t *in)
{
    const char *src = plot_source_str(plot_input_pred_source(in));

    fprintf(fp, "<h2>Every candidate hint</h2>\n<p class=\"src\">Columns without a mark "
            "are %s; &#9733; is the recommendation.</p>\n<table>\n<tr><th class=\"l\">hint"
            "</th><th>p50 us</th><th>p90 us</th><th>p99 us</th><th>p99.9 us</th>"
            "<th>mean us</th><th>Gb/s</th><th>LL fraction</th><th>switches</th>"
            "<th>drain us, total</th><th>queue-full stalls</th>", src);
    if (in->meas)
        fputs("<th>measured p50 us</th><th>measured p99 us</th><th>measured Gb/s</th>", fp);
    fputs("</tr>\n", fp);
    for (size_t i = 0; i < in->npred; i++)
        write_row(fp, in, i);
    fputs("</table>\n", fp);
}

/* Where each candidate's time goes: the engine's cost terms per message (report.md has
 * the same table). Left out when no candidate has any (figures that were not modelled). */
static void write_cost_table(FILE *fp, const plot_input_t *in)
{
    double n = (double)(in->trace && in->trace->n ? in->trace->n : 1), any = 0;
    char h[64];

    for (size_t i = 0; i < in->npred; i++) {
        const pred_costs_t *c = &in->pred[i].costs;
        any += fabs(c->queue_us) + fabs(c->drain_us) + fabs(c->coalesce_us) + fabs(c->l1_us) +
               fabs(c->base_us);
    }
    if (!(any > 0))
        return;
    fprintf(fp, "<h2>Where the time goes</h2>\n<p class=\"src\">The %s engine's cost terms, us "
            "per message: queue (waiting for a send-queue slot), drain (path switches), "
            "coalesce (completions reported late), L1 (send queue beyond L1d), base "
            "(everything else: post, doorbell, DMA, wire, poll).</p>\n<table>\n<tr><th "
            "class=\"l\">hint</th><th>queue</th><th>drain</th><th>coalesce</th><th>L1</th>"
            "<th>base</th><th>total</th></tr>\n", in->engine ? in->engine : "?");
    for (size_t i = 0; i < in->npred; i++) {
        const pred_costs_t *c = &in->pred[i].costs;
        double t[6] = {c->queue_us / n, c->drain_us / n, c->coalesce_us / n, c->l1_us / n,
                       c->base_us / n, 0};
        hint_text(in->pred[i].hint_bytes, h, sizeof(h));
        fprintf(fp, "<tr%s><td class=\"l\">%s%s</td>",
                (int)i == in->rec_idx ? " class=\"best\"" : "", h,
                (int)i == in->rec_idx ? " &#9733;" : "");
        for (int k = 0; k < 5; k++)
            t[5] += t[k];
        for (int k = 0; k < 6; k++)
            fprintf(fp, "<td>%.3f</td>", t[k]);
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
}

static hs_status_t write_figure(FILE *fp, const char *dir, const plot_input_t *in,
                                const plot_fig_t *f)
{
    char path[4096], sub[512];
    hs_status_t st;

    snprintf(path, sizeof(path), "%s/%s.png", dir, f->name);
    fprintf(fp, "<figure id=\"%s\">\n", f->name);
    st = rep_html_png(fp, path, f->title);
    if (st != HS_OK)
        return st;
    plot_subtitle(in, f->source, sub, sizeof(sub));
    fputs("<figcaption><b>", fp);
    esc(fp, f->title);
    fputs(".</b> ", fp);
    esc(fp, f->caption);
    fputs("<br><span class=\"src\">", fp);
    esc(fp, sub);
    fprintf(fp, " &middot; <a href=\"%s.svg\">SVG</a> &middot; <a href=\"%s.dat\">data</a>"
            "</span></figcaption>\n</figure>\n", f->name, f->name);
    return HS_OK;
}

static hs_status_t write_figures(FILE *fp, const char *dir, const plot_input_t *in,
                                 const plot_figset_t *figs)
{
    const char *skipped[PLOT_MAX_FIGS];

    if (!figs || (figs->n == 0 && figs->nskipped == 0))
        return HS_OK;
    fputs("<h2>Figures</h2>\n", fp);
    for (size_t i = 0; i < figs->n; i++) {
        hs_status_t st = write_figure(fp, dir, in, &figs->figs[i]);
        if (st != HS_OK)
            return st;
    }
    for (size_t i = 0; i < figs->nskipped; i++)
        skipped[i] = figs->skipped[i];
    esc_list(fp, "Not drawn:", skipped, figs->nskipped);
    return HS_OK;
}

void rep_html_head(FILE *fp, const char *title)
{
    char date[64];
    time_t now = time(NULL);
    struct tm tm;

    strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", fp);
    esc(fp, title);
    fprintf(fp, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", g_css);
    esc(fp, title);
    fprintf(fp, "</h1>\n<p class=\"src\">hintsim %s, generated %s</p>\n", HINTSIM_VERSION,
            date);
}

void rep_html_esc(FILE *fp, const char *s)
{
    esc(fp, s);
}

hs_status_t rep_html_png(FILE *fp, const char *png_path, const char *alt)
{
    char *png = NULL, *b64;
    size_t len = 0;
    hs_status_t st = hs_read_file(png_path, &png, &len);

    if (st != HS_OK)
        return st;
    b64 = rep_base64((const unsigned char *)png, len);
    free(png);
    if (!b64)
        return HS_ERR_NOMEM;
    fputs("<img alt=\"", fp);
    esc(fp, alt);
    fprintf(fp, "\" src=\"data:image/png;base64,%s\">\n", b64);
    free(b64);
    return HS_OK;
}

static void write_head(FILE *fp, const plot_input_t *in)
{
    char title[64];

    snprintf(title, sizeof(title), "hintsim %s report", in->command ? in->command : "");
    rep_html_head(fp, title);
}

hs_status_t rep_write_html(const char *dir, const plot_input_t *in, const plot_figset_t *figs)
{
    char path[4096];
    hs_afile_t *af;
    FILE *fp;
    hs_status_t st = plot_input_check(in);

    if (st != HS_OK)
        return st;
    st = hs_mkdir_p(dir);
    if (st != HS_OK)
        return st;
    snprintf(path, sizeof(path), "%s/report.html", dir);
    st = hs_afile_open(path, &af);
    if (st != HS_OK)
        return st;
    fp = hs_afile_stream(af);
    write_head(fp, in);
    write_cautions(fp, in);
    write_summary(fp, in);
    write_provenance(fp, in);
    write_table(fp, in);
    write_cost_table(fp, in);
    st = write_figures(fp, dir, in, figs);
    if (st != HS_OK) {
        hs_afile_abort(af);
        return st;
    }
    if (in->profile->notes) {
        fputs("<h2>Profile notes</h2>\n<p>", fp);
        esc(fp, in->profile->notes);
        fputs("</p>\n", fp);
    }
    fputs("</body>\n</html>\n", fp);
    return hs_afile_commit(af);
}

hs_status_t rep_write_report(const char *dir, const plot_input_t *in)
{
    plot_figset_t figs;
    hs_status_t st = plot_report_figures(dir, in, &figs), html_st;

    if (st == HS_ERR_ENV) {
        hs_log_warn("gnuplot not found (PATH or $HINTSIM_GNUPLOT): report.html has tables "
                    "only; install the Debian package %s for the plots", PLOT_GNUPLOT_PACKAGE);
        memset(&figs, 0, sizeof(figs));
        figs.nskipped = 1;
        snprintf(figs.skipped[0], sizeof(figs.skipped[0]), "every figure: gnuplot was not "
                 "found; install the Debian package %s and run this command again",
                 PLOT_GNUPLOT_PACKAGE);
    } else if (st != HS_OK) {
        return st;
    }
    html_st = rep_write_html(dir, in, &figs);
    return html_st != HS_OK ? html_st : st;
}
