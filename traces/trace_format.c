/* trace_format.c - byte-level encoding and checks of the .hst v1 format: CRC-32,
 * records, block headers, the file header and the JSON header (see FORMAT.md).
 * Every check returns a one-line reason so the reader, the validator, the salvager and
 * the fuzz target explain damage the same way. */
#include "traces/trace_format.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void trace_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void trace_put_u64(uint8_t *p, uint64_t v)
{
    trace_put_u32(p, (uint32_t)v);
    trace_put_u32(p + 4, (uint32_t)(v >> 32));
}

_Static_assert(sizeof(trace_rec_t) == TRACE_REC_BYTES, "trace_rec_t must be 32 bytes");

void trace_recs_encode(const trace_rec_t *recs, size_t n, uint8_t *out)
{
    if (TRACE_HOST_LE) { /* the in-memory layout is the on-disk layout */
        memcpy(out, recs, n * TRACE_REC_BYTES);
        return;
    }
    for (size_t i = 0; i < n; i++, out += TRACE_REC_BYTES) {
        trace_put_u64(out, recs[i].t_post_ns);
        trace_put_u64(out + 8, recs[i].t_done_ns);
        trace_put_u64(out + 16, recs[i].size_bytes);
        trace_put_u32(out + 24, recs[i].qp);
        out[28] = recs[i].opcode;
        out[29] = recs[i].status;
        out[30] = (uint8_t)recs[i].flags;
        out[31] = (uint8_t)(recs[i].flags >> 8);
    }
}

void trace_recs_decode(const uint8_t *in, size_t n, trace_rec_t *out)
{
    if (TRACE_HOST_LE) {
        memcpy(out, in, n * TRACE_REC_BYTES);
        return;
    }
    for (size_t i = 0; i < n; i++, in += TRACE_REC_BYTES) {
        out[i].t_post_ns = trace_get_u64(in);
        out[i].t_done_ns = trace_get_u64(in + 8);
        out[i].size_bytes = trace_get_u64(in + 16);
        out[i].qp = trace_get_u32(in + 24);
        out[i].opcode = in[28];
        out[i].status = in[29];
        out[i].flags = (uint16_t)(in[30] | in[31] << 8);
    }
}

/* ---- blocks ----------------------------------------------------------------------- */

void trace_blk_encode(const trace_blk_t *h, uint8_t out[TRACE_BLK_HDR_BYTES])
{
    trace_put_u32(out, TRACE_BLK_MAGIC);
    trace_put_u32(out + 4, h->type);
    trace_put_u32(out + 8, h->total_len);
    trace_put_u32(out + 12, h->count);
    trace_put_u64(out + 16, h->seq);
    trace_put_u32(out + 24, h->payload_crc);
    trace_put_u32(out + 28, trace_crc32(0, out, 28));
}

static int blk_check_lengths(const trace_blk_t *h, char *why, size_t whylen)
{
    uint64_t want;

    if (h->type == TRACE_BLK_RECORDS) {
        if (h->count == 0 || h->count > TRACE_BLK_MAX_RECORDS) {
            snprintf(why, whylen, "record count %" PRIu32 " out of range (1..%u)", h->count,
                     TRACE_BLK_MAX_RECORDS);
            return -1;
        }
        want = TRACE_BLK_OVERHEAD + (uint64_t)h->count * TRACE_REC_BYTES;
    } else if (h->type == TRACE_BLK_END) {
        want = TRACE_BLK_OVERHEAD + TRACE_END_PAYLOAD_BYTES;
        if (h->count != 0) {
            snprintf(why, whylen, "end block with record count %" PRIu32 ", expected 0",
                     h->count);
            return -1;
        }
    } else { /* unknown type: only its length must be plausible */
        if (h->total_len < TRACE_BLK_OVERHEAD || h->total_len > TRACE_BLK_MAX_BYTES ||
            h->total_len % 8) {
            snprintf(why, whylen, "block length %" PRIu32 " of unknown block type %" PRIu32
                     " is not a multiple of 8 in %u..%u", h->total_len, h->type,
                     TRACE_BLK_OVERHEAD, TRACE_BLK_MAX_BYTES);
            return -1;
        }
        return 0;
    }
    if (h->total_len != want) {
        snprintf(why, whylen, "block length %" PRIu32 " does not match its record count %" PRIu32
                 " (expected %" PRIu64 ")", h->total_len, h->count, want);
        return -1;
    }
    return 0;
}

int trace_blk_check_head(const uint8_t raw[TRACE_BLK_HDR_BYTES], trace_blk_t *h, char *why,
                         size_t whylen)
{
    uint32_t crc;

    h->magic = trace_get_u32(raw);
    h->type = trace_get_u32(raw + 4);
    h->total_len = trace_get_u32(raw + 8);
    h->count = trace_get_u32(raw + 12);
    h->seq = trace_get_u64(raw + 16);
    h->payload_crc = trace_get_u32(raw + 24);
    h->hdr_crc = trace_get_u32(raw + 28);
    if (h->magic != TRACE_BLK_MAGIC) {
        snprintf(why, whylen, "bad block magic 0x%08" PRIx32 " (expected 0x%08x, \"HSB1\")",
                 h->magic, TRACE_BLK_MAGIC);
        return -1;
    }
    crc = trace_crc32(0, raw, 28);
    if (TRACE_CRC_BAD(crc, h->hdr_crc)) {
        snprintf(why, whylen, "block header CRC 0x%08" PRIx32 " does not match its content "
                 "(computed 0x%08" PRIx32 "): header damaged", h->hdr_crc, crc);
        return -1;
    }
    return blk_check_lengths(h, why, whylen);
}

int trace_blk_check_body(const trace_blk_t *h, const uint8_t *body, char *why, size_t whylen)
{
    size_t plen = h->total_len - TRACE_BLK_OVERHEAD;
    const uint8_t *tail = body + plen;
    uint32_t crc;

    if (trace_get_u32(tail) != h->total_len || trace_get_u32(tail + 4) != TRACE_BLK_TAIL_MAGIC) {
        snprintf(why, whylen, "block tail (length %" PRIu32 ", magic 0x%08" PRIx32
                 ") does not match the header (length %" PRIu32 ", magic 0x%08x)",
                 trace_get_u32(tail), trace_get_u32(tail + 4), h->total_len,
                 TRACE_BLK_TAIL_MAGIC);
        return -1;
    }
    crc = trace_crc32(0, body, plen);
    if (TRACE_CRC_BAD(crc, h->payload_crc)) {
        snprintf(why, whylen, "payload CRC 0x%08" PRIx32 " does not match the stored "
                 "0x%08" PRIx32 ": record data damaged", crc, h->payload_crc);
        return -1;
    }
    if (h->type == TRACE_BLK_END) {
        trace_end_t end;
        trace_end_decode(body, &end);
        if (end.blocks >= h->seq + 1 || end.records > end.blocks * TRACE_BLK_MAX_RECORDS) {
            snprintf(why, whylen, "end block counts (%" PRIu64 " records in %" PRIu64
                     " blocks) are inconsistent with its sequence number %" PRIu64,
                     end.records, end.blocks, h->seq);
            return -1;
        }
    }
    return 0;
}

void trace_end_decode(const uint8_t *payload, trace_end_t *end)
{
    end->dropped = trace_get_u64(payload);
    end->records = trace_get_u64(payload + 8);
    end->blocks = trace_get_u64(payload + 16);
}

/* ---- file header ------------------------------------------------------------------ */

void trace_filehdr_encode(uint32_t json_len, uint32_t json_crc, uint8_t out[TRACE_FILE_HDR_BYTES])
{
    memset(out, 0, TRACE_FILE_HDR_BYTES);
    memcpy(out, TRACE_FILE_MAGIC, TRACE_FILE_MAGIC_LEN);
    trace_put_u32(out + 8, TRACE_FORMAT_VERSION);
    trace_put_u32(out + 12, json_len);
    trace_put_u32(out + 16, json_crc);
    /* 20: flags, 24: reserved, both 0 in v1 */
    trace_put_u32(out + 28, trace_crc32(0, out, 28));
}

int trace_version_check(uint64_t version, const char *where, char *why, size_t whylen)
{
    if (version == TRACE_FORMAT_VERSION)
        return 0;
    snprintf(why, whylen, "format version %" PRIu64 "%s; this build reads version %d%s", version,
             where, TRACE_FORMAT_VERSION, version > TRACE_FORMAT_VERSION ? " (upgrade hintsim)" : "");
    return -1;
}

int trace_filehdr_check(const uint8_t raw[TRACE_FILE_HDR_BYTES], uint32_t *json_len,
                        uint32_t *json_crc, char *why, size_t whylen)
{
    uint32_t version = trace_get_u32(raw + 8), len = trace_get_u32(raw + 12), crc;

    if (memcmp(raw, TRACE_FILE_MAGIC, TRACE_FILE_MAGIC_LEN) != 0) {
        snprintf(why, whylen, "not a hintsim trace: bad magic at byte offset 0 "
                 "(expected \\x89HST\\r\\n\\x1a\\n)");
        return -1;
    }
    crc = trace_crc32(0, raw, 28);
    /* another version is believed only when the CRC proves the field: else it is damage */
    if (!TRACE_CRC_BAD(crc, trace_get_u32(raw + 28)) &&
        trace_version_check(version, " at byte offset 8", why, whylen) != 0)
        return -1;
    if (TRACE_CRC_BAD(crc, trace_get_u32(raw + 28))) {
        snprintf(why, whylen, "file header CRC at byte offset 28 is 0x%08" PRIx32
                 ", computed 0x%08" PRIx32 ": header bytes 0..27 damaged%s",
                 trace_get_u32(raw + 28), crc,
                 version != TRACE_FORMAT_VERSION ? " (the version field at byte offset 8 "
                 "reads another version: damage, not a later format)" : "");
        return -1;
    }
    if (len == 0 || len > TRACE_JSON_MAX_BYTES) {
        snprintf(why, whylen, "JSON header length %" PRIu32 " at byte offset 12 out of range "
                 "(1..%u)", len, TRACE_JSON_MAX_BYTES);
        return -1;
    }
    *json_len = len;
    *json_crc = trace_get_u32(raw + 16);
    return 0;
}

/* ---- records ---------------------------------------------------------------------- */

int trace_rec_check(const trace_rec_t *r, char *why, size_t whylen)
{
    if (strcmp(trace_opcode_str(r->opcode), "unknown") == 0) {
        snprintf(why, whylen, "unknown opcode %u", r->opcode);
        return -1;
    }
    if ((r->flags & TRACE_F_PATH_MASK) == TRACE_F_PATH_MASK) {
        snprintf(why, whylen, "flags 0x%04x mark both the LL and the BW path", r->flags);
        return -1;
    }
    if (r->t_done_ns != TRACE_TIME_UNKNOWN && r->t_done_ns < r->t_post_ns) {
        snprintf(why, whylen, "completion time %" PRIu64 " ns is before the post time %" PRIu64
                 " ns", r->t_done_ns, r->t_post_ns);
        return -1;
    }
    return 0;
}
