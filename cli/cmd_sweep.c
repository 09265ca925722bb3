/* cmd_sweep.c - `hintsim sweep`: expand a what-if grid into points, run those not done yet
 * (locally with --jobs, over MPI ranks with --mpi, or one Slurm slice with --slice), then
 * merge the point files into sweep.csv, sweep.json and the plots: once, in the one process
 * that merges (sweep_run.h); a slice never merges, --merge only merges. --emit-slurm writes
 * the Slurm script (array + merge job) instead of running. The grid format is sweep/GRID.md.
 */
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/hs_util.h"
#include "sweep/sweep_eval_model.h"
#ifdef HS_HAVE_CUDA_SWEEP
#include "sweep/sweep_eval_cuda.h"
#endif
#include "sweep/sweep_file.h"
#include "sweep/sweep_grid.h"
#include "sweep/sweep_mpi.h"
#include "sweep/sweep_out.h"
#include "sweep/sweep_plot.h"
#include "sweep/sweep_point.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_slurm.h"

struct sweep_opts {
    hs_strlist_t traces, profiles, sets;
    const char *grid, *out, *emit_slurm, *slice, *slices_arg, *engine;
    uint64_t jobs, slices;
    int mpi, json, quiet, no_plots, merge;
};

#define O(f) offsetof(struct sweep_opts, f)
static const hs_opt_t g_sweep_opts[] = {
    {"grid", 'g', HS_OPT_STR, O(grid), "GRID.json", NULL, "the grid to sweep (sweep/GRID.md); - = standard input"},
    {"output", 'o', HS_OPT_STR, O(out), "DIR", NULL, "output directory (points/, sweep.csv, sweep.json, plots/)"},
    {"trace", 't', HS_OPT_LIST, O(traces), "FILE", NULL, "add a trace to the grid's"},
    {"profile", 'p', HS_OPT_LIST, O(profiles), "P", NULL, "add a profile (name or file) to the grid's"},
    {"set", 0, HS_OPT_LIST, O(sets), "KEY=VALUE", NULL, "override a profile parameter at every point"},
    {"jobs", 'j', HS_OPT_U64, O(jobs), "N", "0", "local worker processes (0 = one per core)"},
    {"engine", 0, HS_OPT_STR, O(engine), "cpu|cuda", "cpu", "where the model's points are computed: CPU workers, or the GPU in batches (one GPU per process/rank; sweep/README.md)"},
    {"mpi", 0, HS_OPT_FLAG, O(mpi), NULL, NULL, "split the points across MPI ranks (run under mpirun); rank 0 merges"},
    {"slice", 0, HS_OPT_STR, O(slice), "I/N", NULL, "run only the points whose index % N == I (a Slurm array task); merges nothing (see --merge)"},
    {"emit-slurm", 0, HS_OPT_STR, O(emit_slurm), "FILE", NULL, "write a Slurm script (array of slices + merge job; submit with bash FILE), run nothing; - = standard output"},
    {"slices", 0, HS_OPT_STR, O(slices_arg), "N", NULL, "array tasks for --emit-slurm only (0 or left out: points/8 rounded up, 1 to 64; at most 1000)"},
    {"merge", 0, HS_OPT_FLAG, O(merge), NULL, NULL, "compute nothing: write the merged outputs from the point files (exit 1 if some are missing)"},
    {"no-plots", 0, HS_OPT_FLAG, O(no_plots), NULL, NULL, "write sweep.csv and sweep.json only"},
    {"json", 0, HS_OPT_FLAG, O(json), NULL, NULL, "print the run's summary as JSON"},
    {"quiet", 'q', HS_OPT_FLAG, O(quiet), NULL, NULL, "no progress bar or info messages"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
#undef O

static const hs_cmd_spec_t g_sweep_spec = {
    "hintsim sweep --grid GRID.json [--trace T ...] [--profile P ...] [--set K=V ...] -o DIR",
    "what-if grid over traces, profiles, parameters and hints; resumable, local/MPI/Slurm",
    g_sweep_opts, 0, 0,
    "Each point's result is one file under DIR/points named by the hash of its inputs, so an\n"
    "interrupted sweep resumes where it stopped. Under MPI: mpirun -n N hintsim sweep ... --mpi.\n"
    "Slurm: --emit-slurm FILE, then bash FILE (submits the array and its merge job; DIR on a\n"
    "file system every node shares). The grid format is in sweep/GRID.md.",
};

/* Everything one invocation holds; released in run_release. */
typedef struct {
    const struct sweep_opts *o;
    sweep_grid_t *grid;
    sweep_plan_t *plan;
    sweep_eval_t ev;
    sweep_stats_t stats;
    sweep_run_opts_t ro;
    int complete, nplots;
    size_t missing;   /* points without a result when merging */
    uint64_t t0_ns;
} sweep_cmd_t;

/* --slices N: only with --emit-slurm (it is the script's array size; --slice I/N runs one). */
static int check_slices(struct sweep_opts *o)
{
    if (!o->slices_arg)
        return -1;
    if (!o->emit_slurm) {
        fprintf(stderr, "hintsim sweep: --slices %s: needs --emit-slurm (it sets the number "
                "of array tasks in the script; to run one slice use --slice I/N)\n",
                o->slices_arg);
        return 2;
    }
    if (hs_parse_u64(o->slices_arg, &o->slices) != HS_OK) {
        fprintf(stderr, "hintsim sweep: --slices '%s': expected a non-negative integer\n",
                o->slices_arg);
        return 2;
    }
    return -1;
}

static int check_usage(struct sweep_opts *o, sweep_run_opts_t *ro)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int rc;

    if (!o->grid || !o->out) {
        fprintf(stderr, "hintsim sweep: --grid and -o DIR are required\nusage: %s\n",
                g_sweep_spec.usage);
        return 2;
    }
    if (o->slice && sweep_slice_parse(o->slice, &ro->slice_i, &ro->slice_n) != HS_OK) {
        fprintf(stderr, "hintsim sweep: --slice '%s': expected I/N with 0 <= I < N\n", o->slice);
        return 2;
    }
    if (o->emit_slurm && (o->mpi || o->slice || o->merge)) {
        fprintf(stderr, "hintsim sweep: --emit-slurm runs nothing; drop --mpi/--slice/--merge\n");
        return 2;
    }
    if (o->merge && (o->mpi || o->slice)) {
        fprintf(stderr, "hintsim sweep: --merge computes nothing; drop --mpi/--slice\n");
        return 2;
    }
    if (strcmp(o->grid, "-") == 0 && (o->emit_slurm || o->mpi)) {
        fprintf(stderr, "hintsim sweep: --grid -: %s; give the grid as a file\n",
                o->mpi ? "only one MPI rank could read standard input"
                       : "the Slurm jobs read the grid again");
        return 2;
    }
    if ((rc = check_slices(o)) >= 0)
        return rc;
    if (o->jobs > 1024) {
        fprintf(stderr, "hintsim sweep: --jobs %" PRIu64 ": at most 1024\n", o->jobs);
        return 2;
    }
    ro->dir = o->out;
    ro->mpi = o->mpi;
    ro->jobs = o->jobs ? (unsigned)o->jobs : (unsigned)(cores > 0 ? cores : 1);
    return -1;
}

/* The evaluator --engine names: the model on the CPU, or on the GPU (sweep_eval_cuda.h). */
static hs_status_t eval_create(const struct sweep_opts *o, sweep_cmd_t *c)
{
    if (!o->engine || strcmp(o->engine, "cpu") == 0)
        return sweep_eval_model_create(c->grid, &c->ev);
    if (strcmp(o->engine, "cuda") != 0) {
        hs_log_error("--engine '%s': expected cpu or cuda", o->engine);
        return HS_ERR_USAGE;
    }
#ifdef HS_HAVE_CUDA_SWEEP
    return sweep_eval_cuda_create(c->grid, &c->ev);
#else
    hs_log_error("--engine cuda: this hintsim was built without the CUDA engine (%s)",
                 HS_CUDA_SWEEP_WHY);
    return HS_ERR_UNSUPPORTED;
#endif
}

static void eval_destroy(sweep_eval_t *ev)
{
#ifdef HS_HAVE_CUDA_SWEEP
    if (ev->ops && strcmp(ev->ops->name, "cuda") == 0) {
        sweep_eval_cuda_destroy(ev);
        return;
    }
#endif
    sweep_eval_model_destroy(ev);
}

static hs_status_t prepare(const struct sweep_opts *o, sweep_cmd_t *c)
{
    sweep_grid_extra_t x = {o->traces.v, o->traces.n, o->profiles.v, o->profiles.n,
                            o->sets.v, o->sets.n};
    hs_status_t st;

    if ((st = sweep_grid_load(o->grid, &x, &c->grid)) != HS_OK)
        return st;
    if ((st = sweep_grid_hash_traces(c->grid)) != HS_OK)
        return st;
    if ((st = eval_create(o, c)) != HS_OK)
        return st;
    if ((st = c->ev.ops->check(c->ev.ctx, c->grid)) != HS_OK)
        return st;
    if ((st = sweep_plan_build(c->grid, &c->plan)) != HS_OK)
        return st;
    return sweep_point_keys(c->grid, c->plan, &c->ev);
}

/* An absolute path for a file that exists (or for dir, after creating it). */
static char *abs_path(const char *p)
{
    char *r = realpath(p, NULL);

    if (!r)
        hs_log_error("%s: cannot resolve path", p);
    return r;
}

/* The command line each Slurm task runs: this binary and the same inputs, absolute. */
static hs_status_t emit_slurm(const struct sweep_opts *o, sweep_cmd_t *c)
{
    const char *args[64 + 3 * 256];
    char *own[8 + 2 * 256];
    size_t na = 0, no = 0;
    unsigned slices = o->slices ? (unsigned)o->slices
                                : sweep_slurm_default_slices(c->plan->n);
    sweep_slurm_script_t sc;
    hs_status_t st = HS_ERR_INVALID;

    if (o->traces.n + o->profiles.n > 256 || o->sets.n > 256) {
        hs_log_error("--emit-slurm: at most 256 --trace/--profile and 256 --set options");
        return HS_ERR_INVALID;
    }
    if (slices > 1000 || slices > c->plan->n)
        slices = (unsigned)(c->plan->n < 1000 ? c->plan->n : 1000);
    if ((st = hs_mkdir_p(o->out)) != HS_OK)
        return st;
    st = HS_ERR_INVALID;
    if (!(own[no++] = abs_path("/proc/self/exe")) || !(own[no++] = abs_path(o->grid)) ||
        !(own[no++] = abs_path(o->out)))
        goto out;
    args[na++] = own[0];
    args[na++] = "sweep";
    args[na++] = "--grid";
    args[na++] = own[1];
    args[na++] = "-o";
    args[na++] = own[2];
    for (size_t i = 0; i < o->traces.n; i++) {
        if (!(own[no++] = abs_path(o->traces.v[i])))
            goto out;
        args[na++] = "--trace";
        args[na++] = own[no - 1];
    }
    for (size_t i = 0; i < o->profiles.n; i++) {
        int file = access(o->profiles.v[i], F_OK) == 0;
        if (file && !(own[no++] = abs_path(o->profiles.v[i])))
            goto out;
        args[na++] = "--profile";
        args[na++] = file ? own[no - 1] : o->profiles.v[i];
    }
    for (size_t i = 0; i < o->sets.n; i++) {
        args[na++] = "--set";
        args[na++] = o->sets.v[i];
    }
    if (o->no_plots)
        args[na++] = "--no-plots";
    if (o->engine) {
        args[na++] = "--engine";
        args[na++] = o->engine;
    }
    sc = (sweep_slurm_script_t){o->emit_slurm, args, na, c->plan->n, slices, own[2]};
    if ((st = sweep_slurm_mark_dir(own[2])) != HS_OK || (st = sweep_slurm_write(&sc)) != HS_OK)
        goto out;
    if (strcmp(o->emit_slurm, "-") != 0)
        hs_log_info("wrote %s: %zu points in %u array tasks and a merge job (submit with: "
                    "bash %s)", o->emit_slurm, c->plan->n, slices, o->emit_slurm);
out:
    while (no > 0)
        free(own[--no]);
    return st;
}

/* Remove the temporaries that killed writers left in DIR, DIR/points and DIR/plots. */
static hs_status_t sweep_stale(const char *dir)
{
    static const char *const sub[] = {"", "/points", "/plots"};
    char path[4200];
    hs_status_t st = HS_OK;

    for (size_t i = 0; i < 3 && st == HS_OK; i++) {
        snprintf(path, sizeof(path), "%s%s", dir, sub[i]);
        st = sweep_file_sweep_stale(path, SWEEP_TMP_STALE_S, NULL);
    }
    return st;
}

/* The merge step, in the one process that merges: the merged outputs when every point has
 * its file. */
static hs_status_t merge(void *ctx)
{
    sweep_cmd_t *c = ctx;
    const struct sweep_opts *o = c->o;
    sweep_result_t *res = NULL;
    size_t missing = 0;
    hs_status_t st = sweep_stale(o->out);

    if (st != HS_OK)
        return st;
    st = sweep_out_collect(c->plan, o->out, &res, &missing);
    if (st != HS_OK)
        return st;
    c->missing = missing;
    if (missing) {
        int removed = 0;
        /* An earlier grid's sweep.csv/json must not pass for this grid's results. */
        st = sweep_out_drop_stale(c->grid, c->plan, o->out, &removed);
        goto out;
    }
    c->complete = 1;
    if ((st = sweep_out_drop_views(o->out, o->no_plots ? NULL : c->grid)) != HS_OK ||
        (st = sweep_out_write(c->grid, c->plan, res, o->out)) != HS_OK)
        goto out;
    if (!o->no_plots)
        st = sweep_plot_all(c->grid, c->plan, res, o->out, &c->nplots);
out:
    free(res);
    return st;
}

static void print_json(const struct sweep_opts *o, const sweep_cmd_t *c, double secs)
{
    const sweep_stats_t *s = &c->stats;

    printf("{\"points\": %zu, \"mine\": %zu, \"reused\": %zu, \"computed\": %zu, "
           "\"ranks\": %d, \"jobs\": %u, \"slice\": \"%u/%u\", \"merged\": %s, "
           "\"complete\": %s, \"plots\": %d, \"elapsed_s\": %.6f, \"run_s\": %.6f, "
           "\"points_per_s\": %.3f, \"computed_indices\": [",
           s->total, s->mine, s->reused, s->computed, s->nranks, c->ro.mpi ? 1 : c->ro.jobs,
           c->ro.slice_i, c->ro.slice_n, s->merged ? "true" : "false",
           c->complete ? "true" : "false", c->nplots, secs, s->run_s,
           s->run_s > 0 ? (double)s->computed / s->run_s : 0.0);
    for (size_t i = 0; i < s->ndone; i++)
        printf("%s%zu", i ? ", " : "", s->done_idx[i]);
    if (s->merged) /* what the merge found; a slice does not look */
        printf("], \"missing\": %zu, ", c->missing);
    else
        printf("], \"missing\": null, ");
    /* The merged files only when this run wrote them for this grid: null otherwise. */
    if (c->complete)
        printf("\"csv\": \"%s/sweep.csv\", \"json\": \"%s/sweep.json\"}\n", o->out, o->out);
    else
        printf("\"csv\": null, \"json\": null}\n");
}

static void print_text(const struct sweep_opts *o, const sweep_cmd_t *c, double secs)
{
    const sweep_stats_t *s = &c->stats;

    printf("sweep: %zu points; this run: %zu computed, %zu already done (not recomputed)",
           s->mine, s->computed, s->reused);
    if (c->ro.mpi)
        printf(", %d MPI ranks", s->nranks);
    printf(", %.2f s\n", secs);
    if (c->complete)
        printf("results: %s/sweep.csv, %s/sweep.json; plots: %d in %s/plots\n", o->out,
               o->out, c->nplots, o->out);
    else if (s->merged)
        printf("merge incomplete: %zu of %zu points have no result yet, so no sweep.csv or "
               "sweep.json (run the slices that failed, then merge again)\n", c->missing,
               s->total);
    else
        printf("slice %u/%u done; the merge is a step of its own: once every slice has ended, "
               "run the same command with --merge instead of --slice (the Slurm script's "
               "merge job does)\n", c->ro.slice_i, c->ro.slice_n);
}

/* --merge: compute nothing, merge what the point files hold; missing points fail it. */
static hs_status_t merge_only(sweep_cmd_t *c)
{
    hs_status_t st;

    c->stats.total = c->plan->n;
    c->stats.nranks = 1;
    c->stats.merged = 1;
    if ((st = merge(c)) != HS_OK || !c->missing)
        return st;
    hs_log_error("%s: merge incomplete: %zu of %zu points have no result file in %s/points. "
                 "If every slice succeeded, that folder is not on a file system shared by "
                 "the nodes that ran them (sweep/GRID.md)", c->o->grid, c->missing,
                 c->plan->n, c->o->out);
    return HS_ERR_CHECK;
}

/* A slice does not merge; it still removes another grid's merged outputs from DIR. */
static hs_status_t slice_drop_stale(sweep_cmd_t *c)
{
    int removed = 0;

    return sweep_out_drop_stale(c->grid, c->plan, c->o->out, &removed);
}

static int run_sweep(const struct sweep_opts *o, sweep_cmd_t *c)
{
    hs_status_t st = prepare(o, c);
    double secs;

    if (st != HS_OK)
        return hs_status_exit_code(st);
    if (o->emit_slurm)
        return hs_status_exit_code(emit_slurm(o, c));
    if (c->ro.mpi)
        c->ro.jobs = 1;
    /* Every point allocates and frees per-message arrays; by default glibc hands the heap
     * top back to the kernel after each point and faults it in again on the next, which made
     * a local sweep 8x slower than the same sweep under mpirun (Open MPI disables trimming):
     * 30 s against 4 s for 96 points on a loaded 2-core VM. Keep the heap instead. */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (o->merge) {
        st = merge_only(c);
    } else {
        c->ro.merge = merge;
        c->ro.merge_ctx = c;
        st = sweep_run(c->grid, c->plan, &c->ev, &c->ro, &c->stats);
        if (st != HS_OK && !c->stats.merged) /* the run failed (logged) */
            return hs_status_exit_code(st);
        if (c->stats.rank != 0)
            return 0;
        if (!c->stats.merged)
            st = slice_drop_stale(c);
    }
    secs = (double)(hs_now_ns() - c->t0_ns) / 1e9;
    if (o->json)
        print_json(o, c, secs);
    else if (!o->quiet)
        print_text(o, c, secs);
    return hs_status_exit_code(st);
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_opts o;
    sweep_cmd_t c;
    char **pos = NULL;
    int npos = 0, rc;

    memset(&o, 0, sizeof(o));
    memset(&c, 0, sizeof(c));
    c.o = &o;
    c.t0_ns = hs_now_ns();
    rc = hs_cli_parse(&g_sweep_spec, argc, argv, &o, &pos, &npos);
    if (rc >= 0)
        return rc;
    rc = check_usage(&o, &c.ro);
    if (rc < 0) {
        hs_log_set_quiet(o.quiet);
        rc = run_sweep(&o, &c);
    }
    if (o.mpi)
        sweep_mpi_finalize();
    sweep_stats_release(&c.stats);
    if (c.ev.ops)
        eval_destroy(&c.ev);
    sweep_plan_free(c.plan);
    sweep_grid_free(c.grid);
    hs_opt_free(&g_sweep_spec, &o, pos);
    return rc;
}
