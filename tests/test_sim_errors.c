/* test_sim_errors.c - bad input to `hintsim sim`: exit 1 with the file named and SimGrid's
 * own message, never a crash or a backtrace; and a user platform that is fine works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hs_util.h"
#include "tests/hs_test.h"

#define HDR "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM " \
            "\"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n" \
            "<zone id=\"z\" routing=\"Full\">\n"

static char *write_tmp(const char *dir, const char *name, const char *text)
{
    char *path = NULL;

    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    assert_int_equal(hs_write_file_atomic(path, text), HS_OK);
    return path;
}

/* Run sim with a platform; expect exit 1, the platform named, each needle, no backtrace. */
static void expect_reject(const char *dir, const char *name, const char *xml,
                          const char *needle)
{
    char *plat = write_tmp(dir, name, xml), *out = NULL;
    int rc = hs_test_run(&out, "%s sim %s --platform %s", hs_test_bin(),
                         hs_test_src("traces/samples/pingpong.hst"), plat);

    printf("--- %s: exit %d\n%s", name, rc, out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, plat));
    assert_non_null(strstr(out, needle));
    assert_null(strstr(out, "Backtrace"));
    assert_null(strstr(out, "xbt_backtrace"));
    free(out);
    free(plat);
}

static void test_bad_platforms(void **state)
{
    char *dir = hs_test_tmpdir();

    (void)state;
    expect_reject(dir, "junk.xml", "<?xml version='1.0'?>\nthis is not a platform\n",
                  "Parse error");
    expect_reject(dir, "nohost.xml",
                  HDR "<host id=\"receiver\" speed=\"1Gf\"/>\n</zone>\n</platform>\n",
                  "no host named 'sender0'");
    expect_reject(dir, "norecv.xml",
                  HDR "<host id=\"sender0\" speed=\"1Gf\"/>\n</zone>\n</platform>\n",
                  "no host named 'receiver'");
    expect_reject(dir, "noroute.xml",
                  HDR "<host id=\"sender0\" speed=\"1Gf\"/><host id=\"receiver\" speed=\"1Gf\"/>\n"
                      "</zone>\n</platform>\n",
                  "route from 'sender0' to 'receiver'");
    free(dir);
}

static void test_missing_platform_and_empty_trace(void **state)
{
    char *dir = hs_test_tmpdir(), *out = NULL, *empty;
    int rc;

    (void)state;
    rc = hs_test_run(&out, "%s sim %s --platform %s/none.xml", hs_test_bin(),
                     hs_test_src("traces/samples/pingpong.hst"), dir);
    printf("--- missing platform: exit %d\n%s", rc, out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "none.xml"));
    free(out);
    empty = write_tmp(dir, "empty.csv", "t_post_ns,t_done_ns,size_bytes,qp,opcode,status,flags\n");
    rc = hs_test_run(&out, "%s sim %s", hs_test_bin(), empty);
    printf("--- empty trace: exit %d\n%s", rc, out);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "empty.csv") ? strstr(out, "empty.csv") : strstr(out, "no records"));
    free(out);
    free(empty);
    free(dir);
}

/* A user's multi-host platform: two senders behind their own switch link into a port. */
static void test_user_platform_two_flows(void **state)
{
    char *dir = hs_test_tmpdir(), *out = NULL, *plat;
    int rc;

    (void)state;
    plat = write_tmp(dir, "two.xml",
        HDR "<host id=\"sender0\" speed=\"1Gf\"/><host id=\"sender1\" speed=\"1Gf\"/>\n"
            "<host id=\"receiver\" speed=\"1Gf\"/>\n"
            "<link id=\"a\" bandwidth=\"12.5GBps\" latency=\"2us\"/>\n"
            "<link id=\"b\" bandwidth=\"12.5GBps\" latency=\"2us\"/>\n"
            "<link id=\"port\" bandwidth=\"12.5GBps\" latency=\"0us\"/>\n"
            "<route src=\"sender0\" dst=\"receiver\"><link_ctn id=\"a\"/><link_ctn id=\"port\"/></route>\n"
            "<route src=\"sender1\" dst=\"receiver\"><link_ctn id=\"b\"/><link_ctn id=\"port\"/></route>\n"
            "</zone>\n</platform>\n");
    rc = hs_test_run(&out, "%s sim %s --platform %s --flows 2 --hint 4K --json", hs_test_bin(),
                     hs_test_src("traces/samples/pingpong.hst"), plat);
    printf("--- two flows on a user platform: exit %d\n%.400s\n", rc, out);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\"engine\""));
    free(out);
    free(plat);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_platforms),
        cmocka_unit_test(test_missing_platform_and_empty_trace),
        cmocka_unit_test(test_user_platform_two_flows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
