/* test_hcap_deep.c - libhcap_deep.so, a transport plugin as communication libraries load
 * theirs: it links libibverbs (here the fake one, test_hcap_fakeverbs.c) and calls it
 * directly, through its PLT, and hcap_vapp loads it with dlopen(RTLD_DEEPBIND). A DEEPBIND
 * object looks up its own scope (itself and its dependencies) before the global one, so
 * its calls bind to libibverbs ahead of the preloaded libhintcap; only the audit library
 * (libhintcap-audit.so) can send them to the wrappers. */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define DEEP_EXPORT __attribute__((visibility("default")))

int deep_run(long writes);

typedef struct {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
} deep_t;

static int deep_open(deep_t *d)
{
    struct ibv_device **list;
    struct ibv_qp_init_attr init;
    int n = 0;

    list = ibv_get_device_list(&n);
    if (!list || n == 0)
        return -1;
    d->ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    if (!d->ctx || !(d->pd = ibv_alloc_pd(d->ctx)) ||
        !(d->cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0)))
        return -1;
    memset(&init, 0, sizeof(init));
    init.send_cq = init.recv_cq = d->cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 64;
    init.cap.max_send_sge = 1;
    d->qp = ibv_create_qp(d->pd, &init);
    return d->qp ? 0 : -1;
}

static void deep_close(deep_t *d)
{
    if (d->qp)
        ibv_destroy_qp(d->qp);
    if (d->cq)
        ibv_destroy_cq(d->cq);
    if (d->pd)
        ibv_dealloc_pd(d->pd);
    if (d->ctx)
        ibv_close_device(d->ctx);
}

/* One signalled WRITE of 256 B and its completion, through the inline ibv_post_send and
 * ibv_poll_cq (the context's ops). */
static int deep_write(deep_t *d, uint64_t wr_id)
{
    struct ibv_sge sge = {0, 256, 0};
    struct ibv_send_wr wr, *bad;
    struct ibv_wc wc;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (ibv_post_send(d->qp, &wr, &bad) != 0)
        return -1;
    return ibv_poll_cq(d->cq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* Open the device, post writes WRITEs on one QP, close; 0 when all completed. */
DEEP_EXPORT int deep_run(long writes)
{
    deep_t d;
    long i;
    int rc = -1;

    memset(&d, 0, sizeof(d));
    if (deep_open(&d) != 0) {
        fprintf(stderr, "deep: set-up failed\n");
        goto out;
    }
    for (i = 0; i < writes; i++)
        if (deep_write(&d, (uint64_t)i) != 0) {
            fprintf(stderr, "deep: write %ld failed\n", i);
            goto out;
        }
    rc = 0;
out:
    deep_close(&d);
    return rc;
}
