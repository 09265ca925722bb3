# sweep: points per second with 1 and 2 MPI ranks (and 1 and 2 local workers).
hs_add_bench(bench_sweep SOURCES bench_sweep.c ARGS $<TARGET_FILE:hintsim> ${PROJECT_SOURCE_DIR})
