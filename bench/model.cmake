# model/: replay rate for one hint over 10 M messages, and recommend's wall time with all
# auto candidates (reported with the core count). Goals: >= 50 M msgs/s per core, <= 10 s.
hs_add_bench(bench_model SOURCES bench_model.c LIBS hs_model hs_trace ARGS 10000000
  SMOKE_ARGS 20000)
