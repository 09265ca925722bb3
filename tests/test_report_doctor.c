/* test_report_doctor.c - `hintsim doctor`: the page and its JSON agree with what this
 * machine has (SimGrid is linked, gnuplot's presence follows PATH, the host is
 * hs_host_probe's), and bad options exit 2. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hs_host.h"
#include "plots/plot_gnuplot.h"
#include "tests/hs_test.h"

static cJSON *find_check(cJSON *root, const char *name)
{
    cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "checks"))
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), name) == 0)
            return c;
    return NULL;
}

static cJSON *doctor_json(const char *env)
{
    char *out = NULL;
    cJSON *root;

    assert_int_equal(hs_test_run(&out, "{ %s '%s' doctor --json; } 2>/dev/null", env, hs_test_bin()),
                     0);
    root = cJSON_Parse(out);
    assert_non_null(root);
    free(out);
    return root;
}

static void test_json_checks(void **state)
{
    char gp[4096];
    cJSON *root = doctor_json(""), *c;
    (void)state;
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(root, "version")),
                        HINTSIM_VERSION);
    c = find_check(root, "SimGrid");
    assert_non_null(c);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")));
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c, "detail")), "3."));
    c = find_check(root, "gnuplot");
    assert_non_null(c);
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")),
                     plot_gnuplot_find(gp, sizeof(gp)) == HS_OK);
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(root, "verbs_devices")));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(root, "gpus")));
    assert_non_null(find_check(root, "verbs devices"));
    assert_non_null(find_check(root, "CUDA driver/GPUs"));
    assert_non_null(find_check(root, "qemu"));
    cJSON_Delete(root);
}

static void test_missing_named_with_package(void **state)
{
    cJSON *root = doctor_json("PATH=/nonexistent HINTSIM_GNUPLOT=/nonexistent/gnuplot"), *c;
    char *out = NULL;
    (void)state;
    c = find_check(root, "gnuplot");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "package")), "gnuplot-nox");
    c = find_check(root, "qemu");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "package")),
                        "qemu-system-x86");
    cJSON_Delete(root);
    assert_int_equal(hs_test_run(&out, "PATH=/nonexistent HINTSIM_GNUPLOT=/nonexistent/gnuplot"
                                 " '%s' doctor", hs_test_bin()), 0);
    assert_non_null(strstr(out, "MISSING gnuplot"));
    assert_non_null(strstr(out, "install: gnuplot-nox"));
    free(out);
    /* a gnuplot that is there but does not run is not "not found" */
    root = doctor_json("HINTSIM_GNUPLOT=/bin/false");
    c = find_check(root, "gnuplot");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")));
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c, "detail")),
                           "found at /bin/false, but 'gnuplot --version' failed"));
    cJSON_Delete(root);
    /* with the verbs providers installed, a missing device is not remedied by installing
     * them: no package named (where they are absent, the package stays) */
    struct stat sb;
    root = doctor_json("");
    c = find_check(root, "verbs devices");
    if (!cJSON_IsTrue(cJSON_GetObjectItem(c, "ok")) && stat("/etc/libibverbs.d", &sb) == 0)
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "package")), "");
    cJSON_Delete(root);
}

/* The host: the page's second line is hs_host_print's, the JSON's "cpu" its fields (what
 * bench/bench_fuzz.sh names its figures' host with) */
static void test_host(void **state)
{
    cJSON *root = doctor_json(""), *cpu = cJSON_GetObjectItem(root, "cpu");
    char *out = NULL, line[512];
    hs_host_t h;
    FILE *f = fmemopen(line, sizeof(line), "w");
    (void)state;
    assert_non_null(f);
    hs_host_print(f);
    fclose(f);
    hs_host_probe(&h);
    assert_non_null(cpu);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cpu, "model")), h.cpu);
    assert_int_equal(cJSON_GetObjectItem(cpu, "cores_online")->valueint, h.cores_online);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cpu, "clocksource")),
                        h.clocksource);
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(cpu, "tsc_invariant")), h.tsc_invariant);
    cJSON_Delete(root);
    assert_int_equal(hs_test_run(&out, "'%s' doctor 2>/dev/null", hs_test_bin()), 0);
    char *nl = strchr(out, '\n');
    assert_non_null(nl);
    assert_memory_equal(nl + 1, line, strlen(line)); /* "host: cpu=..." and its newline */
    free(out);
}

static void test_usage(void **state)
{
    (void)state;
    assert_int_equal(hs_test_run(NULL, "'%s' doctor --bogus", hs_test_bin()), 2);
    assert_int_equal(hs_test_run(NULL, "'%s' doctor extra", hs_test_bin()), 2);
    assert_int_equal(hs_test_run(NULL, "'%s' doctor --help", hs_test_bin()), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_checks),
        cmocka_unit_test(test_missing_named_with_package),
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_usage),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
