#!/bin/sh
# capture-validate.sh - runs inside the soft-RoCE VM: `validate` on two sample workloads,
# kv (open loop at the trace's times) and burst (closed loop), the auto candidates, three
# shuffled rounds, measured next to predicted; `-o DIR` without gnuplot (exit 0, tables);
# then once as server + client (over rxe0's address, 10.77.0.1, which the server listens on).
# capture-validate-check.sh checks the JSON on the host.
set -u
HP=18550
HS_NAME=capture-validate
. /hs/lib.sh # fail, wait_listen
export HINTSIM_TOKEN=vm-capture-validate # the --server / --connect session's token

# -o in a guest without gnuplot: a warning, exit 0, validate.json and report.html (tables)
# replacing an earlier run's whole: its figure (this run draws none) goes, other files stay
mkdir -p "$OUT/val-o" && echo earlier >"$OUT/val-o/pred_vs_meas.png" &&
    echo mine >"$OUT/val-o/notes.txt" || fail "validate -o: cannot plant an earlier run"
hintsim validate kv.hst -d rxe0 -x 0 --limit 300 --repeat 1 --hint 4K,0 -o "$OUT/val-o" \
    >/dev/null 2>"$OUT/val-o.err" || { cat "$OUT/val-o.err"; fail "validate -o without gnuplot"; }
grep -q "gnuplot not found" "$OUT/val-o.err" || fail "validate -o: no warning about gnuplot"
[ -s "$OUT/val-o/validate.json" ] && [ -s "$OUT/val-o/report.html" ] ||
    fail "validate -o: validate.json or report.html missing"
[ -e "$OUT/val-o/pred_vs_meas.png" ] && fail "validate -o: an earlier run's figure was left"
[ -s "$OUT/val-o/notes.txt" ] || fail "validate -o: a file not validate's was removed"
ls -A "$OUT/val-o" | grep -q hintsim-stage && fail "validate -o: its staging folder was left"
hintsim validate kv.hst -d rxe0 -x 0 --limit 1500 --repeat 3 --mode open --json \
    >"$OUT/kv.json" || fail "validate kv"
hintsim validate kv.hst -d rxe0 -x 0 --limit 1500 --repeat 3 --mode open --hint 4K,0 \
    || fail "validate kv (table)"
hintsim validate burst.hst -d rxe0 -x 0 --limit 1500 --repeat 3 --mode closed --json \
    >"$OUT/burst.json" || fail "validate burst"
timeout 300 hintsim validate -d rxe0 -x 0 --port $HP --server --timeout 60 >"$OUT/srv.txt" 2>&1 &
spid=$!
wait_listen $HP
timeout 300 hintsim validate kv.hst -d rxe0 -x 0 --port $HP --connect 10.77.0.1 --timeout 60 --limit 500 \
    --repeat 2 --hint 4K,0 --messages "$OUT/remote-msgs.csv" --json >"$OUT/remote.json" ||
    fail "validate as client"
wait $spid || { cat "$OUT/srv.txt"; fail "validate server"; }
echo "capture-validate: PASS"
