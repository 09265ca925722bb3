/* trace_check.c - trace validate and trace salvage.
 *
 * validate streams the file through the reader (which stops at the first damage and logs
 * block and offset) and checks each record's semantics. salvage maps the whole file and
 * walks it block by block; where a block is not intact it scans forward for the next
 * block magic whose header CRC holds (pcapng-style resynchronisation) and continues, so
 * one damaged byte costs one block, not the rest of the file. Blocks are kept by their
 * sequence numbers: a seq kept already is a duplicate, dropped; blocks out of order are
 * put back in order through a fixed window. Memory grows with the damage, never with
 * the file. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
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

static hs_status_t validate_hst(FILE *fp, const char *path, trace_validate_t *out)
{
    trace_reader_t *r;
    const trace_rec_t *recs;
    size_t n;
    int eof = 0;
    uint64_t count = 0;
    hs_status_t st = trace_reader_open_stream(fp, path, &r);

    if (st != HS_OK)
        return st;
    while ((st = trace_reader_next_block(r, &recs, &n, &eof)) == HS_OK && !eof) {
        if ((st = validate_records(path, recs, n, count, r)) != HS_OK)
            break;
        count += n;
    }
    if (st != HS_OK)
        goto close_reader;
    out->is_hst = 1;
    out->blocks = trace_reader_blocks(r);
    out->records = count;
    out->dropped = trace_reader_header(r)->dropped;
close_reader:
    trace_reader_close(r);
    return st;
}

hs_status_t trace_validate(const char *path, trace_validate_t *out)
{
    char magic[TRACE_FILE_MAGIC_LEN] = {0};
    FILE *fp = trace_input_fopen(path); /* "-", pipes, FIFOs without a writer: no wait */
    trace_t *tr;
    hs_status_t st;
    size_t got;

    memset(out, 0, sizeof(*out));
    if (!fp)
        return HS_ERR_IO;
    got = fread(magic, 1, sizeof(magic), fp);
    rewind(fp);
    if (got == sizeof(magic) && memcmp(magic, TRACE_FILE_MAGIC, sizeof(magic)) == 0)
        return validate_hst(fp, path, out);
    /* text: a record with an unknown opcode number fails the load, named by its line */
    if ((st = trace_load_stream(fp, path, TRACE_READ_STRICT, &tr)) != HS_OK)
        return st;
    st = validate_records(path, tr->recs, tr->n, 0, NULL);
    out->records = tr->n;
    out->dropped = tr->hdr.dropped;
    trace_free(tr);
    return st;
}

/* ---- salvage ---------------------------------------------------------------------- */

/* A sequence number above this is damage that a header CRC happened to pass (a crafted
 * file): real ones count blocks, and seq + 1 must not wrap. */
#define SALV_SEQ_MAX (UINT64_C(1) << 62)
/* Blocks held back to put a shuffled file back in sequence order (32 KiB whatever the
 * file's size); a block further out of place is kept where it is, and reported. */
#define SALV_WINDOW 1024

/* Sequence numbers kept, as sorted disjoint runs [lo, hi): one run for an intact file and
 * one more per gap, so this grows with the damage, not with the file. */
typedef struct {
    uint64_t lo, hi;
} seq_run_t;

typedef struct {
    seq_run_t *v;
    size_t n, cap;
} seq_set_t;

/* A block held back until the blocks before it in sequence are out (or given up). */
typedef struct {
    uint64_t seq, off;
    uint32_t type, count;
    int lost; /* its header held but its body did not: it only holds its place */
    int after_bad; /* damaged bytes came just before it (they may explain a gap before it) */
} salv_pend_t;

/* A block whose header held but whose body did not: its records are lost unless another
 * copy of the same seq is kept. */
typedef struct {
    uint64_t seq;
    uint32_t count;
} salv_lost_t;

typedef struct {
    const char *path;
    const uint8_t *map;
    uint64_t size;
    trace_hdr_t hdr;
    uint64_t start;        /* first byte after the file header and JSON */
    trace_end_t end;
    uint64_t end_off;      /* byte offset of the first intact end block (else a damaged one) */
    uint64_t end_seq;      /* its seq: the record blocks before it are 0 .. end_seq - 1 */
    int end_seen, end_after_bad; /* an intact end block met; damaged bytes just before it */
    int bad_bytes;         /* damaged bytes since the last intact block */
    trace_writer_t *w;
    trace_rec_t *recs;     /* one block's records, decoded */
    seq_set_t done;        /* seqs kept (record blocks) or met intact (other types) */
    salv_pend_t *pend;     /* held back, sorted by seq, fewer than SALV_WINDOW */
    size_t npend;
    salv_lost_t *lost;
    size_t nlost, caplost;
    uint64_t next_seq;     /* the seq the output continues with */
    uint64_t file_seq_end; /* 1 + the highest seq of an intact record block met so far */
    uint64_t out_seq_end;  /* 1 + the highest seq of a record block written out */
    uint64_t known_blocks; /* blocks known to exist, from the highest seq of an intact header */
    uint64_t dup_seq, dup_off, reord_seq, reord_off, late_seq, late_off; /* firsts, for messages */
    int in_damage;
} salv_t;

static uint64_t u64_max(uint64_t a, uint64_t b) { return a > b ? a : b; }
/* a + b, saturating: a dropped count read from a file may be anything */
static uint64_t u64_sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Index of the first run ending after s (set->n when none). */
static size_t seqset_find(const seq_set_t *set, uint64_t s)
{
    size_t lo = 0, hi = set->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->v[mid].hi > s)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int seqset_has(const seq_set_t *set, uint64_t s)
{
    size_t i = seqset_find(set, s);

    return i < set->n && set->v[i].lo <= s;
}

/* Add s, which is not in the set: extend a neighbouring run (the usual case) or insert. */
static hs_status_t seqset_add(seq_set_t *set, uint64_t s)
{
    size_t i = seqset_find(set, s);

    if (i > 0 && set->v[i - 1].hi == s) {
        set->v[i - 1].hi = s + 1;
        if (i < set->n && set->v[i].lo == s + 1) { /* s closed the gap between two runs */
            set->v[i - 1].hi = set->v[i].hi;
            memmove(set->v + i, set->v + i + 1, (set->n - i - 1) * sizeof(*set->v));
            set->n--;
        }
        return HS_OK;
    }
    if (i < set->n && set->v[i].lo == s + 1) {
        set->v[i].lo = s;
        return HS_OK;
    }
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 16;
        seq_run_t *v = realloc(set->v, cap * sizeof(*v));
        if (!v)
            return HS_ERR_NOMEM;
        set->v = v;
        set->cap = cap;
    }
    memmove(set->v + i + 1, set->v + i, (set->n - i) * sizeof(*set->v));
    set->v[i] = (seq_run_t){s, s + 1};
    set->n++;
    return HS_OK;
}

static uint64_t seqset_count(const seq_set_t *set)
{
    uint64_t n = 0;

    for (size_t i = 0; i < set->n; i++)
        n += set->v[i].hi - set->v[i].lo;
    return n;
}

/* Start a damaged region at off (a no-op inside one); the first one's reason is kept. */
__attribute__((format(printf, 4, 5)))
static void salv_damage(salv_t *s, trace_salvage_t *res, uint64_t off, const char *fmt, ...)
{
    va_list ap;

    if (s->in_damage)
        return;
    s->in_damage = 1;
    if (res->damaged_regions++ != 0)
        return;
    res->first_bad_offset = off;
    va_start(ap, fmt);
    vsnprintf(res->first_bad_why, sizeof(res->first_bad_why), fmt, ap);
    va_end(ap);
}

/* ---- salvage: the header ----------------------------------------------------------- */

static void salv_header_lost(salv_t *s, trace_salvage_t *res, uint64_t off, const char *why)
{
    hs_log_warn("%s: %s; the header is lost: the output's provenance says \"unknown\"",
                s->path, why);
    salv_damage(s, res, off, "%s", why);
}

/* Keep the JSON header at byte offset 32 when its own CRC holds, whatever happened to the
 * file header around it (len and crc are that header's fields, checked or not). */
static int salv_json(salv_t *s, uint32_t len, uint32_t crc, char *why, size_t wl)
{
    const char *text = (const char *)s->map + TRACE_FILE_HDR_BYTES;
    char perr[160];

    if (len == 0 || len > TRACE_JSON_MAX_BYTES) {
        snprintf(why, wl, "JSON header length %" PRIu32 " (byte offset 12) out of range", len);
        return -1;
    }
    if (TRACE_FILE_HDR_BYTES + trace_json_padded(len) > s->size) {
        snprintf(why, wl, "truncated in the JSON header at byte offset %" PRIu64 " (header says "
                 "%" PRIu32 " bytes from offset %d)", s->size, len, TRACE_FILE_HDR_BYTES);
        return -1;
    }
    if (TRACE_CRC_BAD(trace_crc32(0, text, len), crc)) {
        snprintf(why, wl, "JSON header at byte offset %d damaged: its CRC does not match",
                 TRACE_FILE_HDR_BYTES);
        return -1;
    }
    if (trace_hdr_from_json(text, len, &s->hdr, perr, sizeof(perr)) != 0) {
        trace_hdr_release(&s->hdr);
        trace_hdr_init_unknown(&s->hdr);
        snprintf(why, wl, "JSON header at byte offset %d unusable: %s", TRACE_FILE_HDR_BYTES,
                 perr);
        return -1;
    }
    s->start = TRACE_FILE_HDR_BYTES + trace_json_padded(len);
    return 0;
}

/* A file header that says a later version and whose CRC proves it says so: such a file is
 * refused. With the CRC wrong, the version field is as likely damage as any other byte
 * (one flipped bit of 1 reads 3), and the file is salvaged as version 1. */
static int salv_future(const salv_t *s)
{
    return s->size >= TRACE_FILE_HDR_BYTES &&
           memcmp(s->map, TRACE_FILE_MAGIC, TRACE_FILE_MAGIC_LEN) == 0 &&
           trace_get_u32(s->map + 8) > TRACE_FORMAT_VERSION &&
           !TRACE_CRC_BAD(trace_crc32(0, s->map, 28), trace_get_u32(s->map + 28));
}

/* Returns -1 for a file this build must not reinterpret (future version). */
static int salv_header(salv_t *s, trace_salvage_t *res)
{
    uint32_t len = 0, crc = 0;
    char why[256], jwhy[256];

    s->start = 0;
    if (salv_future(s)) {
        hs_log_error("%s: format version %" PRIu32 " at byte offset 8; this build reads version "
                     "%d and cannot salvage it", s->path, trace_get_u32(s->map + 8),
                     TRACE_FORMAT_VERSION);
        return -1;
    }
    if (s->size < TRACE_FILE_HDR_BYTES) {
        salv_header_lost(s, res, 0, "file too short for a header");
        return 0;
    }
    res->file_header_ok = trace_filehdr_check(s->map, &len, &crc, why, sizeof(why)) == 0;
    if (!res->file_header_ok) { /* the JSON may be intact: try the fields as they stand */
        len = trace_get_u32(s->map + 12);
        crc = trace_get_u32(s->map + 16);
    }
    if (salv_json(s, len, crc, jwhy, sizeof(jwhy)) != 0) {
        salv_header_lost(s, res, res->file_header_ok ? TRACE_FILE_HDR_BYTES : 0,
                         res->file_header_ok ? jwhy : why);
        return 0;
    }
    res->header_ok = 1;
    if (!res->file_header_ok) {
        hs_log_warn("%s: %s; the JSON header's own CRC holds: kept", s->path, why);
        salv_damage(s, res, 0, "%s; the JSON header's own CRC holds: kept", why);
    }
    return 0;
}

/* ---- salvage: blocks in sequence order -------------------------------------------- */

/* A record block whose tail repeats its length but whose tail magic is damaged, while its
 * header and payload CRCs hold: the records are intact (the magic only helps resync). */
static int salv_tail_magic_only(const salv_t *s, uint64_t off, const trace_blk_t *h)
{
    const uint8_t *body = s->map + off + TRACE_BLK_HDR_BYTES;
    size_t plen = h->total_len - TRACE_BLK_OVERHEAD;

    return h->type == TRACE_BLK_RECORDS && trace_get_u32(body + plen) == h->total_len &&
           trace_get_u32(body + plen + 4) != TRACE_BLK_TAIL_MAGIC &&
           !TRACE_CRC_BAD(trace_crc32(0, body, plen), h->payload_crc);
}

/* 0: an intact block at off; 1: its header holds (h is valid) but not the rest; 2: a record
 * block intact but for its tail magic (kept, reported as damage); -1: no usable block
 * header at off. why says what is wrong. */
static int salv_block_check(const salv_t *s, uint64_t off, trace_blk_t *h, char *why, size_t wl)
{
    if (trace_blk_check_head(s->map + off, h, why, wl) != 0)
        return -1;
    if (h->seq > SALV_SEQ_MAX) {
        snprintf(why, wl, "implausible block sequence number %" PRIu64, h->seq);
        return -1;
    }
    if (h->total_len > s->size - off) {
        snprintf(why, wl, "truncated mid-block: %" PRIu64 " of %" PRIu32 " bytes present",
                 s->size - off, h->total_len);
        return 1;
    }
    if (trace_blk_check_body(h, s->map + off + TRACE_BLK_HDR_BYTES, why, wl) == 0)
        return 0;
    return salv_tail_magic_only(s, off, h) ? 2 : 1;
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

/* Index in the window of the first block with a seq >= seq. */
static size_t pend_find(const salv_t *s, uint64_t seq)
{
    size_t lo = 0, hi = s->npend;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->pend[mid].seq >= seq)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Was an intact block of this seq kept, or is one held back? */
static int salv_have(const salv_t *s, uint64_t seq)
{
    size_t i = pend_find(s, seq);

    if (i < s->npend && s->pend[i].seq == seq && !s->pend[i].lost)
        return 1;
    return seqset_has(&s->done, seq);
}

/* Hold a block back (seq >= next_seq); an intact one replaces a placeholder of its seq. */
static void pend_insert(salv_t *s, const salv_pend_t *p)
{
    size_t i = pend_find(s, p->seq);

    if (i < s->npend && s->pend[i].seq == p->seq) {
        if (s->pend[i].lost && !p->lost)
            s->pend[i] = *p;
        return;
    }
    memmove(s->pend + i + 1, s->pend + i, (s->npend - i) * sizeof(*s->pend));
    s->pend[i] = *p;
    s->npend++;
}

/* Write out one block's records (a placeholder only moves the sequence on). */
static hs_status_t salv_emit(salv_t *s, trace_salvage_t *res, const salv_pend_t *p)
{
    hs_status_t st;

    if (p->lost)
        return HS_OK;
    if (p->type == TRACE_BLK_RECORDS) {
        trace_recs_decode(s->map + p->off + TRACE_BLK_HDR_BYTES, p->count, s->recs);
        if ((st = trace_writer_append_many(s->w, s->recs, p->count)) != HS_OK)
            return st;
        res->kept_blocks++;
        res->kept_records += p->count;
        s->out_seq_end = u64_max(s->out_seq_end, p->seq + 1);
    }
    return seqset_add(&s->done, p->seq);
}

/* A damaged region that is not a run of bytes: started outside any run, which it leaves
 * as it was. */
__attribute__((format(printf, 4, 5)))
static void salv_note(salv_t *s, trace_salvage_t *res, uint64_t off, const char *fmt, ...)
{
    int was = s->in_damage;
    char why[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    s->in_damage = 0;
    salv_damage(s, res, off, "%s", why);
    s->in_damage = was;
}

/* Seqs [lo, hi) given up: no copy of them was met. Damage of its own unless damaged bytes
 * just before off (where they belonged) explain it. */
static void salv_gap(salv_t *s, trace_salvage_t *res, uint64_t lo, uint64_t hi, uint64_t off,
                     int after_bad)
{
    if (after_bad || lo >= hi)
        return;
    if (hi - lo == 1)
        salv_note(s, res, off, "block seq %" PRIu64 " missing: a sequence gap before byte "
                  "offset %" PRIu64, lo, off);
    else
        salv_note(s, res, off, "blocks seq %" PRIu64 " to %" PRIu64 " missing: a sequence gap "
                  "before byte offset %" PRIu64, lo, hi - 1, off);
}

/* Write out the held-back blocks that continue the sequence; with the window full, or at
 * the end (all), stop waiting for the gap before the first one. */
static hs_status_t salv_drain(salv_t *s, trace_salvage_t *res, int all)
{
    size_t i = 0;
    hs_status_t st = HS_OK;

    while (st == HS_OK && i < s->npend &&
           (all || s->pend[i].seq == s->next_seq || s->npend - i >= SALV_WINDOW)) {
        if (s->pend[i].seq > s->next_seq)
            salv_gap(s, res, s->next_seq, s->pend[i].seq, s->pend[i].off, s->pend[i].after_bad);
        st = salv_emit(s, res, &s->pend[i]);
        s->next_seq = s->pend[i++].seq + 1;
    }
    memmove(s->pend, s->pend + i, (s->npend - i) * sizeof(*s->pend));
    s->npend -= i;
    return st;
}

static void salv_dup(salv_t *s, trace_salvage_t *res, uint64_t off, const trace_blk_t *h)
{
    if (res->dup_blocks++ == 0) {
        s->dup_seq = h->seq;
        s->dup_off = off;
    }
    res->dup_records += h->count;
    res->skipped_bytes += h->total_len;
    s->in_damage = 0; /* a region of its own */
    salv_damage(s, res, off, "duplicate block: sequence number %" PRIu64 " already kept, "
                "dropped", h->seq);
}

/* A block met after a higher seq: held back into place if its place is still to come,
 * else (more than SALV_WINDOW blocks out of place) kept where it is. Both are damage. */
static hs_status_t salv_misplaced(salv_t *s, trace_salvage_t *res, uint64_t off,
                                  const salv_pend_t *p)
{
    int late = p->seq < s->out_seq_end;
    uint64_t *first_seq = late ? &s->late_seq : &s->reord_seq;
    uint64_t *first_off = late ? &s->late_off : &s->reord_off;

    if ((late ? res->unordered_blocks++ : res->reordered_blocks++) == 0) {
        *first_seq = p->seq;
        *first_off = off;
    }
    s->in_damage = 0;
    salv_damage(s, res, off, "block seq %" PRIu64 " out of sequence order (after seq %" PRIu64
                "): %s", p->seq, s->file_seq_end - 1,
                late ? "too far to put back, kept in file order" : "put back in order");
    s->in_damage = 0; /* the block itself is intact */
    if (late || p->seq < s->next_seq) /* written now: in order unless late */
        return salv_emit(s, res, p);
    pend_insert(s, p);
    return salv_drain(s, res, 0);
}

/* An intact block at off: kept in sequence order; dropped if its seq was kept already. */
/* A record block (intact or not) after the end block: the end block is out of place. */
static void salv_after_end(salv_t *s, trace_salvage_t *res, uint64_t off, uint64_t seq)
{
    if (!s->end_seen || res->end_misplaced)
        return;
    res->end_misplaced = 1;
    salv_note(s, res, s->end_off, "end block (seq %" PRIu64 ") out of place: block seq %" PRIu64
              " at byte offset %" PRIu64 " follows it", s->end_seq, seq, off);
}

/* The first intact end block gives the totals; a later one is a duplicate, dropped. */
static void salv_end_block(salv_t *s, trace_salvage_t *res, uint64_t off, const trace_blk_t *h)
{
    if (s->end_seen) {
        res->dup_end_blocks++;
        res->skipped_bytes += h->total_len;
        s->in_damage = 0;
        salv_damage(s, res, off, "duplicate end block (seq %" PRIu64 "): dropped", h->seq);
        return;
    }
    trace_end_decode(s->map + off + TRACE_BLK_HDR_BYTES, &s->end);
    s->end_seen = 1;
    s->end_off = off;
    s->end_seq = h->seq;
    s->end_after_bad = s->bad_bytes;
    s->known_blocks = u64_max(s->known_blocks, h->seq);
    res->end_ok = 1;
    s->in_damage = 0;
}

/* An intact block at off: kept in sequence order; dropped if its seq was kept already. */
static hs_status_t salv_good_block(salv_t *s, trace_salvage_t *res, uint64_t off,
                                   const trace_blk_t *h)
{
    salv_pend_t p = {h->seq, off, h->type, h->count, 0, s->bad_bytes};
    int misplaced = h->seq < s->file_seq_end;

    if (h->type == TRACE_BLK_END) {
        salv_end_block(s, res, off, h);
        s->bad_bytes = 0;
        return HS_OK;
    }
    s->bad_bytes = 0;
    s->known_blocks = u64_max(s->known_blocks, h->seq + 1);
    salv_after_end(s, res, off, h->seq);
    if (salv_have(s, h->seq)) {
        salv_dup(s, res, off, h);
        return HS_OK;
    }
    s->file_seq_end = u64_max(s->file_seq_end, h->seq + 1);
    if (misplaced)
        return salv_misplaced(s, res, off, &p);
    s->in_damage = 0;
    if (h->seq < s->next_seq) /* only a damaged copy held its place: nothing after it is out */
        return salv_emit(s, res, &p);
    pend_insert(s, &p);
    return salv_drain(s, res, 0);
}

static hs_status_t salv_lost_add(salv_t *s, uint64_t seq, uint32_t count)
{
    if (s->nlost == s->caplost) {
        size_t cap = s->caplost ? 2 * s->caplost : 16;
        salv_lost_t *v = realloc(s->lost, cap * sizeof(*v));
        if (!v)
            return HS_ERR_NOMEM;
        s->lost = v;
        s->caplost = cap;
    }
    s->lost[s->nlost++] = (salv_lost_t){seq, count};
    return HS_OK;
}

/* A block whose header holds but whose body does not: its seq and record count are known,
 * so its records are known lost (unless another copy of it is kept). */
static hs_status_t salv_lost_block(salv_t *s, trace_salvage_t *res, uint64_t off,
                                   const trace_blk_t *h, const char *why)
{
    salv_pend_t p = {h->seq, off, h->type, h->count, 1, s->bad_bytes};
    hs_status_t st = HS_OK;

    if (h->type == TRACE_BLK_END) { /* not a record block: no record is lost with it */
        res->end_damaged = 1;
        if (!s->end_seen)
            s->end_off = off;
        s->known_blocks = u64_max(s->known_blocks, h->seq);
        salv_damage(s, res, off, "end block damaged: %s", why);
        return HS_OK;
    }
    s->known_blocks = u64_max(s->known_blocks, h->seq + 1);
    salv_after_end(s, res, off, h->seq);
    salv_damage(s, res, off, "block seq %" PRIu64 " (%" PRIu32 " records, header intact): %s",
                h->seq, h->count, why);
    if (h->type == TRACE_BLK_RECORDS)
        st = salv_lost_add(s, h->seq, h->count);
    if (st != HS_OK || h->seq < s->next_seq)
        return st;
    pend_insert(s, &p); /* holds its place, so the blocks after it need not wait */
    return salv_drain(s, res, 0);
}

static hs_status_t salv_walk(salv_t *s, trace_salvage_t *res)
{
    uint64_t off = s->start, next;
    trace_blk_t h;
    char why[256];
    hs_status_t st = HS_OK;
    int got;

    while (st == HS_OK && off + TRACE_BLK_HDR_BYTES <= s->size) {
        if ((got = salv_block_check(s, off, &h, why, sizeof(why))) == 0 || got == 2) {
            if (got == 2)
                salv_damage(s, res, off + h.total_len - 4, "block seq %" PRIu64 ": tail magic "
                            "damaged, its length and CRCs intact: records kept", h.seq);
            st = salv_good_block(s, res, off, &h);
            off += h.total_len;
            continue;
        }
        next = salv_resync(s, off);
        if (got == 1)
            st = salv_lost_block(s, res, off, &h, why);
        else
            salv_damage(s, res, off, "%s", why);
        s->bad_bytes = 1;
        res->skipped_bytes += next - off;
        off = next;
    }
    if (st == HS_OK)
        st = salv_drain(s, res, 1);
    if (st == HS_OK && s->end_seen && !res->end_misplaced) /* blocks cut before the end */
        salv_gap(s, res, s->next_seq, s->end_seq, s->end_off, s->end_after_bad);
    if (off < s->size) { /* a tail shorter than a block header */
        salv_damage(s, res, off, "truncated: a partial block header at the end of the file");
        res->skipped_bytes += s->size - off;
    }
    return st;
}

/* ---- salvage: totals and report ---------------------------------------------------- */

static int lost_cmp(const void *a, const void *b)
{
    uint64_t x = ((const salv_lost_t *)a)->seq, y = ((const salv_lost_t *)b)->seq;

    return (x > y) - (x < y);
}

/* Records of the blocks known by their intact header alone (each seq once, none kept). */
static uint64_t salv_known_lost(salv_t *s)
{
    uint64_t n = 0;

    if (s->nlost)
        qsort(s->lost, s->nlost, sizeof(*s->lost), lost_cmp);
    for (size_t i = 0; i < s->nlost; i++)
        if ((i == 0 || s->lost[i].seq != s->lost[i - 1].seq) &&
            !seqset_has(&s->done, s->lost[i].seq))
            n += s->lost[i].count;
    return n;
}

/* An end block claiming less than was kept is not believed: lost = total - kept would wrap. */
static void salv_end_inconsistent(salv_t *s, trace_salvage_t *res)
{
    hs_log_warn("%s: the end block at byte offset %" PRIu64 " says %" PRIu64 " blocks (%" PRIu64
                " records) but %" PRIu64 " blocks (%" PRIu64 " records) were kept: its totals "
                "are ignored", s->path, s->end_off, s->end.blocks, s->end.records,
                res->kept_blocks, res->kept_records);
    res->end_ok = 0;
    res->totals_inconsistent = 1;
    s->in_damage = 0;
    salv_damage(s, res, s->end_off, "end block totals (%" PRIu64 " blocks, %" PRIu64
                " records) below what was kept: ignored", s->end.blocks, s->end.records);
}

static void salv_totals(salv_t *s, trace_salvage_t *res)
{
    uint64_t done = seqset_count(&s->done), dropped = s->hdr.dropped;

    res->lost_records = salv_known_lost(s);
    res->lost_blocks = s->known_blocks > done ? s->known_blocks - done : 0;
    res->total_blocks = res->total_records = TRACE_UNKNOWN_COUNT;
    if (res->end_ok && (s->end.blocks < res->kept_blocks || s->end.records < res->kept_records))
        salv_end_inconsistent(s, res);
    if (res->end_ok) {
        res->total_blocks = s->end.blocks;
        res->total_records = s->end.records;
        res->lost_blocks = s->end.blocks - res->kept_blocks;
        res->lost_records = s->end.records - res->kept_records;
        dropped = s->end.dropped;
    }
    res->lost_blocks_min = res->lost_blocks;
    trace_writer_set_dropped(s->w, u64_sat_add(dropped, res->lost_records));
}

static const char *salv_end_state(const trace_salvage_t *res)
{
    if (res->totals_inconsistent)
        return "inconsistent";
    return res->end_damaged ? "damaged" : "missing";
}

/* Say on stderr what the counts alone do not: duplicates, order, what the end block's
 * absence means for the totals. */
static void salv_log(const salv_t *s, const trace_salvage_t *res)
{
    if (res->dup_blocks)
        hs_log_warn("%s: dropped %" PRIu64 " duplicate block(s) (%" PRIu64 " records) whose "
                    "sequence number was already kept; the first: seq %" PRIu64 " at byte "
                    "offset %" PRIu64, s->path, res->dup_blocks, res->dup_records, s->dup_seq,
                    s->dup_off);
    if (res->reordered_blocks)
        hs_log_warn("%s: %" PRIu64 " block(s) out of sequence order, put back in order; the "
                    "first: seq %" PRIu64 " at byte offset %" PRIu64, s->path,
                    res->reordered_blocks, s->reord_seq, s->reord_off);
    if (res->unordered_blocks)
        hs_log_warn("%s: %" PRIu64 " block(s) more than %d blocks out of sequence order, kept "
                    "in file order (the output is out of order there); the first: seq %" PRIu64
                    " at byte offset %" PRIu64, s->path, res->unordered_blocks, SALV_WINDOW,
                    s->late_seq, s->late_off);
    if (res->end_ok)
        return;
    if (!res->lost_blocks && !res->lost_records)
        hs_log_warn("%s: end block %s: totals unknown; no record block is known lost", s->path,
                    salv_end_state(res));
    else
        hs_log_warn("%s: end block %s: totals unknown; at least %" PRIu64 " record block(s) "
                    "lost, %" PRIu64 " records known lost (added to the output's dropped count)",
                    s->path, salv_end_state(res), res->lost_blocks, res->lost_records);
}

static hs_status_t salv_map(salv_t *s)
{
    struct stat sb;
    int fd;

    if (trace_input_open(s->path, &fd) != HS_OK) /* "-", pipes: copied; no FIFO wait */
        return HS_ERR_IO;
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

static hs_status_t salv_alloc(salv_t *s)
{
    s->recs = malloc((size_t)TRACE_BLK_MAX_RECORDS * sizeof(*s->recs));
    s->pend = malloc(SALV_WINDOW * sizeof(*s->pend));
    return s->recs && s->pend ? HS_OK : HS_ERR_NOMEM;
}

static void salv_free(salv_t *s)
{
    free(s->recs);
    free(s->pend);
    free(s->lost);
    free(s->done.v);
}

hs_status_t trace_salvage(const char *in, const char *out, trace_salvage_t *res)
{
    salv_t s = {.path = in};
    hs_status_t st;

    memset(res, 0, sizeof(*res));
    if ((st = salv_map(&s)) != HS_OK)
        return st;
    trace_hdr_init_unknown(&s.hdr);
    st = HS_ERR_INVALID;
    if (salv_header(&s, res) != 0)
        goto out;
    if ((st = salv_alloc(&s)) != HS_OK)
        goto out;
    if ((st = trace_writer_open(out, &s.hdr, &s.w)) != HS_OK)
        goto out;
    if ((st = salv_walk(&s, res)) != HS_OK)
        goto out;
    if (!res->kept_blocks && !res->header_ok) {
        hs_log_error("%s: nothing to salvage: no intact header and no intact block", in);
        st = HS_ERR_INVALID;
        goto out;
    }
    salv_totals(&s, res);
    salv_log(&s, res);
    st = trace_writer_close(s.w);
    s.w = NULL;
out:
    trace_writer_abort(s.w);
    salv_free(&s);
    trace_hdr_release(&s.hdr);
    munmap((void *)s.map, s.size);
    return st;
}
