/* trace_perfetto.h - a trace as Chrome/Perfetto trace-event JSON, for ui.perfetto.dev and
 * chrome://tracing (`hintsim trace convert T.hst -o T.json --to perfetto`).
 *
 * What a viewer shows (one process, named after the source trace):
 *   - a track per QP and path ("QP 0 LL", "QP 0 BW", "QP 0 unknown"): each message is a
 *     slice from its post to its completion (nestable async "b"/"e" events, so messages in
 *     flight together are laid out one above the other), args size, path, qp, op, record
 *     index in the file, status and the flags that are set; a message whose completion is
 *     not known is an instant on its track;
 *   - per QP, a counter "QP n in flight" (messages posted and not yet completed) and a
 *     thread track "QP n" with an instant "path switch" where a record carries
 *     TRACE_F_SWITCH.
 * Times are the trace's own: ts = ns / 1000 (microseconds, the format's unit) with three
 * decimals, so no precision is lost. JSON is one way: no reader takes it back. */
#ifndef HS_TRACE_PERFETTO_H
#define HS_TRACE_PERFETTO_H

#include <stdio.h>

#include "traces/trace.h"

/* Write tr to an open stream; source names the trace in the viewer (its file name).
 * HS_ERR_NOMEM, or HS_ERR_IO on a short write. */
hs_status_t trace_perfetto_write(FILE *fp, const trace_t *tr, const char *source);

/* The same to path, atomically (hs_afile); errors logged naming path. */
hs_status_t trace_perfetto_save(const char *path, const trace_t *tr, const char *source);

#endif
