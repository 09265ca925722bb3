/* test_trace_json.c - the JSON every tool reads is strict: a key given twice in any object,
 * or anything but white space after the value, is refused naming the key (or the data) and
 * its byte offset: common/hs_json.c itself, trace headers (.hst, CSV, JSON Lines) and
 * profile files. Expected offsets are found in the test's own text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/hs_json.h"
#include "common/hs_util.h"
#include "model/profile/profile.h"
#include "tests/hs_test.h"
#include "traces/trace_format.h"

/* Byte offset of the last occurrence of needle in text. */
static size_t last_at(const char *text, const char *needle)
{
    const char *at = NULL;

    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
        at = p;
    assert_non_null(at);
    return (size_t)(at - text);
}

static void expect_why(const char *why, const char *what, size_t off)
{
    char needle[160];

    snprintf(needle, sizeof(needle), "%s at byte offset %zu", what, off);
    if (!strstr(why, needle))
        fail_msg("'%s' does not say '%s'", why, needle);
}

static void test_strict_check(void **state)
{
    static const char *const good[] = {
        "{}", " [ ] ", "{\"a\":1,\"b\":{\"a\":2},\"c\":[{\"a\":1},{\"a\":1}]}\n",
        "{\"a\":\"x\\\"y\",\"a\\\"\":true,\"A\":null}", "\"s\"", "-1.5e3\r\n\t",
        "{\"\\ud83d\\ude00\":1,\"\\ud83d\\ude01\":2}",
    };
    static const struct {
        const char *text, *what, *at; /* at: the second occurrence's spelling */
    } bad[] = {
        {"{\"a\":1,\"a\":2}", "duplicate key 'a'", "\"a\""},
        {"{\"x\":{\"b\":1,\"c\":[1],\"b\":[1,2]}}", "duplicate key 'b'", "\"b\""},
        {"[{\"k\":0},{\"k\":1,\"k\":2}]", "duplicate key 'k'", "\"k\""},
        {"{\"\\u0061\":1,\"a\":2}", "duplicate key 'a'", "\"a\""},
        {"{\"a\\u0000x\":1,\"a\\u0000y\":2}", "duplicate key 'a'", "\"a\\u0000y\""},
        {"{\"a\":1} x", "trailing data after the JSON value", "x"},
        {"{\"a\":1}{}", "trailing data after the JSON value", "{}"},
    };
    char why[200];

    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_int_equal(hs_json_strict_check(good[i], strlen(good[i]), why, sizeof(why)), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(hs_json_strict_check(bad[i].text, strlen(bad[i].text), why,
                                              sizeof(why)), -1);
        expect_why(why, bad[i].what, last_at(bad[i].text, bad[i].at));
    }
    /* a NUL byte after the value is data, not an end */
    assert_int_equal(hs_json_strict_check("{}\0x", 4, why, sizeof(why)), -1);
    expect_why(why, "trailing data after the JSON value", 2);
    /* the earliest duplicate is named, wherever its object closes */
    const char *two = "{\"o\":{\"p\":1,\"q\":2,\"p\":3},\"r\":0,\"r\":1}";
    assert_int_equal(hs_json_strict_check(two, strlen(two), why, sizeof(why)), -1);
    expect_why(why, "duplicate key 'p'", last_at(two, "\"p\""));
    /* control characters of a key are not written to a terminal */
    const char *esc = "{\"\\u001b[31m\":1,\"\\u001b[31m\":2}";
    assert_int_equal(hs_json_strict_check(esc, strlen(esc), why, sizeof(why)), -1);
    assert_null(strchr(why, 0x1b));
}

static void test_trace_header(void **state)
{
    const char *dup = "{\"producer\":\"a\",\"host\":\"x\",\"host\":\"y\"}";
    const char *tail = "{\"host\":\"x\"} {\"host\":\"y\"}";
    trace_hdr_t h;
    char why[300];

    (void)state;
    trace_hdr_init_unknown(&h);
    assert_int_equal(trace_hdr_from_json(dup, strlen(dup), &h, why, sizeof(why)), -1);
    expect_why(why, "duplicate key 'host'", last_at(dup, "\"host\""));
    assert_int_equal(trace_hdr_from_json(tail, strlen(tail), &h, why, sizeof(why)), -1);
    expect_why(why, "trailing data after the JSON value", last_at(tail, " {") + 1);
    /* a header number from 2^53 on would be read rounded (2^53 + 1 as 2^53): refused */
    const char *big = "{\"dropped\":9007199254740993}", *top = "{\"dropped\":9007199254740991}";
    assert_int_equal(trace_hdr_from_json(big, strlen(big), &h, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "field 'dropped' must be a non-negative integer"));
    assert_non_null(strstr(why, "decimal string"));
    assert_int_equal(trace_hdr_from_json(top, strlen(top), &h, why, sizeof(why)), 0);
    assert_int_equal(h.dropped, UINT64_C(9007199254740991));
    /* from 2^53 on, a decimal string is exact; a sign or junk is not a count */
    const char *str = "{\"dropped\":\"18446744073709551615\"}", *neg = "{\"dropped\":\"-1\"}";
    assert_int_equal(trace_hdr_from_json(str, strlen(str), &h, why, sizeof(why)), 0);
    assert_true(h.dropped == UINT64_MAX);
    assert_int_equal(trace_hdr_from_json(neg, strlen(neg), &h, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "field 'dropped'"));
    trace_hdr_release(&h);
}

/* The same through the CLI, for each form of a trace. */
static void test_trace_cli(void **state)
{
    char *dir = hs_test_tmpdir(), path[600], *out = NULL;
    const char *csv = "# hintsim-trace v1 {\"host\":\"x\",\"host\":\"y\"}\n"
                      "t_post_ns,size_bytes\n1,8\n";
    const char *jsonl = "{\"hintsim_trace\":1,"
                        "\"header\":{\"mode\":\"bench\",\"mode\":\"preload\"}}\n"
                        "{\"t_post_ns\":1,\"size_bytes\":8}\n";
    const char *rec = "{\"hintsim_trace\":1,\"header\":{}}\n"
                      "{\"t_post_ns\":1,\"size_bytes\":8,\"size_bytes\":9}\n";
    char needle[120];

    (void)state;
    snprintf(path, sizeof(path), "%s/d.csv", dir);
    assert_int_equal(hs_write_file_atomic(path, csv), HS_OK);
    assert_int_equal(hs_test_run(&out, "'%s' trace info '%s'", hs_test_bin(), path), 1);
    snprintf(needle, sizeof(needle), "duplicate key 'host' at byte offset %zu",
             last_at(csv, "\"host\"") - strlen("# hintsim-trace v1 "));
    if (!strstr(out, needle))
        fail_msg("no '%s' in:\n%s", needle, out);
    free(out);
    snprintf(path, sizeof(path), "%s/d.jsonl", dir);
    assert_int_equal(hs_write_file_atomic(path, jsonl), HS_OK);
    assert_int_equal(hs_test_run(&out, "'%s' trace info '%s'", hs_test_bin(), path), 1);
    assert_non_null(strstr(out, "duplicate key 'mode'"));
    free(out);
    snprintf(path, sizeof(path), "%s/r.jsonl", dir);
    assert_int_equal(hs_write_file_atomic(path, rec), HS_OK);
    assert_int_equal(hs_test_run(&out, "'%s' trace info '%s'", hs_test_bin(), path), 1);
    assert_non_null(strstr(out, "r.jsonl:2: duplicate key 'size_bytes'"));
    free(out);
    assert_int_equal(hs_test_run(NULL, "rm -rf '%s'", dir), 0);
    free(dir);
}

static void test_profile(void **state)
{
    static const char *const bad[] = {
        "{\"params\":{\"ll.depth\":8,\"ll.depth\":16}}",
        "{\"name\":\"a\",\"params\":{},\"name\":\"b\"}",
        "{\"factors\":[{\"max_bytes\":1,\"bw_factor\":1,\"bw_factor\":2}]}",
    };
    static const char *const key[] = {"ll.depth", "name", "bw_factor"};
    char *dir = hs_test_tmpdir(), path[600], needle[160];

    (void)state;
    snprintf(path, sizeof(path), "%s/p.json", dir);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        hs_test_stderr_t cap;
        profile_t *p = NULL;
        char spelled[64], *err;

        assert_int_equal(hs_write_file_atomic(path, bad[i]), HS_OK);
        hs_test_stderr_begin(&cap);
        assert_int_equal(profile_load(path, &p), HS_ERR_INVALID);
        err = hs_test_stderr_end(&cap);
        assert_null(p);
        snprintf(spelled, sizeof(spelled), "\"%s\"", key[i]);
        snprintf(needle, sizeof(needle), "duplicate key '%s' at byte offset %zu", key[i],
                 last_at(bad[i], spelled));
        if (!strstr(err, needle))
            fail_msg("no '%s' in:\n%s", needle, err);
        free(err);
    }
    assert_int_equal(hs_test_run(NULL, "rm -rf '%s'", dir), 0);
    free(dir);
}

/* A text trace that is not text fails at its first bad byte, not after reading it whole
 * (a 2 GB file of zeros took 30 s and 2 GB of memory before its error): 1 GiB of zeros
 * (sparse), as .csv and after a valid start, and a 64 MiB line without NUL or line end. The
 * children's peak memory shows whether the file was read into memory. */
static void test_not_text_fails_fast(void **state)
{
    char *dir = hs_test_tmpdir(), *out = NULL;
    struct rusage ru;

    (void)state;
    assert_int_equal(hs_test_run(NULL, "cd '%s' && truncate -s 1G zeros.csv && "
                                 "{ printf '# hintsim-trace v1 {}\\nt_post_ns,size_bytes\\n'; "
                                 "seq 1 2000 | sed 's/$/,8/'; } > late.csv && "
                                 "truncate -s 1G late.csv && "
                                 "{ printf '# hintsim-trace v1 {}\\nt_post_ns,size_bytes\\n1,8\\n'; "
                                 "head -c 67108864 /dev/zero | tr '\\0' x; } > long.csv", dir), 0);
    assert_int_equal(hs_test_run(&out, "'%s' trace info '%s/zeros.csv'", hs_test_bin(), dir), 1);
    assert_non_null(strstr(out, "zeros.csv: NUL byte at byte offset 0: not a text trace"));
    free(out);
    assert_int_equal(hs_test_run(&out, "'%s' trace info '%s/late.csv'", hs_test_bin(), dir), 1);
    assert_non_null(strstr(out, "late.csv:2003: NUL byte at column 1"));
    free(out);
    assert_int_equal(hs_test_run(&out, "'%s' trace info '%s/long.csv'", hs_test_bin(), dir), 1);
    assert_non_null(strstr(out, "long.csv:4: line longer than"));
    free(out);
    assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
    if (ru.ru_maxrss > 400 * 1024) /* kB; reading a 1 GiB line takes over 1 GiB */
        fail_msg("a child's peak memory was %ld kB", ru.ru_maxrss);
    assert_int_equal(hs_test_run(NULL, "rm -rf '%s'", dir), 0);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strict_check),
        cmocka_unit_test(test_trace_header),
        cmocka_unit_test(test_trace_cli),
        cmocka_unit_test(test_profile),
        cmocka_unit_test(test_not_text_fails_fast),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
