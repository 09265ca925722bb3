/* trace_perfetto_walk.h - a trace's messages as the timeline the viewer exports draw
 * (trace_perfetto.h): every post and every known completion, in time order, with each QP's
 * count of messages in flight (posted, not yet completed) kept up to date. Both exports,
 * the Perfetto protobuf and the Chrome trace-event JSON, walk the trace through this. */
#ifndef HS_TRACE_PERFETTO_WALK_H
#define HS_TRACE_PERFETTO_WALK_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "traces/trace.h"

typedef struct {
    uint64_t t_ns;
    size_t rec; /* index into tr->recs */
} pf_pending_t;

typedef struct {
    const trace_t *tr;
    size_t *order;      /* record indices in post order; NULL when file order is */
    uint32_t *qps;      /* distinct QP indices, ascending; a QP's slot is its index here */
    size_t nqp;
    uint64_t *inflight; /* per slot: posted with a known completion, not completed yet */
    pf_pending_t *heap; /* pending completions, earliest first (ties: record order) */
    size_t nheap;
} pf_walk_t;

/* What a walk reports. post: record rec is posted (inflight already counts it when its
 * completion is known); done: record rec completes at pf_done_ns (inflight no longer
 * counts it). Events come in time order; at one time, completions before posts. */
typedef struct {
    void (*post)(void *ctx, const pf_walk_t *w, size_t rec, uint32_t slot);
    void (*done)(void *ctx, const pf_walk_t *w, size_t rec, uint32_t slot);
} pf_walk_ops_t;

/* Build the QP slots and the post order of tr. HS_ERR_NOMEM (w freed). */
hs_status_t pf_walk_init(pf_walk_t *w, const trace_t *tr);
void pf_walk_run(pf_walk_t *w, const pf_walk_ops_t *ops, void *ctx);
void pf_walk_free(pf_walk_t *w);

/* QP qp's slot (qp must be one of the trace's). */
uint32_t pf_walk_slot(const pf_walk_t *w, uint32_t qp);
/* When a record's slice ends: its completion, or its post for a completion before it (which
 * trace_rec_check refuses, drawn with no length). Only for known completions. */
uint64_t pf_done_ns(const trace_rec_t *r);
/* A whole export written to path through hs_afile (atomic), errors logged naming path. */
typedef hs_status_t (*pf_write_fn)(FILE *fp, const trace_t *tr, const char *source);
hs_status_t pf_save(const char *path, pf_write_fn write, const trace_t *tr, const char *source);
/* "LL", "BW" or "unknown" for the path bits of flags. */
const char *pf_path_str(uint16_t flags);

#endif
