# libhintcap: added ns per posted WR / polled completion against a provider double, and
# drops at a paced 10 M WR/s (goals: <= 50 ns/WR, zero drops).
hs_add_bench(bench_preload SOURCES bench_preload.c ${PROJECT_SOURCE_DIR}/tests/test_hcap_fake.c
  LIBS hs_hcap ARGS 5000000 SMOKE_ARGS 20000)
