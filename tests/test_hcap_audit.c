/* test_hcap_audit.c - libhintcap-audit.so (LD_AUDIT) on this host, no verbs device needed:
 * hcap_vapp (tests/test_hcap_vapp.c) resolves its verbs table the ways NCCL and others do
 * and prints where each function came from before it looks for a device. Under
 * LD_PRELOAD=libhintcap.so alone, the dlopen'd lookups (nccl: dlvsym on the handle, so1:
 * dlsym on it, next: RTLD_NEXT from a library) get libibverbs' own ibv_open_device and
 * ibv_create_qp, i.e. nothing would be captured; with the audit library they get
 * libhintcap's wrappers, while names libhintcap does not wrap (ibv_get_device_list) and
 * an IBVERBS_1.0 compat entry stay libibverbs'. A transport plugin that links libibverbs and
 * is loaded with RTLD_DEEPBIND (hcap_vapp deepbind) binds through its PLT to libibverbs
 * ahead of libhintcap: with the audit library its posts are captured all the same (run
 * against a fake libibverbs, test_hcap_fakeverbs.c, so the posts happen here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/hs_test.h"

static const char *const g_modes[] = {"nccl", "so1", "default", "next"};

/* Run hcap_vapp MODE (or the linked build) with LD_PRELOAD, and LD_AUDIT if audit; its
 * output into *out. */
static void vapp(const char *mode, int audit, char **out)
{
    int rc = hs_test_run(out, "LD_PRELOAD='%s' %s%s%s '%s' %s 2>&1", HCAP_LIB,
                         audit ? "LD_AUDIT='" : "", audit ? HCAP_AUDIT_LIB : "",
                         audit ? "'" : "", strcmp(mode, "linked") ? HCAP_VAPP : HCAP_VAPP_LINKED,
                         mode);

    assert_true(rc == 0 || rc == 1); /* 1: no device here, after the resolution */
    assert_non_null(*out);
}

/* The object the line "vapp: NAME from OBJECT" names, as "hintcap" / "ibverbs" / "?". */
static const char *origin(const char *out, const char *name)
{
    char key[128];
    const char *p, *eol;

    snprintf(key, sizeof(key), "vapp: %s from ", name);
    p = strstr(out, key);
    if (!p)
        return "?";
    eol = strchr(p, '\n');
    p += strlen(key);
    if (strstr(p, "libhintcap.so") && (!eol || strstr(p, "libhintcap.so") < eol))
        return "hintcap";
    if (strstr(p, "libibverbs.so") && (!eol || strstr(p, "libibverbs.so") < eol))
        return "ibverbs";
    return "?";
}

static void test_audit_redirects(void **state)
{
    size_t i;
    char *out = NULL;
    (void)state;

    for (i = 0; i < sizeof(g_modes) / sizeof(g_modes[0]); i++) {
        vapp(g_modes[i], 1, &out);
        assert_string_equal(origin(out, "ibv_open_device"), "hintcap");
        assert_string_equal(origin(out, "ibv_create_qp"), "hintcap");
        assert_string_equal(origin(out, "ibv_get_device_list"), "ibverbs");
        if (strcmp(g_modes[i], "nccl") == 0)
            assert_string_equal(origin(out, "ibv_open_device@IBVERBS_1.0"), "ibverbs");
        free(out);
    }
    vapp("linked", 1, &out);
    assert_string_equal(origin(out, "ibv_open_device"), "hintcap");
    free(out);
}

/* Without the audit library, what a dlopen program gets: why it exists. */
static void test_preload_alone_misses(void **state)
{
    static const char *const missed[] = {"nccl", "so1", "next"};
    size_t i;
    char *out = NULL;
    (void)state;

    for (i = 0; i < sizeof(missed) / sizeof(missed[0]); i++) {
        vapp(missed[i], 0, &out);
        assert_string_equal(origin(out, "ibv_open_device"), "ibverbs");
        free(out);
    }
    vapp("linked", 0, &out); /* a linked program is caught by LD_PRELOAD alone */
    assert_string_equal(origin(out, "ibv_open_device"), "hintcap");
    free(out);
}

/* The WRs hcap_vapp's DEEPBIND plugin posted into DIR's summary, -1 for no summary (no
 * device was opened through libhintcap). */
static long deep_captured(int audit, long writes)
{
    char *dir = hs_test_tmpdir(), *out = NULL;
    const char *p;
    long posted = -1;
    int rc;

    assert_non_null(dir);
    rc = hs_test_run(&out, "LD_LIBRARY_PATH='%s' LD_PRELOAD='%s' %s%s%s HINTCAP_DIR='%s' "
                           "'%s' deepbind '%s' %ld 2>&1",
                     HCAP_FAKEVERBS_DIR, HCAP_LIB, audit ? "LD_AUDIT='" : "",
                     audit ? HCAP_AUDIT_LIB : "", audit ? "'" : "", dir, HCAP_VAPP, HCAP_DEEP,
                     writes);
    if (rc != 0)
        fprintf(stderr, "%s", out ? out : "");
    assert_int_equal(rc, 0);
    free(out);
    out = NULL;
    hs_test_run(&out, "cat '%s'/*.summary.json 2>/dev/null; rm -rf '%s'", dir, dir);
    p = out ? strstr(out, "\"wrs_posted\":") : NULL;
    if (p)
        posted = strtol(p + strlen("\"wrs_posted\":"), NULL, 10);
    free(out);
    free(dir);
    return posted;
}

static void test_audit_deepbind_plugin(void **state)
{
    (void)state;
    assert_int_equal(deep_captured(1, 100), 100);
    assert_int_equal(deep_captured(0, 100), -1); /* LD_PRELOAD alone: bound past it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audit_redirects),
        cmocka_unit_test(test_preload_alone_misses),
        cmocka_unit_test(test_audit_deepbind_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
