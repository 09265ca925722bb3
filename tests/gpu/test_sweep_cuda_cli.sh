#!/bin/bash
# test_sweep_cuda_cli.sh HINTSIM SRC - `hintsim sweep --engine cuda` gives the CPU sweep's
# merged outputs (label gpu; exits 77 where there is no CUDA device): every sample trace x
# two built-in profiles x three axes (jitter.p99_us one of them) x fixed hints and auto, open
# and closed loop. The GPU's
# sweep.csv is the CPU's: the same rows, keys and figures, but for the cost columns, within
# 1e-9 (the GPU runs the model's base replay, whose doubles the CPU's shortcuts give but for
# the drain and base costs, summed in another order: tests/test_model_grid.c); and the same
# bytes whether the GPU ran it whole, as two Slurm slices, or under mpirun with two ranks
# (where mpirun is installed); resumed after a CPU half, the CPU's in the same way.
set -u
BIN=$1 SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# same_csv A B: the same rows and fields; the cost_* columns within 1e-9 of their row's
# total (their sum: every latency; a cost term is a difference of sums, so a small one
# carries the rounding of the whole, as in tests/gpu/test_sweep_cuda.c)
same_csv() {
  paste -d'\n' "$1" "$2" | awk -F, 'NR % 2 { split($0, a, ","); n = NF
      if (NR == 1) for (i = 1; i <= NF; i++) cost[i] = a[i] ~ /^cost_/
      next }
    { if (NF != n) bad = 1
      tot = 0
      for (i = 1; i <= NF; i++) if (cost[i]) tot += a[i] < 0 ? -a[i] : a[i]
      for (i = 1; i <= NF; i++) {
        x = a[i]; y = $i
        if (x == y) continue
        if (cost[i] && x ~ /^-?[0-9.e+-]+$/ && y ~ /^-?[0-9.e+-]+$/) {
          d = x - y; if (d < 0) d = -d; m = x < 0 ? -x : x; if ((y < 0 ? -y : y) > m) m = y < 0 ? -y : y
          if (tot > m) m = tot
          if (d <= 1e-9 * m) { near++; continue }
        }
        bad = 1; print "row " NR / 2 ": field " i ": " x " vs " y > "/dev/stderr"
      } }
    END { if (near) print near " costs within 1e-9, not equal" > "/dev/stderr"; exit bad }' ||
    return 1
  [ "$(wc -l <"$1")" = "$(wc -l <"$2")" ]
}

if ! "$BIN" sweep --help 2>&1 | grep -q -- '--engine'; then fail "sweep has no --engine"; fi
traces=$(ls "$SRC"/traces/samples/*.hst | sed 's/.*/"&"/' | paste -sd, -)
for mode in open closed; do
  cat >"$T/grid-$mode.json" <<JSON
{"traces": [$traces], "profiles": ["generic", "seed000"],
 "vary": {"ll.depth": [8, 32], "switch.hysteresis": [1, 3], "jitter.p99_us": [0, 40]},
 "hints": [0, 512, "4K", 65536, "auto"], "objective": "p99", "engine": "model", "mode": "$mode"}
JSON
done
# closed loop needs completion times: keep the traces that have them
if ! "$BIN" sweep --grid "$T/grid-closed.json" -o "$T/probe" --no-plots -q --jobs 1 \
     >/dev/null 2>&1; then
  rm "$T/grid-closed.json"
fi

out=$("$BIN" sweep --grid "$T/grid-open.json" -o "$T/gpu" --engine cuda --no-plots -q 2>&1)
rc=$?
if [ $rc -eq 3 ] && echo "$out" | grep -q "no CUDA device"; then
  echo "SKIP: $out"
  exit 77
fi
[ $rc -eq 0 ] || fail "--engine cuda: rc $rc: $out"

for g in "$T"/grid-*.json; do
  m=$(basename "$g" .json)
  "$BIN" sweep --grid "$g" -o "$T/cpu-$m" --no-plots -q || fail "$m: cpu sweep"
  "$BIN" sweep --grid "$g" -o "$T/gpu-$m" --engine cuda --no-plots -q || fail "$m: gpu sweep"
  same_csv "$T/cpu-$m/sweep.csv" "$T/gpu-$m/sweep.csv" || fail "$m: GPU sweep.csv differs from CPU's"
  # Slurm: two slices on the GPU, then the merge
  "$BIN" sweep --grid "$g" -o "$T/sl-$m" --engine cuda --slice 0/2 --no-plots -q || fail "$m: slice 0"
  "$BIN" sweep --grid "$g" -o "$T/sl-$m" --engine cuda --slice 1/2 --no-plots -q || fail "$m: slice 1"
  "$BIN" sweep --grid "$g" -o "$T/sl-$m" --engine cuda --no-plots -q || fail "$m: merge"
  cmp "$T/gpu-$m/sweep.csv" "$T/sl-$m/sweep.csv" || fail "$m: slices' merge differs"
  cmp "$T/gpu-$m/sweep.json" "$T/sl-$m/sweep.json" || fail "$m: slices' sweep.json differs"
  # resumed: half on the CPU, the rest on the GPU
  "$BIN" sweep --grid "$g" -o "$T/mix-$m" --slice 0/2 --no-plots -q || fail "$m: cpu half"
  "$BIN" sweep --grid "$g" -o "$T/mix-$m" --engine cuda --no-plots -q --json >"$T/mix.json" ||
    fail "$m: gpu rest"
  grep -q '"complete": true' "$T/mix.json" || fail "$m: resumed sweep not complete"
  same_csv "$T/cpu-$m/sweep.csv" "$T/mix-$m/sweep.csv" || fail "$m: resumed merge differs"
  if command -v mpirun >/dev/null; then
    mpirun -n 2 --allow-run-as-root --oversubscribe "$BIN" sweep --grid "$g" -o "$T/mpi-$m" \
      --engine cuda --mpi --no-plots -q || fail "$m: mpirun"
    cmp "$T/gpu-$m/sweep.csv" "$T/mpi-$m/sweep.csv" || fail "$m: MPI merge differs"
    echo "$m: MPI 2 ranks: same"
  fi
  echo "$m: $(($(wc -l <"$T/cpu-$m/sweep.csv") - 1)) points: GPU = CPU (costs to 1e-9), slices = GPU, resumed = CPU"
done
# a grid the GPU cannot run: the simulator's
sed 's/"engine": "model"/"engine": "sim"/' "$T/grid-open.json" >"$T/sim.json"
"$BIN" sweep --grid "$T/sim.json" -o "$T/sim" --engine cuda -q 2>"$T/err"
[ $? -eq 2 ] && grep -q "model only" "$T/err" || fail "engine sim with --engine cuda: $(cat "$T/err")"
echo PASS
