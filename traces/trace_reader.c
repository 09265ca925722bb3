/* trace_reader.c - the streaming .hst reader. It reads a whole block at a time, checks
 * the block header CRC, the lengths at both ends, the sequence number and the payload CRC,
 * and hands out records from the block buffer (zero-copy on little-endian hosts). Any
 * damage is logged once with the file name, the block number and its byte offset. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "traces/trace_format.h"

struct trace_reader {
    FILE *fp;
    char *path;
    trace_hdr_t hdr;
    uint8_t *buf;       /* one block: header, payload, tail */
    size_t cap;         /* bytes allocated at buf (grows to the largest block seen) */
    trace_rec_t *recs;  /* records of the current block (may point into buf) */
    trace_rec_t *dec;   /* decode buffer on big-endian hosts */
    uint32_t n, pos;    /* records in the current block, next to hand out */
    uint64_t off;       /* byte offset of the next block */
    uint64_t cur_off;   /* byte offset of the block the current records come from */
    uint64_t blkno;     /* next block's number (== expected sequence number) */
    uint64_t rec_blocks;
    uint64_t records;
    hs_status_t err;    /* sticky: once damaged, always damaged */
    int eof;
};

#define WHY_LEN 512

static hs_status_t r_fail(trace_reader_t *r, uint64_t off, const char *why)
{
    hs_log_error("%s: block %" PRIu64 " at byte offset %" PRIu64 ": %s", r->path, r->blkno,
                 off, why);
    r->err = HS_ERR_INVALID;
    return r->err;
}

static hs_status_t r_read(trace_reader_t *r, void *dst, size_t len, size_t *got)
{
    *got = fread(dst, 1, len, r->fp);
    if (*got < len && ferror(r->fp)) {
        hs_log_error("%s: read error at byte offset %" PRIu64 ": %s", r->path, r->off,
                     strerror(errno));
        r->err = HS_ERR_IO;
        return HS_ERR_IO;
    }
    return HS_OK;
}

static hs_status_t r_json(trace_reader_t *r, uint32_t len, uint32_t crc)
{
    char why[WHY_LEN];
    uint64_t padded = trace_json_padded(len);
    char *text = malloc(padded);
    size_t got;
    hs_status_t st = HS_ERR_NOMEM;

    if (!text)
        return st;
    st = r_read(r, text, padded, &got);
    if (st != HS_OK)
        goto out;
    st = HS_ERR_INVALID;
    if (got < padded) {
        hs_log_error("%s: truncated in the JSON header at byte offset %zu (header says %" PRIu32
                     " bytes from offset %d)", r->path, TRACE_FILE_HDR_BYTES + got, len,
                     TRACE_FILE_HDR_BYTES);
        goto out;
    }
    if (TRACE_CRC_BAD(trace_crc32(0, text, len), crc)) {
        hs_log_error("%s: JSON header at byte offset %d (%" PRIu32 " bytes): CRC 0x%08" PRIx32
                     " does not match its content (computed 0x%08" PRIx32 "): header damaged",
                     r->path, TRACE_FILE_HDR_BYTES, len, crc, trace_crc32(0, text, len));
        goto out;
    }
    if (trace_hdr_from_json(text, len, &r->hdr, why, sizeof(why)) != 0) {
        hs_log_error("%s: JSON header at byte offset %d: %s", r->path, TRACE_FILE_HDR_BYTES, why);
        goto out;
    }
    r->off = TRACE_FILE_HDR_BYTES + padded;
    st = HS_OK;
out:
    free(text);
    return st;
}

/* Peek at the end block (last 64 bytes) so the header's dropped count is final from the
 * start. Damage there is not reported here: the sequential read will find it. */
static void r_peek_end(trace_reader_t *r)
{
    uint8_t raw[TRACE_BLK_OVERHEAD + TRACE_END_PAYLOAD_BYTES];
    struct stat sb;
    trace_blk_t h;
    trace_end_t end;
    char why[WHY_LEN];

    if (fileno(r->fp) < 0 || fstat(fileno(r->fp), &sb) != 0 || !S_ISREG(sb.st_mode) ||
        (uint64_t)sb.st_size < r->off + sizeof(raw))
        return;
    if (fseeko(r->fp, sb.st_size - (off_t)sizeof(raw), SEEK_SET) == 0 &&
        fread(raw, 1, sizeof(raw), r->fp) == sizeof(raw) &&
        trace_blk_check_head(raw, &h, why, sizeof(why)) == 0 && h.type == TRACE_BLK_END &&
        trace_blk_check_body(&h, raw + TRACE_BLK_HDR_BYTES, why, sizeof(why)) == 0) {
        trace_end_decode(raw + TRACE_BLK_HDR_BYTES, &end);
        r->hdr.dropped = end.dropped;
    }
    if (fseeko(r->fp, (off_t)r->off, SEEK_SET) != 0)
        r->err = HS_ERR_IO;
}

static hs_status_t r_open_header(trace_reader_t *r)
{
    uint8_t fh[TRACE_FILE_HDR_BYTES];
    uint32_t len, crc;
    char why[WHY_LEN];
    size_t got;
    hs_status_t st = r_read(r, fh, sizeof(fh), &got);

    if (st != HS_OK)
        return st;
    if (got < sizeof(fh)) {
        if (got >= TRACE_FILE_MAGIC_LEN && memcmp(fh, TRACE_FILE_MAGIC, TRACE_FILE_MAGIC_LEN) == 0)
            hs_log_error("%s: truncated in the file header at byte offset %zu (expected %d bytes)",
                         r->path, got, TRACE_FILE_HDR_BYTES);
        else
            hs_log_error("%s: not a hintsim trace: %zu bytes, too short for the %d-byte file "
                         "header at byte offset 0", r->path, got, TRACE_FILE_HDR_BYTES);
        return HS_ERR_INVALID;
    }
    if (trace_filehdr_check(fh, &len, &crc, why, sizeof(why)) != 0) {
        hs_log_error("%s: %s", r->path, why);
        return HS_ERR_INVALID;
    }
    st = r_json(r, len, crc);
    if (st == HS_OK)
        r_peek_end(r);
    return r->err ? r->err : st;
}

hs_status_t trace_reader_open_stream(FILE *fp, const char *name, trace_reader_t **out)
{
    trace_reader_t *r = calloc(1, sizeof(*r));
    hs_status_t st = HS_ERR_NOMEM;

    if (!r) {
        fclose(fp);
        return st;
    }
    r->fp = fp;
    trace_hdr_init_unknown(&r->hdr); /* a key the file lacks is unknown, not this machine's */
    r->path = strdup(name);
    r->cap = TRACE_BLK_OVERHEAD + 64 * TRACE_REC_BYTES; /* grows on the first big block */
    r->buf = malloc(r->cap);
    if (!r->path || !r->buf)
        goto fail;
    st = r_open_header(r);
    if (st != HS_OK)
        goto fail;
    *out = r;
    return HS_OK;
fail:
    trace_reader_close(r);
    return st;
}

hs_status_t trace_reader_open(const char *path, trace_reader_t **out)
{
    FILE *fp = trace_input_fopen(path); /* "-", pipes, FIFOs without a writer: no wait */

    if (!fp)
        return HS_ERR_IO;
    return trace_reader_open_stream(fp, path, out);
}

const trace_hdr_t *trace_reader_header(const trace_reader_t *r) { return &r->hdr; }

static hs_status_t r_end_block(trace_reader_t *r, const trace_blk_t *h, uint64_t off)
{
    char why[WHY_LEN];
    trace_end_t end;
    uint8_t extra;

    trace_end_decode(r->buf + TRACE_BLK_HDR_BYTES, &end);
    if (end.records != r->records || end.blocks != r->rec_blocks) {
        snprintf(why, sizeof(why), "end block says %" PRIu64 " records in %" PRIu64 " blocks, "
                 "the file holds %" PRIu64 " in %" PRIu64, end.records, end.blocks, r->records,
                 r->rec_blocks);
        return r_fail(r, off, why);
    }
    r->hdr.dropped = end.dropped;
    r->off += h->total_len;
    if (fread(&extra, 1, 1, r->fp) == 1) {
        hs_log_error("%s: unexpected data after the end block at byte offset %" PRIu64, r->path,
                     r->off);
        return r->err = HS_ERR_INVALID;
    }
    r->eof = 1;
    return HS_OK;
}

static hs_status_t r_records(trace_reader_t *r, const trace_blk_t *h)
{
    const uint8_t *payload = r->buf + TRACE_BLK_HDR_BYTES;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    r->recs = (trace_rec_t *)(void *)payload; /* buf is malloc-aligned, payload at +32 */
#else
    if (!r->dec && !(r->dec = malloc((size_t)TRACE_BLK_MAX_RECORDS * sizeof(trace_rec_t))))
        return r->err = HS_ERR_NOMEM;
    trace_recs_decode(payload, h->count, r->dec);
    r->recs = r->dec;
#endif
    r->n = h->count;
    r->pos = 0;
    r->cur_off = r->off;
    r->rec_blocks++;
    r->records += h->count;
    r->off += h->total_len;
    return HS_OK;
}

static hs_status_t r_truncated(trace_reader_t *r, uint64_t off, size_t got, uint64_t want)
{
    char why[WHY_LEN];

    if (got == 0 && want == TRACE_BLK_HDR_BYTES)
        snprintf(why, sizeof(why), "truncated: the file ends here without an end block "
                 "(%" PRIu64 " records read)", r->records);
    else
        snprintf(why, sizeof(why), "truncated mid-block: %zu of %" PRIu64 " bytes present",
                 got, want);
    return r_fail(r, off, why);
}

/* Grow the block buffer to len bytes (len is at most TRACE_BLK_MAX_BYTES: checked). */
static hs_status_t r_grow(trace_reader_t *r, size_t len)
{
    uint8_t *nb = malloc(len);

    if (!nb)
        return r->err = HS_ERR_NOMEM;
    memcpy(nb, r->buf, TRACE_BLK_HDR_BYTES);
    free(r->buf);
    r->buf = nb;
    r->cap = len;
    return HS_OK;
}

/* Read and check the next block; loads records or handles the end block. */
static hs_status_t r_next_block(trace_reader_t *r)
{
    char why[WHY_LEN];
    trace_blk_t h;
    uint64_t off = r->off;
    size_t got;

    if (r_read(r, r->buf, TRACE_BLK_HDR_BYTES, &got) != HS_OK)
        return r->err;
    if (got < TRACE_BLK_HDR_BYTES)
        return r_truncated(r, off, got, TRACE_BLK_HDR_BYTES);
    if (trace_blk_check_head(r->buf, &h, why, sizeof(why)) != 0)
        return r_fail(r, off, why);
    if (h.seq != r->blkno) {
        snprintf(why, sizeof(why), "sequence number %" PRIu64 ", expected %" PRIu64
                 ": blocks missing or out of order", h.seq, r->blkno);
        return r_fail(r, off, why);
    }
    if (h.total_len > r->cap && r_grow(r, h.total_len) != HS_OK)
        return r->err;
    if (r_read(r, r->buf + TRACE_BLK_HDR_BYTES, h.total_len - TRACE_BLK_HDR_BYTES, &got) != HS_OK)
        return r->err;
    if (got < h.total_len - TRACE_BLK_HDR_BYTES)
        return r_truncated(r, off, got + TRACE_BLK_HDR_BYTES, h.total_len);
    if (trace_blk_check_body(&h, r->buf + TRACE_BLK_HDR_BYTES, why, sizeof(why)) != 0)
        return r_fail(r, off, why);
    if (h.type == TRACE_BLK_END)
        return r_end_block(r, &h, off);
    r->blkno++;
    if (h.type == TRACE_BLK_RECORDS)
        return r_records(r, &h);
    r->off += h.total_len; /* unknown block type of a later minor revision: skip it */
    return HS_OK;
}

/* Read blocks until one has records left, the end (*eof) or an error (returned, and kept
 * in r->err). */
static hs_status_t r_refill(trace_reader_t *r, int *eof)
{
    *eof = 0;
    while (!r->err && !r->eof && r->pos == r->n) {
        if (r_next_block(r) != HS_OK)
            return r->err;
    }
    if (r->err)
        return r->err;
    *eof = r->eof;
    return HS_OK;
}

hs_status_t trace_reader_next_block(trace_reader_t *r, const trace_rec_t **recs, size_t *n,
                                    int *eof)
{
    hs_status_t st = r_refill(r, eof);

    if (st != HS_OK || *eof)
        return st;
    *recs = r->recs + r->pos;
    *n = r->n - r->pos;
    r->pos = r->n;
    return HS_OK;
}

hs_status_t trace_reader_next(trace_reader_t *r, trace_rec_t *rec, int *eof)
{
    if (r->pos < r->n && !r->err) { /* the block in hand: the per-record path */
        *eof = 0;
        *rec = r->recs[r->pos++];
        return HS_OK;
    }
    hs_status_t st = r_refill(r, eof);

    if (st != HS_OK || *eof)
        return st;
    *rec = r->recs[r->pos++];
    return HS_OK;
}

uint64_t trace_reader_blocks(const trace_reader_t *r) { return r->rec_blocks; }

uint64_t trace_reader_block_offset(const trace_reader_t *r) { return r->cur_off; }

void trace_reader_close(trace_reader_t *r)
{
    if (!r)
        return;
    if (r->fp)
        fclose(r->fp);
    trace_hdr_release(&r->hdr);
    free(r->buf);
    free(r->dec);
    free(r->path);
    free(r);
}
