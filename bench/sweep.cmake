# sweep: points per second with 1 and 2 MPI ranks (and 1 and 2 local workers).
hs_add_bench(bench_sweep SOURCES bench_sweep.c ARGS $<TARGET_FILE:hintsim> ${PROJECT_SOURCE_DIR})
# sweep --engine cuda: a 10 M-message trace x 4096 points on the GPU against the CPU sweep on
# every core, in one run (where sweep/cuda.cmake built the engine; run on the GPU machine).
if(HINTSIM_HAVE_CUDA_SWEEP)
  hs_add_bench(bench_sweep_cuda SOURCES bench_sweep_cuda.c LIBS hs_sweep_cuda hs_model hs_trace
    ARGS 10000000 4096)
endif()
