/* sweep_probe.c - doctor's check of the CUDA sweep engine (sweep_probe.h). */
#include "sweep/sweep_probe.h"

#include <stdio.h>

void sweep_probe_cuda(hs_probe_t *c)
{
    hs_probe_init(c, "sweep cuda", "hintsim sweep --engine cuda",
                  "nvidia-cuda-toolkit, then reconfigure and rebuild");
    c->ok = HS_SWEEP_CUDA_BUILT;
    snprintf(c->detail, sizeof(c->detail), "%s", HS_SWEEP_CUDA_WHY);
}
