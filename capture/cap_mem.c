/* cap_mem.c - host memory kind and the kind lookup (see cap_mem.h). */
#include "capture/cap_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static hs_status_t host_alloc(size_t len, void **out)
{
    void *p = NULL;

    if (posix_memalign(&p, 4096, len ? len : 1) != 0) {
        hs_log_error("cannot allocate %zu bytes of host memory for the message buffers "
                     "(the largest of --sizes sets them)", len);
        return HS_ERR_NOMEM;
    }
    memset(p, 0, len);
    *out = p;
    return HS_OK;
}

static hs_status_t host_reg(struct ibv_pd *pd, void *buf, size_t len, struct ibv_mr **out)
{
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, len,
                                   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                       IBV_ACCESS_REMOTE_READ);

    if (!mr) {
        hs_log_error("ibv_reg_mr of %zu bytes of host memory failed: %s", len,
                     strerror(errno));
        return HS_ERR_ENV;
    }
    *out = mr;
    return HS_OK;
}

static void host_free(void *buf)
{
    free(buf);
}

static hs_status_t host_fill(void *buf, size_t off, const void *src, size_t len)
{
    memcpy((char *)buf + off, src, len);
    return HS_OK;
}

const cap_mem_ops_t cap_mem_host_ops = {
    .name = "host", .cpu_visible = 1, .alloc = host_alloc, .reg = host_reg,
    .free = host_free, .fill = host_fill,
};

hs_status_t cap_mem_find(const char *name, const cap_mem_ops_t **out)
{
    if (strcmp(name, "host") == 0) {
        *out = &cap_mem_host_ops;
        return HS_OK;
    }
    if (strcmp(name, "cuda") == 0) {
#ifdef HINTSIM_HAVE_CUDA
        *out = &cap_mem_cuda_ops;
        return HS_OK;
#else
        hs_log_error("--mem cuda: this build has no CUDA support (CMake did not find the "
                     "CUDA toolkit); install it (nvcc, e.g. /usr/local/cuda) and rebuild");
        return HS_ERR_UNSUPPORTED;
#endif
    }
    hs_log_error("--mem %s: unknown memory kind (host, cuda)", name);
    return HS_ERR_USAGE;
}
