/* test_profile.c - profiles: built-ins with sources, --set errors (unknown key with near
 * matches, NaN, negative, depth 0, fractional integers), JSON round trip, bad files, hash,
 * clone, and the `profile` CLI's exit codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "model/profile/profile.h"
#include "tests/hs_test.h"

static void test_builtins(void **state)
{
    (void)state;
    const char *const *names = profile_builtin_names();
    size_t n = 0;

    for (; names[n]; n++) {
        profile_t *p = NULL;
        assert_int_equal(profile_load(names[n], &p), HS_OK);
        assert_int_equal(profile_validate(p), HS_OK);
        assert_non_null(profile_builtin_summary(names[n]));
        for (size_t i = 0; i < PROF_NPARAMS; i++)
            assert_true(strlen(profile_source(p, (prof_param_id_t)i)) > 5);
        profile_free(p);
    }
    assert_true(n >= 3);
    profile_t *p = NULL;
    assert_int_equal(profile_load("seed003", &p), HS_OK);
    assert_float_equal(p->host_l1d_bytes, 32768, 0);
    assert_non_null(strstr(profile_source(p, PROF_P_host_l1d_bytes), "i3-6320"));
    assert_non_null(strstr(p->notes, "1 MB"));
    profile_free(p);
}

static void test_set_errors(void **state)
{
    (void)state;
    profile_t *p = NULL;
    assert_int_equal(profile_load("generic", &p), HS_OK);
    uint64_t h0 = profile_hash(p);

    assert_int_equal(profile_set(p, "ll.dpth=3"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "nosuchkey=3"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "ll.depth=0"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "bw.depth_hinted=0"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "link.gbps=nan"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "link.gbps=-1"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "link.gbps=0"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "ll.depth=2.5"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "ll.depth"), HS_ERR_INVALID);
    assert_int_equal(profile_set(p, "host.l1_sq_share=1.5"), HS_ERR_INVALID);
    assert_int_equal(profile_hash(p), h0); /* nothing changed */
    assert_int_equal(profile_set(p, "ll.depth=64"), HS_OK);
    assert_int_equal(profile_set(p, "host.l1d_bytes=48K"), HS_OK);
    assert_float_equal(p->ll_depth, 64, 0);
    assert_float_equal(p->host_l1d_bytes, 49152, 0);
    assert_true(profile_hash(p) != h0);
    assert_non_null(strstr(profile_source(p, PROF_P_ll_depth), "--set"));
    assert_int_equal(profile_set(p, "factors.0.bw_factor=0.5"), HS_OK);
    assert_int_equal(p->nfactors, 1);
    assert_int_equal(profile_set(p, "factors.5.bw_factor=0.5"), HS_ERR_INVALID);
    profile_free(p);
}

static void test_json_roundtrip(void **state)
{
    (void)state;
    char *dir = hs_test_tmpdir(), path[512];
    profile_t *a = NULL, *b = NULL, *c = NULL;

    snprintf(path, sizeof(path), "%s/p.json", dir);
    assert_int_equal(profile_load("seed003", &a), HS_OK);
    assert_int_equal(profile_save(a, path), HS_OK);
    assert_int_equal(profile_load(path, &b), HS_OK);
    assert_int_equal(profile_hash(a), profile_hash(b));
    assert_string_equal(profile_source(b, PROF_P_link_gbps),
                        profile_source(a, PROF_P_link_gbps));
    assert_int_equal(b->nfactors, a->nfactors);
    assert_int_equal(profile_clone(b, &c), HS_OK);
    assert_int_equal(profile_hash(c), profile_hash(a));
    profile_free(a);
    profile_free(b);
    profile_free(c);
    free(dir);
}

static hs_status_t load_text(const char *text)
{
    char *dir = hs_test_tmpdir(), path[512];
    profile_t *p = NULL;
    hs_status_t st;

    snprintf(path, sizeof(path), "%s/bad.json", dir);
    assert_int_equal(hs_write_file_atomic(path, text), HS_OK);
    st = profile_load(path, &p);
    profile_free(p);
    free(dir);
    return st;
}

static void test_bad_files(void **state)
{
    (void)state;
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": 8}}"), HS_OK);
    assert_int_equal(load_text("{\"params\": {\"ll.dept\": 8}}"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": 0}}"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": -4}}"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": \"8\"}}"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"params\": {\"link.gbps\": {\"value\": 10, \"unit\": \"MB/s\"}}}"),
                     HS_ERR_INVALID);
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": 8"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"colour\": 1}"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"factors\": [{\"max_bytes\": 10, \"bw_factor\": 0}]}"),
                     HS_ERR_INVALID);
    /* nothing may follow the object; factors take whole sizes and only their three keys
     * (each was once accepted: trailing text ignored, 100.5 truncated, a typo dropped) */
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": 8}}\n"), HS_OK);
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": 8}}\ngarbage"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"params\": {\"ll.depth\": 8}} {}"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"factors\": [{\"max_bytes\": 100, \"bw_factor\": 1}]}"),
                     HS_OK);
    assert_int_equal(load_text("{\"factors\": [{\"max_bytes\": 100.5, \"bw_factor\": 1}]}"),
                     HS_ERR_INVALID);
    assert_int_equal(load_text("{\"factors\": [{\"max_bytes\": 100, \"bw_factor\": 1, "
                               "\"lat_facter\": 2}]}"), HS_ERR_INVALID);
    assert_int_equal(load_text("{\"factors\": [{\"max_bytes\": 100, \"bw_factor\": 1, "
                               "\"lat_factor\": \"2\"}]}"), HS_ERR_INVALID);
    profile_t *p = NULL;
    assert_int_equal(profile_load("/nonexistent/p.json", &p), HS_ERR_IO);
    assert_int_equal(profile_load("nosuchbuiltin", &p), HS_ERR_INVALID);
}

/* A profile path that is not a plain file: a FIFO nobody writes to reads as empty at once
 * (it used to block the command forever), a directory or a device is refused by name, and
 * a NUL byte inside the text is named, not silently cut off. */
static void test_odd_files(void **state)
{
    char *dir = hs_test_tmpdir(), path[512];
    profile_t *p = NULL;
    FILE *fp;
    (void)state;
    snprintf(path, sizeof(path), "%s/fifo.json", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(20); /* a regression hangs: fail instead of waiting for ctest's timeout */
    assert_int_equal(profile_load(path, &p), HS_ERR_INVALID);
    alarm(0);
    assert_null(p);
    assert_int_equal(profile_load(dir, &p), HS_ERR_IO);
    assert_int_equal(profile_load("/dev/zero", &p), HS_ERR_IO);
    snprintf(path, sizeof(path), "%s/nul.json", dir);
    fp = fopen(path, "wb");
    assert_non_null(fp);
    fwrite("{\"params\": {}}\0garbage", 1, 23, fp);
    fclose(fp);
    assert_int_equal(profile_load(path, &p), HS_ERR_INVALID);
    assert_null(p);
    free(dir);
}

static void test_cli(void **state)
{
    (void)state;
    char *out = NULL;
    int rc = hs_test_run(&out, "%s profile list", hs_test_bin());
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "seed003"));
    assert_non_null(strstr(out, "seed000"));
    free(out);
    rc = hs_test_run(&out, "%s profile show seed000 --set ll.dpth=4", hs_test_bin());
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "ll.dpth"));
    assert_non_null(strstr(out, "ll.depth"));
    free(out);
    rc = hs_test_run(&out, "%s profile show seed000 --json", hs_test_bin());
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\"source\""));
    free(out);
    rc = hs_test_run(&out, "%s profile show", hs_test_bin());
    assert_int_equal(rc, 2);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins),
        cmocka_unit_test(test_set_errors),
        cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_odd_files),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
