/* test_hcap_cli.c - `capture run` (environment handed to the command, its exit status
 * passed through, an unwritable DIR, libhintcap.so loaded into a real process) and
 * `trace audit` (differing hints found, merge, bad input), through their cmd_* entry
 * points so they are tested whichever group registers them. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/preload/hcap_config.h"
#include "cli/cli.h"
#include "common/hs_util.h"
#include "tests/hs_test.h"
#include "traces/trace.h"
#include "traces/trace_check.h"

#define ARGV(...) ((char *[]){__VA_ARGS__, NULL})
#define ARGC(...) ((int)(sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)))
#define CALL(fn, ...) fn(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__))

/* Run fn with its stdout (target 1) or stderr (2) captured into *text (malloc'ed). */
static int with_output(char **text, int target, int (*fn)(int, char **), int argc, char **argv)
{
    hs_test_stderr_t cap;
    int rc;

    hs_test_capture_begin(&cap, target);
    rc = fn(argc, argv);
    *text = hs_test_stderr_end(&cap);
    return rc;
}

static int with_stderr(char **err, int (*fn)(int, char **), int argc, char **argv)
{
    return with_output(err, 2, fn, argc, argv);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_run_status_and_env(void **state)
{
    char *dir = hs_test_tmpdir(), out[300], check[512];
    (void)state;

    snprintf(out, sizeof(out), "%s/t", dir);
    /* The command sees LD_PRELOAD with libhintcap.so and an absolute HINTCAP_DIR. */
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--cold", "5", "--", "sh", "-c",
                          "case \"$LD_PRELOAD\" in *libhintcap.so*) ;; *) exit 90;; esac;"
                          "case \"$HINTCAP_DIR\" in /*) ;; *) exit 91;; esac;"
                          "[ \"$HINTCAP_COLD\" = 5 ] || exit 92; exit 7"),
                     7);
    /* Without options the command gets libhintcap's own defaults (hcap_config.h); with
     * --writer-cpu, HINTCAP_WRITER_CPU, which must be a CPU number. */
    snprintf(check, sizeof(check),
             "[ \"$HINTCAP_RING_EVENTS\" = %u ] || exit 93; [ \"$HINTCAP_COLD\" = %u ] || exit 94;"
             "[ -z \"${HINTCAP_WRITER_CPU+x}\" ] || exit 95; exit 8",
             (unsigned)HCAP_DEFAULT_RING_EVENTS, (unsigned)HCAP_DEFAULT_COLD);
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--", "sh", "-c", check), 8);
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--writer-cpu", "3", "--", "sh",
                          "-c", "[ \"$HINTCAP_WRITER_CPU\" = 3 ] || exit 96; exit 9"),
                     9);
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--writer-cpu", "first", "--",
                          "true"),
                     2);
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--", "sh", "-c", "kill -TERM $$"),
                     128 + 15);
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--", "/nonexistent/cmd"), 127);
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--cold", "many", "--", "true"), 2);
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out), 2); /* no command */
    /* libhintcap.so really loads into these processes; none opened a device: no trace. */
    assert_int_equal(count_files(out), 0);
    remove(out);
    remove(dir);
    free(dir);
}

/* A command that opens no device: `capture run` says nothing was captured, and its exit
 * status is still the command's. LD_AUDIT carries libhintcap-audit.so (dlopen programs). */
static void test_run_no_device(void **state)
{
    char *dir = hs_test_tmpdir(), out[300], *err = NULL;
    int rc;
    (void)state;

    snprintf(out, sizeof(out), "%s/t", dir);
    rc = with_stderr(&err, cmd_capture_run, 7,
                     ARGV("run", "-o", out, "--", "sh", "-c",
                          "case \"$LD_AUDIT\" in *libhintcap-audit.so*) exit 3;; esac; exit 90"));
    assert_int_equal(rc, 3);
    assert_non_null(strstr(err, "no process opened a verbs device"));
    free(err);
    rc = with_stderr(&err, cmd_capture_run, 5, ARGV("run", "-o", out, "--", "true"));
    assert_int_equal(rc, 0);
    assert_non_null(strstr(err, "no process opened a verbs device"));
    free(err);
    /* --no-audit: LD_AUDIT left alone */
    unsetenv("LD_AUDIT");
    assert_int_equal(CALL(cmd_capture_run, "run", "-o", out, "--no-audit", "--", "sh", "-c",
                          "[ -z \"$LD_AUDIT\" ] && exit 5; exit 91"),
                     5);
    assert_int_equal(count_files(out), 0);
    remove(out);
    remove(dir);
    free(dir);
}

/* The line per process and the warnings, from the summaries the processes of this run left
 * (written here by the command itself, as libhintcap would; test_hcap_hooks checks what
 * libhintcap writes). A summary of another run is not reported. */
static void test_run_reports_summaries(void **state)
{
    char *dir = hs_test_tmpdir(), out[300], *err = NULL;
    char script[] =
        "w() { printf '{\"run\":\"%s\",\"host\":\"h\",\"pid\":%s,\"rank\":%s,"
        "\"device\":\"rxe0\",\"trace\":\"h-%s.hst\",\"trace_written\":true,"
        "\"qps_seen\":%s,\"qps_posting\":%s,\"wrs_posted\":%s,\"wrs_completed\":%s,"
        "\"dropped\":%s,\"outside\":{\"completions\":%s,\"qps\":%s,\"more_qps\":false,"
        "\"qp_nums\":[%s]}}' \"$1\" $2 $3 $2 $4 $5 $6 $7 $8 $9 ${10} \"${11}\" "
        ">\"$HINTCAP_DIR/h-$2.summary.json\"; };"
        "w \"$HINTCAP_RUN\" 101 0 2 2 1000 1000 0 0 0 '';"     /* captured */
        "w \"$HINTCAP_RUN\" 102 1 2 0 0 0 0 7 2 '17, 18';"     /* posted outside */
        "w \"$HINTCAP_RUN\" 103 -1 1 1 50 50 4 0 0 '';"        /* dropped */
        "w other-run 104 2 1 1 9 9 0 0 0 '';"                  /* an earlier run's */
        "exit 6";
    int rc;
    (void)state;

    snprintf(out, sizeof(out), "%s/t", dir);
    rc = with_stderr(&err, cmd_capture_run, 7, ARGV("run", "-o", out, "--", "sh", "-c", script));
    assert_int_equal(rc, 6);
    assert_null(strstr(err, "no process opened"));
    assert_non_null(strstr(err, "process 101 on h, rank 0, rxe0: 2 QPs (2 posting), 1000 WRs "
                                "posted, 1000 completed, 0 dropped"));
    assert_non_null(strstr(err, "process 102 opened rxe0 but recorded no WR"));
    assert_non_null(strstr(err, "process 102: posted outside libibverbs: 7 send completions "
                                "on 2 QPs (qp_num 0x11, 0x12)"));
    assert_non_null(strstr(err, "process 103 dropped 4 records"));
    assert_null(strstr(err, "process 103 on h, rank")); /* rank -1: none printed */
    assert_null(strstr(err, "process 104"));
    assert_null(strstr(err, "process 101 opened")); /* no warning for a full capture */
    assert_true(strstr(err, "process 101 on") < strstr(err, "process 102:"));
    free(err);
    assert_int_equal(hs_test_run(NULL, "rm -rf '%s'", out), 0);
    remove(dir);
    free(dir);
}

static void test_run_unwritable_dir(void **state)
{
    char *err = NULL;
    const char *p;
    int rc, warnings = 0;
    (void)state;

    rc = with_stderr(&err, cmd_capture_run, 7,
                     ARGV("run", "-o", "/proc/hcap-no/dir", "--", "sh", "-c", "exit 4"));
    assert_int_equal(rc, 4); /* the command still ran, its status unchanged */
    for (p = err; (p = strstr(p, "warning")) != NULL; p++)
        warnings++;
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(err, "/proc/hcap-no/dir"));
    free(err);
    /* a --lib that is not there is the user's path, named; it is the only one tried (the
     * message listed the places searched without it, exit 3) */
    rc = with_stderr(&err, cmd_capture_run, 5, ARGV("run", "--lib", "/nonexistent.so", "--",
                                                    "true"));
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "--lib /nonexistent.so: no such file"));
    assert_null(strstr(err, "looked next to"));
    free(err);
}

/* Write a small per-process trace with the given hint. */
static void write_trace(const char *path, uint64_t hint, trace_hint_src_t src, int rank,
                        size_t n)
{
    trace_t *tr;
    size_t i;

    assert_int_equal(trace_new(&tr), HS_OK);
    tr->hdr.mode = TRACE_MODE_PRELOAD;
    tr->hdr.hint_bytes = hint;
    tr->hdr.hint_source = src;
    tr->hdr.rank = rank;
    tr->hdr.pid = 1000 + rank;
    for (i = 0; i < n; i++) {
        trace_rec_t r = {.t_post_ns = 100 * i + (uint64_t)rank, .t_done_ns = 100 * i + 50,
                         .size_bytes = 64, .qp = (uint32_t)(i % 2), .flags = TRACE_F_SIGNALED};
        assert_int_equal(trace_push(tr, &r), HS_OK);
    }
    assert_int_equal(trace_save(path, tr), HS_OK);
    trace_free(tr);
}

/* A trace whose writer was killed: a whole trace cut inside its last block, renamed to the
 * writer's temporary name for pid. */
static void write_killed_trace(const char *dir, const char *base, long pid, size_t n)
{
    char full[512], tmp[512];
    struct stat st;

    snprintf(full, sizeof(full), "%s/%s.hst", dir, base);
    snprintf(tmp, sizeof(tmp), "%s/%s.hst.tmp.%ld", dir, base, pid);
    write_trace(full, 16384, TRACE_HINT_ENV, 0, n);
    assert_int_equal(stat(full, &st), 0);
    assert_int_equal(truncate(full, st.st_size - 2000), 0); /* into the last record block */
    assert_int_equal(rename(full, tmp), 0);
}

/* `capture run` salvages the temporary trace of a process that is gone (SIGKILL leaves
 * nothing else) into the final name, and leaves a running process's alone. */
static void test_run_salvages_orphans(void **state)
{
    char *dir = hs_test_tmpdir(), *err = NULL, out[300], p[600];
    pid_t dead = fork();
    trace_validate_t v;
    (void)state;

    if (dead == 0)
        _exit(0);
    assert_true(dead > 0);
    assert_int_equal(waitpid(dead, NULL, 0), dead);
    snprintf(out, sizeof(out), "%s/t", dir);
    assert_int_equal(hs_mkdir_p(out), HS_OK);
    write_killed_trace(out, "host-dead", (long)dead, 20000);
    write_killed_trace(out, "host-live", (long)getpid(), 100);
    assert_int_equal(with_stderr(&err, cmd_capture_run, 5, ARGV("run", "-o", out, "--", "true")),
                     0);
    assert_non_null(strstr(err, "salvaged"));
    snprintf(p, sizeof(p), "%s/host-dead.hst", out);
    assert_int_equal(trace_validate(p, &v), HS_OK);
    assert_true(v.records > 0 && v.records < 20000); /* the last block went with the end */
    snprintf(p, sizeof(p), "%s/host-dead.hst.tmp.%ld", out, (long)dead);
    assert_int_not_equal(access(p, F_OK), 0);
    snprintf(p, sizeof(p), "%s/host-live.hst.tmp.%ld", out, (long)getpid());
    assert_int_equal(access(p, F_OK), 0);
    assert_null(strstr(err, "host-live"));
    free(err);
    assert_int_equal(count_files(out), 2);
    snprintf(p, sizeof(p), "rm -rf '%s'", dir);
    assert_int_equal(system(p), 0);
    free(dir);
}

static void test_audit(void **state)
{
    char *dir = hs_test_tmpdir(), p[300], merged[300], *out = NULL;
    trace_t *m = NULL;
    size_t i;
    (void)state;

    snprintf(p, sizeof(p), "%s/n1-1-r0.hst", dir);
    write_trace(p, 4096, TRACE_HINT_ENV, 0, 10);
    snprintf(p, sizeof(p), "%s/n1-2-r1.hst", dir);
    write_trace(p, 4096, TRACE_HINT_ENV, 1, 6);
    snprintf(merged, sizeof(merged), "%s/merged.out.hst", dir);
    assert_int_equal(CALL(cmd_trace_audit, "audit", dir), 0);
    snprintf(p, sizeof(p), "%s/n1-3-r2.hst", dir);
    write_trace(p, 65536, TRACE_HINT_CONFIG, 2, 4); /* pitfall 3: a config file won */
    assert_int_equal(CALL(cmd_trace_audit, "audit", dir, "-o", merged), 1);
    assert_int_equal(trace_load(merged, &m), HS_OK);
    assert_int_equal(m->n, 20);
    assert_int_equal(m->hdr.hint_bytes, 4096); /* the majority */
    for (i = 1; i < m->n; i++)
        assert_true(m->recs[i - 1].t_post_ns <= m->recs[i].t_post_ns);
    for (i = 0; i < m->n; i++)
        assert_true(m->recs[i].qp < 6); /* 3 processes x 2 QPs, renumbered */
    trace_free(m);
    /* audited again, the merged trace in DIR is left out (it counted every process twice) */
    assert_int_equal(with_stderr(&out, cmd_trace_audit, 4, ARGV("audit", dir, "-o", merged)), 1);
    assert_non_null(strstr(out, "merged.out.hst: left out"));
    free(out);
    assert_int_equal(trace_load(merged, &m), HS_OK);
    assert_int_equal(m->n, 20);
    trace_free(m);
    remove(merged);
    /* a header's device is printed plain: no escape reaches the terminal */
    trace_t *t;
    snprintf(p, sizeof(p), "%s/n1-4-r3.hst", dir);
    assert_int_equal(trace_new(&t), HS_OK);
    t->hdr.hint_bytes = 4096;
    snprintf(t->hdr.device, sizeof(t->hdr.device), "\x1b]0;owned\x07\x1b[2J");
    trace_rec_t r1 = {.t_post_ns = 1, .t_done_ns = 2, .size_bytes = 64, .qp = 0};
    assert_int_equal(trace_push(t, &r1), HS_OK);
    assert_int_equal(trace_save(p, t), HS_OK);
    assert_int_equal(with_output(&out, 1, cmd_trace_audit, 2, ARGV("audit", dir)), 1);
    assert_null(strchr(out, 0x1b));
    assert_null(strchr(out, 0x07));
    assert_non_null(strstr(out, "\\x1b]0;owned\\x07\\x1b[2J"));
    free(out);
    /* QP indices past 32 bits once renumbered: refused (the index wrapped, QPs collided) */
    t->recs[0].qp = UINT32_MAX;
    assert_int_equal(trace_save(p, t), HS_OK);
    trace_free(t);
    assert_int_equal(with_stderr(&out, cmd_trace_audit, 4, ARGV("audit", dir, "-o", merged)), 1);
    assert_non_null(strstr(out, "do not fit 32 bits"));
    assert_int_not_equal(access(merged, F_OK), 0);
    free(out);
    remove(p);
    /* Bad input: a damaged trace is named; an empty directory is an error. */
    snprintf(p, sizeof(p), "%s/junk.hst", dir);
    assert_int_equal(hs_write_file_atomic(p, "not a trace"), HS_OK);
    assert_int_equal(with_stderr(&out, cmd_trace_audit, 2, ARGV("audit", dir)), 1);
    assert_non_null(strstr(out, "junk.hst"));
    free(out);
    remove(p);
    snprintf(p, sizeof(p), "%s/n1-1-r0.hst", dir);
    remove(p);
    snprintf(p, sizeof(p), "%s/n1-2-r1.hst", dir);
    remove(p);
    snprintf(p, sizeof(p), "%s/n1-3-r2.hst", dir);
    remove(p);
    assert_int_equal(with_stderr(&out, cmd_trace_audit, 2, ARGV("audit", dir)), 1);
    assert_non_null(strstr(out, "no .hst traces"));
    free(out);
    remove(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_status_and_env),
        cmocka_unit_test(test_run_no_device),
        cmocka_unit_test(test_run_reports_summaries),
        cmocka_unit_test(test_run_unwritable_dir),
        cmocka_unit_test(test_run_salvages_orphans),
        cmocka_unit_test(test_audit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
