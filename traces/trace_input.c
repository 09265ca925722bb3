/* trace_input.c - opening a trace for reading, whatever the path names: a regular file,
 * "-" (standard input), a pipe, a FIFO, a socket. Every reader seeks (the .hst reader peeks
 * at the end block, salvage maps the file, the loaders size their arrays from the file),
 * so what cannot seek is first copied into an unnamed temporary file. The open never
 * waits for a FIFO's writer (O_NONBLOCK): a FIFO nobody writes to reads as empty. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "traces/trace.h"

/* An unnamed file in $TMPDIR (else /tmp), gone when closed. */
static int tmp_anon(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    int fd;

    if (!dir || !*dir)
        dir = "/tmp";
#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    snprintf(path, sizeof(path), "%s/hintsim-input.XXXXXX", dir);
    fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

static hs_status_t copy_buf(int src, int dst, const char *name, char *buf)
{
    if (!buf)
        return HS_ERR_NOMEM;
    for (;;) {
        ssize_t n = read(src, buf, 1 << 16), w = 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            hs_log_error("%s: cannot read: %s", name, strerror(errno));
            return HS_ERR_IO;
        }
        if (n == 0)
            return HS_OK;
        while (w < n) {
            ssize_t k = write(dst, buf + w, (size_t)(n - w));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0) {
                hs_log_error("%s: cannot keep a copy of the input (a pipe is copied to a "
                             "temporary file in $TMPDIR to be read): %s", name, strerror(errno));
                return HS_ERR_IO;
            }
            w += k;
        }
    }
}

static hs_status_t copy_all(int src, int dst, const char *name)
{
    char *buf = malloc(1 << 16); /* not static: traces may be loaded from several threads */
    hs_status_t st = copy_buf(src, dst, name, buf);

    free(buf);
    return st;
}

/* A seekable copy of src (closed here). */
static hs_status_t spool(int src, const char *name, int *out)
{
    int fd = tmp_anon();
    hs_status_t st;

    if (fd < 0) {
        hs_log_error("%s: cannot create a temporary file to read the pipe into: %s", name,
                     strerror(errno));
        close(src);
        return HS_ERR_IO;
    }
    st = copy_all(src, fd, name);
    close(src);
    if (st == HS_OK && lseek(fd, 0, SEEK_CUR) == 0) {
        hs_log_error("%s: nothing to read: a pipe or FIFO without a writer, or whose writer "
                     "wrote nothing (not a trace)", name);
        st = HS_ERR_INVALID;
    }
    if (st == HS_OK && lseek(fd, 0, SEEK_SET) != 0) {
        hs_log_error("%s: %s", name, strerror(errno));
        st = HS_ERR_IO;
    }
    if (st != HS_OK) {
        close(fd);
        return st;
    }
    *out = fd;
    return HS_OK;
}

hs_status_t trace_input_open(const char *path, int *fd_out)
{
    int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO)
                                    : open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;

    if (fd < 0 || fstat(fd, &sb) != 0) {
        hs_log_error("%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return HS_ERR_IO;
    }
    /* reads below wait for data as usual: only the open must not wait for a writer */
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (S_ISDIR(sb.st_mode)) {
        hs_log_error("%s: is a directory, not a trace file", path);
        close(fd);
        return HS_ERR_IO;
    }
    if (S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode)) {
        *fd_out = fd;
        return HS_OK;
    }
    if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))
        return spool(fd, path, fd_out);
    hs_log_error("%s: not a regular file, a pipe or a FIFO (a trace is read from one of "
                 "those)", path);
    close(fd);
    return HS_ERR_IO;
}

FILE *trace_input_fopen(const char *path)
{
    int fd;
    FILE *fp;

    if (trace_input_open(path, &fd) != HS_OK)
        return NULL;
    if (!(fp = fdopen(fd, "rb"))) {
        hs_log_error("%s: %s", path, strerror(errno));
        close(fd);
    }
    return fp;
}
