/* cmd_capture_run.c - `hintsim capture run [-o DIR] -- COMMAND [ARGS...]`: parse, run the
 * command under libhintcap (cap_run, capture/cap_run.h) and return its exit status
 * unchanged (128+N when killed by signal N, 127 when it cannot be started). Afterwards it
 * prints one line per captured process from the summary each one wrote at exit, and warns
 * when a process recorded no WR, posted outside libibverbs' post_send, or dropped records,
 * and when no process opened a verbs device at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "capture/cap_run.h"
#include "capture/preload/hcap_config.h"
#include "cli/cli.h"
#include "common/hs_util.h"

/* libhintcap's own defaults (hcap_config.h), as option text */
#define STR_(x) #x
#define STR(x) STR_(x)
#define O(f) offsetof(cap_run_opts_t, f)
static const hs_opt_t g_run_opts[] = {
    {"output", 'o', HS_OPT_STR, O(out), "DIR", "hintcap", "directory of the per-process traces"},
    {"cold", 0, HS_OPT_STR, O(cold), "N", STR(HCAP_DEFAULT_COLD),
     "first N WRs of each QP flagged cold-start"},
    {"ring-events", 0, HS_OPT_STR, O(ring), "N", STR(HCAP_DEFAULT_RING_EVENTS),
     "events buffered per thread"},
    {"block", 0, HS_OPT_FLAG, O(block), NULL, NULL,
     "wait for buffer room instead of dropping (slows the application)"},
    {"writer-cpu", 0, HS_OPT_STR, O(writer_cpu), "CPU", NULL,
     "run each process's trace writer on this CPU, off the posting threads' (default: the "
     "process's CPUs)"},
    {"config", 0, HS_OPT_STR, O(config), "FILE", NULL,
     "hint configuration file (default /etc/rdma/hint.conf)"},
    {"lib", 0, HS_OPT_STR, O(lib), "PATH", NULL, "libhintcap.so to use (default: found)"},
    {"no-audit", 0, HS_OPT_FLAG, O(no_audit), NULL, NULL,
     "LD_PRELOAD only, no LD_AUDIT (programs that dlopen libibverbs are then not captured)"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef O
#undef STR
#undef STR_

static const hs_cmd_spec_t g_run_spec = {
    "hintsim capture run [-o DIR] [--cold N] [--ring-events N] [--block] [--writer-cpu CPU] "
    "[--no-audit] -- COMMAND [ARGS...]",
    "record every send WR of any verbs application (LD_PRELOAD + LD_AUDIT), one trace per "
    "process",
    g_run_opts, 1, -1,
    "Each process that opens a verbs device writes DIR/<host>-<pid>[-r<rank>].hst (rank from\n"
    "OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID or RANK) and a summary\n"
    "beside it (.summary.json); one line per process is printed at the end, with a warning\n"
    "for a process that recorded no WR or posted outside libibverbs. The header holds the\n"
    "process's effective hint (RDMA_LOW_LATENCY_HINT, the config file, or the application)\n"
    "and records dropped. Under a launcher, the environment must reach the ranks (Open MPI\n"
    "on several hosts: mpirun -x LD_PRELOAD -x LD_AUDIT -x HINTCAP_DIR -x HINTCAP_RUN ...).\n"
    "Compare the processes with 'hintsim trace audit DIR'. Exit status: the command's own."};

/* "0x1a, 0x2b" from the summary's outside.qp_nums. */
static void qpn_list(const cJSON *out, char *buf, size_t len)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(out, "qp_nums"), *e;
    size_t used = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(e, a) {
        int n = snprintf(buf + used, len - used, "%s0x%x", used ? ", " : "",
                         cJSON_IsNumber(e) ? (unsigned)e->valuedouble : 0u);

        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(out, "more_qps")) && used + 8 < len)
        snprintf(buf + used, len - used, ", ...");
}

/* One line for a process, and its warnings. */
static void report_one(const char *dir, const cJSON *j)
{
    const cJSON *out = cJSON_GetObjectItemCaseSensitive(j, "outside");
    const char *dev = *cap_run_str(j, "device") ? cap_run_str(j, "device") : "a verbs device";
    double posted = cap_run_num(j, "wrs_posted"), dropped = cap_run_num(j, "dropped");
    double ocomp = cap_run_num(out, "completions");
    char rank[32] = "", qpns[200];

    if (cap_run_num(j, "rank") >= 0)
        snprintf(rank, sizeof(rank), " rank %.0f,", cap_run_num(j, "rank"));
    hs_log_info("capture run: process %.0f on %s,%s %s: %.0f QPs (%.0f posting), %.0f WRs "
                "posted, %.0f completed, %.0f dropped -> %s/%s", cap_run_num(j, "pid"), cap_run_str(j, "host"),
                rank, dev, cap_run_num(j, "qps_seen"), cap_run_num(j, "qps_posting"), posted,
                cap_run_num(j, "wrs_completed"), dropped, dir, cap_run_str(j, "trace"));
    if (posted == 0)
        hs_log_warn("process %.0f opened %s but recorded no WR: nothing was posted through "
                    "libibverbs' post_send; either it only served as a target (of RDMA writes "
                    "or reads) or it posted around libibverbs (mlx5 direct verbs / DevX, "
                    "UCX's accelerated transports, GPU-initiated IBGDA/NVSHMEM), which the "
                    "interposer cannot see", cap_run_num(j, "pid"), dev);
    if (ocomp > 0) {
        qpn_list(out, qpns, sizeof(qpns));
        hs_log_warn("process %.0f: posted outside libibverbs: %.0f send completions on %.0f "
                    "QP%s (qp_num %s) that posted nothing through the hooks; those WRs are not "
                    "in the trace", cap_run_num(j, "pid"), ocomp, cap_run_num(out, "qps"),
                    cap_run_num(out, "qps") == 1 ? "" : "s", qpns);
    }
    if (dropped > 0)
        hs_log_warn("process %.0f dropped %.0f records (its ring was full: --ring-events N, "
                    "or --block)", cap_run_num(j, "pid"), dropped);
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "trace_written")))
        hs_log_warn("process %.0f could not write its trace %s/%s", cap_run_num(j, "pid"), dir,
                    cap_run_str(j, "trace"));
}

/* One line per summary of this run, in name order; or the message that no process opened a
 * device. Only prints: the exit status stays the command's. */
static void report_run(const cap_run_result_t *res)
{
    if (res->nprocs == 0) {
        hs_log_warn("capture run: no process opened a verbs device: nothing was captured in "
                    "%s%s", res->dir, res->audit ? "" : " (without LD_AUDIT, programs that "
                    "dlopen libibverbs are not seen)");
        return;
    }
    for (size_t i = 0; i < res->nprocs; i++)
        report_one(res->dir, res->procs[i].j);
}

/* Check what the options say before anything runs: sizes and counts must parse. */
static int check_opts(const cap_run_opts_t *o)
{
    uint64_t v;

    if (hs_parse_u64(o->cold, &v) != HS_OK) {
        fprintf(stderr, "hintsim: capture run: --cold '%s': not a count\n", o->cold);
        return 2;
    }
    if (hs_parse_size(o->ring, &v) != HS_OK || v == 0) {
        fprintf(stderr, "hintsim: capture run: --ring-events '%s': not a count\n", o->ring);
        return 2;
    }
    if (o->writer_cpu && hcap_cpu_parse(o->writer_cpu) < 0) {
        fprintf(stderr, "hintsim: capture run: --writer-cpu '%s': not a CPU number below %d\n",
                o->writer_cpu, CPU_SETSIZE);
        return 2;
    }
    return 0;
}

/* Why libhintcap.so was not found: the path given is the only one tried. */
static int lib_missing(const cap_run_opts_t *o)
{
    const char *env = getenv("HINTCAP_LIB");

    if (o->lib || env) {
        fprintf(stderr, "hintsim: capture run: %s %s: no such file\n",
                o->lib ? "--lib" : "$HINTCAP_LIB", o->lib ? o->lib : env);
        return 1;
    }
    fprintf(stderr, "hintsim: capture run: libhintcap.so not found (looked next to the hintsim "
            "binary, in the build tree and in ../lib/hintsim); build the 'hintcap' target or "
            "pass --lib PATH\n");
    return 3;
}

int cmd_capture_run(int argc, char **argv)
{
    cap_run_opts_t o;
    cap_run_result_t res = {0};
    char **pos = NULL;
    int npos = 0, rc;

    memset(&o, 0, sizeof(o));
    rc = hs_cli_parse(&g_run_spec, argc, argv, &o, &pos, &npos);
    if (rc >= 0)
        goto free_opts;
    if ((rc = check_opts(&o)) != 0)
        goto free_opts;
    if (cap_run(&o, pos, &res) != HS_OK) {
        rc = lib_missing(&o);
        goto free_opts;
    }
    rc = res.status;
    if (res.dir[0])
        report_run(&res);
    cap_run_result_release(&res);
free_opts:
    hs_opt_free(&g_run_spec, &o, pos);
    return rc;
}
