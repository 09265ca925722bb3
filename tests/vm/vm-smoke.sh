#!/bin/sh
# vm-smoke.sh - runs inside the soft-RoCE VM (busybox sh): is the live verbs device usable?
# Checks rxe0 with an ACTIVE port, then runs ibv_rc_pingpong -g 0, perftest ib_write_lat
# -x 0 and ib_write_bw -x 0, server and client both in the guest over 127.0.0.1, parses
# their results, asserts sane values and exact iteration counts, and writes them to
# $OUT/smoke-results.txt ("key value" lines) with the tools' raw outputs beside it, for
# vm-smoke-check.sh to read again on the host (which proves the $OUT return channel).
set -u
PORT=18515
LAT_ITERS=1000
BW_ITERS=2000
BW_SIZE=65536
PP_ITERS=500
RES=$OUT/smoke-results.txt

HS_NAME=vm-smoke
. /hs/lib.sh # fail, record, wait_listen
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# run_pair NAME CMD...: CMD as server in the background, CMD 127.0.0.1 as client; both
# must exit 0 within 120 s. Outputs in $OUT/NAME-server.txt and $OUT/NAME-client.txt.
run_pair() {
    name=$1; shift
    timeout 120 "$@" >"$OUT/$name-server.txt" 2>&1 &
    spid=$!
    wait_listen "$PORT"
    timeout 120 "$@" 127.0.0.1 >"$OUT/$name-client.txt" 2>&1
    crc=$?
    wait $spid
    src=$?
    if [ $crc -ne 0 ] || [ $src -ne 0 ]; then
        cat "$OUT/$name-server.txt" "$OUT/$name-client.txt"
        fail "$name: server exit $src, client exit $crc"
    fi
}

check_device() {
    ibv_devinfo -d rxe0 >"$OUT/devinfo.txt" 2>&1 || { cat "$OUT/devinfo.txt"; fail "ibv_devinfo -d rxe0"; }
    grep -q "hca_id:[[:space:]]*rxe0$" "$OUT/devinfo.txt" || fail "ibv_devinfo shows no rxe0"
    grep -q "state:[[:space:]]*PORT_ACTIVE" "$OUT/devinfo.txt" || fail "rxe0 port is not PORT_ACTIVE"
    grep -q "link_layer:[[:space:]]*Ethernet" "$OUT/devinfo.txt" || fail "rxe0 link layer is not Ethernet"
    rdma link show >"$OUT/rdma-link.txt" 2>&1 || fail "rdma link show"
    grep -q "rxe0/1 state ACTIVE.*netdev d0" "$OUT/rdma-link.txt" || fail "rdma link: rxe0/1 not ACTIVE on d0"
    record device rxe0
    record port_state PORT_ACTIVE
}

# pingpong: "1000 iters in 0.27 seconds = 267.60 usec/iter" on both ends.
pingpong() {
    run_pair pingpong ibv_rc_pingpong -d rxe0 -g 0 -n $PP_ITERS
    for end in server client; do
        set -- $(awk '/ iters in / { print $1, $(NF-1) }' "$OUT/pingpong-$end.txt")
        [ "${1:-}" = "$PP_ITERS" ] || fail "ibv_rc_pingpong $end: iterations '${1:-none}', wanted $PP_ITERS"
        awk -v u="$2" 'BEGIN { exit !(u > 0) }' || fail "ibv_rc_pingpong $end: usec/iter '$2' not > 0"
        record "pingpong_${end}_iters" "$1"
        record "pingpong_${end}_usec_per_iter" "$2"
    done
}

# perftest_row FILE: the result row after the "#bytes" header, fields as printed.
perftest_row() {
    awk 'hdr && $1 ~ /^[0-9]+$/ { print; exit } /#bytes/ { hdr = 1 }' "$1"
}

write_lat() {
    run_pair write_lat ib_write_lat -d rxe0 -x 0 -n $LAT_ITERS
    for end in server client; do
        # #bytes #iterations t_min t_max t_typical t_avg t_stdev p99 p99.9
        set -- $(perftest_row "$OUT/write_lat-$end.txt")
        [ $# -ge 6 ] || fail "ib_write_lat $end: no result row"
        [ "$2" = "$LAT_ITERS" ] || fail "ib_write_lat $end: iterations '$2', wanted $LAT_ITERS"
        awk -v mn="$3" -v mx="$4" -v avg="$6" 'BEGIN { exit !(mn > 0 && mn <= avg && avg <= mx) }' ||
            fail "ib_write_lat $end: t_min $3, t_avg $6, t_max $4 not 0 < min <= avg <= max"
        record "write_lat_${end}_bytes" "$1"
        record "write_lat_${end}_iters" "$2"
        record "write_lat_${end}_t_avg_us" "$6"
        record "write_lat_${end}_t_typical_us" "$5"
    done
}

write_bw() {
    run_pair write_bw ib_write_bw -d rxe0 -x 0 -n $BW_ITERS -s $BW_SIZE
    for end in server client; do
        # #bytes #iterations BW_peak BW_average MsgRate
        set -- $(perftest_row "$OUT/write_bw-$end.txt")
        [ $# -ge 5 ] || fail "ib_write_bw $end: no result row"
        [ "$1" = "$BW_SIZE" ] || fail "ib_write_bw $end: size '$1', wanted $BW_SIZE"
        [ "$2" = "$BW_ITERS" ] || fail "ib_write_bw $end: iterations '$2', wanted $BW_ITERS"
        awk -v bw="$4" 'BEGIN { exit !(bw > 0) }' || fail "ib_write_bw $end: BW average '$4' not > 0"
        record "write_bw_${end}_iters" "$2"
        record "write_bw_${end}_avg_MBps" "$4"
    done
}

: >"$RES"
t0=$(uptime_s)
hintsim --version >"$OUT/hintsim-version.txt" 2>&1 || fail "hintsim --version does not run in the guest"
record hintsim "$(cut -d' ' -f2 "$OUT/hintsim-version.txt")"
check_device
pingpong
write_lat
write_bw
record tests_s "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')"
record boot_s "$t0"
echo "vm-smoke: PASS"
