/* test_sweep_run.c - the sweep engines over the closed-form stand-in evaluator: local runs
 * with 1 and 3 workers agree byte for byte, a sweep killed midway resumes without
 * recomputing finished points, Slurm slices cover every point exactly once, exactly one
 * process merges (4 local workers: the parent, once; a slice: none; a failed run: none),
 * the generated Slurm script passes `bash -n` and runs its slice or merge step, and a
 * failing point stops the run with its error. */
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "sweep/sweep_grid.h"
#include "sweep/sweep_out.h"
#include "sweep/sweep_point.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_slurm.h"
#include "tests/hs_test.h"
#include "tests/test_sweep_fake.h"

typedef struct {
    char *dir;
    sweep_grid_t *g;
    sweep_plan_t *plan;
    test_sweep_fake_t fake;
    sweep_eval_t ev;
} rfix_t;

static const char *k_grid =
    "{\"traces\": [\"a.hst\"], \"profiles\": [\"p1\", \"p2\"],\n"
    " \"vary\": {\"ll.depth\": [16, 32, 64], \"bw.depth\": [128, 512]},\n"
    " \"hints\": [0, 4096, 65536], \"objective\": \"p99\"}";

static int setup(void **state)
{
    rfix_t *f = calloc(1, sizeof(*f));
    char path[4200];

    f->dir = hs_test_tmpdir();
    snprintf(path, sizeof(path), "%s/a.hst", f->dir);
    test_sweep_write(path, "some trace bytes");
    snprintf(path, sizeof(path), "%s/grid.json", f->dir);
    test_sweep_write(path, k_grid);
    f->fake.fail_index = SIZE_MAX;
    f->ev.ops = &test_sweep_fake_ops;
    f->ev.ctx = &f->fake;
    if (sweep_grid_load(path, NULL, &f->g) != HS_OK || sweep_grid_hash_traces(f->g) != HS_OK ||
        sweep_plan_build(f->g, &f->plan) != HS_OK ||
        sweep_point_keys(f->g, f->plan, &f->ev) != HS_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    rfix_t *f = *state;
    char cmd[4200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    sweep_plan_free(f->plan);
    sweep_grid_free(f->g);
    free(f->dir);
    free(f);
    return 0;
}

/* Run the whole sweep into dir/sub and merge; returns the CSV text (caller frees). */
static char *run_and_merge(rfix_t *f, const char *sub, unsigned jobs, sweep_stats_t *stats)
{
    char out[4200];
    sweep_run_opts_t ro = {.dir = out, .jobs = jobs};
    sweep_result_t *res = NULL;
    size_t missing = 99;
    char *csv = NULL, path[4300];

    snprintf(out, sizeof(out), "%s/%s", f->dir, sub);
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, stats), HS_OK);
    assert_int_equal(sweep_out_collect(f->plan, out, &res, &missing), HS_OK);
    assert_int_equal(missing, 0);
    for (size_t i = 0; i < f->plan->n; i++)
        assert_true(res[i].value == test_sweep_fake_value(f->g, &f->plan->pts[i]));
    assert_int_equal(sweep_out_write(f->g, f->plan, res, out), HS_OK);
    free(res);
    snprintf(path, sizeof(path), "%s/sweep.csv", out);
    assert_int_equal(hs_read_file(path, &csv, NULL), HS_OK);
    return csv;
}

static void test_local_jobs_agree(void **state)
{
    rfix_t *f = *state;
    sweep_stats_t s1, s3;
    char *c1 = run_and_merge(f, "j1", 1, &s1), *c3 = run_and_merge(f, "j3", 3, &s3);

    assert_int_equal(f->plan->n, 36);
    assert_int_equal(s1.computed, 36);
    assert_int_equal(s3.computed, 36);
    assert_int_equal(s3.reused, 0);
    assert_string_equal(c1, c3);
    /* the best over hints is 4096 in the fake: flagged on the middle hint of each block */
    assert_non_null(strstr(c1, "\n1,"));
    assert_non_null(strstr(c1, ",4096,p99,model,open,4096,"));
    free(c1);
    free(c3);
    sweep_stats_release(&s1);
    sweep_stats_release(&s3);
}

static size_t count_points(const char *dir, struct stat *st_out, uint64_t *keys_out)
{
    char pdir[4200], path[4500];
    DIR *d;
    struct dirent *e;
    size_t n = 0;

    snprintf(pdir, sizeof(pdir), "%s/points", dir);
    if (!(d = opendir(pdir)))
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len != 21 || strcmp(e->d_name + 16, ".json") != 0)
            continue; /* skips ".", "..", and temporaries of a killed writer */
        if (st_out) {
            snprintf(path, sizeof(path), "%s/%s", pdir, e->d_name);
            stat(path, &st_out[n]);
            keys_out[n] = strtoull(e->d_name, NULL, 16);
        }
        n++;
    }
    closedir(d);
    return n;
}

static void test_resume_after_kill(void **state)
{
    rfix_t *f = *state;
    char out[4200];
    sweep_run_opts_t ro = {.dir = out, .jobs = 1};
    struct stat before[64], after[64];
    uint64_t kb[64], ka[64];
    sweep_stats_t s;
    size_t nb, na;
    pid_t pid;
    int ws;

    snprintf(out, sizeof(out), "%s/killed", f->dir);
    f->fake.delay_us = 30000;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sweep_stats_t cs;
        _exit(sweep_run(f->g, f->plan, &f->ev, &ro, &cs) == HS_OK ? 0 : 1);
    }
    for (int i = 0; i < 2000 && count_points(out, NULL, NULL) < 5; i++)
        usleep(2000);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFSIGNALED(ws)); /* killed midway, not finished */
    nb = count_points(out, before, kb);
    assert_true(nb >= 5 && nb < f->plan->n);
    sleep(1); /* a rewrite would show a later mtime */
    f->fake.delay_us = 0;
    f->fake.evals = 0;
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
    assert_int_equal(s.reused, nb);
    assert_int_equal(s.computed, f->plan->n - nb);
    assert_int_equal(f->fake.evals, f->plan->n - nb); /* only the rest was evaluated */
    na = count_points(out, after, ka);
    assert_int_equal(na, f->plan->n);
    for (size_t i = 0; i < nb; i++) {
        size_t j = 0;
        while (j < na && ka[j] != kb[i])
            j++;
        assert_true(j < na);
        assert_int_equal(after[j].st_ino, before[i].st_ino);
        assert_int_equal(after[j].st_mtim.tv_sec, before[i].st_mtim.tv_sec);
        assert_int_equal(after[j].st_mtim.tv_nsec, before[i].st_mtim.tv_nsec);
    }
    sweep_stats_release(&s);
}

static void test_slices_cover_once(void **state)
{
    rfix_t *f = *state;
    char out[4200];
    unsigned nslices = 5;
    unsigned seen[64] = {0};
    size_t total = 0;

    snprintf(out, sizeof(out), "%s/sliced", f->dir);
    for (unsigned i = 0; i < nslices; i++) {
        sweep_run_opts_t ro = {.dir = out, .jobs = 2, .slice_i = i, .slice_n = nslices};
        sweep_stats_t s;

        assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
        assert_int_equal(s.reused, 0);
        for (size_t k = 0; k < s.ndone; k++) {
            assert_true(s.done_idx[k] % nslices == i);
            seen[s.done_idx[k]]++;
        }
        total += s.ndone;
        sweep_stats_release(&s);
    }
    assert_int_equal(total, f->plan->n);
    for (size_t i = 0; i < f->plan->n; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(count_points(out, NULL, NULL), f->plan->n);
}

static void test_slurm_script(void **state)
{
    rfix_t *f = *state;
    char path[4200], *text = NULL, *out = NULL;
    const char *args[] = {"/bin/echo", "sweep", "--grid", "/x/it's here.json", "-o", "/o"};
    sweep_slurm_script_t sc = {path, args, 6, 36, 7, f->dir};

    snprintf(path, sizeof(path), "%s/job.sbatch", f->dir);
    assert_int_equal(sweep_slurm_write(&sc), HS_OK);
    assert_int_equal(hs_test_run(NULL, "bash -n '%s'", path), 0);
    assert_int_equal(hs_read_file(path, &text, NULL), HS_OK);
    assert_non_null(strstr(text, "#SBATCH --array=0-6\n"));
    assert_non_null(strstr(text, "--dependency=afterany:"));
    /* the output directory's marker is not there yet: every job refuses to run */
    assert_int_not_equal(hs_test_run(&out, "SLURM_JOB_ID=9 SLURM_ARRAY_TASK_ID=3 "
                                     "HINTSIM_SWEEP_STEP=slice bash '%s'", path), 0);
    assert_non_null(strstr(out, "not on a file system this node shares"));
    free(out);
    assert_int_equal(sweep_slurm_mark_dir(f->dir), HS_OK);
    /* array task 3: its slice, quoting intact, --jobs from the task's CPUs */
    assert_int_equal(hs_test_run(&out, "SLURM_JOB_ID=9 SLURM_ARRAY_TASK_ID=3 SLURM_CPUS_PER_TASK=4 "
                                 "HINTSIM_SWEEP_STEP=slice bash '%s' --json", path), 0);
    assert_string_equal(out, "sweep --grid /x/it's here.json -o /o --jobs 4 --slice 3/7 --json\n");
    free(out);
    /* the merge job: --merge, no slice */
    assert_int_equal(hs_test_run(&out, "SLURM_JOB_ID=10 SLURM_ARRAY_TASK_ID=0 "
                                 "HINTSIM_SWEEP_STEP=merge bash '%s' --json", path), 0);
    assert_string_equal(out, "sweep --grid /x/it's here.json -o /o --merge --json\n");
    free(out);
    /* given to sbatch directly: the slice runs, and the log says no merge job follows */
    assert_int_equal(hs_test_run(&out, "env -u HINTSIM_SWEEP_STEP SLURM_JOB_ID=9 "
                                 "SLURM_ARRAY_TASK_ID=1 bash '%s'", path), 0);
    assert_non_null(strstr(out, "no merge job"));
    assert_non_null(strstr(out, "sweep --grid /x/it's here.json -o /o --jobs 1 --slice 1/7\n"));
    free(out);
    /* run from a shell without sbatch: it says so */
    assert_int_not_equal(hs_test_run(&out, "env -u SLURM_JOB_ID PATH=/nonexistent /bin/bash '%s'",
                                     path), 0);
    assert_non_null(strstr(out, "sbatch not found"));
    free(out);
    free(text);
}

static void test_default_slices(void **state)
{
    (void)state;
    assert_int_equal(sweep_slurm_default_slices(0), 1);
    assert_int_equal(sweep_slurm_default_slices(1), 1);
    assert_int_equal(sweep_slurm_default_slices(SWEEP_SLURM_MIN_PER_TASK), 1);
    assert_int_equal(sweep_slurm_default_slices(SWEEP_SLURM_MIN_PER_TASK + 1), 2);
    assert_int_equal(sweep_slurm_default_slices(48), 48 / SWEEP_SLURM_MIN_PER_TASK);
    assert_int_equal(sweep_slurm_default_slices(5000), SWEEP_SLURM_MAX_TASKS);
    for (size_t n = 1; n < 2000; n++) { /* never more tasks than points, never one each */
        unsigned k = sweep_slurm_default_slices(n);
        assert_true(k >= 1 && k <= n && k <= SWEEP_SLURM_MAX_TASKS);
        assert_true(n < 2 * SWEEP_SLURM_MIN_PER_TASK || k < n);
    }
}

/* The merge step's stand-in: one line "<pid>" per call, appended to the file ctx names. */
static hs_status_t count_merge(void *ctx)
{
    FILE *fp = fopen(ctx, "a");

    if (!fp)
        return HS_ERR_IO;
    fprintf(fp, "%ld\n", (long)getpid());
    return fclose(fp) == 0 ? HS_OK : HS_ERR_IO;
}

/* Lines of the merge log, and the pid on its first line (0 if none). */
static int merges(const char *log, long *pid)
{
    char *text = NULL;
    int n = 0;

    *pid = 0;
    if (hs_read_file(log, &text, NULL) != HS_OK)
        return 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    *pid = atol(text);
    free(text);
    return n;
}

static void test_merge_once(void **state)
{
    rfix_t *f = *state;
    char out[4200], log[4300];
    sweep_run_opts_t ro = {.dir = out, .jobs = 4, .merge = count_merge, .merge_ctx = log};
    sweep_stats_t s;
    long pid;

    snprintf(out, sizeof(out), "%s/merge", f->dir);
    snprintf(log, sizeof(log), "%s/merges.log", f->dir);
    f->fake.delay_us = 2000; /* every worker takes points */
    /* slices: none merges, not even the one that finishes the sweep */
    for (unsigned i = 0; i < 3; i++) {
        ro.slice_i = i;
        ro.slice_n = 3;
        assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
        assert_false(s.merged);
        sweep_stats_release(&s);
    }
    assert_int_equal(merges(log, &pid), 0);
    /* a failed run does not merge */
    ro.slice_n = 0;
    f->fake.fail_index = 5;
    snprintf(out, sizeof(out), "%s/merge2", f->dir);
    assert_int_not_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
    assert_int_equal(merges(log, &pid), 0);
    /* 4 workers: once, in this process, after every point is done */
    f->fake.fail_index = SIZE_MAX;
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
    assert_true(s.merged);
    assert_int_equal(merges(log, &pid), 1);
    assert_int_equal(pid, (long)getpid());
    assert_int_equal(count_points(out, NULL, NULL), f->plan->n);
    sweep_stats_release(&s);
    /* a run with nothing left still merges, once */
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
    assert_int_equal(s.computed, 0);
    assert_int_equal(merges(log, &pid), 2);
    sweep_stats_release(&s);
}

static void test_slice_parse(void **state)
{
    unsigned i = 9, n = 9;

    (void)state;
    assert_int_equal(sweep_slice_parse("3/7", &i, &n), HS_OK);
    assert_int_equal(i, 3);
    assert_int_equal(n, 7);
    assert_int_equal(sweep_slice_parse("7/7", &i, &n), HS_ERR_INVALID);
    assert_int_equal(sweep_slice_parse("0/0", &i, &n), HS_ERR_INVALID);
    assert_int_equal(sweep_slice_parse("-1/3", &i, &n), HS_ERR_INVALID);
    assert_int_equal(sweep_slice_parse("1/", &i, &n), HS_ERR_INVALID);
    assert_int_equal(sweep_slice_parse("1/3x", &i, &n), HS_ERR_INVALID);
}

static void test_failing_point(void **state)
{
    rfix_t *f = *state;
    char out[4200];
    sweep_run_opts_t ro = {.dir = out, .jobs = 2};
    sweep_stats_t s;

    snprintf(out, sizeof(out), "%s/fail", f->dir);
    f->fake.fail_index = 7;
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_ERR_INVALID);
    assert_true(count_points(out, NULL, NULL) < f->plan->n);
    f->fake.fail_index = SIZE_MAX;
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
    assert_int_equal(count_points(out, NULL, NULL), f->plan->n);
    sweep_stats_release(&s);
}

/* A point whose evaluation gives a non-finite figure fails, and keeps no file: a NaN would
 * be merged, ranked (never better, so a first row of NaN stayed the best) and printed. */
static void test_nonfinite_point(void **state)
{
    rfix_t *f = *state;
    char out[4200];
    sweep_run_opts_t ro = {.dir = out, .jobs = 2};
    sweep_result_t r;
    sweep_stats_t s;

    snprintf(out, sizeof(out), "%s/nan", f->dir);
    f->fake.nan_index1 = 7 + 1;
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_ERR_INVALID);
    assert_int_equal(sweep_point_load(out, f->plan->pts[7].key, &r), HS_ERR_IO);
    f->fake.nan_index1 = 0;
    assert_int_equal(sweep_run(f->g, f->plan, &f->ev, &ro, &s), HS_OK);
    assert_int_equal(count_points(out, NULL, NULL), f->plan->n);
    assert_int_equal(sweep_point_load(out, f->plan->pts[7].key, &r), HS_OK);
    assert_true(isfinite(r.value));
    sweep_stats_release(&s);
}

/* A point's result file with one figure of its "result" replaced by a JSON text: null (as
 * cJSON writes NaN) or a number that parses to infinity (1e999). */
static void point_figure_set(const char *dir, uint64_t key, const char *name, const char *json)
{
    static const char mark[] = "123456789.5";
    char path[4400], *text = NULL, *fixed, *at;
    cJSON *root, *res;

    sweep_point_path(dir, key, path, sizeof(path));
    assert_int_equal(hs_read_file(path, &text, NULL), HS_OK);
    root = cJSON_Parse(text);
    free(text);
    res = cJSON_GetObjectItemCaseSensitive(root, "result");
    assert_non_null(res);
    assert_true(cJSON_ReplaceItemInObjectCaseSensitive(res, name, cJSON_CreateNumber(strtod(mark, NULL))));
    text = cJSON_Print(root);
    assert_non_null(at = strstr(text, mark));
    fixed = malloc(strlen(text) + strlen(json) + 1);
    sprintf(fixed, "%.*s%s%s", (int)(at - text), text, json, at + strlen(mark));
    assert_int_equal(test_sweep_write(path, fixed), 0);
    free(fixed);
    free(text);
    cJSON_Delete(root);
}

/* A point file that is damaged is recomputed, not trusted. */
static void test_damaged_point(void **state)
{
    rfix_t *f = *state;
    char out[4200], path[4400];
    sweep_result_t r;
    sweep_stats_t s;

    snprintf(out, sizeof(out), "%s/damaged", f->dir);
    free(run_and_merge(f, "damaged", 1, &s));
    sweep_stats_release(&s);
    sweep_point_path(out, f->plan->pts[4].key, path, sizeof(path));
    assert_int_equal(test_sweep_write(path, "{\"key\": \"trunc"), 0);
    assert_int_equal(sweep_point_load(out, f->plan->pts[4].key, &r), HS_ERR_INVALID);
    free(run_and_merge(f, "damaged", 1, &s));
    assert_int_equal(s.computed, 1);
    assert_int_equal(s.done_idx[0], 4);
    sweep_stats_release(&s);
    /* well-formed JSON whose figure is not finite: damaged too (it merged as NaN, exit 0) */
    point_figure_set(out, f->plan->pts[5].key, "value", "null");
    point_figure_set(out, f->plan->pts[9].key, "p99_us", "1e999");
    assert_int_equal(sweep_point_load(out, f->plan->pts[5].key, &r), HS_ERR_INVALID);
    assert_int_equal(sweep_point_load(out, f->plan->pts[9].key, &r), HS_ERR_INVALID);
    free(run_and_merge(f, "damaged", 1, &s)); /* checks every value against the fake's */
    assert_int_equal(s.computed, 2);
    sweep_stats_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_local_jobs_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_after_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slices_cover_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_script, setup, teardown),
        cmocka_unit_test(test_default_slices),
        cmocka_unit_test_setup_teardown(test_merge_once, setup, teardown),
        cmocka_unit_test(test_slice_parse),
        cmocka_unit_test_setup_teardown(test_failing_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_point, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nonfinite_point, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
