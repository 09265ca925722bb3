/* trace_convert.h - text forms of a trace (CSV, JSON Lines) and the import of perftest's
 * per-iteration latency output (`ib_write_lat -U`). trace_load/trace_save (trace.h)
 * dispatch here; these are exposed for tests and tools that know the format already.
 * Readers log errors naming the file and line; writers go through hs_afile (atomic). */
#ifndef HS_TRACE_CONVERT_H
#define HS_TRACE_CONVERT_H

#include <stdio.h>

#include "traces/trace.h"

typedef enum {
    TRACE_FMT_UNKNOWN = 0,
    TRACE_FMT_HST,
    TRACE_FMT_CSV,
    TRACE_FMT_JSONL,
    TRACE_FMT_PERFTEST,    /* read only: perftest's -U output */
    TRACE_FMT_PERFETTO,    /* written only, for viewers: Perfetto protobuf (trace_perfetto.h) */
    TRACE_FMT_CHROME_JSON, /* written only, for viewers: Chrome trace-event JSON */
} trace_fmt_t;

/* The formats an output may take: traces only (HST, CSV, JSONL: what every reader takes
 * back), or the viewers' too (PERFETTO, CHROME_JSON). */
typedef enum { TRACE_OUT_TRACES = 0, TRACE_OUT_VIEWERS = 1 } trace_out_set_t;

/* Guess the format from the first bytes of a file (head, len bytes). */
trace_fmt_t trace_fmt_sniff(const char *head, size_t len);
/* The trace format for a path's extension (.hst, .csv, .jsonl), or TRACE_FMT_UNKNOWN. */
trace_fmt_t trace_fmt_from_ext(const char *path);
/* The output format a path's extension names, the viewers' included (.pftrace and
 * .perfetto-trace: PERFETTO, .json: CHROME_JSON), or TRACE_FMT_UNKNOWN. */
trace_fmt_t trace_out_fmt_from_ext(const char *path);
/* A format's --to name ("hst", "csv", "jsonl", "perfetto", "chrome-json"); "?" for others. */
const char *trace_fmt_name(trace_fmt_t fmt);
/* The format to write path in, the rule of every command with -o and --to: to (--to's
 * value, NULL when not given) names it, else path's extension does; where both name one
 * they must agree. "-" (standard output), a FIFO or a name without a known extension
 * therefore needs to. set: which formats are allowed. HS_ERR_USAGE after an error naming
 * to, path and the format path's name says (*out untouched); else HS_OK. */
hs_status_t trace_fmt_pick(const char *to, const char *path, trace_out_set_t set,
                           trace_fmt_t *out);

/* trace_save in format fmt (HST, CSV or JSONL) whatever path's name: for "-" (standard
 * output), a FIFO, a name without the extension. */
hs_status_t trace_save_as(const char *path, trace_fmt_t fmt, const trace_t *tr);

/* Parse from an open stream; path is only used in messages. *out is a new trace. The
 * _flags forms take TRACE_READ_* flags (trace.h). */
hs_status_t trace_csv_read(FILE *fp, const char *path, trace_t **out);
hs_status_t trace_jsonl_read(FILE *fp, const char *path, trace_t **out);
hs_status_t trace_csv_read_flags(FILE *fp, const char *path, unsigned flags, trace_t **out);
hs_status_t trace_jsonl_read_flags(FILE *fp, const char *path, unsigned flags, trace_t **out);
hs_status_t trace_perftest_read(FILE *fp, const char *path, trace_t **out);

/* Write to an open stream (the caller makes it atomic). Returns HS_ERR_IO on a short write. */
hs_status_t trace_csv_write(FILE *fp, const trace_t *tr);
hs_status_t trace_jsonl_write(FILE *fp, const trace_t *tr);

#endif
