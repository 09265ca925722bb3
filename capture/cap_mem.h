/* cap_mem.h - buffer memory kinds behind one ops table: host (malloc'ed, ibv_reg_mr) and
 * cuda (cudaMalloc, registered through dmabuf or peer memory; built only with CUDA).
 *
 * A kind allocates, registers with a PD, and frees. Registration failures are logged
 * saying every method tried and why. GPU memory cannot be polled by the CPU, so a kind
 * says whether the receiver must use write-with-immediate completions instead.
 */
#ifndef HS_CAP_MEM_H
#define HS_CAP_MEM_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "common/hs_status.h"

typedef struct cap_mem_ops {
    const char *name;    /* "host", "cuda" */
    int cpu_visible;     /* 1: the CPU can read the buffer (poll its last byte) */
    /* Allocate len bytes (zeroed); *out is the device or host address. */
    hs_status_t (*alloc)(size_t len, void **out);
    /* Register [buf, buf+len) with pd for local write and remote write/read. */
    hs_status_t (*reg)(struct ibv_pd *pd, void *buf, size_t len, struct ibv_mr **out);
    void (*free)(void *buf);
    /* Copy len bytes from host memory src into the buffer at off (setup only). */
    hs_status_t (*fill)(void *buf, size_t off, const void *src, size_t len);
} cap_mem_ops_t;

extern const cap_mem_ops_t cap_mem_host_ops;

/* Find a kind by name. "cuda" in a build without CUDA: HS_ERR_UNSUPPORTED, logged saying
 * the build lacks CUDA and how to get it; unknown names: HS_ERR_USAGE. */
hs_status_t cap_mem_find(const char *name, const cap_mem_ops_t **out);

#ifdef HINTSIM_HAVE_CUDA
extern const cap_mem_ops_t cap_mem_cuda_ops;

/* The dmabuf export step on its own (for tests on a GPU machine without a NIC): fd of a
 * dmabuf for [buf, buf+len) via cuMemGetHandleForAddressRange, or a negative status,
 * logged with the CUDA error. The caller closes the fd. */
hs_status_t cap_mem_cuda_dmabuf_fd(void *buf, size_t len, int *fd_out);
#endif

#endif
