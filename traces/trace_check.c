/* trace_check.c - trace validate and trace salvage.
 *
 * validate streams the file through the reader (which stops at the first damage and logs
 * block and offset) and checks each record's semantics. salvage maps the whole file and
 * walks it block by block; where a block is not intact it scans forward for the next
 * block magic whose header CRC holds (pcapng-style resynchronisation) and continues, so
 * one damaged byte costs one block, not the rest of the file. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "traces/trace_check.h"
#include "traces/trace_format.h"

static hs_status_t validate_records(const char *path, const trace_rec_t *recs, size_t n,
                                    uint64_t first, const trace_reader_t *r)
{
    char why[256];

    for (size_t i = 0; i < n; i++) {
        if (trace_rec_check(&recs[i], why, sizeof(why)) == 0)
            continue;
        if (r)
            hs_log_error("%s: block %" PRIu64 " at byte offset %" PRIu64 ", record %" PRIu64
                         " (byte offset %" PRIu64 "): %s", path, trace_reader_blocks(r) - 1,
                         trace_reader_block_offset(r),
                         first + i, trace_reader_block_offset(r) + TRACE_BLK_HDR_BYTES +
                         (uint64_t)i * TRACE_REC_BYTES, why);
        else
            hs_log_error("%s: record %" PRIu64 ": %s", path, first + i, why);
        return HS_ERR_INVALID;
    }
    return HS_OK;
}

static hs_status_t validate_hst(const char *path, trace_validate_t *out)
{
    trace_reader_t *r;
    const trace_rec_t *recs;
    size_t n;
    int eof = 0;
    uint64_t count = 0;
    hs_status_t st = trace_reader_open(path, &r);

    if (st != HS_OK)
        return st;
    while ((st = trace_reader_next_block(r, &recs, &n, &eof)) == HS_OK && !eof) {
        if ((st = validate_records(path, recs, n, count, r)) != HS_OK)
            break;
        count += n;
    }
    if (st == HS_OK) {
        out->is_hst = 1;
        out->blocks = trace_reader_blocks(r);
        out->records = count;
        out->dropped = trace_reader_header(r)->dropped;
    }
    trace_reader_close(r);
    return st;
}

hs_status_t trace_validate(const char *path, trace_validate_t *out)
{
    char magic[TRACE_FILE_MAGIC_LEN] = {0};
    FILE *fp = fopen(path, "rb");
    trace_t *tr;
    hs_status_t st;
    size_t got;

    if (!fp) {
        hs_log_error("%s: cannot open: %s", path, strerror(errno));
        return HS_ERR_IO;
    }
    got = fread(magic, 1, sizeof(magic), fp);
    fclose(fp);
    memset(out, 0, sizeof(*out));
    if (got == sizeof(magic) && memcmp(magic, TRACE_FILE_MAGIC, sizeof(magic)) == 0)
        return validate_hst(path, out);
    if ((st = trace_load(path, &tr)) != HS_OK)
        return st;
    st = validate_records(path, tr->recs, tr->n, 0, NULL);
    out->records = tr->n;
    out->dropped = tr->hdr.dropped;
    trace_free(tr);
    return st;
}

/* ---- salvage ---------------------------------------------------------------------- */

typedef struct {
    const char *path;
    const uint8_t *map;
    uint64_t size;
    trace_hdr_t hdr;
    uint64_t start;      /* first byte after the file header and JSON */
    trace_end_t end;
    uint64_t next_seq;
    uint64_t pending_seq; /* 1 + sequence of a block whose header held but body did not */
    int in_damage;
} salv_t;

static void salv_damage(salv_t *s, trace_salvage_t *res, uint64_t off, const char *why)
{
    if (s->in_damage)
        return;
    s->in_damage = 1;
    if (res->damaged_regions++ == 0) {
        res->first_bad_offset = off;
        snprintf(res->first_bad_why, sizeof(res->first_bad_why), "%s", why);
    }
}

/* Returns -1 for a file this build must not reinterpret (future version). */
static int salv_header(salv_t *s, trace_salvage_t *res)
{
    uint32_t len, crc;
    char why[256];

    trace_hdr_init(&s->hdr);
    s->start = 0;
    if (s->size >= TRACE_FILE_HDR_BYTES &&
        memcmp(s->map, TRACE_FILE_MAGIC, TRACE_FILE_MAGIC_LEN) == 0 &&
        trace_get_u32(s->map + 8) > TRACE_FORMAT_VERSION) {
        hs_log_error("%s: format version %" PRIu32 " at byte offset 8; this build reads version "
                     "%d and cannot salvage it", s->path, trace_get_u32(s->map + 8),
                     TRACE_FORMAT_VERSION);
        return -1;
    }
    if (s->size < TRACE_FILE_HDR_BYTES ||
        trace_filehdr_check(s->map, &len, &crc, why, sizeof(why)) != 0) {
        if (s->size < TRACE_FILE_HDR_BYTES)
            snprintf(why, sizeof(why), "file too short for a header");
        hs_log_warn("%s: file header unusable (%s); using a default header", s->path, why);
        salv_damage(s, res, 0, why);
        return 0;
    }
    if (TRACE_FILE_HDR_BYTES + trace_json_padded(len) > s->size ||
        trace_crc32(0, s->map + TRACE_FILE_HDR_BYTES, len) != crc ||
        trace_hdr_from_json((const char *)s->map + TRACE_FILE_HDR_BYTES, len, &s->hdr, why,
                            sizeof(why)) != 0) {
        hs_log_warn("%s: JSON header at byte offset %d damaged; using a default header",
                    s->path, TRACE_FILE_HDR_BYTES);
        trace_hdr_release(&s->hdr);
        trace_hdr_init(&s->hdr);
        salv_damage(s, res, TRACE_FILE_HDR_BYTES, "JSON header damaged");
        return 0;
    }
    res->header_ok = 1;
    s->start = TRACE_FILE_HDR_BYTES + trace_json_padded(len);
    return 0;
}

/* Is there an intact block at off? Fills h and why. */
static int salv_block_ok(const salv_t *s, uint64_t off, trace_blk_t *h, char *why, size_t wl)
{
    if (trace_blk_check_head(s->map + off, h, why, wl) != 0)
        return 0;
    if (h->total_len > s->size - off) {
        snprintf(why, wl, "truncated mid-block: %" PRIu64 " of %" PRIu32 " bytes present",
                 s->size - off, h->total_len);
        return 0;
    }
    return trace_blk_check_body(h, s->map + off + TRACE_BLK_HDR_BYTES, why, wl) == 0;
}

/* Next offset after off where the block magic appears, or size. */
static uint64_t salv_resync(const salv_t *s, uint64_t off)
{
    static const uint8_t magic[4] = {'H', 'S', 'B', '1'};
    const uint8_t *p;

    if (off + 1 >= s->size)
        return s->size;
    p = memmem(s->map + off + 1, s->size - off - 1, magic, sizeof(magic));
    return p ? (uint64_t)(p - s->map) : s->size;
}

static hs_status_t salv_walk(salv_t *s, trace_writer_t *w, trace_salvage_t *res)
{
    trace_rec_t *recs = malloc((size_t)TRACE_BLK_MAX_RECORDS * sizeof(*recs));
    uint64_t off = s->start;
    trace_blk_t h;
    char why[256];
    hs_status_t st = HS_OK;

    if (!recs)
        return HS_ERR_NOMEM;
    while (off + TRACE_BLK_HDR_BYTES <= s->size && st == HS_OK) {
        if (!salv_block_ok(s, off, &h, why, sizeof(why))) {
            uint64_t next = salv_resync(s, off);
            if (h.magic == TRACE_BLK_MAGIC && h.seq + 1 > s->pending_seq &&
                trace_crc32(0, s->map + off, 28) == h.hdr_crc)
                s->pending_seq = h.seq + 1; /* a block known by its intact header */
            salv_damage(s, res, off, why);
            res->skipped_bytes += next - off;
            off = next;
            continue;
        }
        s->in_damage = 0;
        if (h.seq > s->next_seq)
            res->lost_blocks_min += h.seq - s->next_seq;
        s->next_seq = h.seq + 1;
        if (h.type == TRACE_BLK_RECORDS) {
            trace_recs_decode(s->map + off + TRACE_BLK_HDR_BYTES, h.count, recs);
            st = trace_writer_append_many(w, recs, h.count);
            res->kept_blocks++;
            res->kept_records += h.count;
        } else if (h.type == TRACE_BLK_END) {
            trace_end_decode(s->map + off + TRACE_BLK_HDR_BYTES, &s->end);
            res->end_ok = 1;
        }
        off += h.total_len;
    }
    if (s->pending_seq > s->next_seq && !res->end_ok)
        res->lost_blocks_min += s->pending_seq - s->next_seq;
    if (off < s->size) { /* a tail shorter than a block header */
        salv_damage(s, res, off, "truncated: a partial block header at the end of the file");
        res->skipped_bytes += s->size - off;
    }
    free(recs);
    return st;
}

static void salv_totals(const salv_t *s, trace_salvage_t *res, trace_writer_t *w)
{
    uint64_t lost = 0;

    res->total_blocks = res->total_records = TRACE_UNKNOWN_COUNT;
    if (res->end_ok) {
        res->total_blocks = s->end.blocks;
        res->total_records = s->end.records;
        if (s->end.records > res->kept_records)
            lost = s->end.records - res->kept_records;
        if (s->end.blocks > res->kept_blocks + res->lost_blocks_min)
            res->lost_blocks_min = s->end.blocks - res->kept_blocks;
    }
    trace_writer_set_dropped(w, (res->end_ok ? s->end.dropped : s->hdr.dropped) + lost);
}

static hs_status_t salv_map(salv_t *s)
{
    struct stat sb;
    int fd = open(s->path, O_RDONLY);

    if (fd < 0) {
        hs_log_error("%s: cannot open: %s", s->path, strerror(errno));
        return HS_ERR_IO;
    }
    if (fstat(fd, &sb) != 0 || sb.st_size == 0) {
        hs_log_error("%s: %s", s->path, sb.st_size == 0 ? "empty file" : strerror(errno));
        close(fd);
        return HS_ERR_INVALID;
    }
    s->size = (uint64_t)sb.st_size;
    s->map = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (s->map == MAP_FAILED) {
        hs_log_error("%s: cannot map: %s", s->path, strerror(errno));
        return HS_ERR_IO;
    }
    return HS_OK;
}

hs_status_t trace_salvage(const char *in, const char *out, trace_salvage_t *res)
{
    salv_t s = {.path = in};
    trace_writer_t *w = NULL;
    hs_status_t st;

    memset(res, 0, sizeof(*res));
    if ((st = salv_map(&s)) != HS_OK)
        return st;
    trace_hdr_init(&s.hdr);
    st = HS_ERR_INVALID;
    if (salv_header(&s, res) != 0)
        goto out;
    if ((st = trace_writer_open(out, &s.hdr, &w)) != HS_OK)
        goto out;
    if ((st = salv_walk(&s, w, res)) != HS_OK)
        goto out;
    if (!res->kept_blocks && !res->header_ok) {
        hs_log_error("%s: nothing to salvage: no intact header and no intact block", in);
        st = HS_ERR_INVALID;
        goto out;
    }
    salv_totals(&s, res, w);
    st = trace_writer_close(w);
    w = NULL;
out:
    trace_writer_abort(w);
    trace_hdr_release(&s.hdr);
    munmap((void *)s.map, s.size);
    return st;
}
