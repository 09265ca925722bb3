/* test_hcap_audit.c - libhintcap-audit.so (LD_AUDIT) on this host, no verbs device needed:
 * hcap_vapp (tests/test_hcap_vapp.c) resolves its verbs table the ways NCCL and others do
 * and prints where each function came from before it looks for a device. Under
 * LD_PRELOAD=libhintcap.so alone, the dlopen'd lookups (nccl: dlvsym on the handle, so1:
 * dlsym on it, next: RTLD_NEXT from a library) get libibverbs' own ibv_open_device and
 * ibv_create_qp, i.e. nothing would be captured; with the audit library they get
 * libhintcap's wrappers, while names libhintcap does not wrap (ibv_get_device_list) and
 * an IBVERBS_1.0 compat entry stay libibverbs'. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audit_redirects),
        cmocka_unit_test(test_preload_alone_misses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
