#!/usr/bin/env bash
# bench-truth-check.sh OUTDIR - on the host, after bench/bench_truth.sh ran short in the VM
# (vm_bench_truth): prints bench_truth's table of OUTDIR and fails when a built-in workload
# misses a goal (regret <= 5%, rank correlation >= 0.8, median |error| <= 15%) beyond the
# noise measured in the same run, or did not run. bench_truth is found beside the hintsim
# under test ($HINTSIM_BIN, set by hs_add_vm_test): <build>/bench/bench_truth.
set -euo pipefail
out=$1
bin=${HINTSIM_BIN:?HINTSIM_BIN is not set}
bt=$(dirname "$(dirname "$bin")")/bench/bench_truth
[ -x "$bt" ] || { echo "bench-truth-check: FAIL: no $bt (build the bench_truth target)"; exit 1; }
exec "$bt" --table "$out" --gate
