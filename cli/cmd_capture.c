/* cmd_capture.c - `hintsim capture`: the live capture group: `bench` (here) and `run` (the
 * LD_PRELOAD interposer, cmd_capture_run.c). Thin: options in, cap_bench_run, output. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_bench.h"
#include "cli/cli.h"
#include "cli/cli_live.h"
#include "common/hs_util.h"
#include "traces/trace_convert.h"

struct bench_opts {
    cli_live_args_t live;
    const char *sizes;
    const char *hint;
    uint64_t iters;
    uint64_t warmup;
    const char *out;
    const char *to;
    const char *phases;
    double gap_us;
    int json;
};

#define O(f) offsetof(struct bench_opts, f)
static const hs_opt_t g_bench_opts[] = {
    CLI_LIVE_CONN_OPTS(struct bench_opts, "wait for a --connect peer and answer it",
                       "run against a --server on HOST"),
    {"sizes", 's', HS_OPT_STR, O(sizes), "LIST", NULL, "message sizes, e.g. 8,4K,64K"},
    {"hint", 0, HS_OPT_STR, O(hint), "LIST", "0", "low-latency hint(s) in bytes; 0 = none"},
    {"iters", 'n', HS_OPT_U64, O(iters), "N", "1000", "measured iterations per phase"},
    {"warmup", 0, HS_OPT_U64, O(warmup), "N", "100", "warm-up iterations (flagged cold)"},
    {"mem", 0, HS_OPT_STR, O(live.mem), "host|cuda", "host", "buffer memory kind"},
    {"profile", 'p', HS_OPT_STR, O(live.profile), "P", "generic", "profile for the path settings"},
    {"set", 0, HS_OPT_LIST, O(live.set), "KEY=VALUE", NULL, "override one profile parameter"},
    CLI_LIVE_TIMEOUT_OPT(struct bench_opts),
    {"output", 'o', HS_OPT_STR, O(out), "TRACE", NULL,
     "trace file to write (.hst/.csv/.jsonl; '-': standard output, with --to)"},
    {"to", 0, HS_OPT_STR, O(to), "hst|csv|jsonl", NULL,
     "the trace's format where -o's name does not say it ('-', a FIFO)"},
    {"phases", 0, HS_OPT_STR, O(phases), "LIST", "all", "pingpong,latency,stream (any subset)"},
    {"gap-us", 0, HS_OPT_DOUBLE, O(gap_us), "US", "0",
     "latency phase: post message i at i x US after the first (0: once the last is done)"},
    {"json", 0, HS_OPT_FLAG, O(json), NULL, NULL, "print the report as JSON"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef O

static const hs_cmd_spec_t g_bench_spec = {
    "hintsim capture bench --device DEV [--server | --connect HOST] [--port N] --sizes LIST "
    "[--hint H] [--iters N] [--warmup N] [--mem host|cuda] [-o TRACE]",
    "measure each size on its path: ping-pong round trip/2, post-to-completion, stream",
    g_bench_opts, 0, 0,
    "Without -o no trace is written: the summary only (text, or --json). Without\n"
    "--server/--connect one thread plays both ends over the device (not perftest's setup:\n"
    "capture/README.md). Messages\n"
    "<= hint take the LL path (shallow queue, every WR signalled, inline), others the BW\n"
    "path (deep queue, selective signalling, segments, CQ moderation or its emulation).\n"
    "Exit 3: no such device (the devices present are listed) or no CUDA; exit 1: a limit\n"
    "exceeded, the peer gone or a work completion in error (its status is named)."};

static int bench_parse_lists(const struct bench_opts *a, cap_bench_opts_t *o, uint64_t **sizes,
                             uint64_t **hints)
{
    size_t n = 0;

    if (!a->live.server && !a->sizes) {
        fprintf(stderr, "hintsim: capture bench: --sizes is required\n");
        return 2;
    }
    if (a->sizes && hs_parse_size_list(a->sizes, sizes, &o->nsizes) != HS_OK) {
        fprintf(stderr, "hintsim: capture bench: --sizes '%s': not a list of sizes\n", a->sizes);
        return 2;
    }
    if (hs_parse_size_list(a->hint, hints, &n) != HS_OK) {
        fprintf(stderr, "hintsim: capture bench: --hint '%s': not a list of sizes\n", a->hint);
        return 2;
    }
    if (cap_bench_parse_phases(a->phases, &o->phases) != HS_OK) {
        fprintf(stderr, "hintsim: capture bench: --phases '%s': a list of pingpong, latency, "
                "stream, or all\n", a->phases);
        return 2;
    }
    o->sizes = *sizes;
    o->hints = *hints;
    o->nhints = n;
    return -1;
}

static int cmd_capture_bench(int argc, char **argv)
{
    struct bench_opts a = {0};
    cap_bench_opts_t o = {0};
    uint64_t *sizes = NULL, *hints = NULL;
    cJSON *rep = NULL;
    char **pos = NULL;
    int npos = 0, rc = hs_cli_parse(&g_bench_spec, argc, argv, &a, &pos, &npos);
    trace_fmt_t fmt = TRACE_FMT_UNKNOWN; /* no -o: no trace */
    hs_status_t st;

    if (rc >= 0)
        goto free_all;
    if (!a.live.device) {
        fprintf(stderr, "hintsim: capture bench: --device is required\n");
        rc = 2;
        goto free_all;
    }
    rc = bench_parse_lists(&a, &o, &sizes, &hints);
    if (rc >= 0)
        goto free_all;
    o.live = cli_live_opts(&a.live);
    o.iters = a.iters;
    o.warmup = a.warmup;
    o.gap_us = a.gap_us;
    o.out_path = a.out;
    /* the output is written after the whole measurement: a wrong name fails now */
    if (a.out && (st = trace_fmt_pick(a.to, a.out, TRACE_OUT_TRACES, &fmt)) != HS_OK) {
        rc = hs_status_exit_code(st);
        goto free_all;
    }
    o.out_fmt = (int)fmt;
    if (a.out && hs_check_out_path(a.out) != HS_OK) {
        rc = 1;
        goto free_all;
    }
    st = cap_bench_run(&o, &rep);
    if ((rc = hs_status_exit_code(st)) != 0)
        goto free_all;
    /* -o -: the trace went to stdout, so the report goes to stderr */
    FILE *fp = a.out && strcmp(a.out, "-") == 0 ? stderr : stdout;
    if (a.json) {
        char *txt = cJSON_Print(rep);
        if (txt)
            fprintf(fp, "%s\n", txt);
        free(txt);
    } else {
        cap_bench_print(rep, fp);
    }
free_all:
    cJSON_Delete(rep);
    free(sizes);
    free(hints);
    hs_opt_free(&g_bench_spec, &a, pos);
    return rc;
}

static const hs_cli_cmd_t g_capture_cmds[] = {
    {"bench", cmd_capture_bench, "benchmark sizes (and hints) on a live device, write a trace"},
    {"run", cmd_capture_run, "record any verbs program's work requests (LD_PRELOAD), one trace per process"},
    {NULL, NULL, NULL},
};

int cmd_capture(int argc, char **argv)
{
    return hs_cli_dispatch("hintsim capture", g_capture_cmds, argc, argv);
}
