# model/: replay rate for one hint over 10 M messages, and recommend's wall time with all
# auto candidates (reported with the core count). Goals: >= 50 M msgs/s per core, <= 10 s.
hs_add_bench(bench_model SOURCES bench_model.c LIBS hs_model hs_trace ARGS 10000000
  SMOKE_ARGS 20000)
# --once (one replay per workload, for profilers) runs too, and a workload with a parameter set
add_test(NAME smoke_bench_model_once COMMAND ${CMAKE_COMMAND} -P ${HS_HOST_LINE_CHECK}
  $<TARGET_FILE:bench_model> --once 4096 20000 seed000 mixed cycle pingpong
         phased:gap_ns=1500000)
set_tests_properties(smoke_bench_model_once PROPERTIES LABELS unit TIMEOUT 300)
