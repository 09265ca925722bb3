/* cap_probe.h - what capture, validate and calibrate need of this machine, probed for
 * `hintsim doctor` (common/hs_probe.h). Nothing is changed on the machine. */
#ifndef HS_CAP_PROBE_H
#define HS_CAP_PROBE_H

#include "common/hs_probe.h"

struct cJSON;

/* Verbs devices: ok when there is one; each device's limits and port 1 appended to the
 * JSON array devices ({"name", "firmware", "max_qp_wr", ..., "usable"}). */
void cap_probe_verbs(hs_probe_t *c, struct cJSON *devices);
/* The soft-RoCE kernel module (rdma_rxe) among this kernel's modules. */
void cap_probe_rxe_module(hs_probe_t *c);
/* The CUDA driver (libcuda.so.1, loaded with dlopen) and its GPUs, each appended to the
 * JSON array gpus ({"name", "memory_bytes", "dmabuf"}). */
void cap_probe_cuda(hs_probe_t *c, struct cJSON *gpus);
/* nvcc on $PATH or in /usr/local/cuda, for building the CUDA memory backend. */
void cap_probe_nvcc(hs_probe_t *c);

#endif
