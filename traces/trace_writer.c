/* trace_writer.c - the streaming .hst writer: constant memory (one block buffer),
 * output through hs_afile so the file appears under its name only when complete.
 * The dropped count and the totals go into the end block at close, so a producer never
 * has to seek back or keep records in memory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/hs_util.h"
#include "traces/trace_format.h"

struct trace_writer {
    hs_afile_t *af;
    char *path;
    uint8_t *buf;      /* block header + payload + tail */
    uint32_t blk_recs; /* records per block */
    uint32_t fill;     /* records in the current block */
    uint64_t seq;      /* next block's sequence number */
    uint64_t records;
    uint64_t dropped;
    int failed;
};

static hs_status_t w_put(trace_writer_t *w, const void *p, size_t len)
{
    if (w->failed)
        return HS_ERR_IO;
    if (len && fwrite(p, 1, len, hs_afile_stream(w->af)) != len) {
        hs_log_error("%s: write failed: %s", w->path, strerror(errno));
        w->failed = 1;
        return HS_ERR_IO;
    }
    return HS_OK;
}

static hs_status_t w_header(trace_writer_t *w, const trace_hdr_t *hdr)
{
    static const uint8_t zeros[8];
    uint8_t fh[TRACE_FILE_HDR_BYTES];
    char *json = NULL;
    size_t len;
    hs_status_t st = trace_hdr_to_json(hdr, &json);

    if (st != HS_OK)
        return st;
    len = strlen(json);
    if (len > TRACE_JSON_MAX_BYTES) {
        hs_log_error("%s: JSON header of %zu bytes exceeds the %u-byte limit", w->path, len,
                     TRACE_JSON_MAX_BYTES);
        st = HS_ERR_INVALID;
        goto free_json;
    }
    trace_filehdr_encode((uint32_t)len, trace_crc32(0, json, len), fh);
    st = w_put(w, fh, sizeof(fh));
    if (st != HS_OK)
        goto free_json;
    st = w_put(w, json, len);
    if (st != HS_OK)
        goto free_json;
    st = w_put(w, zeros, trace_json_padded((uint32_t)len) - len);
free_json:
    free(json);
    return st;
}

/* A temporary this long untouched, whose pid is gone, is a killed writer's. */
#define STALE_TMP_SECONDS 60

/* Whether dir/name is "<base>.tmp.<pid>" of a writer that is gone: pid not this process and
 * not alive here (kill: ESRCH), a regular file not modified for STALE_TMP_SECONDS (a
 * writer of the same pid in another PID namespace or on another host of a shared file
 * system is still writing to its file). */
static int stale_tmp(int dfd, const char *name, const char *base)
{
    size_t n = 0;
    long pid = hs_afile_tmp_pid(name, &n);
    struct stat sb;

    if (pid == 0 || n != strlen(base) || strncmp(name, base, n) != 0 || pid == (long)getpid())
        return 0;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return 0;
    return fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
           time(NULL) - sb.st_mtime >= STALE_TMP_SECONDS;
}

void trace_clean_stale_tmp(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    DIR *d;
    struct dirent *e;

    if (slash)
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path == 0 ? 1 : slash - path), path);
    else
        snprintf(dir, sizeof(dir), ".");
    if (!(d = opendir(dir)))
        return; /* the open that follows names the problem */
    while ((e = readdir(d)) != NULL) {
        if (!stale_tmp(dirfd(d), e->d_name, slash ? slash + 1 : path))
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            hs_log_info("%s/%s: removed: the temporary of a writer that is gone (killed "
                        "before it finished)", dir, e->d_name);
    }
    closedir(d);
}

hs_status_t trace_writer_open(const char *path, const trace_hdr_t *hdr, trace_writer_t **out)
{
    trace_writer_t *w = calloc(1, sizeof(*w));
    hs_status_t st = HS_ERR_NOMEM;

    if (!w)
        return HS_ERR_NOMEM;
    w->blk_recs = TRACE_BLK_DEFAULT_RECORDS;
    w->dropped = hdr->dropped;
    w->path = strdup(path);
    w->buf = malloc(TRACE_BLK_OVERHEAD + (size_t)TRACE_BLK_DEFAULT_RECORDS * TRACE_REC_BYTES);
    if (!w->path || !w->buf)
        goto fail;
    trace_clean_stale_tmp(path);
    st = hs_afile_open(path, &w->af);
    if (st != HS_OK)
        goto fail;
    st = w_header(w, hdr);
    if (st != HS_OK)
        goto fail;
    *out = w;
    return HS_OK;
fail:
    trace_writer_abort(w);
    return st;
}

hs_status_t trace_writer_set_block_records(trace_writer_t *w, uint32_t n)
{
    uint8_t *nb;

    if (n == 0 || n > TRACE_BLK_MAX_RECORDS || w->fill || w->seq)
        return HS_ERR_INVALID;
    if (n > w->blk_recs) {
        if (!(nb = realloc(w->buf, TRACE_BLK_OVERHEAD + (size_t)n * TRACE_REC_BYTES)))
            return HS_ERR_NOMEM;
        w->buf = nb;
    }
    w->blk_recs = n;
    return HS_OK;
}

/* Write a block whose payload (plen bytes) is already at buf + 32. */
static hs_status_t w_block(trace_writer_t *w, uint32_t type, uint32_t count, size_t plen)
{
    trace_blk_t h = {0};

    h.type = type;
    h.count = count;
    h.total_len = (uint32_t)(TRACE_BLK_OVERHEAD + plen);
    h.seq = w->seq++;
    h.payload_crc = trace_crc32(0, w->buf + TRACE_BLK_HDR_BYTES, plen);
    trace_blk_encode(&h, w->buf);
    trace_put_u32(w->buf + TRACE_BLK_HDR_BYTES + plen, h.total_len);
    trace_put_u32(w->buf + TRACE_BLK_HDR_BYTES + plen + 4, TRACE_BLK_TAIL_MAGIC);
    return w_put(w, w->buf, h.total_len);
}

static hs_status_t w_flush(trace_writer_t *w)
{
    hs_status_t st;

    if (!w->fill)
        return HS_OK;
    st = w_block(w, TRACE_BLK_RECORDS, w->fill, (size_t)w->fill * TRACE_REC_BYTES);
    w->fill = 0;
    return st;
}

hs_status_t trace_writer_append(trace_writer_t *w, const trace_rec_t *rec)
{
    trace_rec_encode(rec, w->buf + TRACE_BLK_HDR_BYTES + (size_t)w->fill * TRACE_REC_BYTES);
    w->records++;
    if (++w->fill == w->blk_recs)
        return w_flush(w);
    return w->failed ? HS_ERR_IO : HS_OK;
}

hs_status_t trace_writer_append_many(trace_writer_t *w, const trace_rec_t *recs, size_t n)
{
    while (n) {
        size_t k = w->blk_recs - w->fill;
        if (k > n)
            k = n;
        trace_recs_encode(recs, k, w->buf + TRACE_BLK_HDR_BYTES + (size_t)w->fill * TRACE_REC_BYTES);
        w->fill += (uint32_t)k;
        w->records += k;
        recs += k;
        n -= k;
        if (w->fill == w->blk_recs && w_flush(w) != HS_OK)
            return HS_ERR_IO;
    }
    return w->failed ? HS_ERR_IO : HS_OK;
}

void trace_writer_set_dropped(trace_writer_t *w, uint64_t dropped) { w->dropped = dropped; }

hs_status_t trace_writer_close(trace_writer_t *w)
{
    uint8_t *p = w->buf + TRACE_BLK_HDR_BYTES;
    uint64_t blocks;
    hs_status_t st = w_flush(w);

    if (st != HS_OK)
        goto fail;
    blocks = w->seq;
    trace_put_u64(p, w->dropped);
    trace_put_u64(p + 8, w->records);
    trace_put_u64(p + 16, blocks);
    st = w_block(w, TRACE_BLK_END, 0, TRACE_END_PAYLOAD_BYTES);
    if (st != HS_OK)
        goto fail;
    st = hs_afile_commit(w->af);
    w->af = NULL;
    free(w->buf);
    free(w->path);
    free(w);
    return st;
fail:
    trace_writer_abort(w);
    return st;
}

void trace_writer_abort(trace_writer_t *w)
{
    if (!w)
        return;
    if (w->af)
        hs_afile_abort(w->af);
    free(w->buf);
    free(w->path);
    free(w);
}
