#!/usr/bin/env bash
# preload-launch-check.sh OUTDIR - host side of vm_preload_launch (see preload-launch.sh):
# under each launcher, two traces, one per rank, named and headed with that rank and the
# host, each holding the rank's WRs exactly; capture run printed a line per rank.
set -euo pipefail
dir=${1:?usage: preload-launch-check.sh OUTDIR}
bin=${HINTSIM_BIN:-hintsim}
res=$dir/launch-results.txt
WRITES=100 SIZE=2048 SENDS=10
fail() { echo "preload-launch-check: FAIL: $*" >&2; exit 1; }
[ -s "$res" ] || fail "$res missing: \$OUT did not come back"
val() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' "$res" || fail "no '$1' in $res"; }

# check NAME: exit 0, traces -r0 and -r1 with rank and host in their headers, WRs exact.
check() {
    local n=$1 r t csv
    [ "$(val "${n}_exit")" = 0 ] || fail "$n: exit $(val "${n}_exit"): $(tail -5 "$dir/$n.txt")"
    [ "$(find "$dir/$n" -name '*.hst' | wc -l)" = 2 ] || fail "$n: $(find "$dir/$n" -name '*.hst' | wc -l) traces, wanted 2"
    for r in 0 1; do
        t=$(find "$dir/$n" -name "*-r$r.hst")
        [ -n "$t" ] || fail "$n: no trace named for rank $r: $(ls "$dir/$n")"
        csv=$dir/$n-r$r.csv
        "$bin" trace convert "$t" -o "$csv" >/dev/null || fail "$t: trace convert failed"
        head -1 "$csv" | grep -q "\"rank\":$r," || fail "$t: header rank is not $r"
        head -1 "$csv" | grep -q '"host":"hs-launch-vm"' || fail "$t: the header does not name the host"
        case $t in */hs-launch-vm-*) ;; *) fail "$t: the file name does not start with the host" ;; esac
        head -1 "$csv" | grep -q '"dropped":0,' || fail "$t: dropped records"
        [ "$(awk -F, -v s="$SIZE" 'NR > 2 && $5 == "write" && $3 == s' "$csv" | wc -l)" = $WRITES ] ||
            fail "$t: not $WRITES writes of $SIZE B"
        [ "$(awk -F, 'NR > 2 && $5 == "send" && $3 == 64' "$csv" | wc -l)" = $SENDS ] ||
            fail "$t: not $SENDS sends"
        grep -q "rank $r, rxe0: 2 QPs (2 posting), $((WRITES + SENDS)) WRs posted" "$dir/$n.txt" ||
            fail "$n: capture run printed no line for rank $r: $(grep 'capture run' "$dir/$n.txt")"
    done
    echo "preload-launch-check: $n: 2 ranks, each $((WRITES + SENDS)) WRs, rank and host in the headers: ok"
}

if [ "$(val mpi_available)" = 1 ]; then
    check mpi
else
    echo "preload-launch-check: mpirun not in the image (Open MPI not installed on the host): mpi part not run"
fi
check torch
echo "preload-launch-check: OK"
