/* hcap_preload.c - the symbols libhintcap.so exports: wrappers of the exported libibverbs
 * constructors and destructors (found with dlsym(RTLD_NEXT)). Everything else in the
 * library is hidden (libhintcap.map).
 *
 * ibv_open_device starts the capture (once per process) and swaps the context's ops;
 * ibv_create_qp tracks plain QPs (extended QPs and CQs are caught through the swapped
 * create_qp_ex / create_cq_ex ops); the destroy/close wrappers forget objects before the
 * provider frees them (a failed destroy tracks the object again). ibv_reg_dmabuf_mr marks
 * the process's memory kind as CUDA (dmabuf is how GPU memory is registered).
 */
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include "capture/preload/hcap.h"

#define HCAP_EXPORT __attribute__((visibility("default")))

typedef struct {
    struct ibv_context *(*open_device)(struct ibv_device *);
    int (*close_device)(struct ibv_context *);
    struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
    int (*destroy_qp)(struct ibv_qp *);
    int (*destroy_cq)(struct ibv_cq *);
    struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);
} hcap_next_t;

static hcap_next_t next;

static void *next_sym(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

__attribute__((constructor)) static void hcap_load(void)
{
    /* The environment as the process started: a later change is the application's. */
    hcap_config_load(&hcap_g.cfg, hcap_g.cfg_warn, sizeof(hcap_g.cfg_warn));
    hcap_g.cfg_loaded = 1;
    next.open_device = (struct ibv_context * (*)(struct ibv_device *)) next_sym("ibv_open_device");
    next.close_device = (int (*)(struct ibv_context *))next_sym("ibv_close_device");
    next.create_qp = (struct ibv_qp * (*)(struct ibv_pd *, struct ibv_qp_init_attr *))
        next_sym("ibv_create_qp");
    next.destroy_qp = (int (*)(struct ibv_qp *))next_sym("ibv_destroy_qp");
    next.destroy_cq = (int (*)(struct ibv_cq *))next_sym("ibv_destroy_cq");
    next.reg_dmabuf_mr = (struct ibv_mr * (*)(struct ibv_pd *, uint64_t, size_t, uint64_t,
                                               int, int)) next_sym("ibv_reg_dmabuf_mr");
}

__attribute__((destructor)) static void hcap_unload(void)
{
    hcap_stop(&hcap_g, 1);
}

static const char *device_name(struct ibv_device *dev)
{
    return ibv_get_device_name(dev);
}

HCAP_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
    static const hcap_real_t real = {
        .query_device = ibv_query_device,
        .query_qp = ibv_query_qp,
        .qp_to_qp_ex = ibv_qp_to_qp_ex,
        .device_name = device_name,
    };
    struct ibv_context *ctx;

    if (!next.open_device)
        return NULL;
    ctx = next.open_device(dev);
    if (!ctx)
        return NULL;
    hcap_start(&hcap_g, &real, NULL, NULL);
    if (hcap_running(&hcap_g)) {
        hcap_ctx_attach(&hcap_g, ctx);
        hcap_note_device(&hcap_g, ctx);
    }
    return ctx;
}

HCAP_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
    hcap_ctx_detach(&hcap_g, ctx);
    return next.close_device ? next.close_device(ctx) : -1;
}

HCAP_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
    struct ibv_qp *qp = next.create_qp ? next.create_qp(pd, attr) : NULL;

    if (qp && hcap_running(&hcap_g) && hcap_ctx_find(&hcap_g, qp->context))
        hcap_qp_attach(&hcap_g, qp, attr->sq_sig_all, attr->cap.max_send_wr, NULL);
    return qp;
}

HCAP_EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
    return next.destroy_qp ? hcap_qp_destroy(&hcap_g, qp, next.destroy_qp) : -1;
}

HCAP_EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    return next.destroy_cq ? hcap_cq_destroy(&hcap_g, cq, next.destroy_cq) : -1;
}

HCAP_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
                                             uint64_t iova, int fd, int access)
{
    struct ibv_mr *mr =
        next.reg_dmabuf_mr ? next.reg_dmabuf_mr(pd, offset, length, iova, fd, access) : NULL;

    if (mr && hcap_running(&hcap_g))
        hcap_note_mem(&hcap_g, TRACE_MEM_CUDA);
    return mr;
}
