/* hs_test.c - see hs_test.h. */
#include "tests/hs_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/hs_util.h"

char *hs_test_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *path = malloc(4096);

    if (!path)
        return NULL;
    snprintf(path, 4096, "%s/hintsim-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path)) {
        free(path);
        return NULL;
    }
    return path;
}

const char *hs_test_bin(void)
{
    const char *b = getenv("HINTSIM_BIN");
    return b ? b : "hintsim";
}

const char *hs_test_src(const char *rel)
{
    static char buf[4096];
    const char *s = getenv("HINTSIM_SRC");

    snprintf(buf, sizeof(buf), "%s/%s", s ? s : ".", rel);
    return buf;
}

int hs_test_run(char **out, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    FILE *fp;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    int status;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd) - 8, fmt, ap);
    va_end(ap);
    strcat(cmd, " 2>&1");
    fp = popen(cmd, "r");
    if (!fp)
        return -1;
    for (;;) {
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap + 65536);
            if (!nb)
                break;
            buf = nb;
            cap += 65536;
        }
        n = fread(buf + len, 1, cap - len - 1, fp);
        if (n == 0)
            break;
        len += n;
    }
    if (buf)
        buf[len] = '\0';
    status = pclose(fp);
    if (out)
        *out = buf;
    else
        free(buf);
    if (status == -1 || !WIFEXITED(status))
        return -1;
    return WEXITSTATUS(status);
}

/* The capture in progress, copied: a failed assert between begin and end leaves its test by
 * a long jump, its hs_test_stderr_t gone with the test's frame and the stream still
 * captured, so every later message (cmocka's report of that failure first) would go to the
 * temporary file and be lost. */
static hs_test_stderr_t capture_open;
static int capture_is_open;

/* Put the captured stream back and read what it caught (malloc'ed; NULL if unreadable). */
static char *capture_close(const hs_test_stderr_t *c)
{
    char *text = NULL;

    fflush(c->target == 1 ? stdout : stderr);
    dup2(c->saved, c->target);
    close(c->saved);
    close(c->fd);
    capture_is_open = 0;
    if (hs_read_file(c->path, &text, NULL) != HS_OK)
        text = NULL;
    remove(c->path);
    return text;
}

/* A capture its test never ended: put back and pass on what it caught, failure included. */
static void capture_abandon(void)
{
    if (!capture_is_open)
        return;
    char *text = capture_close(&capture_open);
    FILE *fp = capture_open.target == 1 ? stdout : stderr;

    fprintf(stderr, "hs_test: a capture of %s was not ended (a failed assert in its test?); "
            "what it caught:\n", capture_open.target == 1 ? "stdout" : "stderr");
    fputs(text ? text : "(unreadable)\n", fp);
    fflush(fp);
    free(text);
}

void hs_test_capture_begin(hs_test_stderr_t *c, int target)
{
    static int at_exit;

    capture_abandon();
    if (!at_exit)
        at_exit = atexit(capture_abandon) == 0;
    snprintf(c->path, sizeof(c->path), "/tmp/hs-test-capture-XXXXXX");
    c->target = target;
    c->fd = mkstemp(c->path);
    c->saved = dup(target);
    assert_true(c->fd >= 0 && c->saved >= 0);
    fflush(target == 1 ? stdout : stderr);
    dup2(c->fd, target);
    capture_open = *c;
    capture_is_open = 1;
}

void hs_test_stderr_begin(hs_test_stderr_t *c)
{
    hs_test_capture_begin(c, 2);
}

char *hs_test_stderr_end(hs_test_stderr_t *c)
{
    char *text = capture_close(c);

    assert_non_null(text);
    fputs(text, c->target == 1 ? stdout : stderr);
    return text;
}
