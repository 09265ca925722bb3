/* test_hcap_fake.h - a minimal in-process verbs provider double for libhintcap's tests and
 * benchmark: a verbs_context whose ops complete every signalled send WR at once into its
 * CQ (in order), and extended QP/CQ objects with working wr_* and start/next/end_poll. */
#ifndef TEST_HCAP_FAKE_H
#define TEST_HCAP_FAKE_H

#include <infiniband/verbs.h>
#include <stdint.h>

#define FAKE_BAD_WRID 0xbadULL /* post_send fails at a WR with this wr_id */

typedef struct {
    struct ibv_cq_ex cqx; /* starts with the plain ibv_cq fields */
    struct ibv_wc *wc;    /* queued completions */
    uint32_t head, n, cap;
    uint32_t cur_qpn;     /* the entry start/next_poll exposed */
    uint64_t wc_flags;    /* as created */
} fake_cq_t;

typedef struct {
    struct ibv_qp_ex qpx; /* qp_base first */
    fake_cq_t *send_cq;
    int sig_all;
    uint64_t posted;
    /* wr_* batch state */
    uint64_t batch_wr_id[64];
    uint32_t batch_flags[64];
    uint32_t batch_n;
} fake_qp_t;

typedef struct {
    struct verbs_context vctx;
    uint64_t posted; /* WRs the provider accepted */
    uint64_t skip_cqe; /* when non-zero, post_send produces no completions (benchmark) */
    void *qp_mem;      /* when set, the next create_qp_ex builds its QP here (an address
                          reused), and clears it */
} fake_ctx_t;

/* Make a context with ops set (post_send, poll_cq, create_qp_ex, create_cq_ex). */
fake_ctx_t *fake_ctx_new(void);
void fake_ctx_free(fake_ctx_t *f);
fake_cq_t *fake_cq_new(fake_ctx_t *f, uint32_t cap);
void fake_cq_free(fake_cq_t *cq);
/* A plain QP (what ibv_create_qp returns) with qp_num. */
fake_qp_t *fake_qp_new(fake_ctx_t *f, fake_cq_t *cq, uint32_t qp_num, int sig_all);
/* The same, built in memory the caller owns (q must not be freed with fake_qp_free). */
void fake_qp_init(fake_qp_t *q, fake_ctx_t *f, fake_cq_t *cq, uint32_t qp_num, int sig_all);
void fake_qp_free(fake_qp_t *qp);
/* Queue a completion by hand (e.g. an error). */
void fake_cq_push(fake_cq_t *cq, uint32_t qp_num, uint64_t wr_id, enum ibv_wc_status st,
                  enum ibv_wc_opcode op);

#endif
