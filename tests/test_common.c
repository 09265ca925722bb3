/* test_common.c - size parsing, option tables, atomic files, staging folders, and the CLI's
 * exit codes. */
#include <dirent.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_opt.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"

/* hs_parse_double: whole finite numbers only, spaces refused on either side, -0 is 0. */
static void test_parse_double(void **state)
{
    (void)state;
    double v = 1;

    assert_int_equal(hs_parse_double("2.5", &v), HS_OK);
    assert_true(v == 2.5);
    assert_int_equal(hs_parse_double("-0", &v), HS_OK);
    assert_true(v == 0 && !signbit(v));
    assert_int_equal(hs_parse_double(" 5", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_double("5 ", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_double("nan", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_double("1e999", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_double("", &v), HS_ERR_INVALID);
}

static void test_parse_size(void **state)
{
    uint64_t v = 7;
    (void)state;
    assert_int_equal(hs_parse_size("16K", &v), HS_OK);
    assert_int_equal(v, 16384);
    assert_int_equal(hs_parse_size("2M", &v), HS_OK);
    assert_int_equal(v, 2097152);
    assert_int_equal(hs_parse_size("1G", &v), HS_OK);
    assert_int_equal(v, 1073741824ULL);
    assert_int_equal(hs_parse_size("64KiB", &v), HS_OK);
    assert_int_equal(v, 65536);
    assert_int_equal(hs_parse_size("8", &v), HS_OK);
    assert_int_equal(v, 8);
    v = 7;
    assert_int_equal(hs_parse_size("-1", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_size("12Q", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_size("", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_size("99999999999999999999K", &v), HS_ERR_INVALID);
    assert_int_equal(hs_parse_size("17179869184G", &v), HS_ERR_INVALID); /* 2^34 G overflows */
    assert_int_equal(v, 7); /* untouched on error */
}

static void test_parse_size_list(void **state)
{
    uint64_t *vals = NULL;
    size_t n = 0;
    (void)state;
    assert_int_equal(hs_parse_size_list("8,64K,1M", &vals, &n), HS_OK);
    assert_int_equal(n, 3);
    assert_int_equal(vals[0], 8);
    assert_int_equal(vals[1], 65536);
    assert_int_equal(vals[2], 1048576);
    free(vals);
    assert_int_equal(hs_parse_size_list("8,,16", &vals, &n), HS_ERR_INVALID);
    assert_int_equal(hs_parse_size_list("8,", &vals, &n), HS_ERR_INVALID);
}

static void test_format_size(void **state)
{
    char buf[32];
    (void)state;
    hs_format_size(8, buf, sizeof(buf));
    assert_string_equal(buf, "8B");
    hs_format_size(16384, buf, sizeof(buf));
    assert_string_equal(buf, "16K");
    hs_format_size(1572864, buf, sizeof(buf));
    assert_string_equal(buf, "1.5M");
    /* never a rounded short form: 4093 B once read "4K" */
    hs_format_size(4093, buf, sizeof(buf));
    assert_string_equal(buf, "4093B");
    hs_format_size(1048575, buf, sizeof(buf));
    assert_string_equal(buf, "1048575B");
    hs_format_size(3ull << 40, buf, sizeof(buf));
    assert_string_equal(buf, "3T");
    /* above 2^53 a double cannot tell: the bytes (2^64 - 1 read "16777216T") */
    hs_format_size(UINT64_MAX, buf, sizeof(buf));
    assert_string_equal(buf, "18446744073709551615B");
    hs_format_size((1ull << 53) + 1, buf, sizeof(buf));
    assert_string_equal(buf, "9007199254740993B");
    hs_format_size(1ull << 60, buf, sizeof(buf));
    assert_string_equal(buf, "1048576T");
    hs_format_size(0, buf, sizeof(buf));
    assert_string_equal(buf, "0B");
}

struct opts {
    int json;
    const char *out;
    uint64_t size;
    double x;
    hs_strlist_t set;
};

static const hs_opt_t g_opts[] = {
    {"json", 0, HS_OPT_FLAG, offsetof(struct opts, json), NULL, NULL, "JSON output"},
    {"output", 'o', HS_OPT_STR, offsetof(struct opts, out), "FILE", NULL, "output file"},
    {"size", 's', HS_OPT_SIZE, offsetof(struct opts, size), "BYTES", "4K", "size"},
    {"x", 0, HS_OPT_DOUBLE, offsetof(struct opts, x), "X", "0.5", "x"},
    {"set", 0, HS_OPT_LIST, offsetof(struct opts, set), "K=V", NULL, "override"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};
static const hs_cmd_spec_t g_spec = {"t FILE", "test", g_opts, 1, 1, NULL};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* hs_select_u64 against a sort, for every k, on arrays of every shape the partition can
 * meet: random, few distinct values, all equal, sorted, reversed, organ pipe, and lengths
 * around the small-range cut-off. */
static void test_select_u64(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ULL;
    for (size_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
        for (int shape = 0; shape < 6; shape++) {
            uint64_t *v = malloc(n * sizeof(*v)), *ref = malloc(n * sizeof(*v));
            uint64_t *w = malloc(n * sizeof(*v));
            assert_non_null(v);
            assert_non_null(ref);
            assert_non_null(w);
            for (size_t i = 0; i < n; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                v[i] = shape == 0 ? x : shape == 1 ? x % 3 : shape == 2 ? 42
                     : shape == 3 ? i : shape == 4 ? n - i : (i < n / 2 ? i : n - i);
            }
            memcpy(ref, v, n * sizeof(*v));
            qsort(ref, n, sizeof(*ref), cmp_u64);
            for (size_t k = 0; k < n; k++) {
                memcpy(w, v, n * sizeof(*v));
                assert_true(hs_select_u64(w, n, k) == ref[k]);
            }
            free(v);
            free(ref);
            free(w);
        }
    }
    /* a large array with two values, as a kv trace's sizes */
    size_t n = 1000001;
    uint64_t *v = malloc(n * sizeof(*v));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = i % 3 == 0 ? 4096 : 64;
    assert_true(hs_select_u64(v, n, n / 2) == 64);
    assert_true(hs_select_u64(v, n, n - 1) == 4096);
    free(v);
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* hs_sort_pos_floats against qsort: positive finite floats of any exponent (subnormals
 * included), many equal, lengths 0 to a few thousand and one past a million. */
static void test_sort_pos_floats(void **state)
{
    (void)state;
    uint64_t x = 2463534242ULL;
    size_t lens[] = {0, 1, 2, 3, 17, 2048, 2049, 5000, 1100000};
    for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
        size_t n = lens[l];
        float *v = malloc((n ? n : 1) * sizeof(*v)), *ref = malloc((n ? n : 1) * sizeof(*v));
        assert_non_null(v);
        assert_non_null(ref);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t bits = (uint32_t)(x % 0x7f7fffffu) + 1; /* 1 .. FLT_MAX's pattern */
            if (i % 4 == 1)
                bits = 0x3f800000u + (uint32_t)(x % 8); /* runs of equal values near 1.0 */
            memcpy(&v[i], &bits, sizeof(bits));
        }
        memcpy(ref, v, n * sizeof(*v));
        qsort(ref, n, sizeof(*ref), cmp_float);
        assert_int_equal(hs_sort_pos_floats(v, n), HS_OK);
        assert_memory_equal(v, ref, n * sizeof(*v));
        free(v);
        free(ref);
    }
}

/* hs_median_double: the middle of an odd count, the mean of the two middle ones of an even
 * count, whatever the order given (negative values and ties included), NAN for none; and
 * hs_cmp_double orders as < and > do. */
static void test_median_double(void **state)
{
    (void)state;
    double odd[] = {3.5, -1.0, 9.0, 3.5, 0.25}, even[] = {7.0, -2.0, 1.0, 4.0}, one[] = {42.0};
    double a = 1.0, b = 2.0;

    assert_true(hs_cmp_double(&a, &b) < 0 && hs_cmp_double(&b, &a) > 0);
    assert_int_equal(hs_cmp_double(&a, &a), 0);
    assert_true(hs_median_double(odd, 5) == 3.5);
    assert_true(odd[0] == -1.0 && odd[4] == 9.0); /* sorted in place */
    assert_true(hs_median_double(even, 4) == 2.5); /* (1 + 4) / 2 */
    assert_true(hs_median_double(one, 1) == 42.0);
    assert_true(isnan(hs_median_double(one, 0)));
}

/* hs_hash_file streams a file in pieces: the same value as hs_hash64 over the whole file
 * (3.5 pieces, and empty), its length, and an error naming a missing file. */
static void test_hash_file(void **state)
{
    (void)state;
    char *dir = hs_test_tmpdir(), path[4200], *text = NULL;
    size_t n = (7u << 20) / 2, len = 1;
    uint64_t h = 0;
    unsigned char *b = malloc(n);
    assert_non_null(dir);
    assert_non_null(b);
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 131 + (i >> 9));
    snprintf(path, sizeof(path), "%s/h.bin", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
    assert_int_equal(hs_hash_file(path, HS_FNV_SEED, &h, &len), HS_OK);
    assert_int_equal(len, n);
    assert_true(h == hs_hash64(b, n, HS_FNV_SEED));
    f = fopen(path, "wb");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(hs_hash_file(path, 42, &h, &len), HS_OK);
    assert_int_equal(len, 0);
    assert_true(h == 42);
    assert_int_equal(hs_read_file(path, &text, NULL), HS_OK);
    free(text);
    snprintf(path, sizeof(path), "%s/missing", dir);
    assert_int_equal(hs_hash_file(path, HS_FNV_SEED, &h, &len), HS_ERR_IO);
    assert_int_equal(hs_test_run(NULL, "rm -rf %s", dir), 0);
    free(dir);
    free(b);
}

static void test_opt_parse(void **state)
{
    char *argv[] = {"t", "--set", "a=1", "in.hst", "-o", "out", "--size=1M", "--json",
                    "--set", "b=2", NULL};
    struct opts o = {0};
    char **pos;
    int npos;
    (void)state;
    assert_int_equal(hs_opt_parse(&g_spec, 10, argv, &o, &pos, &npos), 0);
    assert_int_equal(npos, 1);
    assert_string_equal(pos[0], "in.hst");
    assert_int_equal(o.json, 1);
    assert_string_equal(o.out, "out");
    assert_int_equal(o.size, 1048576);
    assert_true(o.x == 0.5);
    assert_int_equal(o.set.n, 2);
    assert_string_equal(o.set.v[1], "b=2");
    hs_opt_free(&g_spec, &o, pos);
}

static void test_opt_errors(void **state)
{
    char *bad_opt[] = {"t", "f", "--nope", NULL};
    char *bad_val[] = {"t", "f", "--size", "12Q", NULL};
    char *missing[] = {"t", NULL};
    char *extra[] = {"t", "a", "b", NULL};
    char *noval[] = {"t", "f", "-o", NULL};
    char *empty[] = {"t", "f", "-o", "", NULL};       /* -o '' (it went on to mkdir "") */
    char *empty_eq[] = {"t", "f", "--size=", NULL};
    struct opts o = {0};
    char **pos;
    int npos;
    (void)state;
    assert_int_equal(hs_opt_parse(&g_spec, 3, bad_opt, &o, &pos, &npos), HS_ERR_USAGE);
    hs_opt_free(&g_spec, &o, pos);
    assert_int_equal(hs_opt_parse(&g_spec, 4, bad_val, &o, &pos, &npos), HS_ERR_USAGE);
    hs_opt_free(&g_spec, &o, pos);
    assert_int_equal(hs_opt_parse(&g_spec, 1, missing, &o, &pos, &npos), HS_ERR_USAGE);
    hs_opt_free(&g_spec, &o, pos);
    assert_int_equal(hs_opt_parse(&g_spec, 3, extra, &o, &pos, &npos), HS_ERR_USAGE);
    hs_opt_free(&g_spec, &o, pos);
    assert_int_equal(hs_opt_parse(&g_spec, 3, noval, &o, &pos, &npos), HS_ERR_USAGE);
    hs_opt_free(&g_spec, &o, pos);
    assert_int_equal(hs_opt_parse(&g_spec, 4, empty, &o, &pos, &npos), HS_ERR_USAGE);
    hs_opt_free(&g_spec, &o, pos);
    assert_int_equal(hs_opt_parse(&g_spec, 3, empty_eq, &o, &pos, &npos), HS_ERR_USAGE);
    hs_opt_free(&g_spec, &o, pos);
}

static void test_afile(void **state)
{
    char *dir = hs_test_tmpdir();
    char path[4200], *text = NULL;
    hs_afile_t *af;
    (void)state;
    assert_non_null(dir);
    snprintf(path, sizeof(path), "%s/out.txt", dir);
    assert_int_equal(hs_write_file_atomic(path, "good\n"), HS_OK);
    /* an aborted write leaves the good file intact and no temporary behind */
    assert_int_equal(hs_afile_open(path, &af), HS_OK);
    fputs("half", hs_afile_stream(af));
    hs_afile_abort(af);
    assert_int_equal(hs_read_file(path, &text, NULL), HS_OK);
    assert_string_equal(text, "good\n");
    free(text);
    assert_int_equal(hs_test_run(NULL, "test $(ls %s | wc -l) -eq 1", dir), 0);
    assert_int_equal(hs_test_run(NULL, "rm -rf %s", dir), 0);
    free(dir);
}

/* hs_afile_tmp_pid reads back the temporary name hs_afile_open gives, and nothing else. */
static void test_afile_tmp_pid(void **state)
{
    char *dir = hs_test_tmpdir(), path[4200];
    hs_afile_t *af;
    struct dirent *e;
    size_t n = 0;
    long found = 0;
    (void)state;
    assert_non_null(dir);
    snprintf(path, sizeof(path), "%s/t.hst", dir);
    assert_int_equal(hs_afile_open(path, &af), HS_OK);
    DIR *d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            found = hs_afile_tmp_pid(e->d_name, &n);
            assert_int_equal(n, strlen("t.hst"));
        }
    closedir(d);
    hs_afile_abort(af);
    assert_int_equal(found, (long)getpid());
    assert_int_equal(hs_afile_tmp_pid("a.hst.tmp.77.tmp.123", &n), 123);
    assert_int_equal(n, strlen("a.hst.tmp.77"));
    assert_int_equal(hs_afile_tmp_pid("a.hst", &n), 0);
    assert_int_equal(hs_afile_tmp_pid("a.hst.tmp.", &n), 0);
    assert_int_equal(hs_afile_tmp_pid("a.hst.tmp.12x", &n), 0);
    assert_int_equal(hs_afile_tmp_pid("a.hst.tmp.0", &n), 0);
    assert_int_equal(hs_afile_tmp_pid("a.hst.tmp.-5", &n), 0);
    assert_int_equal(hs_test_run(NULL, "rm -rf %s", dir), 0);
    free(dir);
}

static void test_cli_exit_codes(void **state)
{
    char *out = NULL;
    (void)state;
    assert_int_equal(hs_test_run(&out, "%s --help", hs_test_bin()), 0);
    assert_non_null(strstr(out, "recommend"));
    free(out);
    assert_int_equal(hs_test_run(NULL, "%s", hs_test_bin()), 2);
    assert_int_equal(hs_test_run(&out, "%s frobnicate", hs_test_bin()), 2);
    assert_non_null(strstr(out, "frobnicate"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s --version", hs_test_bin()), 0);
    assert_non_null(strstr(out, "hintsim "));
    free(out);
    /* version takes --help and --json and nothing else (it once ignored every argument) */
    assert_int_equal(hs_test_run(&out, "%s version --json", hs_test_bin()), 0);
    assert_non_null(strstr(out, "{\"version\": \""));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s version --help", hs_test_bin()), 0);
    assert_non_null(strstr(out, "usage: hintsim version"));
    free(out);
    assert_int_equal(hs_test_run(NULL, "%s version bogus", hs_test_bin()), 2);
    /* a live run's output path is checked before the measurement, not after it */
    assert_int_equal(hs_test_run(&out, "%s capture bench --device nosuchdev --sizes 8 -o x.txt",
                                 hs_test_bin()), 2);
    assert_non_null(strstr(out, "must end in .hst, .csv, .jsonl"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s capture bench --device nosuchdev --sizes 8 -o "
                                 "/nonexistent-dir/t.hst", hs_test_bin()), 1);
    assert_non_null(strstr(out, "cannot write the output there"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s calibrate --device nosuchdev -o /nonexistent-dir/p.json",
                                 hs_test_bin()), 1);
    assert_non_null(strstr(out, "cannot write the output there"));
    free(out);
}

/* hs_check_out_path: a file name in a writable directory passes; a directory, a missing or
 * non-directory parent does not. */
static void test_check_out_path(void **state)
{
    (void)state;
    char *dir = hs_test_tmpdir(), path[512];

    snprintf(path, sizeof(path), "%s/out.hst", dir);
    assert_int_equal(hs_check_out_path(path), HS_OK);
    assert_int_equal(hs_check_out_path("relative.hst"), HS_OK);
    assert_int_equal(hs_check_out_path(dir), HS_ERR_IO);
    snprintf(path, sizeof(path), "%s/", dir);
    assert_int_equal(hs_check_out_path(path), HS_ERR_IO);
    snprintf(path, sizeof(path), "%s/missing/out.hst", dir);
    assert_int_equal(hs_check_out_path(path), HS_ERR_IO);
    snprintf(path, sizeof(path), "%s/out.hst", dir);
    assert_int_equal(hs_write_file_atomic(path, "x"), HS_OK);
    snprintf(path, sizeof(path), "%s/out.hst/below", dir);
    assert_int_equal(hs_check_out_path(path), HS_ERR_IO);
    free(dir);
}

/* The pid of a child that has exited and been reaped: a process that no longer exists. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return pid;
}

/* Whether dir/name exists (lstat: a symlink itself). */
static int exists(const char *dir, const char *name)
{
    char path[4400];
    struct stat sb;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return lstat(path, &sb) == 0;
}

/* hs_stage_open removes the stage folders of this host's killed runs (their pid gone) and
 * only those: not a live process's (here the parent's: a concurrent run), not another
 * host's (a shared file system), not a name that is not exactly hs_stage_name's, not a
 * file or a symlink of that name. */
static void test_stage_open_sweeps_dead(void **state)
{
    char *dir = hs_test_tmpdir(), stage[4200], dead[320], live[320], file[320], link[320];
    char other[320];
    pid_t d1 = dead_pid(), d2 = dead_pid(), d3 = dead_pid();
    (void)state;
    hs_stage_name(dead, sizeof(dead), (long)d1);
    hs_stage_name(live, sizeof(live), (long)getppid());
    hs_stage_name(file, sizeof(file), (long)d2);
    hs_stage_name(link, sizeof(link), (long)d3);
    snprintf(other, sizeof(other), ".hintsim-stage.another-host-x.%s", strrchr(dead, '.') - 8);
    assert_true(strncmp(dead, ".hintsim-stage.", 15) == 0 && strchr(dead + 15, '.'));
    /* this host's name and a dead pid, of another PID namespace (another container) */
    char *sp = strrchr(dead, '.') - 8, otherns[320];
    assert_true(sp > dead + 15 && sp[-1] == '.');
    snprintf(otherns, sizeof(otherns), "%.*s%s%s", (int)(sp - dead), dead,
             strncmp(sp, "00000000", 8) ? "00000000" : "00000001", sp + 8);
    assert_int_equal(hs_test_run(NULL, "cd '%s' && mkdir %s %s %sx %s %s .hintsim-stage. target "
                                 "&& touch %s/report.html %s/report.html %sx/a target/keep %s "
                                 "&& ln -s target %s", dir, dead, live, dead, other, otherns,
                                 dead, live, dead, file, link), 0);
    assert_int_equal(hs_stage_open(dir, stage, sizeof(stage)), HS_OK);
    assert_false(exists(dir, dead));
    assert_true(exists(dir, other));
    assert_true(exists(dir, otherns));
    assert_int_equal(hs_test_run(NULL, "test -f '%s/%s/report.html'", dir, live), 0);
    snprintf(dead + strlen(dead), sizeof(dead) - strlen(dead), "x/a");
    assert_true(exists(dir, dead));
    assert_true(exists(dir, ".hintsim-stage."));
    assert_true(exists(dir, file));
    assert_true(exists(dir, link));
    assert_true(exists(dir, "target/keep"));
    assert_int_equal(hs_test_run(NULL, "test -d '%s'", stage), 0);
    hs_stage_abort(stage);
    assert_int_equal(hs_test_run(NULL, "rm -rf '%s'", dir), 0);
    free(dir);
}

/* This test binary (argv[0]: under valgrind, /proc/self/exe is valgrind's own). */
static const char *self_path;

/* Run as a child by test_capture_failed_assert: a test that fails while stderr is captured. */
static void fail_in_capture(void **state)
{
    hs_test_stderr_t cap;
    (void)state;
    hs_test_stderr_begin(&cap);
    fputs("written before the failure\n", stderr);
    assert_string_equal("capture-left", "capture-right");
    free(hs_test_stderr_end(&cap));
}

/* A failed assert between hs_test_stderr_begin and _end: the failure's report and what the
 * test wrote reach the real stderr, not the lost temporary file. */
static void test_capture_failed_assert(void **state)
{
    char *out = NULL;
    (void)state;
    int rc = hs_test_run(&out, "HS_TEST_FAIL_IN_CAPTURE=1 '%s'", self_path);
    assert_non_null(out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "written before the failure"));
    assert_non_null(strstr(out, "\"capture-left\" != \"capture-right\""));
    assert_non_null(strstr(out, "a capture of stderr was not ended"));
    free(out);
}

int main(int argc, char **argv)
{
    (void)argc;
    self_path = argv[0];
    if (getenv("HS_TEST_FAIL_IN_CAPTURE")) {
        const struct CMUnitTest child[] = {cmocka_unit_test(fail_in_capture)};
        return cmocka_run_group_tests(child, NULL, NULL) ? 1 : 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_double),
        cmocka_unit_test(test_parse_size),     cmocka_unit_test(test_parse_size_list),
        cmocka_unit_test(test_format_size),    cmocka_unit_test(test_select_u64),
        cmocka_unit_test(test_sort_pos_floats), cmocka_unit_test(test_hash_file),
        cmocka_unit_test(test_median_double),
        cmocka_unit_test(test_opt_parse),
        cmocka_unit_test(test_opt_errors),     cmocka_unit_test(test_afile),
        cmocka_unit_test(test_afile_tmp_pid),
        cmocka_unit_test(test_cli_exit_codes),
        cmocka_unit_test(test_check_out_path),
        cmocka_unit_test(test_stage_open_sweeps_dead),
        cmocka_unit_test(test_capture_failed_assert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
