/* trace_check.h - check a trace file (validate) and recover what is intact in a damaged
 * one (salvage). Messages name the file, the block number and the byte offset. */
#ifndef HS_TRACE_CHECK_H
#define HS_TRACE_CHECK_H

#include <stdint.h>

#include "traces/trace.h"

/* What an intact file holds. */
typedef struct {
    int is_hst;        /* 0 for CSV/JSONL/perftest input (checked after loading) */
    uint64_t blocks;   /* record blocks (.hst only) */
    uint64_t records;
    uint64_t dropped;
} trace_validate_t;

/* Check every structural property of an .hst file (magic, version, header CRC and JSON,
 * every block's lengths at both ends, sequence, CRCs, the end block) and every record's
 * semantics (opcode, path bits, completion after post). Other formats are loaded and their
 * records checked. Returns HS_OK, or HS_ERR_INVALID after logging the first problem with
 * its block and byte offset (HS_ERR_IO when the file cannot be read). */
hs_status_t trace_validate(const char *path, trace_validate_t *out);

#define TRACE_UNKNOWN_COUNT UINT64_MAX

/* What salvage kept and lost. Totals are TRACE_UNKNOWN_COUNT when the end block is lost.
 * Counts never wrap: lost = total - kept only where the end block's totals cover what was
 * kept (else end_ok is 0 and totals_inconsistent is set). */
typedef struct {
    int header_ok;          /* the JSON header was intact (else provenance "unknown") */
    int file_header_ok;     /* the 32-byte file header was intact (the JSON may outlive it) */
    int end_ok;             /* an intact end block was found and its totals cover what was kept */
    int end_damaged;        /* an end block's header held but the rest did not */
    int totals_inconsistent; /* an intact end block claimed fewer blocks or records than kept */
    uint64_t kept_blocks, kept_records;
    uint64_t total_blocks, total_records; /* from the end block */
    uint64_t lost_blocks, lost_records; /* exact when end_ok; else known lost: lower bounds
                                           (records of blocks whose header held) */
    uint64_t lost_blocks_min;   /* = lost_blocks (kept for older callers) */
    uint64_t dup_blocks, dup_records; /* blocks whose seq was already kept: dropped */
    uint64_t dup_end_blocks;    /* intact end blocks after the first: dropped */
    int end_misplaced;          /* record blocks followed the end block (it must be last) */
    uint64_t reordered_blocks;  /* out of sequence order in the file, put back in order */
    uint64_t unordered_blocks;  /* too far out of order to put back: kept in file order */
    uint64_t damaged_regions;   /* runs of bytes not kept as an intact block in its place
                                   (duplicates, blocks out of order, a misplaced end block
                                   and sequence gaps without damaged bytes count too) */
    uint64_t skipped_bytes;
    uint64_t first_bad_offset;  /* byte offset of the first damage (if any) */
    char first_bad_why[256];
} trace_salvage_t;

/* Copy every intact record block of in (resynchronising on the block magic after damage)
 * into a new, valid .hst file at out (atomic), once per sequence number and in sequence
 * order. The output's dropped count adds the records known lost (exactly when the end block
 * survived, else those of blocks whose header held). The header comes from the JSON
 * whenever its own CRC holds, else says "unknown" (trace_hdr_init_unknown). Fails
 * (HS_ERR_INVALID) only when nothing at all could be recovered or the file is of a future
 * format version. */
hs_status_t trace_salvage(const char *in, const char *out, trace_salvage_t *res);

#endif
