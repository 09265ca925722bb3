#!/bin/sh
# calibrate-fit.sh - runs inside the soft-RoCE VM (busybox sh): hintsim calibrate on rxe0
# fits a profile, writes it with device/host/date, the profile loads again, and the fitted
# profile predicts the held-out sizes (measured, not fitted) within 25% median error.
set -u
HS_NAME=calibrate-fit
. /hs/lib.sh # fail

timeout 500 hintsim calibrate --device rxe0 --iters 60 --warmup 10 \
    --sizes 8,64,512,4K,32K,256K --holdout 16,128,1K,8K,64K \
    -o "$OUT/rxe0.json" >"$OUT/calibrate.txt" 2>&1
rc=$?
cat "$OUT/calibrate.txt"
[ $rc -eq 0 ] || fail "hintsim calibrate exit $rc"
[ -s "$OUT/rxe0.json" ] || fail "no profile written"
grep -q '"name":[[:space:]]*"calibrated-rxe0"' "$OUT/rxe0.json" || fail "profile not named"
grep -q '"device":[[:space:]]*"rxe0"' "$OUT/rxe0.json" || fail "profile meta lacks the device"
grep -q '"date":' "$OUT/rxe0.json" || fail "profile meta lacks the date"
grep -q '"host":' "$OUT/rxe0.json" || fail "profile meta lacks the host"
grep -q '"peer":[[:space:]]*null' "$OUT/rxe0.json" || fail "profile meta: a loopback run has a peer"
grep -q "both ends in this process (loopback)" "$OUT/rxe0.json" ||
    fail "profile notes do not say the link was measured in loopback"
hintsim profile show "$OUT/rxe0.json" >"$OUT/profile-show.txt" 2>&1 ||
    { cat "$OUT/profile-show.txt"; fail "the written profile does not load"; }
grep -q "calibrate: fitted" "$OUT/profile-show.txt" || fail "no fitted source in profile show"

# rxe has no CQ moderation: the fit must replay the emulation capture ran (signalling only).
grep -q "bw.coal_period_us=0 .*emulated" "$OUT/calibrate.txt" ||
    fail "the BW path's emulated moderation is not what the fit replayed"
grep -q "^  held-out" "$OUT/calibrate.txt" || fail "no per-figure held-out table"

held=$(awk '/^held-out sizes:/ { sub("%", "", $NF); print $NF }' "$OUT/calibrate.txt")
[ -n "$held" ] || fail "no held-out error printed"
echo "calibrate-fit: held-out median error $held%"
echo "held_median_error_pct $held" >"$OUT/result.txt"
awk -v h="$held" 'BEGIN { exit !(h + 0 < 25) }' || fail "held-out median error $held% >= 25%"

# two sizes leave some parameters without data: those keep the start profile's value
# (generic: bw.fixed_ns 0), said as not fitted (it was written as 1.08 ns, "fit start")
timeout 300 hintsim calibrate --device rxe0 --iters 10 --warmup 0 --sizes 64,4K \
    --holdout none -o "$OUT/two.json" >"$OUT/two.txt" 2>&1 ||
    { cat "$OUT/two.txt"; fail "calibrate on two sizes"; }
hintsim profile show "$OUT/two.json" >"$OUT/two-show.txt" 2>&1 || fail "two.json does not load"
# (whether a parameter is left without data depends on the run: checked when one is)
awk '/\(no data\)/ { print $1 }' "$OUT/two.txt" >"$OUT/two-nodata.txt"
while read -r k; do
    line=$(grep "^$k " "$OUT/two-show.txt")
    echo "$line" | grep -q "not fitted" || fail "$k: no data, yet '$line'"
done <"$OUT/two-nodata.txt"
grep -q "fit start" "$OUT/two-show.txt" && fail "a 'fit start' value was written"

# a parameter whose std err is over 1000% (CALIB_STDERR_MAX_REL; the table prints ">1000%")
# keeps the start profile's value too: marked in the table, warned about, said not fitted
# with its std err (checked where one is: that depends on the run); no other is marked
for run in calibrate:profile-show two:two-show; do
    txt="$OUT/${run%%:*}.txt" show="$OUT/${run#*:}.txt"
    awk '/^  parameter/ { t = 1; next } /^  switch/ { t = 0 }
         t && ($5 == ">1000%") != /start kept/ { print $1 }' "$txt" | grep . &&
        fail "${run%%:*}: kept and std err over 1000% disagree for these"
    awk '/\(not fitted: start kept\)/ { print $1 }' "$txt" >"$txt.kept"
    while read -r k; do
        grep -q "warning: calibrate: $k: std err" "$txt" || fail "$k: kept, not warned"
        line=$(grep "^$k " "$show")
        echo "$line" | grep -q "not fitted (the fit could not determine it: std err" ||
            fail "$k: std err over 1000%, yet '$line'"
    done <"$txt.kept"
done
echo "calibrate-fit: ok"
