# Trace format throughput: 10 M records written and read (streaming), next to memcpy.
hs_add_bench(bench_trace SOURCES bench_trace.c LIBS hs_trace ARGS 10000000 SMOKE_ARGS 20000)
