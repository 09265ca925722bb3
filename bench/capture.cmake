# capture/: does the recommendation hold on a live device? bench_truth calibrates the
# soft-RoCE VM's rxe0, then recommends and validates every built-in workload and random
# mixes (a new seed every run) paced below the calibrated link, and prints regret, rank
# correlation and median |error| against their goals beside the measured noise
# (bench/README.md). `make run_bench_truth` (and `make bench`) runs the full version.
include(${PROJECT_SOURCE_DIR}/tests/vm/hs_add_vm_test.cmake)
hs_add_bench(bench_truth SOURCES bench_truth.c LIBS hs_common
  ARGS --hintsim $<TARGET_FILE:hintsim> --vm-dir ${HS_VM_DIR}
       --script ${CMAKE_CURRENT_SOURCE_DIR}/bench_truth.sh --cache ${HINTSIM_VM_CACHE}
       --out ${CMAKE_BINARY_DIR}/bench-truth --timeout 5400)
# The short version as a vm CI test: fails when a built-in workload misses a goal beyond the
# measured noise (tests/vm/bench-truth-check.sh runs bench_truth --table --gate).
hs_add_vm_test(vm_bench_truth SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/bench_truth.sh ARGS short
  TIMEOUT 2400 CHECK bench-truth-check.sh)
# Labels `vm` (CI runs it) and `truth` (`ctest -L truth` runs it alone).
set_tests_properties(vm_bench_truth PROPERTIES LABELS "vm;truth")
# The table's goals and gate on two fixed runs (no VM): one within the goals or the noise
# (exit 0), one with a workload beyond the noise on all three figures (the gate's message).
set(fx ${CMAKE_CURRENT_SOURCE_DIR}/bench_truth_fixture)
# truth_row_test(NAME FIXTURE REGEX): the table of fixture run FIXTURE must print a row that
# matches REGEX
function(truth_row_test name fixture regex)
  add_test(NAME ${name} COMMAND bench_truth --table ${fx}/${fixture})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 60 PASS_REGULAR_EXPRESSION
    "${regex}")
endfunction()
add_test(NAME smoke_bench_truth_table COMMAND ${CMAKE_COMMAND} -P ${HS_HOST_LINE_CHECK}
  $<TARGET_FILE:bench_truth> --table ${fx}/pass --gate)
add_test(NAME smoke_bench_truth_gate COMMAND bench_truth --table ${fx}/miss --gate)
set_tests_properties(smoke_bench_truth_table smoke_bench_truth_gate PROPERTIES LABELS unit
  TIMEOUT 60)
# pass/w-pingpong misses all three goals, each within its noise by one of the later rules:
# regret within the two classes' summed noise, no pair the device tells apart misordered,
# |error| within the goal plus the noise plus the 37.5% a drift probe's +60% explains (60 / 160);
# the probe's p99 drift (+120%) is shown in its own column, and joins nothing
truth_row_test(smoke_bench_truth_noise pass
  "pingpong +builtin +closed +600 +2\\.5 +nan% +\\+60\\.0% +\\+120% +- +4/4 +\\| 12\\.0 \\[0\\.0, 30\\.0\\] 15\\.0 noise +\\| 0/2 +\\| 0\\.30 \\[-0\\.50, 0\\.60\\] 0\\.95 noise +\\| 50\\.0 \\[45\\.0, 55\\.0\\] 5\\.0 noise")
# pass/w-wide: two sessions (regret 10.6 "worse" then 0.0 "best", |error| 38 then 10) judged
# on their mean with half their difference as noise; the tail column the mean of +10% and +30%
truth_row_test(smoke_bench_truth_sessions pass
  "wide +builtin +open +600 +2\\.5 +nan% +\\+0\\.0% +\\+20% +- +4/4 +\\| 5\\.3 \\[0\\.0, 14\\.2\\] 6\\.7 noise[^|]*\\| 0/5 +\\| 0\\.95 \\[0\\.90, 1\\.00\\] 0\\.95 ok +\\| 24\\.0 \\[8\\.0, 47\\.5\\] 16\\.0 noise +\\| worse / best")
# pass/w-coldstart: |error| 35 [30, 40] misses the goal plus the noise (15 + 4), but the
# repeated calibration's predictions (pred2.json: 150 against 200 on measured 148-152) move
# the median class by 16.7% of its measured p99, half the difference, which joins the noise;
# miss/w-coldstart is the same with the repeat failed (predict2=1): no cal, a MISS
truth_row_test(smoke_bench_truth_cal pass
  "coldstart +builtin +closed +600 +2\\.5 +100% +\\+0\\.0% +\\+5% +16\\.7% +3/3 +\\| 0\\.0 \\[0\\.0, 2\\.0\\] 4\\.0 ok[^|]*\\| 0/0 +\\| n/a +\\| 35\\.0 \\[30\\.0, 40\\.0\\] 4\\.0 noise")
truth_row_test(smoke_bench_truth_cal_miss miss
  "coldstart +builtin +closed +600 +2\\.5 +100% +\\+0\\.0% +\\+5% +- +3/3 [^\n]*35\\.0 \\[30\\.0, 40\\.0\\] 4\\.0 MISS")
# pass/w-phased: two sessions that miss by the same |error| (50) in opposite directions
# (measured 150 then 450 against 225 predicted): half of how far they measured the classes
# apart, 50% (300 / 600), joins the noise, not half the difference of their |error|s (0)
truth_row_test(smoke_bench_truth_sessions_apart pass
  "phased +builtin +closed +600 +2\\.5 +100% +\\+0\\.0% +\\+0% +- +3/3 [^\n]*\\| 50\\.0 \\[40\\.0, 60\\.0\\] 55\\.0 noise")
# --missed: the built-in workloads that missed, a name a line and nothing else (what
# tests/vm/bench-truth-check.sh replicates); none for a run within the goals or the noise
add_test(NAME smoke_bench_truth_missed COMMAND bench_truth --missed ${fx}/miss)
add_test(NAME smoke_bench_truth_missed_none COMMAND bench_truth --missed ${fx}/pass)
set_tests_properties(smoke_bench_truth_missed smoke_bench_truth_missed_none PROPERTIES
  LABELS unit TIMEOUT 60)
set_tests_properties(smoke_bench_truth_missed PROPERTIES PASS_REGULAR_EXPRESSION
  "^burst\ncoldstart\n$")
set_tests_properties(smoke_bench_truth_missed_none PROPERTIES FAIL_REGULAR_EXPRESSION ".")
# replica/: what a replication leaves (miss/w-coldstart alone, `only` = coldstart): the head
# names the workloads it ran, and the gate fails on the miss that came back
add_test(NAME smoke_bench_truth_replica COMMAND bench_truth --table ${fx}/replica --gate)
set_tests_properties(smoke_bench_truth_replica PROPERTIES LABELS unit TIMEOUT 60
  PASS_REGULAR_EXPRESSION "seed 42 [^\n]*. only coldstart\n.*coldstart +builtin[^\n]*MISS.*FAIL: the built-in workloads miss a goal beyond the measured noise \\(1\\)")
# (the host line first, as in every benchmark's smoke test)
set_tests_properties(smoke_bench_truth_gate PROPERTIES PASS_REGULAR_EXPRESSION
  "${HS_HOST_LINE_RE}.*burst +builtin.*MISS.*MISS.*MISS.*FAIL: the built-in workloads miss a goal beyond the measured noise \\(4\\)")
