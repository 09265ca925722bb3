/* cmd_trace.c - `hintsim trace`: info, validate, salvage, convert, gen, workloads (and
 * audit, implemented in cmd_trace_audit.c).
 * Each subcommand parses its option table and calls the trace library; the library logs
 * errors (file, block, byte offset, line) and this file maps statuses to exit codes. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "traces/trace.h"
#include "traces/trace_check.h"
#include "traces/trace_convert.h"
#include "traces/trace_gen.h"
#include "traces/trace_perfetto.h"
#include "traces/trace_stats.h"

#define END_OPTS {NULL, 0, 0, 0, NULL, NULL, NULL}

static int exit_of(hs_status_t st) { return hs_status_exit_code(st); }

/* ---- info ------------------------------------------------------------------------- */

struct info_opts {
    int json;
};

static const hs_opt_t g_info_opts[] = {
    {"json", 0, HS_OPT_FLAG, offsetof(struct info_opts, json), NULL, NULL, "print JSON"},
    END_OPTS,
};
static const hs_cmd_spec_t g_info_spec = {
    "hintsim trace info FILE [--json]",
    "Header, record count, size histogram, time span, completion coverage, cold starts, path split.",
    g_info_opts, 1, 1,
    "FILE may be .hst, CSV, JSON Lines or perftest -U output (recognised by content); - or a "
    "pipe is read too."};

static int trace_info(int argc, char **argv)
{
    struct info_opts o = {0};
    trace_stats_t s;
    trace_t *tr = NULL;
    char **pos = NULL, *json;
    int npos, rc = hs_cli_parse(&g_info_spec, argc, argv, &o, &pos, &npos);
    hs_status_t st;

    if (rc >= 0)
        goto out;
    if ((st = trace_load(pos[0], &tr)) != HS_OK || (st = trace_stats_compute(tr, &s)) != HS_OK) {
        rc = exit_of(st);
        goto out;
    }
    rc = 0;
    if (!o.json) {
        trace_stats_print(stdout, pos[0], tr, &s);
    } else if ((json = trace_stats_json(pos[0], tr, &s)) != NULL) {
        printf("%s\n", json);
        free(json);
    } else {
        rc = exit_of(HS_ERR_NOMEM);
    }
out:
    trace_free(tr);
    hs_opt_free(&g_info_spec, &o, pos);
    return rc;
}

/* ---- validate --------------------------------------------------------------------- */

static const hs_opt_t g_no_opts[] = {END_OPTS};
static const hs_cmd_spec_t g_validate_spec = {
    "hintsim trace validate FILE",
    "Check a trace completely; exit 0 if intact, 1 naming the first bad block and byte offset.",
    g_no_opts, 1, 1, NULL};

static int trace_validate_cmd(int argc, char **argv)
{
    trace_validate_t v;
    char **pos = NULL;
    int npos, rc = hs_cli_parse(&g_validate_spec, argc, argv, NULL, &pos, &npos);
    hs_status_t st;

    if (rc >= 0)
        goto out;
    st = trace_validate(pos[0], &v);
    rc = exit_of(st);
    if (st != HS_OK)
        goto out;
    if (v.is_hst)
        printf("%s: ok: format v%d, %" PRIu64 " blocks, %" PRIu64 " records, %" PRIu64
               " dropped by the producer\n", pos[0], TRACE_FORMAT_VERSION, v.blocks, v.records,
               v.dropped);
    else
        printf("%s: ok: %" PRIu64 " records (text format: no blocks or checksums)\n", pos[0],
               v.records);
out:
    hs_opt_free(&g_validate_spec, NULL, pos);
    return rc;
}

/* ---- salvage ---------------------------------------------------------------------- */

struct out_opts {
    const char *out;
};

static const hs_opt_t g_out_opts[] = {
    {"output", 'o', HS_OPT_STR, offsetof(struct out_opts, out), "OUT", NULL,
     "output file (required; written atomically)"},
    END_OPTS,
};
static const hs_cmd_spec_t g_salvage_spec = {
    "hintsim trace salvage FILE -o OUT",
    "Copy every intact block of a damaged .hst trace into a new, valid trace.",
    g_out_opts, 1, 1,
    "After damage the reader resynchronises on the next block magic. Prints what was kept\n"
    "and lost; the output's dropped count includes the records known lost."};

/* Where a command's one-line summary goes: stdout, unless the output itself goes there ("-",
 * /dev/stdout, a pipe or FIFO). */
static FILE *note_fp(const char *out)
{
    struct stat sb;

    return strcmp(out, "-") == 0 || (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode)) ? stderr
                                                                                  : stdout;
}

static int need_out(const hs_cmd_spec_t *spec, const char *out)
{
    if (out)
        return 0;
    fprintf(stderr, "hintsim: option -o OUT is required\nusage: %s\n", spec->usage);
    return 2;
}

static void salvage_report(FILE *fp, const char *in, const char *out, const trace_salvage_t *r)
{
    fprintf(fp, "%s: kept %" PRIu64 " blocks (%" PRIu64 " records)", in, r->kept_blocks,
           r->kept_records);
    if (r->end_ok)
        fprintf(fp, " of %" PRIu64 " blocks (%" PRIu64 " records); lost %" PRIu64
                " blocks (%" PRIu64 " records)", r->total_blocks, r->total_records, r->lost_blocks, r->lost_records);
    else
        fprintf(fp, "; end block %s, so the totals are unknown; lost at least %" PRIu64 " blocks (%"
               PRIu64 " records)", r->totals_inconsistent ? "inconsistent with the blocks kept"
               : r->end_damaged ? "damaged" : "missing", r->lost_blocks, r->lost_records);
    if (r->dup_blocks)
        fprintf(fp, "; %" PRIu64 " duplicate block(s) dropped (%" PRIu64 " records)", r->dup_blocks,
               r->dup_records);
    if (r->dup_end_blocks)
        fprintf(fp, "; %" PRIu64 " duplicate end block(s) dropped", r->dup_end_blocks);
    if (r->end_misplaced)
        fprintf(fp, "; end block out of place (record blocks after it)");
    if (r->reordered_blocks)
        fprintf(fp, "; %" PRIu64 " block(s) out of sequence order put back in order",
               r->reordered_blocks);
    if (r->unordered_blocks)
        fprintf(fp, "; %" PRIu64 " block(s) too far out of order kept where found",
               r->unordered_blocks);
    if (r->damaged_regions)
        fprintf(fp, "; %" PRIu64 " damaged region(s), %" PRIu64 " bytes skipped, first at byte offset "
               "%" PRIu64 " (%s)", r->damaged_regions, r->skipped_bytes, r->first_bad_offset,
               r->first_bad_why);
    else
        fprintf(fp, "; no damage found");
    fprintf(fp, "%s; wrote %s\n", r->header_ok ? (r->file_header_ok ? "" : "; file header damaged, "
           "its JSON header kept") : "; header lost, provenance written as unknown", out);
}

static int trace_salvage_cmd(int argc, char **argv)
{
    struct out_opts o = {0};
    trace_salvage_t res;
    char **pos = NULL;
    int npos, rc = hs_cli_parse(&g_salvage_spec, argc, argv, &o, &pos, &npos);

    if (rc >= 0 || (rc = need_out(&g_salvage_spec, o.out)) != 0)
        goto out;
    if ((rc = exit_of(trace_salvage(pos[0], o.out, &res))) == 0)
        salvage_report(note_fp(o.out), pos[0], o.out, &res);
out:
    hs_opt_free(&g_salvage_spec, &o, pos);
    return rc;
}

/* ---- convert ---------------------------------------------------------------------- */

/* The format to write out in (trace_fmt_pick: --to, else out's name); 2 after the error
 * and the usage when neither names one of set, or they differ. */
static int out_fmt_pick(const hs_cmd_spec_t *spec, const char *to, const char *out,
                        trace_out_set_t set, trace_fmt_t *fmt)
{
    if (trace_fmt_pick(to, out, set, fmt) == HS_OK)
        return 0;
    fprintf(stderr, "usage: %s\n", spec->usage);
    return 2;
}

struct convert_opts {
    const char *out, *to;
    int quiet;
};

static const hs_opt_t g_convert_opts[] = {
    {"output", 'o', HS_OPT_STR, offsetof(struct convert_opts, out), "OUT", NULL,
     "output file, '-' for standard output (required; a file is written atomically)"},
    {"to", 0, HS_OPT_STR, offsetof(struct convert_opts, to), "hst|csv|jsonl|perfetto|chrome-json",
     NULL, "output format (default: by OUT's extension: .hst .csv .jsonl .pftrace .json)"},
    {"quiet", 'q', HS_OPT_FLAG, offsetof(struct convert_opts, quiet), NULL, NULL,
     "no summary line (errors still print)"},
    END_OPTS,
};

static const hs_cmd_spec_t g_convert_spec = {
    "hintsim trace convert IN -o OUT [--to hst|csv|jsonl|perfetto|chrome-json]",
    "Convert between .hst, .csv and .jsonl (by OUT's extension); IN may also be perftest -U "
    "output; export to Perfetto.",
    g_convert_opts, 1, 1,
    "IN and OUT may be '-' (standard input, output) or a FIFO; OUT then needs --to.\n"
    "perftest: run e.g. `ib_write_lat -s 64 -n 1000 -U > lat.txt`; the per-iteration latencies\n"
    "become a ping-pong trace (posts back to back, completion = post + latency).\n"
    "perfetto (.pftrace): a Perfetto protobuf trace for ui.perfetto.dev and trace_processor: a\n"
    "track per QP and path, each message a slice from post to completion, path switches as\n"
    "instants, the queue depth per QP as a counter (traces/trace_perfetto.h).\n"
    "chrome-json (.json): the same as Chrome trace-event JSON (chrome://tracing).\n"
    "Both are one way: no reader takes them back."};

/* What convert writes every reader takes back: a record with completion before post or
 * both path bits set (an .hst reader carries them, the text readers refuse them) is
 * refused here, before any output, naming it. */
static hs_status_t convert_check(const char *path, const trace_t *tr)
{
    size_t first = 0, bad;
    char why[200];

    if ((bad = trace_count_insane(tr, &first, why, sizeof(why))) == 0)
        return HS_OK;
    hs_log_error("%s: record %zu (and %zu more): %s; not converted, since no reader would "
                 "take it back ('hintsim trace validate' names them)", path, first, bad - 1,
                 why);
    return HS_ERR_INVALID;
}

static hs_status_t convert_write(trace_fmt_t fmt, const char *out, const trace_t *tr,
                                 const char *in)
{
    switch (fmt) {
    case TRACE_FMT_PERFETTO:
        return trace_perfetto_save(out, tr, in);
    case TRACE_FMT_CHROME_JSON:
        return trace_chrome_json_save(out, tr, in);
    default:
        return trace_save_as(out, fmt, tr);
    }
}

static int trace_convert_cmd(int argc, char **argv)
{
    struct convert_opts o = {0};
    trace_t *tr = NULL;
    char **pos = NULL;
    int npos, rc = hs_cli_parse(&g_convert_spec, argc, argv, &o, &pos, &npos);
    trace_fmt_t fmt;
    hs_status_t st;

    if (rc >= 0 || (rc = need_out(&g_convert_spec, o.out)) != 0 ||
        (rc = out_fmt_pick(&g_convert_spec, o.to, o.out, TRACE_OUT_VIEWERS, &fmt)) != 0)
        goto out;
    if ((st = trace_load(pos[0], &tr)) != HS_OK || (st = convert_check(pos[0], tr)) != HS_OK ||
        (st = convert_write(fmt, o.out, tr, pos[0])) != HS_OK) {
        rc = exit_of(st);
        goto out;
    }
    rc = 0;
    if (!o.quiet)
        fprintf(note_fp(o.out), "%s: %zu records written to %s\n", pos[0], tr->n, o.out);
out:
    trace_free(tr);
    hs_opt_free(&g_convert_spec, &o, pos);
    return rc;
}

/* ---- gen -------------------------------------------------------------------------- */

struct gen_opts {
    const char *workload, *out, *to;
    uint64_t count, seed;
    hs_strlist_t set;
    int all, quiet;
    uint64_t min_bytes, max_bytes, factor;
};

static const hs_opt_t g_gen_opts[] = {
    {"workload", 'w', HS_OPT_STR, offsetof(struct gen_opts, workload), "NAME", NULL,
     "workload (see 'hintsim trace workloads'; required)"},
    {"count", 'n', HS_OPT_U64, offsetof(struct gen_opts, count), "N", "10000", "records"},
    {"seed", 's', HS_OPT_U64, offsetof(struct gen_opts, seed), "S", "0", "random seed"},
    {"set", 0, HS_OPT_LIST, offsetof(struct gen_opts, set), "KEY=VALUE", NULL,
     "override a workload parameter"},
    {"output", 'o', HS_OPT_STR, offsetof(struct gen_opts, out), "FILE", NULL,
     "output .hst/.csv/.jsonl, '-' for standard output (required)"},
    {"to", 0, HS_OPT_STR, offsetof(struct gen_opts, to), "hst|csv|jsonl", NULL,
     "output format (default: by FILE's extension; needed for '-' or a FIFO)"},
    {"all", 'a', HS_OPT_FLAG, offsetof(struct gen_opts, all), NULL, NULL,
     "every size from 2 B to 8 MB, doubling (perftest -a; stream, pingpong)"},
    {"minbytes", 'b', HS_OPT_SIZE, offsetof(struct gen_opts, min_bytes), "SIZE", NULL,
     "the smallest size of a range (nccl-tests -b; --set size=)"},
    {"maxbytes", 'e', HS_OPT_SIZE, offsetof(struct gen_opts, max_bytes), "SIZE", NULL,
     "the largest size of a range (nccl-tests -e; --set size_max=)"},
    {"stepfactor", 'f', HS_OPT_U64, offsetof(struct gen_opts, factor), "F", NULL,
     "each size of the range the previous times F (nccl-tests -f; --set size_factor=)"},
    {"quiet", 'q', HS_OPT_FLAG, offsetof(struct gen_opts, quiet), NULL, NULL,
     "no summary line (errors still print)"},
    END_OPTS,
};
static const hs_cmd_spec_t g_gen_spec = {
    "hintsim trace gen --workload NAME [--count N] [--seed S] [--set KEY=VALUE ...] "
    "[-a | -b SIZE -e SIZE -f F] [-q] -o FILE "
    "[--to hst|csv|jsonl]",
    "Generate a synthetic trace; the same seed gives a byte-identical file.",
    g_gen_opts, 0, 0,
    "Parameters and their defaults: 'hintsim trace workloads --verbose'. The effective values\n"
    "are recorded in the header's extra JSON. A size range (-a, or -b/-e/-f as nccl-tests)\n"
    "splits the records evenly over its sizes, smallest first: `trace gen -w stream -a -n\n"
    "23000` is 1000 messages each of 2 B, 4 B, ... 8 MB, as ib_write_bw -a runs them."};

/* The --set list with -a, -b, -e, -f turned into the workload's size range parameters
 * (after the user's own --set, so they win); into sets (cap 3 more than o->set), whose
 * strings live in buf. Returns how many, or -1 (said, usage) when the workload has no
 * size range. */
static int gen_sets(const struct gen_opts *o, const char **sets, char buf[3][48])
{
    const trace_gen_workload_t *w = trace_gen_find(o->workload);
    uint64_t lo = o->all ? 2 : o->min_bytes, hi = o->all ? 8u << 20 : o->max_bytes;
    int n = 0, ranged = 0;

    for (size_t i = 0; i < o->set.n; i++)
        sets[n++] = o->set.v[i];
    if (!o->all && !lo && !hi && !o->factor)
        return n;
    for (const trace_gen_param_t *p = w->params; p->key; p++)
        ranged |= strcmp(p->key, "size_max") == 0;
    if (!ranged) {
        fprintf(stderr, "hintsim: -a, -b, -e and -f make a size range, which workload '%s' "
                "has not (stream and pingpong have)\nusage: %s\n", o->workload,
                g_gen_spec.usage);
        return -1;
    }
    if (o->min_bytes) /* -b and -e with -a: the range from/to there */
        lo = o->min_bytes;
    if (o->max_bytes)
        hi = o->max_bytes;
    const char *keys[3] = {"size", "size_max", "size_factor"};
    const uint64_t vals[3] = {lo, hi, o->factor};
    for (int k = 0; k < 3; k++) {
        if (!vals[k])
            continue;
        snprintf(buf[k], sizeof(buf[k]), "%s=%" PRIu64, keys[k], vals[k]);
        sets[n++] = buf[k];
    }
    return n;
}

static int trace_gen_cmd(int argc, char **argv)
{
    struct gen_opts o = {0};
    char **pos = NULL;
    int npos, rc = hs_cli_parse(&g_gen_spec, argc, argv, &o, &pos, &npos);
    trace_fmt_t fmt = TRACE_FMT_UNKNOWN;
    hs_status_t st;

    if (rc >= 0 || (rc = need_out(&g_gen_spec, o.out)) != 0)
        goto out;
    if (!o.workload || o.count == 0) {
        fprintf(stderr, "hintsim: %s\nusage: %s\n", o.workload ? "--count must be at least 1" :
                "option --workload NAME is required", g_gen_spec.usage);
        rc = 2;
        goto out;
    }
    if (!trace_gen_find(o.workload)) { /* a name from a fixed list: a usage error, as --mode's */
        fprintf(stderr, "hintsim: --workload '%s': unknown workload (see 'hintsim trace "
                "workloads')\nusage: %s\n", o.workload, g_gen_spec.usage);
        rc = 2;
        goto out;
    }
    /* a name that says no format is left to the generator, which checks the parameters
     * first and then refuses the name (exit 2) */
    if ((o.to || trace_out_fmt_from_ext(o.out) != TRACE_FMT_UNKNOWN) &&
        (rc = out_fmt_pick(&g_gen_spec, o.to, o.out, TRACE_OUT_TRACES, &fmt)) != 0)
        goto out;
    const char **sets = calloc(o.set.n + 3, sizeof(*sets));
    char range[3][48];
    int nsets = sets ? gen_sets(&o, sets, range) : -1;
    if (nsets < 0) {
        free(sets);
        rc = sets ? 2 : 1;
        goto out;
    }
    st = trace_gen_run_as(o.workload, o.count, o.seed, sets, (size_t)nsets, fmt, o.out);
    free(sets);
    if ((rc = exit_of(st)) == 0 && !o.quiet)
        fprintf(note_fp(o.out), "%s: %" PRIu64 " records of workload %s (seed %" PRIu64 ")\n",
                o.out, o.count, o.workload, o.seed);
out:
    hs_opt_free(&g_gen_spec, &o, pos);
    return rc;
}

/* ---- workloads -------------------------------------------------------------------- */

struct wl_opts {
    int verbose;
};

static const hs_opt_t g_wl_opts[] = {
    {"verbose", 'v', HS_OPT_FLAG, offsetof(struct wl_opts, verbose), NULL, NULL,
     "also list every parameter with its default"},
    END_OPTS,
};
static const hs_cmd_spec_t g_wl_spec = {
    "hintsim trace workloads [--verbose]", "List the generator's workloads, one line each.",
    g_wl_opts, 0, 0, NULL};

static int trace_workloads_cmd(int argc, char **argv)
{
    struct wl_opts o = {0};
    char **pos = NULL;
    int npos, rc = hs_cli_parse(&g_wl_spec, argc, argv, &o, &pos, &npos);

    if (rc < 0) {
        trace_gen_print_workloads(stdout, o.verbose);
        rc = 0;
    }
    hs_opt_free(&g_wl_spec, &o, pos);
    return rc;
}

static const hs_cli_cmd_t g_trace_cmds[] = {
    {"info", trace_info, "header, record count, size histogram, time span"},
    {"validate", trace_validate_cmd, "check a trace; exit 1 names the first bad block/offset"},
    {"salvage", trace_salvage_cmd, "copy every intact block of a damaged trace"},
    {"convert", trace_convert_cmd,
     "convert .hst/.csv/.jsonl; import perftest -U output; to Perfetto"},
    {"gen", trace_gen_cmd, "generate a synthetic workload trace"},
    {"workloads", trace_workloads_cmd, "list the generator's workloads"},
    {"audit", cmd_trace_audit, "compare the effective hints of per-process traces; merge them"},
    {NULL, NULL, NULL},
};

int cmd_trace(int argc, char **argv)
{
    return hs_cli_dispatch("hintsim trace", g_trace_cmds, argc, argv);
}
