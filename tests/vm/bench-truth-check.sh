#!/usr/bin/env bash
# bench-truth-check.sh OUTDIR - on the host, after bench/bench_truth.sh ran short in the VM
# (vm_bench_truth): prints bench_truth's table of OUTDIR and fails when a built-in workload
# misses a goal (regret <= 5%, rank correlation >= 0.8, median |error| <= 15%) beyond the
# noise measured in the same run, or did not run, in that run and again in a replication.
#
# The replication: the workloads that missed, run once more in a VM of their own
# (bench_truth.sh's ONLY, the same seed: the same traces) under a calibration of its own, into
# OUTDIR/replica; the test fails when one of them misses there too. The soft-RoCE guest has
# spells of seconds to minutes in which its tail doubles (bench/README.md); a miss that one
# spell made does not come back in the next run, one the model makes does (a deterministic
# failure to run too: the same trace). bench_truth is found beside the hintsim under test
# ($HINTSIM_BIN, set by hs_add_vm_test): <build>/bench/bench_truth.
set -euo pipefail
out=$1
bin=${HINTSIM_BIN:?HINTSIM_BIN is not set}
src=${HINTSIM_SRC:?HINTSIM_SRC is not set}
build=$(dirname "$(dirname "$bin")")
bt=$build/bench/bench_truth
[ -x "$bt" ] || { echo "bench-truth-check: FAIL: no $bt (build the bench_truth target)"; exit 1; }
"$bt" --table "$out" --gate && exit 0
missed=$("$bt" --missed "$out" | paste -sd, -)
[ -n "$missed" ] || exit 1 # no built-in workload ran: nothing to replicate
# run FILE DEFAULT: what the first run wrote in OUTDIR/FILE (DEFAULT: an older run's folder)
run() { cat "$out/$1" 2>/dev/null || echo "$2"; }
echo "bench-truth-check: replicating $missed (seed $(run seed 0)) in a VM of its own"
rm -rf "$out/replica"
rc=0
"$src/tests/vm/run-in-vm.sh" --out "$out/replica" --timeout 1500 --hintsim "$bin" \
    --cache "${HINTSIM_VM_CACHE:-$build/vm-cache}" "$src/bench/bench_truth.sh" \
    "$(run mode short)" "$(run seed 0)" "$(run load 0.5)" "$(run objective p99)" \
    "$missed" || rc=$?
[ $rc -eq 0 ] || { echo "bench-truth-check: FAIL: the replication's VM exited $rc"; exit 1; }
if "$bt" --table "$out/replica" --gate; then
    echo "bench-truth-check: $missed met the goals or stayed within the noise in the" \
        "replication: the first run's miss did not come back"
    exit 0
fi
echo "bench-truth-check: FAIL: $($bt --missed "$out/replica" | paste -sd, -) missed again" \
    "in the replication"
exit 1
