#!/usr/bin/env bash
# calibrate-fit-check.sh OUTDIR - on the host, after calibrate-fit.sh: the profile calibrate
# wrote records a two-process run (a peer), the held-out figures by class (single, stream,
# mixed) each with its bound and the term named when over, and every held-out figure
# measured beside predicted; the printed held-out lines agree with the JSON.
set -euo pipefail
out=$1
fail() { echo "calibrate-fit-check: FAIL: $*"; exit 1; }
j="$out/rxe0.json"
[ -s "$j" ] || fail "$j missing"
flat=$(tr -d ' \t\n' <"$j")
grep -q '"name":"calibrated-rxe0"' <<<"$flat" || fail "profile not named"
for k in device date host; do
    grep -q "\"$k\":\"" <<<"$flat" || fail "meta lacks \"$k\""
done
grep -q '"peer":"10.77.0.1"' <<<"$flat" || fail "meta: the --connect run has no peer 10.77.0.1"
grep -q '"replay":"cap_replay_run' <<<"$flat" || fail "meta does not name validate's replay"
grep -q 'withvalidate.slivereplay' <<<"$flat" || fail "notes do not say how it was measured"
held=${flat#*\"holdout\":\{}
classes=${held#*\"classes\":\{}
for cls in single stream mixed; do
    c=${classes#*\"$cls\":\{}
    c=${c%%\}*}
    n=$(grep -o -E '"observations":[0-9]+' <<<"$c" | cut -d: -f2)
    [ -n "$n" ] && [ "$n" -ge 1 ] || fail "holdout class $cls: no observations ($c)"
    e=$(grep -o -E '"median_error_pct":[0-9.e+-]+' <<<"$c" | cut -d: -f2)
    b=$(grep -o -E '"bound_pct":[0-9.e+-]+' <<<"$c" | cut -d: -f2)
    [ -n "$e" ] && [ -n "$b" ] || fail "holdout class $cls: no error or bound ($c)"
    over=$(awk -v e="$e" -v b="$b" 'BEGIN { print (e > b) ? "true" : "false" }')
    grep -q "\"over\":$over" <<<"$c" || fail "holdout class $cls: error $e%, bound $b%, not \"over\":$over"
    [ "$over" = false ] || grep -q '"term":"' <<<"$c" || fail "holdout class $cls over, no term"
    line=$(grep "^held-out $cls " "$out/calibrate.txt") || fail "no printed line for $cls"
    pe=$(sed -E 's/.*median error ([0-9.]+)%.*/\1/' <<<"$line")
    awk -v a="$pe" -v b="$e" 'BEGIN { exit !(a - b < 0.06 && b - a < 0.06) }' ||
        fail "$cls: printed $pe%, JSON $e%"
    awk -v c="$cls" -v n="$n" -v e="$e" -v b="$b" 'BEGIN {
        printf "calibrate-fit-check: held-out %s: %d figures, median error %.1f%% (bound %.1f%%)\n", c, n, e, b }'
done
# every held-out figure: its class, measured and predicted
figs=${held#*\"figures\":\[}
figs=${figs%%\]*}
nf=$(grep -o '"measured_us"' <<<"$figs" | wc -l)
np=$(grep -o '"predicted_us"' <<<"$figs" | wc -l)
nc=$(grep -o '"class":"' <<<"$figs" | wc -l)
nall=$(grep -o -E '"observations":[0-9]+' <<<"$held" | head -1 | cut -d: -f2)
[ "$nf" -eq "$nall" ] && [ "$np" -eq "$nall" ] && [ "$nc" -eq "$nall" ] ||
    fail "$nall held-out figures, $nf measured, $np predicted, $nc with a class"
grep -q '"class":"mixed"' <<<"$figs" || fail "no mixed replay among the held-out figures"
# the link rate is fitted (soft-RoCE's ~0.3-0.5 Gb/s), not kept at the start's 100 Gb/s with
# the bytes carried by a staircase of packets: the default stream sizes separate bytes from
# packets, and terms pinned at a bound or collinear must not take its standard error
grep -q -E '^  link\.gbps ' "$out/calibrate.txt" || fail "no printed link.gbps line"
while read -r gl; do # one line per calibration the report holds
    grep -q "start kept" <<<"$gl" && fail "link.gbps not fitted: $gl"
    g=$(awk '{ print $3 }' <<<"$gl")
    awk -v g="$g" 'BEGIN { exit !(g > 0.05 && g < 5) }' || fail "link.gbps fitted to $g Gb/s: $gl"
    echo "calibrate-fit-check: link.gbps fitted: $g Gb/s"
done < <(grep -E '^  link\.gbps ' "$out/calibrate.txt")
echo "calibrate-fit-check: ok"
