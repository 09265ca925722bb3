/* sweep_probe.h - what `hintsim doctor` says of the sweep's engines (common/hs_probe.h). */
#ifndef HS_SWEEP_PROBE_H
#define HS_SWEEP_PROBE_H

#include "common/hs_probe.h"

/* `sweep --engine cuda`: built or not, and why (CMake's finding, sweep/cuda.cmake). Whether
 * a GPU is present is the CUDA check's. */
void sweep_probe_cuda(hs_probe_t *c);

#endif
