/* cmd_validate.c - `hintsim validate TRACE --device DEV ...`: live replay per candidate hint,
 * predicted vs measured. Thin: options in, cap_validate_run, output. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_validate.h"
#include "cli/cli.h"
#include "cli/cli_live.h"
#include "plots/report_val.h"
#include "common/hs_util.h"
#include "model/predict/objective.h"

struct validate_opts {
    cli_live_args_t live;
    const char *hints;
    uint64_t repeat;
    const char *mode;
    const char *objective;
    uint64_t limit;
    uint64_t seed;
    uint64_t classes;
    const char *outdir;
    const char *messages;
    int json;
    int quiet;
};

#define O(f) offsetof(struct validate_opts, f)
static const hs_opt_t g_opts[] = {
    CLI_LIVE_CONN_OPTS(struct validate_opts, "wait for a --connect peer and answer it",
                       "run against a --server on HOST"),
    {"hint", 0, HS_OPT_STR, O(hints), "auto|LIST", "auto", "candidate hints (first = recommended)"},
    {"hints", 0, HS_OPT_STR, O(hints), "auto|LIST", NULL, HS_OPT_OLD_NAME("hint")},
    {"profile", 'p', HS_OPT_STR, O(live.profile), "P", "generic",
     "profile for predictions and paths"},
    {"set", 0, HS_OPT_LIST, O(live.set), "KEY=VALUE", NULL, "override one profile parameter"},
    {"repeat", 'r', HS_OPT_U64, O(repeat), "R", "5", "rounds; candidate order shuffled each"},
    {"classes", 0, HS_OPT_U64, O(classes), "N", "6", "auto: classes of hints to measure (1-16)"},
    {"mode", 0, HS_OPT_STR, O(mode), "open|closed", "open", "replay at the trace's times or closed loop"},
    {"objective", 0, HS_OPT_STR, O(objective), "NAME", "p99", OBJ_FIGURE_CHOICES},
    {"limit", 0, HS_OPT_U64, O(limit), "N", "0", "replay only the first N messages (0 = all)"},
    {"seed", 0, HS_OPT_U64, O(seed), "S", "1", "seed of the shuffles and the bootstrap"},
    {"mem", 0, HS_OPT_STR, O(live.mem), "host|cuda", "host", "buffer memory kind"},
    CLI_LIVE_TIMEOUT_OPT(struct validate_opts),
    {"output", 'o', HS_OPT_STR, O(outdir), "DIR", NULL, "write DIR/validate.json and report.html"},
    {"messages", 0, HS_OPT_STR, O(messages), "FILE", NULL,
     "write every measured message as CSV: predicted beside measured"},
    {"json", 0, HS_OPT_FLAG, O(json), NULL, NULL, "print the report as JSON"},
    {"quiet", 'q', HS_OPT_FLAG, O(quiet), NULL, NULL, "no progress bar or round lines"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef O

static const hs_cmd_spec_t g_spec = {
    "hintsim validate TRACE --device DEV [--server | --connect HOST] [--hint auto|LIST] "
    "[--profile P] [--repeat R] [-o DIR] [--json]",
    "replay a trace on a live device per candidate hint; measured next to predicted",
    g_opts, 0, 1,
    "Candidates are classes of hints: hints that route every message of the trace alike are\n"
    "one configuration, measured once and shown as a range. Auto: the recommended hint, the\n"
    "runner-up, 0, everything-LL (the largest size) and classes spread between by quantiles\n"
    "of the trace's distinct sizes, --classes in all. The summary (\"validation\") gives the\n"
    "regret of the recommendation against the best measured class, the rank correlation of\n"
    "predicted and measured objective (from 4 classes up) and the median |error|, each with\n"
    "a 95% bootstrap interval over the rounds; whether the recommendation is worse than the\n"
    "best beyond the noise; and whether the hint takes effect on this device at all.\n"
    "The --server end needs no TRACE and writes no report (-o is the --connect end's).\n"
    "--messages FILE: one CSV row per candidate, round and message, to see which messages\n"
    "a prediction misses; its header:\n" CAP_MESSAGES_HEADER};

static int parse_rest(const struct validate_opts *a, int npos, cap_validate_opts_t *o,
                      uint64_t **hints)
{
    char names[128];

    if (!a->live.device || (!a->live.server && npos != 1)) {
        fprintf(stderr, "hintsim: validate: TRACE and --device are required\n");
        return 2;
    }
    if (a->live.server && a->outdir) { /* it wrote nothing and failed after the whole run */
        fprintf(stderr, "hintsim: validate: -o belongs to the --connect end: the --server end "
                "only answers, the measurements and the report are the client's\n");
        return 2;
    }
    if (a->messages && (a->live.server || strcmp(a->messages, "-") == 0)) {
        fprintf(stderr, "hintsim: validate: --messages %s: %s\n", a->messages,
                a->live.server ? "belongs to the --connect end, which measures"
                          : "name a file (the report is on standard output)");
        return 2;
    }
    if (a->classes < 1 || a->classes > CAP_MAX_CANDIDATES) {
        fprintf(stderr, "hintsim: validate: --classes %llu: 1 to %d\n",
                (unsigned long long)a->classes, CAP_MAX_CANDIDATES);
        return 2;
    }
    if (strcmp(a->hints, "auto") != 0 &&
        hs_parse_size_list(a->hints, hints, &o->nhints) != HS_OK) {
        fprintf(stderr, "hintsim: validate: --hint '%s': 'auto' or a list of sizes\n", a->hints);
        return 2;
    }
    o->hints = *hints;
    if (strcmp(a->mode, "open") != 0 && strcmp(a->mode, "closed") != 0) {
        fprintf(stderr, "hintsim: validate: --mode '%s': open or closed\n", a->mode);
        return 2;
    }
    o->mode = strcmp(a->mode, "open") == 0 ? PRED_OPEN : PRED_CLOSED;
    if (obj_parse(a->objective, &o->objective) != HS_OK || !obj_is_figure(o->objective)) {
        fprintf(stderr, "hintsim: validate: --objective '%s': %s\n", a->objective,
                obj_list(names, sizeof(names), 1));
        return 2;
    }
    return -1;
}

static hs_status_t emit(const struct validate_opts *a, const cJSON *rep)
{
    char *txt = cJSON_Print(rep);
    hs_status_t st = HS_OK;

    if (!txt)
        return HS_ERR_NOMEM;
    /* validate.json, report.html and the plots, as a whole */
    if (a->outdir &&
        (st = rep_write_validate_dir(a->outdir, txt, rep, a->live.profile, &a->live.set)) != HS_OK)
        goto free_txt;
    if (a->json)
        printf("%s\n", txt);
    else
        cap_validate_print(rep, stdout);
free_txt:
    free(txt);
    return st;
}

int cmd_validate(int argc, char **argv)
{
    struct validate_opts a = {0};
    cap_validate_opts_t o = {0};
    uint64_t *hints = NULL;
    cJSON *rep = NULL;
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_spec, argc, argv, &a, &pos, &npos);
    hs_status_t st;

    if (rc >= 0)
        goto free_all;
    rc = parse_rest(&a, npos, &o, &hints);
    if (rc >= 0)
        goto free_all;
    o.live = cli_live_opts(&a.live);
    o.trace_path = npos ? pos[0] : NULL;
    hs_log_set_quiet(a.quiet);
    o.repeat = a.repeat;
    o.limit = a.limit;
    o.seed = a.seed;
    o.classes = (size_t)a.classes;
    o.messages = a.messages;
    if ((st = cap_validate_run(&o, &rep)) == HS_OK)
        st = emit(&a, rep);
    rc = hs_status_exit_code(st);
free_all:
    cJSON_Delete(rep);
    free(hints);
    hs_opt_free(&g_spec, &a, pos);
    return rc;
}
