/* cmd_recommend.c - `hintsim recommend`: rank candidate hints with the model or the
 * simulator (rec_run), print winner, runner-up and hint 0 side by side with the cost term
 * that decides, warnings; -o DIR writes report.json, report.md, report.html and plots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/cli_predict.h"
#include "common/hs_util.h"
#include "model/model.h"
#include "model/predict/objective.h"
#include "model/recommend/recommend.h"
#include "plots/report_rec.h"
#include "sim/sim.h"

struct rec_cli_opts {
    const char *profile;
    const char *objective;
    const char *engine;
    const char *candidates;
    const char *out_dir;
    int json;
    hs_strlist_t set;
    const char *mode;
    int include_cold;
    uint64_t threads;
    int quiet;
    double margin_pct;
};

static const hs_opt_t g_rec_opts[] = {
    {"profile", 'p', HS_OPT_STR, offsetof(struct rec_cli_opts, profile), "P", "generic",
     "built-in profile name or JSON file"},
    {"objective", 0, HS_OPT_STR, offsetof(struct rec_cli_opts, objective),
     OBJ_CHOICES, "p99",
     "what to optimise (balanced: lowest p99 within 5% of the best throughput)"},
    {"engine", 0, HS_OPT_STR, offsetof(struct rec_cli_opts, engine), "model|sim", "model",
     "prediction engine"},
    {"hint", 0, HS_OPT_STR, offsetof(struct rec_cli_opts, candidates), "auto|LIST",
     "auto", "candidate hints; auto: 0, powers of two over the size range, size quantiles, "
     "everything LL"},
    {"candidates", 0, HS_OPT_STR, offsetof(struct rec_cli_opts, candidates), "auto|LIST",
     NULL, HS_OPT_OLD_NAME("hint")},
    {"output", 'o', HS_OPT_STR, offsetof(struct rec_cli_opts, out_dir), "DIR", NULL,
     "write report.json, report.md, report.html and the plots (gnuplot) into DIR"},
    {"json", 0, HS_OPT_FLAG, offsetof(struct rec_cli_opts, json), NULL, NULL, "JSON output"},
    {"set", 0, HS_OPT_LIST, offsetof(struct rec_cli_opts, set), "KEY=VALUE", NULL,
     "override one profile parameter (repeatable)"},
    {"mode", 0, HS_OPT_STR, offsetof(struct rec_cli_opts, mode), "open|closed", "open",
     "replay mode (see hintsim model --help)"},
    {"include-cold", 0, HS_OPT_FLAG, offsetof(struct rec_cli_opts, include_cold), NULL, NULL,
     "rank with cold-start messages included (default: reported apart)"},
    {"margin", 0, HS_OPT_DOUBLE, offsetof(struct rec_cli_opts, margin_pct), "PCT", "2",
     "a larger hint must beat every smaller one (and no hint) by more than PCT percent on the "
     "objective to be recommended over it; 0 ranks strictly"},
    {"threads", 0, HS_OPT_U64, offsetof(struct rec_cli_opts, threads), "N", "0",
     "candidates evaluated in parallel (0 = one per CPU)"},
    {"quiet", 'q', HS_OPT_FLAG, offsetof(struct rec_cli_opts, quiet), NULL, NULL,
     "no progress bar (drawn only on a terminal) or notes on stderr"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const hs_cmd_spec_t g_rec_spec = {
    "hintsim recommend TRACE --profile P [--objective " OBJ_CHOICES "] "
    "[--engine model|sim] [--hint auto|LIST] [-o DIR] [--json]",
    "recommend a hint for a trace, with the alternatives' cost and why", g_rec_opts, 1, 1,
    "Cold-start messages (flagged in the trace) are reported apart and not ranked unless "
    "--include-cold. Figures are modelled or simulated, never measured."};

static void print_text(const rec_report_t *r, const profile_t *p, const pred_engine_ops_t *eng)
{
    const size_t idx[3] = {r->winner, r->runner_up, r->baseline};
    const char *label[3] = {"recommended", "runner-up", "no hint"};
    char h[48];

    printf("engine %s (figures are %s), profile %s (%s), objective %s, %zu candidate%s\n",
           eng->name, pred_engine_figures(eng), p->name, p->origin,
           obj_name(r->objective), r->n, r->n == 1 ? "" : "s");
    if (r->engine_detail)
        printf("network model: %s\n", r->engine_detail);
    printf("\n%-12s %-16s %12s %10s %10s %9s %6s %8s\n", "", "hint",
           obj_name(r->objective), "p50_us", "p99_us", "Gb/s", "LL", "switches");
    for (int k = 0; k < 3; k++) {
        const pred_result_t *x = &r->results[idx[k]];
        if (k == 1 && r->runner_up == r->winner) /* one candidate: no runner-up */
            continue;
        rec_label_hint(x->hint_bytes, h, sizeof(h));
        char c[3][32]; /* cells that fit their columns: none runs into the next */
        printf("%-12s %-16s %12.4g %10s %10s %9s %5.0f%% %8llu\n", label[k], h,
               obj_value(r->objective, x), rec_fmt_cell(x->p50_us, 10, c[0], 32),
               rec_fmt_cell(x->p99_us, 10, c[1], 32),
               rec_fmt_cell(x->throughput_gbps, 9, c[2], 32), 100 * x->ll_fraction,
               (unsigned long long)x->switches);
    }
    printf("\npolicy: %s\nwhy: %s\n", r->policy, r->why);
    for (size_t i = 0; i < r->nwarnings; i++)
        fprintf(stderr, "warning: %s\n", r->warnings[i]); /* stdout keeps the result */
}

static int parse_rec_opts(const struct rec_cli_opts *o, rec_opts_t *ro, uint64_t **cands,
                          const pred_engine_ops_t **eng)
{
    char names[128];

    if (obj_parse(o->objective, &ro->objective) != HS_OK) {
        fprintf(stderr, "hintsim: --objective '%s': expected %s\n", o->objective,
                obj_list(names, sizeof(names), 0));
        return 2;
    }
    if (pred_mode_parse(o->mode, &ro->pred.mode) != HS_OK) {
        fprintf(stderr, "hintsim: --mode '%s': expected open or closed\n", o->mode);
        return 2;
    }
    if (strcmp(o->engine, "model") == 0) {
        *eng = &model_engine_ops;
    } else if (strcmp(o->engine, "sim") == 0) {
        *eng = &sim_engine_ops;
    } else {
        fprintf(stderr, "hintsim: --engine '%s': expected model or sim\n", o->engine);
        return 2;
    }
    if (strcmp(o->candidates, "auto") != 0 &&
        hs_parse_size_list(o->candidates, cands, &ro->ncandidates) != HS_OK) {
        fprintf(stderr, "hintsim: --candidates '%s': expected auto or sizes like 0,8K,64K\n",
                o->candidates);
        return 2;
    }
    if (!(o->margin_pct >= 0 && o->margin_pct <= 100)) {
        fprintf(stderr, "hintsim: --margin '%g': expected a percentage from 0 to 100\n",
                o->margin_pct);
        return 2;
    }
    ro->margin = o->margin_pct > 0 ? o->margin_pct / 100 : REC_MARGIN_NONE;
    ro->candidates = *cands;
    ro->threads = (unsigned)o->threads;
    ro->pred.include_cold = o->include_cold;
    ro->pred.flows = 1;
    ro->progress = !o->quiet && !o->json;
    hs_log_set_quiet(o->quiet);
    return 0;
}

/* report.html and the PNG/SVG plots beside report.json/report.md (plots/report_rec.h). */
static hs_status_t write_visual_report(const rec_report_t *r, const struct rec_cli_opts *o,
                                       const char *dir, const pred_ctx_t *run,
                                       const char *path)
{
    pred_opts_t po = {.include_cold = o->include_cold, .flows = 1, .trace_name = path};

    if (pred_mode_parse(o->mode, &po.mode) != HS_OK)
        return HS_ERR_USAGE;
    return rep_write_recommend(dir, r, &(pred_ctx_t){run->eng, run->tr, run->p, &po}, path);
}

/* The report files, written into a stage and moved into o->out_dir as a whole: a run that
 * fails leaves DIR's earlier report as it was, not a mix of two (hs_stage_open). Without
 * gnuplot the report has tables only and *plots is 0. */
static hs_status_t write_reports(const rec_report_t *r, const struct rec_cli_opts *o,
                                 const pred_ctx_t *ctx, const char *path, int *plots)
{
    char stage[4200] = "";
    hs_status_t st = hs_stage_open(o->out_dir, stage, sizeof(stage));

    if (st != HS_OK)
        goto abort_stage;
    st = rec_report_write(r, ctx->eng, ctx->p, path, ctx->tr, stage);
    if (st != HS_OK)
        goto abort_stage;
    st = write_visual_report(r, o, stage, ctx, path);
    if (st == HS_ERR_ENV) {
        *plots = 0;
        st = HS_OK;
    }
    if (st != HS_OK)
        goto abort_stage;
    return hs_stage_commit(stage, o->out_dir, plot_report_owns);

abort_stage:
    if (stage[0]) {
        hs_stage_abort(stage);
        hs_log_error("%s: no report written; an earlier one there is left as it was",
                     o->out_dir);
    }
    return st;
}

/* Write the report files (-o), then print the result whatever became of them: a report
 * that could not be written is said on stderr and sets the exit code; without gnuplot the
 * report has tables only (warned) and the exit code is 3 (CLI.md: an environment problem;
 * validate -o exits 0 there, its live measurements being what it keeps). */
static int emit(const rec_report_t *r, const struct rec_cli_opts *o,
                const pred_engine_ops_t *eng, const profile_t *p, const char *path,
                const trace_t *tr)
{
    hs_status_t st = HS_OK;
    int plots = 1;

    if (o->out_dir)
        st = write_reports(r, o, &(pred_ctx_t){eng, tr, p, NULL}, path, &plots);
    if (o->json) {
        cJSON *j = rec_report_to_json(r, eng, p, path, tr);
        char *text = j ? cJSON_Print(j) : NULL;
        cJSON_Delete(j);
        if (!text)
            return 1;
        printf("%s\n", text);
        free(text);
    } else {
        print_text(r, p, eng);
        if (o->out_dir && st == HS_OK)
            printf("\nwrote %s/report.json, %s/report.md, %s/report.html%s\n", o->out_dir,
                   o->out_dir, o->out_dir, plots ? " and plots" : " (tables only: no gnuplot)");
    }
    if (st == HS_OK && !plots)
        return hs_status_exit_code(HS_ERR_ENV);
    return st == HS_OK ? 0 : hs_status_exit_code(st);
}

int cmd_recommend(int argc, char **argv)
{
    struct rec_cli_opts o = {0};
    rec_opts_t ro = {0};
    rec_report_t rep = {0};
    const pred_engine_ops_t *eng = NULL;
    uint64_t *cands = NULL;
    profile_t *p = NULL;
    trace_t *tr = NULL;
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_rec_spec, argc, argv, &o, &pos, &npos);

    if (rc >= 0) {
        hs_opt_free(&g_rec_spec, &o, pos);
        return rc;
    }
    if ((rc = parse_rec_opts(&o, &ro, &cands, &eng)) != 0 ||
        (rc = cli_profile_open(o.profile, &o.set, &p)) != 0 ||
        (rc = cli_trace_open(pos[0], &tr)) != 0)
        goto out;
    ro.pred.trace_name = pos[0];
    hs_status_t st = rec_run(eng, tr, p, &ro, &rep);
    if (st != HS_OK) {
        rc = hs_status_exit_code(st);
        goto out;
    }
    rep.engine_detail = pred_engine_detail(eng);
    rc = emit(&rep, &o, eng, p, pos[0], tr);
    rec_report_release(&rep);
out:
    free(cands);
    profile_free(p);
    trace_free(tr);
    hs_opt_free(&g_rec_spec, &o, pos);
    return rc;
}
