/* hcap_match.h - turn libhintcap's event stream into trace records (writer side).
 *
 * Posts are queued per QP in post-time order; a completion closes the first pending WR
 * of its QP that it can belong to (same wr_id, signalled or an error, posted before the
 * completion was polled). The unsignalled WRs queued before it completed with it: a send
 * queue completes in order, so they get its time and TRACE_F_IMPLICIT. A completion whose
 * post has not been seen yet (another thread's ring) waits; one whose post was lost
 * (later posts exist) is counted as unmatched. The first cold_n WRs of each QP get
 * TRACE_F_COLD. Single-threaded: only the writer thread calls these.
 *
 * A QP's entry (its queues and counters) lives from its first event until the sweep after
 * the pass that follows the one which met its end (HCAP_EV_GONE); its figures are then
 * handed to the retire callback, so memory follows the live QPs, not all QPs ever made.
 */
#ifndef HCAP_MATCH_H
#define HCAP_MATCH_H

#include <stdint.h>

#include "capture/preload/hcap_ring.h"
#include "common/hs_status.h"
#include "traces/trace.h"

/* Receives finished records, n >= 1 of them in trace order (a completion's implicit WRs
 * and its own come in one call); recs is only valid during the call. */
typedef void (*hcap_emit_fn)(void *arg, const trace_rec_t *recs, size_t n);

typedef struct hcap_match hcap_match_t;

/* A matcher that flags the first cold_n WRs per QP and hands records to emit(arg, ...). */
hs_status_t hcap_match_new(uint64_t cold_n, hcap_emit_fn emit, void *arg, hcap_match_t **out);
/* Consume one event. Returns HS_ERR_NOMEM if a queue could not grow (the event is then
 * lost and counted in hcap_match_lost). */
hs_status_t hcap_match_event(hcap_match_t *m, const hcap_ev_t *ev);
/* Emit every WR still pending with t_done = TRACE_TIME_UNKNOWN (end of the capture). */
void hcap_match_flush(hcap_match_t *m);
/* Completions that matched no post (their post was lost), and events lost to memory. */
uint64_t hcap_match_unmatched(const hcap_match_t *m);
uint64_t hcap_match_lost(const hcap_match_t *m);

/* What one QP (trace_rec_t.qp index) saw: WRs posted through the hooks, completions polled,
 * its QP number (carried by completion events; 0 until one arrived). */
typedef struct {
    uint64_t posted;
    uint64_t comps;
    uint32_t qp_num;
} hcap_match_qp_t;

/* Receives the figures of a QP whose entry is freed (once per QP; writer thread). */
typedef void (*hcap_match_retire_fn)(void *arg, const hcap_match_qp_t *qp);
void hcap_match_on_retire(hcap_match_t *m, hcap_match_retire_fn fn, void *arg);

/* Entries of the QP table, live and free; the figures of entry i (zeros for a free one),
 * for the QPs not yet retired. */
size_t hcap_match_n_qps(const hcap_match_t *m);
void hcap_match_qp_stats(const hcap_match_t *m, size_t i, hcap_match_qp_t *out);
/* Call after each pass over all the rings: frees the entries of QPs that ended two passes
 * ago or more (by then every ring has given their last events). */
void hcap_match_sweep(hcap_match_t *m);
/* Bytes the matcher holds (table, queues, bookkeeping), for tests. */
size_t hcap_match_mem_bytes(const hcap_match_t *m);
void hcap_match_free(hcap_match_t *m);

#endif
