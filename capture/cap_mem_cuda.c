/* cap_mem_cuda.c - GPU memory for capture and validate (built only when CMake found CUDA).
 *
 * Buffers come from cudaMalloc. Registration tries, in order: dmabuf (the driver exports the
 * range with cuMemGetHandleForAddressRange and ibv_reg_dmabuf_mr registers the fd), then
 * plain ibv_reg_mr (works where a peer-memory module such as nvidia-peermem is loaded). When
 * both fail the error says which were tried and why: soft-RoCE, for one, cannot register
 * GPU memory at all.
 *
 * The driver API entry point is fetched through the runtime (cudaGetDriverEntryPointByVersion)
 * and the runtime is linked statically, so hintsim starts on machines without libcuda.so.1
 * (no GPU driver) and only --mem cuda fails there, with a message.
 */
#include "capture/cap_mem.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef CUresult (*get_handle_fn_t)(void *, CUdeviceptr, size_t, CUmemRangeHandleType,
                                    unsigned long long);

#define CUDA_ALIGN ((size_t)2 << 20)

static size_t round_len(size_t len)
{
    size_t n = len ? len : 1;

    return (n + CUDA_ALIGN - 1) / CUDA_ALIGN * CUDA_ALIGN;
}

static hs_status_t cuda_alloc(size_t len, void **out)
{
    void *p = NULL;
    cudaError_t ce = cudaMalloc(&p, round_len(len));

    if (ce != cudaSuccess) {
        hs_log_error("--mem cuda: cudaMalloc of %zu bytes failed: %s (%s)", round_len(len),
                     cudaGetErrorString(ce), cudaGetErrorName(ce));
        return HS_ERR_ENV;
    }
    ce = cudaMemset(p, 0, round_len(len));
    if (ce != cudaSuccess) {
        hs_log_error("--mem cuda: cudaMemset failed: %s", cudaGetErrorString(ce));
        cudaFree(p);
        return HS_ERR_ENV;
    }
    *out = p;
    return HS_OK;
}

hs_status_t cap_mem_cuda_dmabuf_fd(void *buf, size_t len, int *fd_out)
{
    void *fnp = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t ce;
    CUresult cr;
    int fd = -1;

    ce = cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fnp, 12000,
                                          cudaEnableDefault, &q);
    if (ce != cudaSuccess || q != cudaDriverEntryPointSuccess || !fnp) {
        hs_log_error("cuMemGetHandleForAddressRange is not available from the CUDA driver "
                     "(%s)", ce != cudaSuccess ? cudaGetErrorString(ce) : "symbol not found");
        return HS_ERR_UNSUPPORTED;
    }
    cr = ((get_handle_fn_t)fnp)(&fd, (CUdeviceptr)buf, round_len(len),
                                CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (cr != CUDA_SUCCESS || fd < 0) {
        hs_log_error("cuMemGetHandleForAddressRange(DMA_BUF_FD) failed: CUresult %d", (int)cr);
        return HS_ERR_UNSUPPORTED;
    }
    *fd_out = fd;
    return HS_OK;
}

static hs_status_t cuda_reg(struct ibv_pd *pd, void *buf, size_t len, struct ibv_mr **out)
{
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    char why_dmabuf[160] = "dmabuf export failed (see above)";
    struct ibv_mr *mr = NULL;
    int fd = -1;

    if (cap_mem_cuda_dmabuf_fd(buf, len, &fd) == HS_OK) {
        mr = ibv_reg_dmabuf_mr(pd, 0, round_len(len), (uint64_t)(uintptr_t)buf, fd, access);
        if (!mr)
            snprintf(why_dmabuf, sizeof(why_dmabuf), "ibv_reg_dmabuf_mr: %s", strerror(errno));
        close(fd); /* the registration holds its own reference to the dmabuf */
        if (mr) {
            *out = mr;
            return HS_OK;
        }
    }
    mr = ibv_reg_mr(pd, buf, round_len(len), access);
    if (mr) {
        *out = mr;
        return HS_OK;
    }
    hs_log_error("--mem cuda: cannot register GPU memory with the verbs device: tried dmabuf "
                 "(%s), then ibv_reg_mr/peer memory (%s); soft-RoCE (rxe) cannot register GPU "
                 "memory, a NIC with dmabuf or nvidia-peermem support is needed",
                 why_dmabuf, strerror(errno));
    return HS_ERR_ENV;
}

static void cuda_free(void *buf)
{
    cudaFree(buf);
}

static hs_status_t cuda_fill(void *buf, size_t off, const void *src, size_t len)
{
    cudaError_t ce = cudaMemcpy((char *)buf + off, src, len, cudaMemcpyHostToDevice);

    if (ce != cudaSuccess) {
        hs_log_error("--mem cuda: cudaMemcpy failed: %s", cudaGetErrorString(ce));
        return HS_ERR_ENV;
    }
    return HS_OK;
}

const cap_mem_ops_t cap_mem_cuda_ops = {
    .name = "cuda", .cpu_visible = 0, .alloc = cuda_alloc, .reg = cuda_reg,
    .free = cuda_free, .fill = cuda_fill,
};
