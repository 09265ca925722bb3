hs_add_bench(bench_sim SOURCES bench_sim.c LIBS hs_sim hs_model hs_trace ${SIMGRID_LIB})
