/* trace_perfetto.h - a trace as a timeline for the viewers performance engineers use:
 * a Perfetto trace (protobuf TracePackets of TrackEvents: ui.perfetto.dev, trace_processor;
 * `hintsim trace convert T.hst -o T.pftrace`) or Chrome trace-event JSON (chrome://tracing,
 * ui.perfetto.dev; `-o T.json`, `--to chrome-json`).
 *
 * What a viewer shows (one process, named after the source trace), in both:
 *   - per QP a track "QP n" with an instant "path switch" where a record carries
 *     TRACE_F_SWITCH, and a counter "QP n in flight": the queue depth, messages posted
 *     whose completion is known and has not come yet;
 *   - per QP and path a track "QP n LL", "QP n BW" or "QP n unknown": each message is a slice
 *     from its post to its completion, with its size, path, qp, op, record index in the
 *     file, status and the flags that are set; a message whose completion is not known is an
 *     instant there.
 * Perfetto: slices on one track must nest, and messages in flight together overlap, so a
 * QP/path track is a set of sibling tracks of the same name (the viewer merges them into
 * one, in lanes; a message takes the lowest lane free at its post), each a child of the QP's
 * track (TrackDescriptor.parent_uuid). One packet sequence; timestamps are the trace's own
 * ns, in the trace's clock where Perfetto has it built in (CLOCK_MONOTONIC, _RAW, _COARSE,
 * CLOCK_REALTIME, CLOCK_BOOTTIME: a ClockSnapshot names it the trace's primary clock), else
 * Perfetto's default; the clock's name is in the process track's description.
 * JSON: ts = ns / 1000 (the format's microseconds) with three decimals, so no precision is
 * lost; nestable async events lay overlapping messages out. Both are one way: no reader
 * takes them back. */
#ifndef HS_TRACE_PERFETTO_H
#define HS_TRACE_PERFETTO_H

#include <stdio.h>

#include "traces/trace.h"

/* Write tr to an open stream; source names the trace in the viewer (its file name).
 * HS_ERR_NOMEM, or HS_ERR_IO on a short write. */
hs_status_t trace_perfetto_write(FILE *fp, const trace_t *tr, const char *source);
hs_status_t trace_chrome_json_write(FILE *fp, const trace_t *tr, const char *source);

/* The same to path, atomically (hs_afile); errors logged naming path. */
hs_status_t trace_perfetto_save(const char *path, const trace_t *tr, const char *source);
hs_status_t trace_chrome_json_save(const char *path, const trace_t *tr, const char *source);

#endif
