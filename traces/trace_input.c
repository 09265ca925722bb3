/* trace_input.c - opening a trace for reading, whatever the path names: a regular file,
 * "-" (standard input), a pipe, a FIFO, a socket. The open never waits for a FIFO's writer
 * (O_NONBLOCK): a FIFO nobody writes to reads as empty, and is refused.
 *
 * A stream (trace_input_fopen) reads a pipe as it comes: the readers only seek near the
 * start (to sniff the format and read it again), so the first PIPE_WINDOW bytes are kept
 * and nothing else; a reader that refuses the first line stops reading there, however much
 * the writer has left. A descriptor (trace_input_open, for salvage, which maps the file)
 * gets a seekable copy of the whole pipe in an unnamed temporary file. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
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

/* path opened; *stream 1 when it cannot seek (*fd_out is then the pipe itself, not a copy):
 * the caller reads it as a stream or spools it. */
static hs_status_t trace_input_open_how(const char *path, int *fd_out, int *stream)
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
    if (S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode) || S_ISFIFO(sb.st_mode) ||
        S_ISSOCK(sb.st_mode)) {
        *fd_out = fd;
        *stream = !(S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode));
        return HS_OK;
    }
    hs_log_error("%s: not a regular file, a pipe or a FIFO (a trace is read from one of "
                 "those)", path);
    close(fd);
    return HS_ERR_IO;
}

hs_status_t trace_input_open(const char *path, int *fd_out)
{
    int fd, stream;
    hs_status_t st = trace_input_open_how(path, &fd, &stream);

    if (st != HS_OK)
        return st;
    if (!stream) {
        *fd_out = fd;
        return HS_OK;
    }
    return spool(fd, path, fd_out);
}

/* ---- a pipe as a stream ---------------------------------------------------------- */

#define PIPE_WINDOW (64u << 10) /* what stays seekable: the readers rewind within 4 KiB */

typedef struct {
    int fd;
    char *win;     /* the first bytes read, up to PIPE_WINDOW */
    size_t have;   /* bytes in win */
    uint64_t pos;  /* the stream's position */
    uint64_t got;  /* bytes read from fd so far (== have while within the window) */
} pipe_in_t;

static ssize_t pipe_in_fill(pipe_in_t *p, char *buf, size_t size)
{
    ssize_t n;

    do
        n = read(p->fd, buf, size);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        return n;
    if (p->got < PIPE_WINDOW) {
        size_t k = (size_t)n < PIPE_WINDOW - p->got ? (size_t)n : PIPE_WINDOW - (size_t)p->got;
        if (buf != p->win + p->have)
            memcpy(p->win + p->have, buf, k);
        p->have += k;
    }
    p->got += (uint64_t)n;
    return n;
}

static ssize_t pipe_in_read(void *c, char *buf, size_t size)
{
    pipe_in_t *p = c;
    ssize_t n;

    if (p->pos < p->have) {
        size_t k = p->have - (size_t)p->pos < size ? p->have - (size_t)p->pos : size;
        memcpy(buf, p->win + p->pos, k);
        p->pos += k;
        return (ssize_t)k;
    }
    n = pipe_in_fill(p, buf, size);
    if (n > 0)
        p->pos += (uint64_t)n;
    return n;
}

/* To where the stream is, or back within what was kept while nothing past it has been read
 * (else reading on from there would skip what was read past the window). */
static int pipe_in_seek(void *c, off64_t *off, int whence)
{
    pipe_in_t *p = c;
    int64_t to = whence == SEEK_SET ? *off : whence == SEEK_CUR ? (int64_t)p->pos + *off : -1;

    if (to < 0 || ((uint64_t)to != p->pos && ((uint64_t)to > p->have || p->got > p->have))) {
        errno = ESPIPE;
        return -1;
    }
    p->pos = (uint64_t)to;
    *off = to;
    return 0;
}

static int pipe_in_close(void *c)
{
    pipe_in_t *p = c;
    int rc = close(p->fd);

    free(p->win);
    free(p);
    return rc;
}

/* fd (a pipe, FIFO or socket; closed here on failure) as a stream; its first read is made
 * here, so that a pipe without data is refused before any reader starts. */
static FILE *pipe_in_open(int fd, const char *name)
{
    static const cookie_io_functions_t io = {pipe_in_read, NULL, pipe_in_seek, pipe_in_close};
    pipe_in_t *p = calloc(1, sizeof(*p));
    ssize_t n;
    FILE *fp;

    if (!p || !(p->win = malloc(PIPE_WINDOW))) {
        hs_log_error("%s: out of memory", name);
        goto free_p;
    }
    p->fd = fd;
    n = pipe_in_fill(p, p->win, PIPE_WINDOW);
    if (n < 0) {
        hs_log_error("%s: cannot read: %s", name, strerror(errno));
        goto free_p;
    }
    if (n == 0) {
        hs_log_error("%s: nothing to read: a pipe or FIFO without a writer, or whose writer "
                     "wrote nothing (not a trace)", name);
        goto free_p;
    }
    if (!(fp = fopencookie(p, "rb", io))) {
        hs_log_error("%s: %s", name, strerror(errno));
        goto free_p;
    }
    return fp;
free_p:
    if (p)
        free(p->win);
    free(p);
    close(fd);
    return NULL;
}

FILE *trace_input_fopen(const char *path)
{
    int fd, stream;
    FILE *fp;

    if (trace_input_open_how(path, &fd, &stream) != HS_OK)
        return NULL;
    if (stream)
        return pipe_in_open(fd, path);
    if (!(fp = fdopen(fd, "rb"))) {
        hs_log_error("%s: %s", path, strerror(errno));
        close(fd);
    }
    return fp;
}
