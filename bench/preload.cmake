# libhintcap: added ns per posted WR / polled completion against a provider double, and
# drops at a paced 10 M WR/s (goals: <= 50 ns/WR, zero drops). The smoke test also wants
# both added costs as plain figures (a negative one is fine: a difference of two timings;
# an unsigned subtraction once wrapped around to 19 digits), the cost with every event kept
# (blocking rings), and the posting thread's own cost with the writer on another CPU (a
# figure; "-" where the process has one CPU).
hs_add_bench(bench_preload SOURCES bench_preload.c ${PROJECT_SOURCE_DIR}/tests/test_hcap_fake.c
  LIBS hs_hcap ARGS 5000000 SMOKE_ARGS 20000
  SMOKE_EXPECT "per posted WR +-?[0-9]?[0-9]?[0-9]?[0-9]\\.[0-9] ns/WR.*per polled completion +-?[0-9]?[0-9]?[0-9]?[0-9]?[0-9]\\.[0-9] ns/poll.*every WR kept +-?[0-9]+\\.[0-9] ns/WR.*posting thread alone +(-?[0-9]+\\.[0-9] ns/WR|- )")
