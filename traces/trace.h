/* trace.h - the hintsim trace: what was posted, when, how big, and when it completed.
 *
 * In memory a trace is a header (trace_hdr_t) plus an array of fixed-size records
 * (trace_rec_t). On disk it is the .hst format of traces/FORMAT.md: magic, version,
 * a JSON header, then CRC-protected blocks of records. Every module that consumes traces
 * (model, sim, capture's validate) works on the in-memory form; only this module knows
 * the bytes.
 */
#ifndef HS_TRACE_H
#define HS_TRACE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "common/hs_status.h"

/* t_done_ns value for work whose completion time is not known (unsignalled WR). */
#define TRACE_TIME_UNKNOWN UINT64_MAX

/* Record flags. The path is two bits: unknown, LL or BW. */
enum {
    TRACE_F_PATH_MASK = 0x0003,
    TRACE_F_PATH_LL = 0x0001,      /* took the low-latency path */
    TRACE_F_PATH_BW = 0x0002,      /* took the bandwidth path */
    TRACE_F_INLINE = 0x0004,       /* posted with IBV_SEND_INLINE */
    TRACE_F_SIGNALED = 0x0008,     /* posted with IBV_SEND_SIGNALED */
    TRACE_F_COLD = 0x0010,         /* cold start: not steady state (seed 002) */
    TRACE_F_ERROR = 0x0020,        /* completed with an error; status holds ibv_wc_status */
    TRACE_F_IMPLICIT = 0x0040,     /* completion time implied by a later signalled WR */
    TRACE_F_SWITCH = 0x0080,       /* a path switch (drain) happened before this post */
};

/* Work request opcodes (a trace-level enum; converters map from ibv_wr_opcode). */
typedef enum {
    TRACE_OP_SEND = 0,
    TRACE_OP_SEND_IMM = 1,
    TRACE_OP_WRITE = 2,
    TRACE_OP_WRITE_IMM = 3,
    TRACE_OP_READ = 4,
    TRACE_OP_ATOMIC = 5,
    TRACE_OP_OTHER = 15,
} trace_opcode_t;

/* One posted work request. 32 bytes, naturally aligned. */
typedef struct {
    uint64_t t_post_ns;  /* post time, ns since the trace's clock origin */
    uint64_t t_done_ns;  /* completion seen by the poster, ns; TRACE_TIME_UNKNOWN if not known */
    uint64_t size_bytes; /* payload bytes */
    uint32_t qp;         /* QP index within the process (0..n), not the QP number */
    uint8_t opcode;      /* trace_opcode_t */
    uint8_t status;      /* ibv_wc_status of the completion (0 = success) */
    uint16_t flags;      /* TRACE_F_* */
} trace_rec_t;

typedef enum {
    TRACE_MODE_BENCH = 0,     /* hintsim capture bench */
    TRACE_MODE_PRELOAD = 1,   /* the LD_PRELOAD interposer */
    TRACE_MODE_SYNTHETIC = 2, /* hintsim trace gen */
    TRACE_MODE_CONVERTED = 3, /* imported from CSV, JSON Lines, perftest */
} trace_mode_t;

typedef enum { TRACE_MEM_HOST = 0, TRACE_MEM_CUDA = 1 } trace_mem_t;

typedef enum {
    TRACE_HINT_NONE = 0,   /* no hint in effect */
    TRACE_HINT_ENV = 1,    /* RDMA_LOW_LATENCY_HINT */
    TRACE_HINT_CONFIG = 2, /* a configuration file */
    TRACE_HINT_CODE = 3,   /* set by the application / our flags */
} trace_hint_src_t;

/* The trace header. Strings are fixed buffers so the header is a plain value.
 * extra_json is an optional JSON object text (owned, malloc'ed) carrying anything else:
 * the effective configuration of the producer, the workload parameters, etc. */
typedef struct {
    uint32_t version;             /* format version read (TRACE_FORMAT_VERSION when written) */
    char producer[64];            /* "hintsim capture bench", "libhintcap", ... */
    char producer_version[32];
    trace_mode_t mode;
    char host[64];
    char device[64];              /* verbs device, "" if none */
    char firmware[64];            /* "" if unknown */
    trace_mem_t mem;
    char clock_source[32];        /* "CLOCK_MONOTONIC", ... ; unit is always ns */
    uint64_t hint_bytes;          /* hint in effect while capturing (0 = none) */
    trace_hint_src_t hint_source;
    int64_t pid;                  /* -1 if not applicable */
    int32_t rank;                 /* -1 if unknown */
    uint64_t dropped;             /* records lost by the producer (never silently) */
    char workload[64];            /* generator workload name, or "" */
    char *extra_json;             /* owned; may be NULL */
} trace_hdr_t;

/* A whole trace loaded in memory. */
typedef struct {
    trace_hdr_t hdr;
    trace_rec_t *recs; /* owned */
    size_t n;
    size_t cap;
    size_t *file_idx;  /* owned; NULL, or after trace_sort_posts moved records, each record's
                        * index in the file (for messages: trace_file_index) */
} trace_t;

/* Record i's index in the file it was loaded from (i unless trace_sort_posts moved it). */
/* Record i's think time in ns (i > 0): how long after record i-1's completion it was
 * posted, 0 when it was posted before that or i-1's completion is unknown. What a closed-loop
 * replay waits after the previous message (model/MODEL.md section 7). */
static inline double trace_think_ns(const trace_t *tr, size_t i)
{
    const trace_rec_t *r = &tr->recs[i], *prev = &tr->recs[i - 1];

    return r->t_post_ns > prev->t_done_ns ? (double)(r->t_post_ns - prev->t_done_ns) : 0;
}

static inline size_t trace_file_index(const trace_t *tr, size_t i)
{
    return tr->file_idx ? tr->file_idx[i] : i;
}

#define TRACE_FORMAT_VERSION 1

/* Fill hdr with defaults: this producer, synthetic mode, this host, pid -1, rank -1. */
void trace_hdr_init(trace_hdr_t *hdr);
/* Fill hdr for records whose provenance is not known (a text file without a header line,
 * a salvaged file whose header was lost): producer, host, device and clock "unknown",
 * converted mode, pid -1, rank -1; never this machine's name. */
void trace_hdr_init_unknown(trace_hdr_t *hdr);
/* Free what the header owns (extra_json). */
void trace_hdr_release(trace_hdr_t *hdr);

/* An empty in-memory trace (header from trace_hdr_init). Free with trace_free. */
hs_status_t trace_new(trace_t **out);
/* Append one record to an in-memory trace (amortised O(1)). */
hs_status_t trace_push(trace_t *tr, const trace_rec_t *rec);
/* Make room for at least n records in all (a large array on huge pages: hs_mem.h). */
hs_status_t trace_reserve(trace_t *tr, size_t n);
void trace_free(trace_t *tr);
/* How many records are posted before the record ahead of them (0: in post order). */
size_t trace_unordered(const trace_t *tr);
/* Put the records in ascending post time, ties in file order (a stable sort), unless they
 * are already (the interposer drains several threads' rings in turn, so its files need not
 * be); *moved gets trace_unordered's count (0: tr untouched). Each record's index in the
 * file is kept (trace_file_index) for messages. O(n) (radix); HS_ERR_NOMEM leaves tr as it
 * was. Records pushed afterwards have no file index. */
hs_status_t trace_sort_posts(trace_t *tr, size_t *moved);
/* trace_load, then trace_sort_posts: what every replay reads (model, sim, recommend, sweep,
 * validate); with note, say on stderr (hs_log_info) when records were moved, and warn
 * (hs_log_warn) about records trace_count_insane counts. */
hs_status_t trace_load_posts(const char *path, int note, trace_t **out);
/* Records trace_rec_check refuses for their meaning (completion before post, both path
 * bits; an unknown opcode number is not counted): how many, the first one's index and why. */
size_t trace_count_insane(const trace_t *tr, size_t *first, char *why, size_t wl);

/* ---- files ---------------------------------------------------------------------- */

/* Streaming writer: constant memory. The file appears under path only at
 * trace_writer_close (written to a temporary and renamed). */
typedef struct trace_writer trace_writer_t;
hs_status_t trace_writer_open(const char *path, const trace_hdr_t *hdr, trace_writer_t **out);
hs_status_t trace_writer_append(trace_writer_t *w, const trace_rec_t *rec);
/* Set the dropped count recorded in the file (it is written at close). */
void trace_writer_set_dropped(trace_writer_t *w, uint64_t dropped);
/* Flush the last block, write the trailer, rename into place. Frees w. */
hs_status_t trace_writer_close(trace_writer_t *w);
/* Discard the temporary, leave any existing file at path untouched. Frees w. */
void trace_writer_abort(trace_writer_t *w);
/* Append n records at once (same result as n trace_writer_append calls, faster). */
hs_status_t trace_writer_append_many(trace_writer_t *w, const trace_rec_t *recs, size_t n);
/* Records per block, 1..65536 (default 4096); only before the first append. */
hs_status_t trace_writer_set_block_records(trace_writer_t *w, uint32_t n);

/* Remove the temporaries "<path>.tmp.<pid>" that writers killed before they finished left
 * next to path: pid gone (not alive here) and the file untouched for 60 s. Every writer of
 * path (trace_writer_open, trace_save) calls it first; logs what it removes. */
void trace_clean_stale_tmp(const char *path);

/* Streaming reader. trace_reader_next returns HS_OK with a record, HS_ERR_INVALID on
 * damage (logged with file, block and byte offset), and sets *eof at the end. */
typedef struct trace_reader trace_reader_t;
hs_status_t trace_reader_open(const char *path, trace_reader_t **out);
/* The same on an open stream (a pipe, fmemopen); r owns fp and closes it, even on error.
 * name is used in messages. */
hs_status_t trace_reader_open_stream(FILE *fp, const char *name, trace_reader_t **out);
const trace_hdr_t *trace_reader_header(const trace_reader_t *r);
hs_status_t trace_reader_next(trace_reader_t *r, trace_rec_t *rec, int *eof);
/* Bulk variant: hands out the remaining records of the current (checked) block at once.
 * *recs stays valid until the next call on r; *n >= 1 unless *eof is set. */
hs_status_t trace_reader_next_block(trace_reader_t *r, const trace_rec_t **recs, size_t *n,
                                    int *eof);
/* Record blocks read so far. */
uint64_t trace_reader_blocks(const trace_reader_t *r);
/* Byte offset of the block the last returned records came from (for messages). */
uint64_t trace_reader_block_offset(const trace_reader_t *r);
void trace_reader_close(trace_reader_t *r);

/* Open a trace for reading: path, or "-" for standard input. A regular file is read as it
 * is; a pipe, FIFO or socket is first copied into an unnamed temporary file ($TMPDIR, else
 * /tmp), for readers that map or seek anywhere (salvage). The open never waits for a
 * FIFO's writer: one that nobody writes to, or whose writer wrote nothing, is refused.
 * Anything else (a directory, a terminal, /dev/zero) is refused at once. A seekable fd
 * (caller closes), or an error logged naming path. */
hs_status_t trace_input_open(const char *path, int *fd_out);
/* The same as a stdio stream, NULL on error (logged); a pipe is read as it comes, not
 * copied: it seeks only within its first 64 KiB (enough to sniff the format and read it
 * again) and has no file descriptor (fileno is -1). */
FILE *trace_input_fopen(const char *path);

/* Load a whole trace from any supported file: .hst, .csv, .jsonl, or perftest raw
 * output (detected by content). Errors are logged naming the file and offset/line.
 * path may be "-" or a pipe (trace_input_open). */
hs_status_t trace_load(const char *path, trace_t **out);
/* trace_load with TRACE_READ_* flags. TRACE_READ_STRICT: a CSV or JSONL record that
 * trace_rec_check refuses fails the load, named by its line (an unknown opcode number is
 * otherwise kept: the writers carry raw values; trace validate refuses it). */
#define TRACE_READ_STRICT 1u
hs_status_t trace_load_flags(const char *path, unsigned flags, trace_t **out);
/* trace_load_flags on a stream opened by trace_input_fopen (closed here); name for messages. */
hs_status_t trace_load_stream(FILE *fp, const char *name, unsigned flags, trace_t **out);
/* Save a trace; the format follows the extension (.hst, .csv, .jsonl). Atomic. */
hs_status_t trace_save(const char *path, const trace_t *tr);

#endif
