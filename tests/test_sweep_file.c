/* test_sweep_file.c - the sweep's atomic outputs and the sweep of stale temporaries: a
 * temporary is made in the target's folder with the writer's host, PID namespace and PID in
 * its name and a unique (mkstemp) tail, two writers of one file never share it, the file
 * keeps the umask's mode, an abort leaves nothing; a stale temporary (a dead process of
 * this host, or any writer's older than the threshold) is removed, a live one (this
 * process's, another host's young one) and everything else are kept. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "sweep/sweep_file.h"
#include "tests/hs_test.h"

/* Names in dir other than "." and ".." that contain needle (NULL: all), counted. */
static int count_names(const char *dir, const char *needle)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")))
            n += !needle || strstr(e->d_name, needle) != NULL;
    closedir(d);
    return n;
}

static void touch(const char *dir, const char *name, long age_s)
{
    char path[4400];
    struct timeval tv[2];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    assert_int_equal(hs_write_file_atomic(path, "x"), HS_OK);
    gettimeofday(&tv[0], NULL);
    tv[0].tv_sec -= age_s;
    tv[1] = tv[0];
    assert_int_equal(utimes(path, tv), 0);
}

static int present(const char *dir, const char *name)
{
    char path[4400];
    struct stat sb;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return lstat(path, &sb) == 0;
}

static void rm_rf(char *dir)
{
    char cmd[4300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
}

static void test_temporary_name_and_mode(void **state)
{
    char *dir = hs_test_tmpdir(), path[4300], owner[512], want[4900], *text = NULL;
    hs_afile_t *a, *b;
    struct stat sb;
    mode_t old = umask(027);
    DIR *d;
    struct dirent *e;
    int n = 0;

    (void)state;
    snprintf(path, sizeof(path), "%s/out.json", dir);
    sweep_file_owner(owner, sizeof(owner));
    snprintf(want, sizeof(want), "out.json.tmp.%s.", owner);
    assert_non_null(strstr(owner, "."));
    assert_int_equal(atol(strrchr(owner, '.') + 1), (long)getpid());
    /* two writers of one file at once: two temporaries, both named for this process */
    assert_int_equal(sweep_afile_open(path, &a), HS_OK);
    assert_int_equal(sweep_afile_open(path, &b), HS_OK);
    d = opendir(dir);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        assert_int_equal(strncmp(e->d_name, want, strlen(want)), 0);
        assert_int_equal(strlen(e->d_name), strlen(want) + 6);
        n++;
    }
    closedir(d);
    assert_int_equal(n, 2);
    fputs("first", hs_afile_stream(a));
    fputs("second", hs_afile_stream(b));
    hs_afile_abort(b);
    assert_int_equal(hs_afile_commit(a), HS_OK);
    assert_int_equal(count_names(dir, NULL), 1); /* the file alone: no temporary left */
    assert_int_equal(hs_read_file(path, &text, NULL), HS_OK);
    assert_string_equal(text, "first");
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640); /* 0666 less the umask, not mkstemp's 0600 */
    umask(old);
    free(text);
    assert_int_equal(sweep_file_write(path, "again"), HS_OK);
    assert_int_equal(hs_read_file(path, &text, NULL), HS_OK);
    assert_string_equal(text, "again");
    free(text);
    rm_rf(dir);
}

/* A PID that was this host's and is gone now. */
static long dead_pid(void)
{
    pid_t pid = fork();
    int ws;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    return (long)pid;
}

static void test_stale_swept_live_kept(void **state)
{
    char *dir = hs_test_tmpdir(), owner[512], mine[512], dead[600], live[600], sub[4300];
    char *sp;
    size_t removed = 99;

    (void)state;
    sweep_file_owner(owner, sizeof(owner));
    snprintf(mine, sizeof(mine), "%s", owner);
    *(strrchr(mine, '.') + 1) = '\0'; /* "HOST.SPACE." */
    snprintf(dead, sizeof(dead), "a.json.tmp.%s%ld.Ab12Cd", mine, dead_pid());
    snprintf(live, sizeof(live), "b.json.tmp.%s.Ab12Cd", owner);
    touch(dir, dead, 0);                                  /* this host, process gone */
    touch(dir, live, 0);                                  /* this process: live */
    touch(dir, "c.json.tmp.otherhost.0badf00d.1.Ab12Cd", 0);    /* another host, young */
    touch(dir, "d.json.tmp.otherhost.0badf00d.1.Ab12Cd", 7200); /* another host, 2 h old */
    touch(dir, "e.json.tmp.4242", 7200);                  /* an older hintsim's, old */
    touch(dir, "f.json.tmp.4242", 0);                     /* an older hintsim's, young */
    touch(dir, "g.json", 7200);                           /* results: never touched */
    touch(dir, "h.tmp.notes", 7200);                      /* not a temporary's name */
    touch(dir, "i.json.tmp.otherhost.0badf00d.1.Ab12", 7200); /* tail too short */
    /* this host's SPACE with a dead PID, but another host name: kept (PIDs of another host) */
    sp = strchr(mine, '.');
    snprintf(sub, sizeof(sub), "j.json.tmp.otherhost%s%ld.Ab12Cd", sp, dead_pid());
    touch(dir, sub, 0);
    snprintf(sub, sizeof(sub), "%s/k.json.tmp.4242", dir);
    assert_int_equal(symlink("g.json", sub), 0);
    assert_int_equal(sweep_file_sweep_stale(dir, SWEEP_TMP_STALE_S, &removed), HS_OK);
    assert_int_equal(removed, 3);
    assert_false(present(dir, dead));
    assert_false(present(dir, "d.json.tmp.otherhost.0badf00d.1.Ab12Cd"));
    assert_false(present(dir, "e.json.tmp.4242"));
    assert_true(present(dir, live));
    assert_true(present(dir, "c.json.tmp.otherhost.0badf00d.1.Ab12Cd"));
    assert_true(present(dir, "f.json.tmp.4242"));
    assert_true(present(dir, "g.json"));
    assert_true(present(dir, "h.tmp.notes"));
    assert_true(present(dir, "i.json.tmp.otherhost.0badf00d.1.Ab12"));
    assert_true(present(dir, "k.json.tmp.4242")); /* a symlink, not a temporary we wrote */
    assert_int_equal(count_names(dir, NULL), 8);
    /* a threshold of 0 s: every temporary of a writer not known alive goes, this one stays */
    sleep(1);
    assert_int_equal(sweep_file_sweep_stale(dir, 0, &removed), HS_OK);
    assert_true(present(dir, live) == 0); /* older than 0 s too: the threshold rules all */
    assert_int_equal(sweep_file_sweep_stale(dir, 0, &removed), HS_OK);
    assert_int_equal(removed, 0);
    snprintf(sub, sizeof(sub), "%s/none", dir);
    assert_int_equal(sweep_file_sweep_stale(sub, 60, &removed), HS_OK);
    rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_temporary_name_and_mode),
        cmocka_unit_test(test_stale_swept_live_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
