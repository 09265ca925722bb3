/* test_sim_cli.c - the predict CLI around the engines: `sim --flows N` per-flow and aggregate
 * figures, the simulator's network model named in sim and recommend output, nothing on
 * stdout when an engine fails, exact hint bytes in the tables, and the recommend progress
 * bar (on a terminal only, never with --quiet). */
#include <fcntl.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/hs_test.h"

static char g_trace[4096];

static int setup(void **state)
{
    char *dir = hs_test_tmpdir();

    snprintf(g_trace, sizeof(g_trace), "%s/kv.hst", dir);
    if (hs_test_run(NULL, "%s trace gen --workload kv --count 800 --seed 3 -o %s",
                    hs_test_bin(), g_trace) != 0)
        return -1;
    *state = dir;
    return 0;
}

static int teardown(void **state)
{
    hs_test_run(NULL, "rm -rf %s", (char *)*state);
    free(*state);
    return 0;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void test_flows_json(void **state)
{
    (void)state;
    char *out = NULL;

    assert_int_equal(hs_test_run(&out, "%s sim %s --profile generic --hint 0,4K --flows 3 "
                                 "--json 2>/dev/null", hs_test_bin(), g_trace), 0);
    cJSON *root = cJSON_Parse(out);
    assert_non_null(root);
    const cJSON *detail = cJSON_GetObjectItemCaseSensitive(root, "engine_detail");
    assert_true(cJSON_IsString(detail));
    assert_non_null(strstr(detail->valuestring, "network/model:CM02"));
    assert_int_equal((int)num(root, "flows"), 3);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    assert_int_equal(cJSON_GetArraySize(res), 2);
    for (int h = 0; h < 2; h++) {
        const cJSON *r = cJSON_GetArrayItem(res, h);
        const cJSON *flows = cJSON_GetObjectItemCaseSensitive(r, "flows");
        const cJSON *agg = cJSON_GetObjectItemCaseSensitive(r, "aggregate");
        double sum_gbps = 0, sum_count = 0, max_p99 = 0;
        assert_int_equal(cJSON_GetArraySize(flows), 3);
        assert_non_null(agg);
        for (int f = 0; f < 3; f++) {
            const cJSON *x = cJSON_GetArrayItem(flows, f);
            assert_int_equal((int)num(x, "flow"), f);
            sum_gbps += num(x, "throughput_gbps");
            sum_count += num(x, "count");
            max_p99 = num(x, "p99_us") > max_p99 ? num(x, "p99_us") : max_p99;
        }
        /* the top-level figures stay flow 0's (CLI.md keys unchanged) */
        assert_true(num(r, "p99_us") == num(cJSON_GetArrayItem(flows, 0), "p99_us"));
        assert_true(num(agg, "count") == sum_count);
        assert_true(num(agg, "p99_us") <= max_p99 * 1.01);
        /* flows overlap in time: the aggregate carries about the sum of the flows */
        assert_true(num(agg, "throughput_gbps") > 0.9 * sum_gbps);
        assert_true(num(agg, "throughput_gbps") < 1.1 * sum_gbps);
    }
    cJSON_Delete(root);
    free(out);
}

static void test_flows_text(void **state)
{
    (void)state;
    char *out = NULL;

    assert_int_equal(hs_test_run(&out, "%s sim %s --profile generic --hint 4K --flows 2 "
                                 "2>/dev/null", hs_test_bin(), g_trace), 0);
    assert_non_null(strstr(out, "network model: SimGrid"));
    assert_non_null(strstr(out, "CM02"));
    assert_non_null(strstr(out, "flow 0     4096 (4K)"));
    assert_non_null(strstr(out, "flow 1     4096 (4K)"));
    assert_non_null(strstr(out, "all flows  4096 (4K)"));
    free(out);
}

static void test_exact_hints(void **state)
{
    (void)state;
    char *out = NULL;

    assert_int_equal(hs_test_run(&out, "%s model %s --hint 0,4K,1000,1M 2>/dev/null",
                                 hs_test_bin(), g_trace), 0);
    assert_non_null(strstr(out, "\n0    "));
    assert_non_null(strstr(out, "\n4096 (4K) "));
    assert_non_null(strstr(out, "\n1000 "));
    assert_non_null(strstr(out, "\n1048576 (1M) "));
    assert_null(strstr(out, "network model:")); /* the model has no network model to name */
    free(out);
    assert_int_equal(hs_test_run(&out, "%s recommend %s --candidates 4K 2>/dev/null",
                                 hs_test_bin(), g_trace), 0);
    assert_non_null(strstr(out, "4096 (4K)"));
    free(out);
}

static void test_recommend_sim_names_model(void **state)
{
    char *out = NULL;
    char dir[4096];

    snprintf(dir, sizeof(dir), "%s/rep", (const char *)*state);
    assert_int_equal(hs_test_run(&out, "%s recommend %s --engine sim --threads 1 "
                                 "--candidates 0,4K -o %s 2>/dev/null", hs_test_bin(),
                                 g_trace, dir), 0);
    assert_non_null(strstr(out, "network model: SimGrid"));
    free(out);
    assert_int_equal(hs_test_run(&out, "grep -c 'network/model:CM02' %s/report.json "
                                 "%s/report.md", dir, dir), 0);
    assert_non_null(strstr(out, "report.json:1"));
    assert_non_null(strstr(out, "report.md:1"));
    free(out);
}

/* Hints replayed by the sim engine on two threads: each replay's child is this program
 * executed afresh (a child merely forked from a threaded parent could wait forever on a
 * lock another thread held at the fork: the ASan build's allocator did, in recommend
 * --threads 2). The figures equal those of one thread (whose children are only forked),
 * and the child's errors still come back. */
static void test_sim_threads(void **state)
{
    char *one = NULL, *two = NULL, bad[4096];

    /* everything but the wall time and the thread count */
    assert_int_equal(hs_test_run(&one, "%s recommend %s --engine sim --threads 1 --candidates "
                                 "0,4K,64K --json 2>/dev/null | grep -v -e wall_s -e "
                                 "'\"threads\"'", hs_test_bin(), g_trace), 0);
    assert_int_equal(hs_test_run(&two, "timeout 300 %s recommend %s --engine sim --threads 2 "
                                 "--candidates 0,4K,64K --json 2>/dev/null | grep -v -e wall_s "
                                 "-e '\"threads\"'", hs_test_bin(), g_trace), 0);
    assert_non_null(strstr(one, "\"candidates\""));
    assert_non_null(strstr(one, "\"p99_us\""));
    assert_string_equal(one, two);
    free(one);
    free(two);
    snprintf(bad, sizeof(bad), "%s/bad2.xml", (const char *)*state);
    assert_int_equal(hs_test_run(NULL, "echo '<platform version=\"4.1\"><zone' > %s", bad), 0);
    assert_int_equal(hs_test_run(&one, "{ timeout 300 %s sim %s --platform %s --hint 0,4K "
                                 "--threads 2 2>&1 >/dev/null; }", hs_test_bin(), g_trace, bad),
                     1);
    assert_non_null(strstr(one, "bad2.xml"));
    assert_non_null(strstr(one, "SimGrid"));
    free(one);
}

/* An engine error (closed loop without completion times; a bad platform) leaves stdout
 * empty: no table header before the error. */
static void test_error_stdout_empty(void **state)
{
    char *out = NULL, nodone[4096], bad[4096];

    snprintf(nodone, sizeof(nodone), "%s/nodone.csv", (const char *)*state);
    snprintf(bad, sizeof(bad), "%s/bad.xml", (const char *)*state);
    assert_int_equal(hs_test_run(NULL, "printf 't_post_ns,size_bytes\\n0,64\\n100,64\\n' > %s",
                                 nodone), 0);
    assert_int_equal(hs_test_run(NULL, "echo '<platform version=\"4.1\"><zone' > %s", bad), 0);
    assert_int_equal(hs_test_run(&out, "{ %s model %s --mode closed 2>/dev/null; }", hs_test_bin(),
                                 nodone), 1);
    assert_string_equal(out, "");
    free(out);
    assert_int_equal(hs_test_run(&out, "{ %s model %s --mode closed 2>&1 >/dev/null; }",
                                 hs_test_bin(), nodone), 1);
    assert_non_null(strstr(out, "record 0"));
    free(out);
    assert_int_equal(hs_test_run(&out, "{ %s sim %s --platform %s 2>/dev/null; }", hs_test_bin(),
                                 g_trace, bad), 1);
    assert_string_equal(out, "");
    free(out);
}

/* A user's platform changes the figures but not the profile's hash: the output names the
 * file and its hash (it did not say which platform made the figures); JSON's platform is
 * null when it was generated from the profile. */
static void test_platform_recorded(void **state)
{
    char *out = NULL, plat[4096];

    snprintf(plat, sizeof(plat), "%s/plat.xml", (const char *)*state);
    assert_int_equal(hs_test_run(NULL, "printf '%%s\\n' \"<?xml version='1.0'?>\" "
                                 "\"<!DOCTYPE platform SYSTEM 'https://simgrid.org/simgrid.dtd'>\" "
                                 "'<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">' "
                                 "'<host id=\"sender0\" speed=\"1Gf\"/><host id=\"receiver\" "
                                 "speed=\"1Gf\"/>' '<link id=\"l\" bandwidth=\"100Gbps\" "
                                 "latency=\"1us\"/>' '<route src=\"sender0\" dst=\"receiver\">"
                                 "<link_ctn id=\"l\"/></route></zone></platform>' > %s", plat), 0);
    assert_int_equal(hs_test_run(&out, "%s sim %s --platform %s", hs_test_bin(), g_trace, plat),
                     0);
    assert_non_null(strstr(out, "plat.xml ("));
    assert_non_null(strstr(out, "not generated from the profile"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s sim %s --platform %s --json", hs_test_bin(), g_trace,
                                 plat), 0);
    assert_non_null(strstr(out, "\"platform\":\t{"));
    assert_non_null(strstr(out, "plat.xml\""));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s sim %s --json", hs_test_bin(), g_trace), 0);
    assert_non_null(strstr(out, "\"platform\":\tnull"));
    free(out);
}

/* N flows share the port to the receiver: the overload check counts them together (2 KB
 * every 400 ns is 41 Gb/s, under a 100 Gb/s link alone; 4 such flows are over it and
 * the replay said nothing, audit), and the by-size block of all flows says so. */
static void test_flows_overload(void **state)
{
    char *out = NULL, tr[4096];

    snprintf(tr, sizeof(tr), "%s/st.hst", (const char *)*state);
    assert_int_equal(hs_test_run(NULL, "%s trace gen --workload stream --count 3000 --set size=2K "
                                 "--set post_gap_ns=400 -o %s", hs_test_bin(), tr), 0);
    assert_int_equal(hs_test_run(&out, "%s sim %s -p generic --json", hs_test_bin(), tr), 0);
    assert_null(strstr(out, "exceeds the modelled link"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s sim %s -p generic --flows 4 --json", hs_test_bin(), tr),
                     0);
    assert_non_null(strstr(out, "4 flows into one port: offered load 163.84 Gb/s exceeds"));
    free(out);
    assert_int_equal(hs_test_run(&out, "%s sim %s -p generic --flows 4", hs_test_bin(), tr), 0);
    assert_non_null(strstr(out, "by size class, hint 0, all flows together"));
    free(out);
}

/* Run `hintsim CMD TRACE A1 A2` with stderr on a pseudo-terminal; return what it drew
 * there. */
static char *stderr_on_tty(const char *cmd, const char *a1, const char *a2)
{
    static char buf[65536];
    size_t len = 0;
    int fd, st;
    pid_t pid = forkpty(&fd, NULL, NULL, NULL);

    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        execl(hs_test_bin(), "hintsim", cmd, g_trace, a1, a2, (char *)NULL);
        _exit(127);
    }
    for (;;) {
        ssize_t k = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    buf[len] = 0;
    close(fd);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return buf;
}

static void test_progress_bar(void **state)
{
    (void)state;
    char *out = NULL;

    const char *sim;

    assert_non_null(strstr(stderr_on_tty("recommend", "--threads=1", "--candidates=auto"),
                           "candidates   ["));
    assert_null(strstr(stderr_on_tty("recommend", "--threads=1", "--quiet"), "candidates   ["));
    /* sim with one hint: a bar over the messages the simulator has reported, to 100% */
    sim = stderr_on_tty("sim", "--profile=generic", "--hint=4K");
    assert_non_null(strstr(sim, "messages     ["));
    assert_non_null(strstr(sim, "100.0%"));
    assert_null(strstr(stderr_on_tty("sim", "--profile=generic", "--quiet"), "messages     ["));
    /* several hints: the bar counts hints, as model's does */
    assert_null(strstr(stderr_on_tty("sim", "--profile=generic", "--hint=0,4K"),
                       "messages     ["));
    /* stderr not a terminal: nothing drawn */
    assert_int_equal(hs_test_run(&out, "%s recommend %s 2>&1 >/dev/null", hs_test_bin(),
                                 g_trace), 0);
    assert_null(strstr(out, "candidates   ["));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flows_json),
        cmocka_unit_test(test_flows_text),
        cmocka_unit_test(test_exact_hints),
        cmocka_unit_test(test_recommend_sim_names_model),
        cmocka_unit_test(test_sim_threads),
        cmocka_unit_test(test_error_stdout_empty),
        cmocka_unit_test(test_platform_recorded),
        cmocka_unit_test(test_flows_overload),
        cmocka_unit_test(test_progress_bar),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
