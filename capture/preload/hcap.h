/* hcap.h - libhintcap's process-wide capture state, shared by its hooks and its writer.
 *
 * An LD_PRELOAD interposer is entered from the application's verbs calls with no handle of
 * its own, so its state is one process-wide object, hcap_g, and nothing else is global.
 * Lifecycle: hcap_start (at the first ibv_open_device) -> hooks record into per-thread
 * rings -> the writer thread matches and writes -> hcap_stop (exit, fatal signal) flushes
 * and closes the trace. Everything here is internal to libhintcap (hidden symbols).
 */
#ifndef HCAP_H
#define HCAP_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "capture/preload/hcap_clock.h"
#include "capture/preload/hcap_config.h"
#include "capture/preload/hcap_map.h"
#include "capture/preload/hcap_match.h"
#include "capture/preload/hcap_ring.h"
#include "traces/trace.h"

#define HCAP_MAX_CTX 64

typedef enum {
    HCAP_OFF = 0,      /* not started: hooks pass through */
    HCAP_RUNNING = 1,  /* recording */
    HCAP_STOPPING = 2, /* final flush requested */
    HCAP_DISABLED = 3, /* could not start (unwritable DIR, no memory) or forked child */
} hcap_state_t;

/* The real libibverbs functions the hooks need beyond the ops they wrap (a table so the
 * unit tests can hand in a provider double). Any entry may be NULL. */
typedef struct {
    int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
    int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                    struct ibv_qp_init_attr *init);
    struct ibv_qp_ex *(*qp_to_qp_ex)(struct ibv_qp *qp);
    const char *(*device_name)(struct ibv_device *dev);
} hcap_real_t;

/* One opened device context and the provider's operations we replaced. */
typedef struct {
    _Atomic(struct ibv_context *) ctx; /* NULL = free slot */
    uint32_t index;
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
    int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
    struct ibv_qp *(*create_qp_ex)(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr);
    struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *attr);
} hcap_ctx_t;

/* The provider's extended-WR functions of one QP, saved before we swapped them. */
typedef struct {
    void (*wr_atomic_cmp_swp)(struct ibv_qp_ex *, uint32_t, uint64_t, uint64_t, uint64_t);
    void (*wr_atomic_fetch_add)(struct ibv_qp_ex *, uint32_t, uint64_t, uint64_t);
    void (*wr_rdma_read)(struct ibv_qp_ex *, uint32_t, uint64_t);
    void (*wr_rdma_write)(struct ibv_qp_ex *, uint32_t, uint64_t);
    void (*wr_rdma_write_imm)(struct ibv_qp_ex *, uint32_t, uint64_t, __be32);
    void (*wr_send)(struct ibv_qp_ex *);
    void (*wr_send_imm)(struct ibv_qp_ex *, __be32);
    void (*wr_send_inv)(struct ibv_qp_ex *, uint32_t);
    void (*wr_set_inline_data)(struct ibv_qp_ex *, void *, size_t);
    void (*wr_set_inline_data_list)(struct ibv_qp_ex *, size_t, const struct ibv_data_buf *);
    void (*wr_set_sge)(struct ibv_qp_ex *, uint32_t, uint64_t, uint32_t);
    void (*wr_set_sge_list)(struct ibv_qp_ex *, size_t, const struct ibv_sge *);
    void (*wr_start)(struct ibv_qp_ex *);
    int (*wr_complete)(struct ibv_qp_ex *);
    void (*wr_abort)(struct ibv_qp_ex *);
} hcap_qpx_ops_t;

/* A tracked QP. */
typedef struct {
    struct ibv_qp *qp;
    uint32_t index;     /* trace_rec_t.qp */
    uint32_t ctx_index;
    uint32_t qp_num;
    int sig_all;        /* sq_sig_all: every WR signalled */
    struct ibv_qp_ex *qpx; /* non-NULL when the extended WR API is recorded (batch set) */
    hcap_qpx_ops_t orig;
    hcap_ev_t *batch;   /* WRs between wr_start and wr_complete */
    uint32_t batch_n, batch_cap;
    uint64_t batch_t_ns;
} hcap_qp_t;

/* A tracked extended CQ and the provider's polling functions. */
typedef struct {
    struct ibv_cq_ex *cq;
    uint32_t ctx_index;
    int have_qp_num;
    int (*start_poll)(struct ibv_cq_ex *, struct ibv_poll_cq_attr *);
    int (*next_poll)(struct ibv_cq_ex *);
    enum ibv_wc_opcode (*read_opcode)(struct ibv_cq_ex *);
    uint32_t (*read_qp_num)(struct ibv_cq_ex *);
} hcap_cq_t;

/* QP numbers of completions that no tracked QP posted listed in the summary (at most). */
#define HCAP_OUTSIDE_QPNS 16

/* What a process saw, written at exit next to its trace (<trace>.summary.json) so that
 * `capture run` can say what was and what was not captured. */
typedef struct {
    uint64_t qps_seen;      /* QPs tracked: created through the wrappers, or adopted */
    uint64_t qps_posting;   /* of them, with at least one WR through the hooks */
    uint64_t wrs_posted;    /* WRs recorded (trace records) */
    uint64_t wrs_completed; /* of them, with a completion time */
    uint64_t dropped;       /* the trace header's dropped */
    uint64_t outside_comps; /* send completions of QPs that posted nothing through the hooks */
    uint32_t outside_qps;   /* such QPs (at least, when outside_more) */
    int outside_more;       /* more QPs than outside_qpn could list */
    uint32_t outside_n;     /* entries of outside_qpn */
    uint32_t outside_qpn[HCAP_OUTSIDE_QPNS];
} hcap_summary_t;

typedef struct {
    _Atomic int state;      /* hcap_state_t */
    _Atomic uint32_t gen;   /* bumped at each start: stale thread rings are not reused */
    hcap_config_t cfg;
    int cfg_loaded;         /* cfg read at library load (environment at process start) */
    char cfg_warn[1024];    /* what was wrong with it, printed once at hcap_start */
    hcap_real_t real;
    pthread_mutex_t lock;   /* rings list, maps' writers, contexts, header info */
    hcap_ring_t *rings;
    pthread_key_t ring_key;
    int key_made;
    hcap_ctx_t ctxs[HCAP_MAX_CTX];
    /* ibv_qp * -> hcap_qp_t *, read on the post path and by the wr_* wrappers of that QP
     * only: the application may not use a QP it destroys, so its hcap_qp_t is freed then */
    hcap_map_t qps;
    /* (ctx index + 1) << 32 | qp_num -> the QP's trace index + 1: a number, not the object,
     * since any thread may poll a completion of a QP that another one is destroying */
    hcap_map_t qpns;
    hcap_map_t cqs;         /* ibv_cq_ex * -> hcap_cq_t * */
    _Atomic uint32_t next_qp;
    uint32_t qp_base;           /* next_qp when this capture started */
    _Atomic uint32_t ctx_hwm;   /* slots in use are below this */
    _Atomic uint64_t lost;      /* WRs/completions the hooks could not record */
    /* send completions of QP numbers no hook tracks (posted outside libibverbs) */
    _Atomic uint64_t outside_comps;
    _Atomic uint32_t outside_qpn[HCAP_OUTSIDE_QPNS]; /* qp_num + 1; 0 = free */
    _Atomic uint32_t outside_more; /* completions of QP numbers past a full list */
    /* writer side (writer thread only, after start) */
    pthread_t writer;
    int writer_started;
    int writer_cpu;         /* the CPU the writer was pinned to (HINTCAP_WRITER_CPU), -1 */
    _Atomic int writer_done;
    hcap_match_t *match;
    hcap_clock_t clock;     /* the events' stamps to CLOCK_MONOTONIC ns (hcap_clock.h) */
    hcap_emit_fn emit;      /* test override of the file sink, else NULL */
    void *emit_arg;
    trace_writer_t *tw;
    int sink_failed;
    uint64_t records;
    uint64_t completed;     /* records with a completion time */
    hcap_summary_t summary; /* filled by the writer at its end */
    hcap_summary_t retired; /* the shares of the QPs the matcher freed (writer thread) */
    char host[64];
    char run_id[64];        /* HINTCAP_RUN (capture run's), copied into the summary */
    uint64_t dropped;       /* events lost: rings full, matcher out of memory */
    char path[1200];
    /* header information */
    char device[64];
    char firmware[64];
    trace_mem_t mem;
    int rank;
    struct sigaction old_sa[NSIG];
    int sa_installed;
} hcap_t;

extern hcap_t hcap_g;

/* Start capturing (idempotent; thread-safe). emit, when non-NULL, receives the records
 * instead of a trace file (unit tests). On an unwritable DIR prints one warning and
 * disables capture; the application is never stopped. */
void hcap_start(hcap_t *h, const hcap_real_t *real, hcap_emit_fn emit, void *arg);
/* Flush everything, write the trace, stop the writer. Safe to call when not running.
 * final: the process is ending (no restart); otherwise a later hcap_start may follow. */
void hcap_stop(hcap_t *h, int final);
/* The calling thread's ring (created on first use), or NULL when out of memory. */
hcap_ring_t *hcap_ring_new_for_thread(hcap_t *h);

/* Fill in the header's device and firmware from an opened context (first one wins). */
void hcap_note_device(hcap_t *h, struct ibv_context *ctx);
void hcap_note_mem(hcap_t *h, trace_mem_t mem);

static inline int hcap_running(const hcap_t *h)
{
    return atomic_load_explicit(&h->state, memory_order_relaxed) == HCAP_RUNNING;
}

/* The calling thread's ring for this capture generation. */
extern __thread hcap_ring_t *hcap_t_ring __attribute__((tls_model("initial-exec")));
extern __thread uint32_t hcap_t_gen __attribute__((tls_model("initial-exec")));

static inline hcap_ring_t *hcap_ring_get(hcap_t *h)
{
    if (__builtin_expect(hcap_t_ring != NULL &&
                         hcap_t_gen == atomic_load_explicit(&h->gen, memory_order_relaxed), 1))
        return hcap_t_ring;
    return hcap_ring_new_for_thread(h);
}

/* ---- hooks (hcap_hooks.c) ---- */

/* Track an opened context: swap its post_send/poll_cq and create_qp_ex/create_cq_ex. */
void hcap_ctx_attach(hcap_t *h, struct ibv_context *ctx);
/* Forget a context before it is closed. */
void hcap_ctx_detach(hcap_t *h, struct ibv_context *ctx);
/* Track a QP created with these attributes (attr_ex may be NULL for ibv_create_qp). */
hcap_qp_t *hcap_qp_attach(hcap_t *h, struct ibv_qp *qp, int sig_all, uint32_t max_send_wr,
                          const struct ibv_qp_init_attr_ex *attr_ex);
/* Forget a QP that is about to be destroyed (and free its hcap_qp_t); what is pending
 * never completes. */
void hcap_qp_detach(hcap_t *h, struct ibv_qp *qp);
/* ibv_destroy_qp: forget qp, then destroy(qp). The QP leaves the maps before the provider
 * frees it, so a QP created meanwhile at the same address is not forgotten in its place;
 * if destroy fails, qp is tracked again as it was. Returns destroy's status. */
int hcap_qp_destroy(hcap_t *h, struct ibv_qp *qp, int (*destroy)(struct ibv_qp *qp));
/* Track an extended CQ (swap start_poll/next_poll). */
void hcap_cq_attach(hcap_t *h, struct ibv_cq_ex *cq, int have_qp_num);
void hcap_cq_detach(hcap_t *h, struct ibv_cq *cq);
/* ibv_destroy_cq: as hcap_qp_destroy, for a CQ. */
int hcap_cq_destroy(hcap_t *h, struct ibv_cq *cq, int (*destroy)(struct ibv_cq *cq));
/* The tracked context slot of ctx, or NULL. */
hcap_ctx_t *hcap_ctx_find(hcap_t *h, const struct ibv_context *ctx);

/* ---- extended API (hcap_qpx.c) ---- */

/* The wrappers look their QP or CQ up in hcap_g's maps, so they are swapped in only once it
 * is there and swapped out before it leaves (both under hcap_g.lock): a wrapper always
 * finds its object. */
/* Swap hq->qpx's wr_* functions for recording ones, saving the provider's in hq->orig. */
void hcap_qpx_swap(hcap_qp_t *hq);
/* Put the provider's wr_* functions back. */
void hcap_qpx_unswap(hcap_qp_t *hq);
/* Swap an extended CQ's start_poll/next_poll, saving the provider's in hc. */
void hcap_cqx_swap(hcap_cq_t *hc, struct ibv_cq_ex *cq);
/* Put the provider's start_poll/next_poll back (if they were swapped). */
void hcap_cqx_unswap(hcap_cq_t *hc);
/* Push a completion event (status, wr_id) of QP number qp_num on context ctx_index. */
void hcap_record_comp(hcap_t *h, uint32_t ctx_index, uint32_t qp_num, uint64_t wr_id,
                      uint8_t status, uint64_t t_ns);

#endif
