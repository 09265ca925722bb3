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
    TRACE_FMT_PERFTEST,
} trace_fmt_t;

/* Guess the format from the first bytes of a file (head, len bytes). */
trace_fmt_t trace_fmt_sniff(const char *head, size_t len);
/* The output format for a path's extension (.hst, .csv, .jsonl), or TRACE_FMT_UNKNOWN. */
trace_fmt_t trace_fmt_from_ext(const char *path);

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
