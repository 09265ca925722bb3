/* test_sweep_cli.c - `hintsim sweep` end to end over the real model and a sample trace:
 * local run with plots; `mpirun -n 2 ... --mpi` gives byte-identical merged CSV and JSON; a
 * sweep killed with SIGKILL midway resumes without touching finished points; the
 * --emit-slurm script passes `bash -n`, and submitted through a stand-in sbatch
 * (sweep_fake_sbatch.sh) its array tasks cover every point exactly once, none merges, and
 * its merge job (afterany on the array) alone writes the same CSV and JSON; default slices;
 * a job that cannot see the output directory's marker stops naming the shared file system,
 * and --merge with points missing exits 1 saying so; sweep.json is the same however the grid
 * path was typed, `--grid -` reads standard input; the merge sweeps stale temporaries; an
 * "auto" point agrees with `hintsim recommend`, an engine "sim" point what `hintsim sim`
 * predicts; bad profiles exit 1; an incomplete merge leaves no other grid's sweep.csv/json and
 * reports none; --mpi lists the indices it computed; --profile errors name the option;
 * --slices needs --emit-slurm. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "tests/hs_test.h"
#include "tests/test_sweep_fake.h"

typedef struct {
    char *dir;
    char grid[4200];
    char big[4200];
    char *local_csv;
    char *local_json;
} cfix_t;

static int run_ok(const char *what, int rc, const char *out)
{
    if (rc != 0)
        print_error("%s: exit %d\n%s\n", what, rc, out ? out : "");
    return rc == 0;
}

static char *read_text(const char *dir, const char *rel)
{
    char path[4400], *text = NULL;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    if (hs_read_file(path, &text, NULL) != HS_OK)
        return NULL;
    return text;
}

/* Run `hintsim sweep --trace kv.hst ARGS` in the fixture's folder; its exit status, its
 * output in *out. */
static int sweep_in(const cfix_t *f, char **out, const char *args)
{
    return hs_test_run(out, "cd '%s' && '%s' sweep --trace '%s' %s", f->dir, hs_test_bin(),
                       hs_test_src("traces/samples/kv.hst"), args);
}

static int setup(void **state)
{
    cfix_t *f = calloc(1, sizeof(*f));
    char *out = NULL;
    int rc;

    *state = f;
    f->dir = hs_test_tmpdir();
    snprintf(f->grid, sizeof(f->grid), "%s/grid.json", f->dir);
    snprintf(f->big, sizeof(f->big), "%s/big.json", f->dir);
    /* 2 x 2 x 3 = 12 points on the sample key-value trace */
    test_sweep_write(f->grid, "{\"profiles\": [\"generic\"],\n"
                              " \"vary\": {\"ll.depth\": [16, 64], \"bw.depth\": [128, 512]},\n"
                              " \"hints\": [0, 4096, \"auto\"], \"objective\": \"p99\"}");
    test_sweep_write(f->big, "{\"profiles\": [\"generic\"],\n"
                             " \"vary\": {\"ll.depth\": [8, 16, 32, 64, 128, 256],"
                             " \"link.gbps\": [25, 50, 100, 200]},\n"
                             " \"hints\": [\"auto\"], \"objective\": \"mean\"}");
    rc = hs_test_run(&out, "cd '%s' && '%s' sweep --grid grid.json --trace '%s' -o local "
                     "--jobs 2 --quiet", f->dir, hs_test_bin(),
                     hs_test_src("traces/samples/kv.hst"));
    if (!run_ok("local sweep", rc, out))
        return -1;
    free(out);
    f->local_csv = read_text(f->dir, "local/sweep.csv");
    f->local_json = read_text(f->dir, "local/sweep.json");
    return f->local_csv && f->local_json ? 0 : -1;
}

static int teardown(void **state)
{
    cfix_t *f = *state;
    char cmd[4200];

    if (!f)
        return 0;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
    if (system(cmd) != 0)
        return -1;
    free(f->local_csv);
    free(f->local_json);
    free(f->dir);
    free(f);
    return 0;
}

/* Occurrences of needle in hay. */
static int count_str(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static void test_local_outputs(void **state)
{
    cfix_t *f = *state;
    char *json = read_text(f->dir, "local/sweep.json"), path[4400];
    struct stat sb;
    int lines = 0;

    assert_non_null(json);
    for (const char *s = f->local_csv; *s; s++)
        lines += *s == '\n';
    assert_int_equal(lines, 13); /* header + 12 points */
    assert_non_null(strstr(json, "\"count\":\t12"));
    assert_non_null(strstr(json, "\"engine\":\t\"model\""));
    for (int i = 0; i < 3; i++) {
        const char *png[] = {"heatmap", "best_hint_ll.depth", "best_hint_bw.depth"};
        snprintf(path, sizeof(path), "%s/local/plots/%s.png", f->dir, png[i]);
        assert_int_equal(stat(path, &sb), 0);
        assert_true(sb.st_size > 1000);
    }
    free(json);
}

/* The nth CSV row's field col (0-based; header is row 0) as a double; fields have no commas. */
static double csv_num(const char *csv, int row, int col)
{
    const char *p = csv;

    for (int r = 0; r < row && p; r++)
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
    for (int c = 0; c < col && p; c++)
        p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
    return p ? strtod(p, NULL) : -1.0;
}

/* The sweep's own report.html: the generic profile's caveat first, then the best points,
 * whose #1 is the lowest p99 of the merged CSV (found here from the CSV), every image
 * embedded; the heatmap's colour has a unit and a range of at least 0-10% and at most 100%,
 * with plain-text labels (a key's "_n" is no subscript); without gnuplot the page is
 * written all the same, with the tables and a line saying why there is no figure. */
static void test_sweep_report(void **state)
{
    cfix_t *f = *state;
    char *html = read_text(f->dir, "local/report.html"), *gp = read_text(f->dir,
                                                                          "local/plots/heatmap.gp");
    char best[64], *out = NULL;
    double lo = INFINITY;

    assert_non_null(html);
    assert_non_null(gp);
    const char *caveat = strstr(html, "defaults only"), *bp = strstr(html, "Best points");
    assert_non_null(caveat);
    assert_non_null(bp);
    assert_true(caveat < bp);
    assert_int_equal(count_str(html, "src=\"data:image/png;base64,"), 3);
    for (int row = 1; row <= 12; row++) /* column 11: value */
        lo = fmin(lo, csv_num(f->local_csv, row, 11));
    snprintf(best, sizeof(best), "%.4g us</td>", lo);
    const char *first = strstr(bp, "<tr class=\"best\">");
    assert_non_null(first);
    assert_non_null(strstr(first, best));
    assert_true(strstr(first, best) < strstr(first, "</tr>"));
    assert_non_null(strstr(gp, "set cblabel '% worse than the best cell"));
    assert_non_null(strstr(gp, "spread < 10 ? 10 : (spread > 100 ? 100 : spread)"));
    assert_non_null(strstr(gp, "noenhanced"));
    free(html);
    free(gp);
    int rc = hs_test_run(&out, "cd '%s' && PATH=/nonexistent '%s' sweep --grid grid.json "
                         "--trace '%s' -o nogp --quiet", f->dir, hs_test_bin(),
                         hs_test_src("traces/samples/kv.hst"));
    assert_int_equal(rc, 3);
    assert_non_null(strstr(out, "gnuplot"));
    free(out);
    html = read_text(f->dir, "nogp/report.html");
    assert_non_null(html);
    assert_non_null(strstr(html, "Best points"));
    assert_non_null(strstr(html, "No figure was drawn"));
    assert_null(strstr(html, "data:image/png"));
    free(html);
}

/* The "auto" point is what `hintsim recommend` says for the same profile and overrides. */
static void test_auto_matches_recommend(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, *rec;
    double hint, value;

    assert_int_equal(hs_test_run(&out, "'%s' recommend '%s' --profile generic --set ll.depth=64 "
                                 "--set bw.depth=128 --objective p99 --json 2>/dev/null",
                                 hs_test_bin(), hs_test_src("traces/samples/kv.hst")), 0);
    rec = strstr(out, "\"recommended\"");
    assert_non_null(rec);
    assert_non_null(strstr(rec, "\"hint\":"));
    hint = strtod(strstr(rec, "\"hint\":") + 7, NULL);
    assert_non_null(strstr(rec, "\"value\":"));
    value = strtod(strstr(rec, "\"value\":") + 8, NULL);
    /* row 9 = point 8: ll.depth=64 (index 1), bw.depth=128 (index 0), hint "auto" (index 2);
     * columns: 10 hint_bytes, 11 value */
    assert_non_null(strstr(f->local_csv, "\n8,"));
    assert_true(csv_num(f->local_csv, 9, 0) == 8.0);
    assert_true(csv_num(f->local_csv, 9, 4) == 64.0);
    assert_true(csv_num(f->local_csv, 9, 5) == 128.0);
    assert_true(csv_num(f->local_csv, 9, 10) == hint);
    assert_true(fabs(csv_num(f->local_csv, 9, 11) - value) <= 1e-9 * (1.0 + fabs(value)));
    free(out);
}

/* A fixed-hint point's cost columns (cost_queue_us .. cost_base_us, after switches) are
 * `hintsim model --json`'s costs_us for the same profile, overrides and hint. */
static void test_costs_match_model(void **state)
{
    static const char *const key[] = {"queue", "drain", "coalesce", "l1", "base"};
    cfix_t *f = *state;
    char *out = NULL, needle[32];
    const char *costs, *hdr = strstr(f->local_csv, ",switches,cost_queue_us,cost_drain_us,"
                                                   "cost_coalesce_us,cost_l1_us,cost_base_us,");

    assert_non_null(hdr);
    assert_true(hdr < strchr(f->local_csv, '\n'));
    assert_int_equal(hs_test_run(&out, "'%s' model '%s' --profile generic --set ll.depth=64 "
                                 "--set bw.depth=128 --hint 4096 --json 2>/dev/null",
                                 hs_test_bin(), hs_test_src("traces/samples/kv.hst")), 0);
    costs = strstr(out, "\"costs_us\"");
    assert_non_null(costs);
    /* row 8 = point 7: ll.depth=64, bw.depth=128, hint 4096; columns 18.. the costs */
    assert_true(csv_num(f->local_csv, 8, 4) == 64.0 && csv_num(f->local_csv, 8, 5) == 128.0);
    assert_true(csv_num(f->local_csv, 8, 10) == 4096.0);
    for (int k = 0; k < 5; k++) {
        snprintf(needle, sizeof(needle), "\"%s\":", key[k]);
        const char *v = strstr(costs, needle);
        assert_non_null(v);
        double want = strtod(v + strlen(needle), NULL), got = csv_num(f->local_csv, 8, 18 + k);
        fprintf(stderr, "cost %s: sweep %.17g, model %.17g\n", key[k], got, want);
        assert_true(fabs(got - want) <= 1e-9 * (1.0 + fabs(want)));
    }
    assert_true(csv_num(f->local_csv, 8, 22) > 0); /* base: every message has one */
    free(out);
}

/* engine "sim": a point is what `hintsim sim` predicts for the same inputs. */
static void test_sim_engine(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, *csv, *p, grid[4300];
    double p50;

    snprintf(grid, sizeof(grid), "%s/sim.json", f->dir);
    test_sweep_write(grid, "{\"profiles\": [\"generic\"], \"vary\": {\"ll.depth\": [16]},\n"
                           " \"hints\": [0, 4096], \"engine\": \"sim\", \"objective\": \"p50\"}");
    assert_int_equal(hs_test_run(&out, "cd '%s' && '%s' sweep --grid sim.json --trace '%s' -o sim "
                                 "--no-plots --quiet", f->dir, hs_test_bin(),
                                 hs_test_src("traces/samples/pingpong.hst")), 0);
    free(out);
    assert_int_equal(hs_test_run(&out, "'%s' sim '%s' --profile generic --set ll.depth=16 "
                                 "--hint 4096 --json 2>/dev/null", hs_test_bin(),
                                 hs_test_src("traces/samples/pingpong.hst")), 0);
    p = strstr(out, "\"p50_us\":");
    assert_non_null(p);
    p50 = strtod(p + 9, NULL);
    csv = read_text(f->dir, "sim/sweep.csv");
    assert_non_null(csv);
    assert_non_null(strstr(csv, ",4096,p50,sim,open,4096,"));
    /* row 2 = the 4096 point; column 12 = p50_us */
    assert_true(csv_num(csv, 2, 12) > 0);
    assert_true(fabs(csv_num(csv, 2, 12) - p50) <= 1e-9 * (1.0 + p50));
    assert_true(csv_num(csv, 2, 11) == csv_num(csv, 2, 12)); /* objective p50 */
    free(csv);
    free(out);
}

/* The "computed_indices" of a --json summary into idx (at most cap); -1 if absent. */
static int json_indices(const char *out, size_t *idx, int cap)
{
    const char *p = strstr(out, "\"computed_indices\": [");
    int n = 0;

    if (!p)
        return -1;
    for (p += 21; *p && *p != ']' && n < cap;) {
        char *end;
        idx[n++] = strtoul(p, &end, 10);
        if (end == p)
            return -1;
        p = *end == ',' ? end + 2 : end;
    }
    return n;
}

/* The writer pid recorded in the point file of CSV row idx (its key is column 1). */
static long point_pid(const char *dir, const char *csv, size_t idx)
{
    const char *p = csv;
    char rel[64], *text, *q;
    long pid;

    for (size_t r = 0; r <= idx && p; r++)
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
    if (!p || !(p = strchr(p, ',')))
        return -1;
    snprintf(rel, sizeof(rel), "points/%.16s.json", p + 1);
    if (!(text = read_text(dir, rel)))
        return -1;
    q = strstr(text, "\"pid\":");
    pid = q ? strtol(q + 6, NULL, 10) : -1;
    free(text);
    return pid;
}

/* Rank 0's computed_indices are exactly the points whose files its pid wrote. */
static void check_rank0_indices(const char *dir, const char *csv, const char *out)
{
    size_t idx[12];
    int n = json_indices(out, idx, 12);
    long pid;
    char *cnt = NULL;

    assert_true(n >= 0);
    if (n == 0) { /* rank 1 took every point: then all files have one writer */
        assert_int_equal(hs_test_run(&cnt, "grep -h '\"pid\"' '%s'/points/*.json | sort -u "
                                     "| wc -l", dir), 0);
        assert_int_equal(atoi(cnt), 1);
        free(cnt);
        return;
    }
    pid = point_pid(dir, csv, idx[0]);
    assert_true(pid > 0);
    for (int i = 0; i < n; i++) {
        assert_true(idx[i] < 12);
        assert_int_equal(point_pid(dir, csv, idx[i]), pid);
    }
    assert_int_equal(hs_test_run(&cnt, "grep -l '\"pid\":[[:space:]]*%ld,' '%s'/points/*.json "
                                 "| wc -l", pid, dir), 0);
    assert_int_equal(atoi(cnt), n);
    free(cnt);
}

static void test_mpi_identical(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, *csv, path[4300];
    int rc;

    if (hs_test_run(NULL, "command -v mpirun >/dev/null") != 0)
        skip();
    rc = hs_test_run(&out, "cd '%s' && ASAN_OPTIONS=detect_leaks=0 mpirun -n 2 --oversubscribe "
                     "--allow-run-as-root '%s' sweep --grid grid.json --trace '%s' -o mpi "
                     "--mpi --json --no-plots", f->dir, hs_test_bin(),
                     hs_test_src("traces/samples/kv.hst"));
    assert_true(run_ok("mpirun sweep", rc, out));
    assert_non_null(strstr(out, "\"ranks\": 2"));
    assert_non_null(strstr(out, "\"computed\": 12"));
    assert_non_null(strstr(out, "\"complete\": true"));
    /* one process merged: only rank 0 prints its summary */
    assert_int_equal(count_str(out, "\"merged\": true"), 1);
    csv = read_text(f->dir, "mpi/sweep.csv");
    assert_non_null(csv);
    assert_string_equal(csv, f->local_csv);
    snprintf(path, sizeof(path), "%s/mpi", f->dir);
    check_rank0_indices(path, csv, out);
    free(csv);
    csv = read_text(f->dir, "mpi/sweep.json");
    assert_non_null(csv);
    assert_string_equal(csv, f->local_json);
    free(csv);
    free(out);
}

/* --mpi without mpirun (one rank) lists every point it computed. */
static void test_mpi_singleton_indices(void **state)
{
    cfix_t *f = *state;
    char *out = NULL;
    size_t idx[16];
    int rc;

    rc = hs_test_run(&out, "cd '%s' && ASAN_OPTIONS=detect_leaks=0 '%s' sweep --grid grid.json "
                     "--trace '%s' -o mpi1 --mpi --json --no-plots", f->dir, hs_test_bin(),
                     hs_test_src("traces/samples/kv.hst"));
    if (rc == 3) { /* built without MPI */
        free(out);
        skip();
    }
    assert_true(run_ok("sweep --mpi (one rank)", rc, out));
    assert_non_null(strstr(out, "\"computed\": 12"));
    assert_int_equal(json_indices(out, idx, 16), 12);
    for (size_t i = 0; i < 12; i++)
        assert_int_equal(idx[i], i);
    free(out);
}

/* Names, inodes and mtimes of the finished point files in dir/points. */
static size_t snapshot(const char *dir, char names[][32], struct stat *sts, size_t cap)
{
    char pdir[4300], path[4400];
    DIR *d;
    struct dirent *e;
    size_t n = 0;

    snprintf(pdir, sizeof(pdir), "%s/points", dir);
    if (!(d = opendir(pdir)))
        return 0;
    while ((e = readdir(d)) != NULL && n < cap) {
        if (strlen(e->d_name) != 21 || strcmp(e->d_name + 16, ".json") != 0)
            continue;
        memcpy(names[n], e->d_name, 22); /* 16 hex digits + ".json" + NUL */
        snprintf(path, sizeof(path), "%s/%.21s", pdir, e->d_name);
        stat(path, &sts[n++]);
    }
    closedir(d);
    return n;
}

static void test_resume_after_sigkill(void **state)
{
    cfix_t *f = *state;
    char out_dir[4300], *out = NULL, names[64][32], names2[64][32];
    struct stat st1[64], st2[64];
    size_t n1, n2, reused = 0, computed = 0;
    pid_t pid;
    int ws;

    snprintf(out_dir, sizeof(out_dir), "%s/killed", f->dir);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL)
            _exit(99);
        execl(hs_test_bin(), "hintsim", "sweep", "--grid", f->big, "--trace",
              hs_test_src("traces/samples/kv.hst"), "-o", out_dir, "--jobs", "1", "--quiet",
              (char *)NULL);
        _exit(98);
    }
    for (int i = 0; i < 3000 && snapshot(out_dir, names, st1, 64) < 3; i++)
        usleep(5000);
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFSIGNALED(ws)); /* it was still running: killed midway */
    n1 = snapshot(out_dir, names, st1, 64);
    assert_true(n1 >= 3 && n1 < 24);
    sleep(1);
    assert_int_equal(hs_test_run(&out, "'%s' sweep --grid '%s' --trace '%s' -o '%s' --jobs 2 "
                                 "--json --no-plots", hs_test_bin(), f->big,
                                 hs_test_src("traces/samples/kv.hst"), out_dir), 0);
    assert_non_null(strstr(out, "\"complete\": true"));
    assert_int_equal(sscanf(strstr(out, "\"reused\""), "\"reused\": %zu, \"computed\": %zu",
                            &reused, &computed), 2);
    assert_int_equal(reused, n1);
    assert_int_equal(computed, 24 - n1);
    n2 = snapshot(out_dir, names2, st2, 64);
    assert_int_equal(n2, 24);
    for (size_t i = 0; i < n1; i++) { /* finished points were not rewritten */
        size_t j = 0;
        while (j < n2 && strcmp(names2[j], names[i]) != 0)
            j++;
        assert_true(j < n2);
        assert_int_equal(st2[j].st_ino, st1[i].st_ino);
        assert_int_equal(st2[j].st_mtim.tv_nsec, st1[i].st_mtim.tv_nsec);
        assert_int_equal(st2[j].st_mtim.tv_sec, st1[i].st_mtim.tv_sec);
    }
    free(out);
}

static int exists(const char *dir, const char *rel)
{
    char path[4400];
    struct stat sb;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    return stat(path, &sb) == 0;
}

/* The indices of a --json summary's computed_indices, each checked to be k % n == i and
 * counted in seen[k]; returns how many. */
static size_t slice_indices(const char *out, unsigned i, unsigned n, unsigned *seen)
{
    const char *p = strstr(out, "\"computed_indices\": [");
    size_t total = 0;

    assert_non_null(p);
    for (p += 21; *p && *p != ']';) {
        char *end;
        unsigned long k = strtoul(p, &end, 10);
        assert_true(end != p && k < 12 && k % n == i);
        seen[k]++;
        total++;
        p = *end == ',' ? end + 2 : end;
    }
    return total;
}

/* bash SCRIPT ARGS from "/" with the stand-in sbatch on PATH, its state in DIR/fakeslurm. */
static int submit(const cfix_t *f, char **out, const char *script, const char *args)
{
    char d[4300];

    snprintf(d, sizeof(d), "%s/fakeslurm", f->dir);
    if (hs_test_run(NULL, "rm -rf '%s' && mkdir -p '%s/bin' && ln -s '%s' '%s/bin/sbatch'", d,
                    d, hs_test_src("tests/sweep_fake_sbatch.sh"), d) != 0)
        return -1;
    return hs_test_run(out, "cd / && env -u SLURM_JOB_ID -u SLURM_ARRAY_TASK_ID "
                       "FAKE_SLURM_DIR='%s' PATH='%s/bin':\"$PATH\" bash '%s' %s", d, d, script,
                       args);
}

static void test_slurm_slices(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, *csv, script[4300], rel[64];
    unsigned seen[12] = {0};
    size_t total = 0;

    snprintf(script, sizeof(script), "%s/job.sbatch", f->dir);
    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o slurm --emit-slurm job.sbatch "
                              "--slices 4"), 0);
    free(out);
    assert_int_equal(hs_test_run(&out, "bash -n '%s'", script), 0);
    free(out);
    /* from another directory (the script carries absolute paths), through sbatch */
    assert_int_equal(submit(f, &out, script, "--json --no-plots"), 0);
    assert_non_null(strstr(out, "submitted: array job 100 (4 tasks), merge job 101"));
    free(out);
    out = read_text(f->dir, "fakeslurm/calls");
    assert_non_null(out);
    assert_non_null(strstr(out, "\nafterany:100|0|ALL,HINTSIM_SWEEP_STEP=merge|"));
    free(out);
    assert_false(exists(f->dir, "fakeslurm/failed-100"));
    assert_false(exists(f->dir, "fakeslurm/failed-101"));
    for (unsigned i = 0; i < 4; i++) { /* every task: its slice only, and no merge */
        snprintf(rel, sizeof(rel), "fakeslurm/job-100_%u.out", i);
        out = read_text(f->dir, rel);
        assert_non_null(out);
        assert_non_null(strstr(out, "\"reused\": 0"));
        assert_non_null(strstr(out, "\"merged\": false"));
        assert_non_null(strstr(out, "\"csv\": null"));
        total += slice_indices(out, i, 4, seen);
        free(out);
    }
    assert_int_equal(total, 12);
    for (int k = 0; k < 12; k++)
        assert_int_equal(seen[k], 1);
    /* the merge job: computes nothing, merges once, complete */
    out = read_text(f->dir, "fakeslurm/job-101_0.out");
    assert_non_null(out);
    assert_non_null(strstr(out, "\"computed\": 0"));
    assert_int_equal(count_str(out, "\"merged\": true"), 1);
    assert_non_null(strstr(out, "\"complete\": true"));
    free(out);
    csv = read_text(f->dir, "slurm/sweep.csv");
    assert_non_null(csv);
    assert_string_equal(csv, f->local_csv);
    free(csv);
    csv = read_text(f->dir, "slurm/sweep.json"); /* the grid named the same, too */
    assert_non_null(csv);
    assert_string_equal(csv, f->local_json);
    free(csv);
}

/* Without --slices: a few points a task, not one each; "-" writes the script to stdout. */
static void test_slurm_default_slices(void **state)
{
    cfix_t *f = *state;
    char *out = NULL;

    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o slurmdef --emit-slurm - "
                              "2>/dev/null"), 0);
    assert_int_equal(strncmp(out, "#!/bin/bash\n", 12), 0);
    assert_non_null(strstr(out, "#SBATCH --array=0-1\n")); /* 12 points: 2 tasks */
    free(out);
    assert_int_equal(sweep_in(f, &out, "--grid big.json -o slurmdef --emit-slurm - | bash -n"), 0);
    free(out);
    assert_int_equal(sweep_in(f, &out, "--grid big.json -o slurmdef --emit-slurm - 2>&1 | grep -c "
                              "'^#SBATCH --array=0-2$'"), 0);
    assert_int_equal(atoi(out), 1); /* 24 points: 3 tasks */
    free(out);
}

/* The output directory on a node-local disk: each job stops naming the shared file system;
 * a merge that finds points missing exits 1 saying where to look. */
static void test_not_shared(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, script[4300];

    snprintf(script, sizeof(script), "%s/ns.sbatch", f->dir);
    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o ns --emit-slurm ns.sbatch"), 0);
    free(out);
    assert_true(exists(f->dir, "ns/.hintsim-sweep"));
    /* what a node that does not share the folder sees: no marker */
    assert_int_equal(hs_test_run(NULL, "rm '%s/ns/.hintsim-sweep'", f->dir), 0);
    assert_int_equal(hs_test_run(&out, "SLURM_JOB_ID=7 SLURM_ARRAY_TASK_ID=0 "
                                 "HINTSIM_SWEEP_STEP=slice bash '%s'", script), 1);
    assert_non_null(strstr(out, "not on a file system this node shares"));
    assert_false(exists(f->dir, "ns/points"));
    free(out);
    /* results that stayed on the nodes: the merge finds them missing */
    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o ns --slice 1/3 --no-plots --quiet"), 0);
    free(out);
    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o ns --merge --no-plots --json"), 1);
    assert_non_null(strstr(out, "merge incomplete: 8 of 12 points"));
    assert_non_null(strstr(out, "not on a file system shared"));
    assert_non_null(strstr(out, "\"merged\": true, \"complete\": false"));
    assert_false(exists(f->dir, "ns/sweep.csv"));
    free(out);
}

/* sweep.json names the grid the same however its path was typed, and standard input works;
 * the merge removes a stale temporary and keeps a young one. */
static void test_grid_path_typed(void **state)
{
    cfix_t *f = *state;
    const char *typed[] = {"grid.json", "./grid.json", f->grid,
                           "../$(basename \"$PWD\")/grid.json"};
    char *out = NULL, *json, path[4400];

    assert_int_equal(hs_test_run(NULL, "cd '%s' && cp -r local typed && rm typed/sweep.* && "
                                 "touch -d '2 hours ago' typed/points/0.json.tmp.4242 && "
                                 "touch typed/points/1.json.tmp.4242 && mkdir -p typed/plots && "
                                 "touch -d '2 hours ago' typed/plots/heatmap.png.tmp.77",
                                 f->dir), 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(hs_test_run(&out, "cd '%s' && '%s' sweep --grid \"%s\" --trace '%s' "
                                     "-o typed --no-plots --json", f->dir, hs_test_bin(),
                                     typed[i], hs_test_src("traces/samples/kv.hst")), 0);
        assert_non_null(strstr(out, "\"computed\": 0"));
        free(out);
        json = read_text(f->dir, "typed/sweep.json");
        assert_non_null(json);
        assert_string_equal(json, f->local_json);
        free(json);
    }
    assert_false(exists(f->dir, "typed/points/0.json.tmp.4242"));
    assert_true(exists(f->dir, "typed/points/1.json.tmp.4242"));
    assert_false(exists(f->dir, "typed/plots/heatmap.png.tmp.77"));
    /* the trace typed relative, the grid from standard input */
    assert_int_equal(hs_test_run(&out, "cd \"$(dirname '%s')\" && '%s' sweep --grid - --trace "
                                 "kv.hst -o '%s/typed' --no-plots --quiet < '%s'",
                                 hs_test_src("traces/samples/kv.hst"), hs_test_bin(), f->dir,
                                 f->grid), 0);
    free(out);
    json = read_text(f->dir, "typed/sweep.csv");
    assert_non_null(json);
    assert_string_equal(json, f->local_csv);
    free(json);
    json = read_text(f->dir, "typed/sweep.json");
    assert_non_null(strstr(json, "\"grid\":\t\"-\""));
    free(json);
    snprintf(path, sizeof(path), "%s/typed", f->dir);
    assert_int_equal(hs_test_run(&out, "'%s' sweep --grid - -o '%s' --mpi < '%s'",
                                 hs_test_bin(), path, f->grid), 2);
    assert_non_null(strstr(out, "--grid -: only one MPI rank"));
    free(out);
    /* a trace cannot come from standard input: it is read again for every point */
    assert_int_equal(hs_test_run(&out, "'%s' sweep --grid '%s' --trace - -o '%s' < '%s'",
                                 hs_test_bin(), f->grid, path,
                                 hs_test_src("traces/samples/kv.hst")), 1);
    assert_non_null(strstr(out, "--trace: '-': a sweep reads each trace again"));
    free(out);
}


/* A slice of a changed grid must not leave or report the old grid's merged outputs. */
static void test_stale_merge_dropped(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, path[4300];

    snprintf(path, sizeof(path), "%s/grid2.json", f->dir);
    test_sweep_write(path, "{\"profiles\": [\"generic\"],\n"
                           " \"vary\": {\"ll.depth\": [16, 64, 128], \"bw.depth\": [128, 512]},\n"
                           " \"hints\": [0, 4096, \"auto\"], \"objective\": \"p99\"}");
    /* the old grid's plots (whether or not gnuplot made the fixture's), and a file of the
     * user's in the same folder */
    assert_int_equal(hs_test_run(NULL, "cd '%s' && cp -r local stale && mkdir -p stale/plots && "
                                 "touch stale/plots/heatmap.png stale/plots/best_hint_bw.depth.dat "
                                 "stale/plots/notes.txt", f->dir), 0);
    assert_int_equal(sweep_in(f, &out, "--grid grid2.json -o stale --slice 0/2 --json "
                              "--no-plots"), 0);
    assert_non_null(strstr(out, "\"complete\": false"));
    assert_non_null(strstr(out, "\"csv\": null, \"json\": null"));
    free(out);
    snprintf(path, sizeof(path), "%s/stale", f->dir);
    assert_false(exists(path, "sweep.csv"));
    assert_false(exists(path, "sweep.json"));
    /* its plots went with them (they stayed); what sweep does not write stays */
    assert_false(exists(path, "plots/heatmap.png"));
    assert_false(exists(path, "plots/best_hint_bw.depth.dat"));
    assert_false(exists(path, "plots/best_hint_ll.depth.png"));
    assert_true(exists(path, "plots/notes.txt"));
    assert_int_equal(sweep_in(f, &out, "--grid grid2.json -o stale --slice 0/2 --no-plots"), 0);
    assert_non_null(strstr(out, "slice 0/2 done"));
    free(out);
    assert_int_equal(sweep_in(f, &out, "--grid grid2.json -o stale --merge --no-plots"), 1);
    assert_non_null(strstr(out, "merge incomplete: 3 of 18 points"));
    free(out);
}

/* A complete merge of another grid into the same folder leaves none of the earlier grid's
 * views: its plots and report were kept before (the merge only replaced what it wrote
 * again), so a one-axis grid showed the old heatmap and --no-plots the old report. */
static void test_complete_merge_replaces_views(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, *html, path[4300];

    snprintf(path, sizeof(path), "%s/grid3.json", f->dir);
    test_sweep_write(path, "{\"profiles\": [\"generic\"], \"vary\": {\"ll.depth\": [16, 64]},\n"
                           " \"hints\": [0, 4096], \"objective\": \"p99\"}");
    assert_int_equal(hs_test_run(NULL, "cd '%s' && cp -r local views && mkdir -p views/plots && "
                                 "touch views/report.html views/plots/heatmap.png "
                                 "views/plots/best_hint_bw.depth.gp views/plots/notes.txt",
                                 f->dir), 0);
    assert_int_equal(sweep_in(f, &out, "--grid grid3.json -o views --no-plots --json"), 0);
    assert_non_null(strstr(out, "\"complete\": true"));
    free(out);
    snprintf(path, sizeof(path), "%s/views", f->dir);
    assert_true(exists(path, "sweep.csv"));
    assert_false(exists(path, "report.html"));
    assert_false(exists(path, "plots/heatmap.png"));
    assert_false(exists(path, "plots/best_hint_bw.depth.gp"));
    assert_false(exists(path, "plots/best_hint_ll.depth.dat"));
    assert_true(exists(path, "plots/notes.txt"));
    /* with plots: the earlier grid's go, this grid's are written, the report is its own */
    assert_int_equal(hs_test_run(NULL, "touch '%s/plots/heatmap.dat' '%s/plots/best_hint_bw.depth.png'",
                                 path, path), 0);
    assert_int_equal(sweep_in(f, &out, "--grid grid3.json -o views"), 0);
    free(out);
    assert_false(exists(path, "plots/heatmap.dat"));
    assert_false(exists(path, "plots/best_hint_bw.depth.png"));
    assert_true(exists(path, "plots/best_hint_ll.depth.dat"));
    assert_true(exists(path, "plots/best_hint_ll.depth.gp"));
    html = read_text(path, "report.html");
    assert_non_null(html);
    assert_null(strstr(html, "bw.depth"));
    free(html);
}

/* The same grid's merged outputs stay when a point file is missing (not stale, just old). */
static void test_own_merge_kept(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, *csv, dir[4300];
    const char *row = strstr(f->local_csv, "\n5,");

    assert_non_null(row);
    assert_int_equal(hs_test_run(NULL, "cd '%s' && cp -r local keep && rm keep/points/%.16s.json",
                                 f->dir, row + 3), 0);
    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o keep --slice 0/12 --json "
                              "--no-plots"), 0);
    assert_non_null(strstr(out, "\"complete\": false"));
    free(out);
    snprintf(dir, sizeof(dir), "%s/keep", f->dir);
    assert_true(exists(dir, "sweep.json"));
    csv = read_text(dir, "sweep.csv");
    assert_non_null(csv);
    assert_string_equal(csv, f->local_csv);
    free(csv);
}

/* A bad --profile is blamed on the option, not on a grid entry. */
static void test_bad_profile_option(void **state)
{
    cfix_t *f = *state;
    char *out = NULL;

    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o badopt --profile nope"), 1);
    assert_non_null(strstr(out, "--profile nope: "));
    assert_null(strstr(out, "profiles[1]"));
    free(out);
}

/* --slices sizes the --emit-slurm script; alone it is a usage error, not ignored. */
static void test_slices_needs_emit_slurm(void **state)
{
    cfix_t *f = *state;
    char *out = NULL;

    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o local --slices 5 --no-plots "
                              "--quiet"), 2);
    assert_non_null(strstr(out, "--slices 5: needs --emit-slurm"));
    free(out);
}

static void test_bad_profile(void **state)
{
    cfix_t *f = *state;
    char *out = NULL, path[4300];
    struct stat sb;

    test_sweep_write(f->grid, "{\"profiles\": [\"generic\", \"no_such_profile\"]}");
    assert_int_equal(sweep_in(f, &out, "--grid grid.json -o badp"), 1);
    assert_non_null(strstr(out, "profiles[1]"));
    snprintf(path, sizeof(path), "%s/badp/points", f->dir);
    assert_int_not_equal(stat(path, &sb), 0);
    free(out);
    assert_int_equal(hs_test_run(&out, "cd '%s' && '%s' sweep --grid grid.json -o x --slice 4/4",
                                 f->dir, hs_test_bin()), 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_outputs),
        cmocka_unit_test(test_sweep_report),
        cmocka_unit_test(test_auto_matches_recommend),
        cmocka_unit_test(test_costs_match_model),
        cmocka_unit_test(test_sim_engine),
        cmocka_unit_test(test_mpi_identical),
        cmocka_unit_test(test_mpi_singleton_indices),
        cmocka_unit_test(test_resume_after_sigkill),
        cmocka_unit_test(test_slurm_slices),
        cmocka_unit_test(test_slurm_default_slices),
        cmocka_unit_test(test_not_shared),
        cmocka_unit_test(test_grid_path_typed),
        cmocka_unit_test(test_stale_merge_dropped),
        cmocka_unit_test(test_complete_merge_replaces_views),
        cmocka_unit_test(test_own_merge_kept),
        cmocka_unit_test(test_bad_profile_option),
        cmocka_unit_test(test_slices_needs_emit_slurm),
        cmocka_unit_test(test_bad_profile),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
