#!/bin/sh
# preload-tools.sh - runs inside the soft-RoCE VM (busybox sh): captures unmodified verbs
# tools with libhintcap (`hintsim capture run`, LD_PRELOAD) and leaves the traces in $OUT
# for preload-tools-check.sh, which counts what the tools posted on the host:
#   ibv_rc_pingpong -n PP_ITERS -s PP_SIZE   each end posts PP_ITERS signalled SENDs
#   ib_write_lat    -n LAT_ITERS -s LAT_SIZE each end posts LAT_ITERS signalled WRITEs
#   ib_write_bw     -n BW_ITERS -s BW_SIZE   the client posts BW_ITERS WRITEs (selective
#                                            signalling), the server posts none
# The pingpong server runs with RDMA_LOW_LATENCY_HINT=4096, its client with a config file
# saying 64K (seed 000 pitfall 3): `trace audit` must report the difference. It also runs
# trace validate, trace audit -o (merge) and recommend in the guest, and ib_write_bw with
# and without capture, interleaved, for the throughput-loss figure.
set -u
PP_ITERS=200
PP_SIZE=64
LAT_ITERS=300
LAT_SIZE=8
BW_ITERS=2000
BW_SIZE=4096
LIB=/usr/lib/libhintcap.so
RES=$OUT/preload-results.txt

HS_NAME=preload-tools
. /hs/lib.sh # fail, record, listening

# capx DIR VARS CMD...: CMD (environment VARS added) under `hintsim capture run -o DIR`,
# or, while `capture run` is not registered in this build, under LD_PRELOAD directly;
# DIR "-": CMD alone, without capture (and without VARS).
capx() {
    d=$1; vars=$2; shift 2
    if [ "$d" = - ]; then
        timeout 300 "$@"
    elif [ "$CAPRUN" = 1 ]; then
        timeout 300 env $vars hintsim capture run --lib "$LIB" -o "$d" -- "$@"
    else
        mkdir -p "$d" && timeout 300 env $vars LD_PRELOAD="$LIB" HINTCAP_DIR="$d" "$@"
    fi
}

# attempt NAME SDIR CDIR CMD...: one server/client run of CMD over 127.0.0.1 on a port of its
# own; SDIR/CDIR "-" runs that end without capture, else under capx into that (emptied) dir.
# Returns 0 when both ends exit 0.
NEXT_PORT=18515
attempt() {
    name=$1; sdir=$2; cdir=$3; shift 3
    port=$NEXT_PORT
    NEXT_PORT=$((NEXT_PORT + 1))
    [ "$sdir" = - ] || rm -rf "$sdir"
    [ "$cdir" = - ] || rm -rf "$cdir"
    capx "$sdir" "$SENV" "$@" -p "$port" >"$OUT/$name-server.txt" 2>&1 &
    spid=$!
    if ! listening "$port" 300; then
        kill $spid 2>/dev/null
        wait $spid
        echo "preload-tools: $name: no server listening on port $port after 30 s:" \
            "$(head -n 3 "$OUT/$name-server.txt" | tr '\n' ' ')" | tee -a "$OUT/retries.txt"
        return 1
    fi
    capx "$cdir" "$CENV" "$@" -p "$port" 127.0.0.1 >"$OUT/$name-client.txt" 2>&1
    crc=$?
    wait $spid
    src=$?
    [ $crc -eq 0 ] && [ $src -eq 0 ] && return 0
    echo "preload-tools: $name: server exit $src, client exit $crc:" \
        "$(grep -h -i -E "report|r\^2|error|fail|couldn" "$OUT/$name-server.txt" \
            "$OUT/$name-client.txt" | head -n 3 | tr '\n' ' ')" | tee -a "$OUT/retries.txt"
    return 1
}

# run NAME SDIR CDIR CMD...: attempt, at most 3 times. perftest converts cycles with a CPU
# frequency it measures at start, and under emulation that sometimes fails ("Can't produce a
# report", exit 1) with or without capture; a tool that fails 3 times is a failure.
run() {
    a=1
    while [ $a -le 3 ]; do
        attempt "$@" && return 0
        a=$((a + 1))
    done
    cat "$OUT/$1-server.txt" "$OUT/$1-client.txt"
    fail "$1: 3 attempts failed (see retries.txt)"
}

# pair NAME SDIR CDIR CMD...: server captured into SDIR, client into CDIR.
pair() { run "$@"; }

# plain NAME CMD...: the same pair without capture (baseline for the throughput loss).
plain() { name=$1; shift; run "$name" - - "$@"; }

bw_avg() { awk 'hdr && $1 ~ /^[0-9]+$/ { print $4; exit } /#bytes/ { hdr = 1 }' "$1"; }

: >"$RES"
: >"$OUT/retries.txt"
[ -f "$LIB" ] || fail "$LIB missing in the guest"
CAPRUN=0
hintsim capture run --help >/dev/null 2>&1 && CAPRUN=1
record capture_run_cli $CAPRUN
echo "RDMA_LOW_LATENCY_HINT = 64K" >/tmp/hint.conf

SENV="RDMA_LOW_LATENCY_HINT=4096" CENV="RDMA_LOW_LATENCY_HINT=4096 HINTCAP_CONFIG=/tmp/hint.conf"
pair pingpong "$OUT/pp-server" "$OUT/pp-client" ibv_rc_pingpong -d rxe0 -g 0 -n $PP_ITERS -s $PP_SIZE
SENV="RDMA_LOW_LATENCY_HINT=16K" CENV="RDMA_LOW_LATENCY_HINT=16K"
pair write_lat "$OUT/lat-server" "$OUT/lat-client" ib_write_lat -d rxe0 -x 0 -n $LAT_ITERS -s $LAT_SIZE
pair write_bw "$OUT/bw-server" "$OUT/bw-client" ib_write_bw -d rxe0 -x 0 -n $BW_ITERS -s $BW_SIZE

# In the guest: every trace validates; audit finds the pitfall, merges; recommend runs.
for f in "$OUT"/*/*.hst; do
    hintsim trace validate "$f" >>"$OUT/validate.txt" 2>&1 || fail "trace validate $f"
done
mkdir -p "$OUT/pp-all" "$OUT/lat-all"
cp "$OUT"/pp-server/*.hst "$OUT"/pp-client/*.hst "$OUT/pp-all/"
cp "$OUT"/lat-server/*.hst "$OUT"/lat-client/*.hst "$OUT/lat-all/"
hintsim trace audit "$OUT/pp-all" >"$OUT/audit-pp.txt" 2>&1
record audit_pp_exit $?
hintsim trace audit "$OUT/lat-all" -o "$OUT/lat-merged.hst" --json >"$OUT/audit-lat.json" 2>&1
record audit_lat_exit $?
hintsim recommend "$OUT/lat-merged.hst" --profile generic >"$OUT/recommend.txt" 2>&1
record recommend_exit $?

# Throughput with and without capture, interleaved in this boot (soft-RoCE under TCG: noisy).
for k in 1 2; do
    plain bw_plain_$k ib_write_bw -d rxe0 -x 0 -n $BW_ITERS -s $BW_SIZE
    record bw_plain_${k}_MBps "$(bw_avg "$OUT/bw_plain_$k-client.txt")"
    SENV= CENV=
    pair bw_cap_$k "/tmp/bwc-s$k" "/tmp/bwc-c$k" ib_write_bw -d rxe0 -x 0 -n $BW_ITERS -s $BW_SIZE
    record bw_cap_${k}_MBps "$(bw_avg "$OUT/bw_cap_$k-client.txt")"
done
echo "preload-tools: done"
