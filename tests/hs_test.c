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

void hs_test_capture_begin(hs_test_stderr_t *c, int target)
{
    snprintf(c->path, sizeof(c->path), "/tmp/hs-test-capture-XXXXXX");
    c->target = target;
    c->fd = mkstemp(c->path);
    c->saved = dup(target);
    assert_true(c->fd >= 0 && c->saved >= 0);
    fflush(target == 1 ? stdout : stderr);
    dup2(c->fd, target);
}

void hs_test_stderr_begin(hs_test_stderr_t *c)
{
    hs_test_capture_begin(c, 2);
}

char *hs_test_stderr_end(hs_test_stderr_t *c)
{
    FILE *fp = c->target == 1 ? stdout : stderr;
    char *text = NULL;

    fflush(fp);
    dup2(c->saved, c->target);
    close(c->saved);
    close(c->fd);
    assert_int_equal(hs_read_file(c->path, &text, NULL), HS_OK);
    remove(c->path);
    fputs(text, fp);
    return text;
}
