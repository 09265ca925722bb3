/* test_hcap_fakeverbs.c - a libibverbs.so.1 made of the provider double (test_hcap_fake.c),
 * so that a process on a host without a verbs device can open one, create QPs and post
 * through libhintcap exactly as through the real library: LD_LIBRARY_PATH puts it in front
 * of the system's copy for libhintcap and the test plugin alike. It exports, at the symbol
 * versions of rdma-core (test_hcap_fakeverbs.map; the loader insists on the versions
 * libhintcap was linked against), what libhintcap and test_hcap_deep.c call: one device,
 * contexts, PDs, CQs and plain QPs whose signalled WRs complete at once. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_hcap_fake.h"

#define FV_EXPORT __attribute__((visibility("default")))

static struct ibv_device g_dev = {.name = "fakeverbs0", .dev_name = "uverbs0"};

static fake_ctx_t *fake_of(struct ibv_context *ctx)
{
    return (fake_ctx_t *)((char *)ctx - offsetof(struct verbs_context, context));
}

FV_EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
    static struct ibv_device *list[] = {&g_dev, NULL};

    if (num)
        *num = 1;
    return list;
}

FV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
    (void)list; /* static */
}

FV_EXPORT const char *ibv_get_device_name(struct ibv_device *dev)
{
    return dev->name;
}

FV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
    fake_ctx_t *f = fake_ctx_new();

    if (!f)
        return NULL;
    f->vctx.context.device = dev;
    return &f->vctx.context;
}

FV_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
    fake_ctx_free(fake_of(ctx));
    return 0;
}

FV_EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
    (void)ctx;
    memset(attr, 0, sizeof(*attr));
    strcpy(attr->fw_ver, "0.0.1");
    return 0;
}

FV_EXPORT int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
                           struct ibv_qp_init_attr *init)
{
    (void)qp, (void)mask;
    memset(attr, 0, sizeof(*attr));
    memset(init, 0, sizeof(*init));
    return 0;
}

FV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
    return (struct ibv_qp_ex *)qp; /* fake_qp_t starts with its ibv_qp_ex */
}

FV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
    struct ibv_pd *pd = calloc(1, sizeof(*pd));

    if (pd)
        pd->context = ctx;
    return pd;
}

FV_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    free(pd);
    return 0;
}

FV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                       struct ibv_comp_channel *channel, int comp_vector)
{
    fake_cq_t *cq = fake_cq_new(fake_of(ctx), cqe > 0 ? (uint32_t)cqe : 1);

    (void)cq_context, (void)channel, (void)comp_vector;
    return cq ? (struct ibv_cq *)&cq->cqx : NULL;
}

FV_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    fake_cq_free((fake_cq_t *)cq);
    return 0;
}

FV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    static uint32_t next_qpn = 0x100;
    fake_qp_t *q = fake_qp_new(fake_of(pd->context), (fake_cq_t *)attr->send_cq,
                               __atomic_fetch_add(&next_qpn, 1, __ATOMIC_RELAXED),
                               attr->sq_sig_all);

    return q ? &q->qpx.qp_base : NULL;
}

FV_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
    fake_qp_free((fake_qp_t *)qp);
    return 0;
}

FV_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                           uint64_t iova, int fd, int access)
{
    (void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
    errno = EOPNOTSUPP;
    return NULL;
}
