#!/bin/sh
# capture-peer.sh - runs inside the soft-RoCE VM: does `capture bench` measure what perftest
# measures? In one boot, interleaved rounds of
#   ib_write_lat -s 64      vs  capture bench --sizes 64  (ping-pong round trip / 2, LL path)
#   ib_write_bw -s 65536    vs  capture bench --sizes 64K (stream, BW path, no hint)
# each pair server + client over 127.0.0.1. The medians over the rounds must agree within
# 20% (perftest's t_typical is its median round trip / 2; its BW average is bytes / time).
# Results in $OUT/peer-results.txt, raw outputs beside it.
set -u
ROUNDS=${ROUNDS:-5}
LAT_ITERS=1000
BW_ITERS=400
PP=18520
HP=18530
RES=$OUT/peer-results.txt

fail() { echo "capture-peer: FAIL: $*"; exit 1; }
record() { echo "$1 $2" >>"$RES"; echo "capture-peer: $1 = $2"; }

wait_listen() {
    i=0
    while [ $i -lt 200 ]; do
        netstat -ltn 2>/dev/null | grep -q ":$1 " && return 0
        sleep 0.1
        i=$((i + 1))
    done
    fail "no server listening on port $1 after 20 s"
}

# pair PORT OUTFILE CMD...: CMD as server, CMD + client args as client; client stdout to OUTFILE.
perftest_pair() {
    port=$1; out=$2; shift 2
    timeout 120 "$@" -p "$port" >"$out.server" 2>&1 &
    spid=$!
    wait_listen "$port"
    timeout 120 "$@" -p "$port" 127.0.0.1 >"$out" 2>&1 || { cat "$out"; fail "$*: client"; }
    wait $spid || { cat "$out.server"; fail "$*: server"; }
}

hintsim_pair() {
    out=$1; shift
    timeout 120 hintsim capture bench -d rxe0 -x 0 --port $HP --server --timeout 60 >"$out.server" 2>&1 &
    spid=$!
    wait_listen $HP
    timeout 120 hintsim capture bench -d rxe0 -x 0 --port $HP --connect 127.0.0.1 --timeout 60 "$@" \
        >"$out" 2>&1 || { cat "$out" "$out.server"; netstat -tan; fail "capture bench $*: client"; }
    wait $spid || { cat "$out.server"; fail "capture bench: server"; }
}

median() { sort -n | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

: >"$RES"
r=1
while [ $r -le "$ROUNDS" ]; do
    perftest_pair $PP "$OUT/lat-perftest-$r.txt" ib_write_lat -d rxe0 -x 0 -s 64 -n $LAT_ITERS
    hintsim_pair "$OUT/lat-hintsim-$r.txt" --sizes 64 --hint 64 --iters $LAT_ITERS --warmup 100 \
        --phases pingpong
    perftest_pair $PP "$OUT/bw-perftest-$r.txt" ib_write_bw -d rxe0 -x 0 -s 65536 -n $BW_ITERS \
        --report_gbits
    hintsim_pair "$OUT/bw-hintsim-$r.txt" --sizes 64K --hint 0 --iters $BW_ITERS --warmup 20 \
        --phases stream
    # perftest row: "64 1000 t_min t_max t_typical ..."; hintsim row: "64K 64B LL | ..."
    awk '$1 == 64 && NF >= 5 {print $5}' "$OUT/lat-perftest-$r.txt" >>"$OUT/lat-perftest.vals"
    awk '$2 == "64B" && $3 == "LL" {print $9}' "$OUT/lat-hintsim-$r.txt" >>"$OUT/lat-hintsim.vals"
    awk '$1 == 65536 && NF >= 4 {print $4}' "$OUT/bw-perftest-$r.txt" >>"$OUT/bw-perftest.vals"
    awk '$2 == "64K" && $3 == "BW" {print $13}' "$OUT/bw-hintsim-$r.txt" >>"$OUT/bw-hintsim.vals"
    r=$((r + 1))
done

for f in lat-perftest lat-hintsim bw-perftest bw-hintsim; do
    n=$(wc -l <"$OUT/$f.vals")
    [ "$n" -eq "$ROUNDS" ] || fail "$f: $n values parsed, expected $ROUNDS (see $OUT)"
    record "${f}_median" "$(median <"$OUT/$f.vals")"
    record "${f}_all" "$(tr '\n' ',' <"$OUT/$f.vals")"
done
ok=0
for m in lat bw; do
    p=$(awk -v k="${m}-perftest_median" '$1 == k {print $2}' "$RES")
    h=$(awk -v k="${m}-hintsim_median" '$1 == k {print $2}' "$RES")
    d=$(awk -v p="$p" -v h="$h" 'BEGIN {d = (h - p) / p * 100; if (d < 0) d = -d; printf "%.1f", d}')
    record "${m}_diff_pct" "$d"
    awk -v d="$d" 'BEGIN {exit !(d <= 20)}' || { echo "capture-peer: $m differs by $d% (> 20%)"; ok=1; }
done
[ $ok -eq 0 ] || fail "capture bench and perftest disagree by more than 20% (see $RES)"
echo "capture-peer: PASS"
