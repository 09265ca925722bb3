/* trace_format.h - the bytes of the .hst format v1 (see traces/FORMAT.md).
 *
 * Everything here is little-endian on disk. A file is a 32-byte file header, a JSON
 * header, zero padding to a multiple of 8, then blocks. A block is a 32-byte block
 * header, a payload and an 8-byte tail that repeats the block length (pcapng-style), so
 * a reader can detect truncation and a salvager can resynchronise on the block magic.
 * The writer, reader, checker and fuzz target share these encoders and checks.
 */
#ifndef HS_TRACE_FORMAT_H
#define HS_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "traces/trace.h"

#define TRACE_FILE_MAGIC "\x89HST\r\n\x1a\n" /* 8 bytes, PNG-style: catches text-mode mangling */
#define TRACE_FILE_MAGIC_LEN 8
#define TRACE_FILE_HDR_BYTES 32
#define TRACE_JSON_MAX_BYTES (1u << 20)      /* a JSON header above 1 MiB is damage */

#define TRACE_BLK_MAGIC 0x31425348u          /* "HSB1" as little-endian bytes */
#define TRACE_BLK_TAIL_MAGIC 0x45425348u     /* "HSBE" */
#define TRACE_BLK_HDR_BYTES 32
#define TRACE_BLK_TAIL_BYTES 8
#define TRACE_BLK_OVERHEAD (TRACE_BLK_HDR_BYTES + TRACE_BLK_TAIL_BYTES)
#define TRACE_REC_BYTES 32
#define TRACE_BLK_DEFAULT_RECORDS 4096       /* what the writer uses: 128 KiB payloads */
#define TRACE_BLK_MAX_RECORDS 65536          /* what a reader accepts */
#define TRACE_BLK_MAX_BYTES (TRACE_BLK_OVERHEAD + TRACE_BLK_MAX_RECORDS * TRACE_REC_BYTES)
#define TRACE_END_PAYLOAD_BYTES 24           /* dropped, records, record blocks: 3 x u64 */

/* Block types. Readers skip unknown types whose header CRC is intact (forward
 * compatibility within version 1). */
enum { TRACE_BLK_RECORDS = 1, TRACE_BLK_END = 2 };

/* A decoded block header. */
typedef struct {
    uint32_t magic;
    uint32_t type;
    uint32_t total_len; /* bytes, header + payload + tail */
    uint32_t count;     /* records in the payload (0 for the end block) */
    uint64_t seq;       /* 0, 1, 2, ... in file order, the end block included */
    uint32_t payload_crc;
    uint32_t hdr_crc;   /* CRC-32 of the header's first 28 bytes */
} trace_blk_t;

/* What the end block says. */
typedef struct {
    uint64_t dropped;
    uint64_t records;
    uint64_t blocks; /* record blocks before the end block */
} trace_end_t;

/* A stored CRC that does not match. The fuzz build (tests/trace.cmake) accepts every CRC
 * so that mutated inputs reach the structure checks behind it, as libpng and zlib do. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define TRACE_CRC_BAD(computed, stored) ((void)(computed), (void)(stored), 0)
#else
#define TRACE_CRC_BAD(computed, stored) ((computed) != (stored))
#endif

/* Standard CRC-32 (zlib/PNG). Chain by passing the previous value (start with 0). */
uint32_t trace_crc32(uint32_t crc, const void *buf, size_t len);
/* The same, always by the portable slice-by-8 tables (for tests and comparisons). */
uint32_t trace_crc32_tables(uint32_t crc, const void *buf, size_t len);

static inline uint32_t trace_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t trace_get_u64(const uint8_t *p)
{
    return (uint64_t)trace_get_u32(p) | (uint64_t)trace_get_u32(p + 4) << 32;
}
void trace_put_u32(uint8_t *p, uint32_t v);
void trace_put_u64(uint8_t *p, uint64_t v);

/* Records <-> their 32-byte little-endian encoding (memcpy on little-endian hosts). */
void trace_recs_encode(const trace_rec_t *recs, size_t n, uint8_t *out);

/* The in-memory record is the on-disk one where the host is little-endian. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TRACE_HOST_LE 1
#else
#define TRACE_HOST_LE 0
#endif

/* trace_recs_encode of one record, inlined: a 32-byte copy on a little-endian host, not a
 * call to memcpy (the interposer's writer appends its records one at a time). */
static inline void trace_rec_encode(const trace_rec_t *rec, uint8_t *out)
{
    if (TRACE_HOST_LE)
        memcpy(out, rec, TRACE_REC_BYTES);
    else
        trace_recs_encode(rec, 1, out);
}
void trace_recs_decode(const uint8_t *in, size_t n, trace_rec_t *out);

/* Encode a block header into 32 bytes, computing hdr_crc (h->hdr_crc is ignored). */
void trace_blk_encode(const trace_blk_t *h, uint8_t out[TRACE_BLK_HDR_BYTES]);
/* Decode and check a block header: magic, header CRC, type/length/count consistency.
 * Returns 0 when sound, else -1 with a one-line reason in why (no file/offset). */
int trace_blk_check_head(const uint8_t raw[TRACE_BLK_HDR_BYTES], trace_blk_t *h, char *why,
                         size_t whylen);
/* Check the rest of a block (payload + tail, h->total_len - 32 bytes at body): tail
 * length and magic, payload CRC, and for the end block its consistency. */
int trace_blk_check_body(const trace_blk_t *h, const uint8_t *body, char *why, size_t whylen);
/* Parse an end block's payload. */
void trace_end_decode(const uint8_t *payload, trace_end_t *end);

/* Encode the 32-byte file header for a JSON header of json_len bytes with CRC json_crc. */
void trace_filehdr_encode(uint32_t json_len, uint32_t json_crc, uint8_t out[TRACE_FILE_HDR_BYTES]);
/* Check a file header: magic, version (a future version says which one this build reads;
 * believed only when the header CRC holds, else the header is reported damaged), header
 * CRC, JSON length. On success sets *json_len and *json_crc. On failure writes the
 * reason, including the byte offset, into why. */
int trace_filehdr_check(const uint8_t raw[TRACE_FILE_HDR_BYTES], uint32_t *json_len,
                        uint32_t *json_crc, char *why, size_t whylen);
/* The version check every form of a trace makes (.hst, CSV, JSON Lines): 0 when this build
 * reads version, else -1 with "format version N<where>; this build reads version 1" in why.
 * where says where the number was found (" at byte offset 8"), "" when the caller names it. */
int trace_version_check(uint64_t version, const char *where, char *why, size_t whylen);
/* Bytes of JSON plus padding that follow the file header. */
static inline uint64_t trace_json_padded(uint32_t json_len) { return ((uint64_t)json_len + 7) & ~7ULL; }

/* Integers in trace JSON (header and JSON Lines records): below 2^53 a JSON number; from
 * 2^53 on a decimal string, since a JSON number that large is rounded (2^53 + 1 parses as
 * 2^53). TRACE_JSON_EXACT is 2^53. */
#define TRACE_JSON_EXACT 9007199254740992ULL
struct cJSON;
/* Text s as a u64: decimal, or hexadecimal with 0x (flags); never octal, no sign, nothing
 * after it. 0 or -1. */
int trace_u64_parse(const char *s, uint64_t *out);
/* A JSON integer in 0..lim as above (number below 2^53, or a string trace_u64_parse reads);
 * 0 with *out set, else -1. */
int trace_json_u64_get(const struct cJSON *it, uint64_t lim, uint64_t *out);
/* v's digits into text (NUL-terminated); returns 1 where that spelling quotes them (v >=
 * TRACE_JSON_EXACT), else 0: the one rule every writer of trace JSON follows. */
int trace_json_u64_text(uint64_t v, char text[24]);
/* Add key: v to object o in that spelling; 0, or -1 out of memory. */
int trace_json_u64_add(struct cJSON *o, const char *key, uint64_t v);

/* The JSON header text for hdr (malloc'ed, caller frees). */
hs_status_t trace_hdr_to_json(const trace_hdr_t *hdr, char **out);
/* The JSON header as a cJSON object (caller deletes); used by info and the converters. */
struct cJSON *trace_hdr_to_cjson(const trace_hdr_t *hdr);
/* Fill hdr (initialised by the caller) from a JSON object; unknown keys are ignored.
 * Returns -1 with the offending key and reason in why on a type or range error. */
int trace_hdr_from_cjson(const struct cJSON *obj, trace_hdr_t *hdr, char *why, size_t whylen);
/* Parse JSON header text of len bytes (need not be NUL-terminated). */
int trace_hdr_from_json(const char *text, size_t len, trace_hdr_t *hdr, char *why, size_t whylen);

/* After trace_hdr_from_cjson on the object text[0..len): keep its "extra" as written
 * (white space outside strings removed) instead of as cJSON prints it, so that writing the
 * header again never makes it longer than it was read (numbers keep their spelling). */
hs_status_t trace_hdr_keep_extra(const char *text, size_t len, trace_hdr_t *hdr);

/* Deep copy of a header (extra_json duplicated). */
hs_status_t trace_hdr_copy(trace_hdr_t *dst, const trace_hdr_t *src);

/* Names of the header enums and opcodes; "unknown" for values outside the table.
 * The _parse functions return -1 for an unknown name. */
const char *trace_mode_str(trace_mode_t m);
int trace_mode_parse(const char *s, trace_mode_t *out);
const char *trace_mem_str(trace_mem_t m);
int trace_mem_parse(const char *s, trace_mem_t *out);
const char *trace_hint_src_str(trace_hint_src_t s);
int trace_hint_src_parse(const char *s, trace_hint_src_t *out);
const char *trace_opcode_str(unsigned op);
int trace_opcode_parse(const char *s, uint8_t *out);

/* Semantic check of one record: opcode known, path bits not both set, completion not
 * before post. Returns 0 or -1 with a reason. */
int trace_rec_check(const trace_rec_t *r, char *why, size_t whylen);

#endif
