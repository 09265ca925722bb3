#!/usr/bin/env bash
# cross-host-run.sh CACHE HINTSIM OUTDIR GID [routed] - the live commands' --server and
# --connect ends in two soft-RoCE VMs (run-in-vm.sh --link: frames as UDP between qemu
# processes), each running cross-host.sh; then the host checks what the client brought back
# (cross-host-check.sh). Plain: one wire, server 10.88.0.1, client 10.88.0.2. routed: the
# server (10.88.0.2) and the client (10.89.0.2) on two subnets joined by a third VM that
# forwards (10.88.0.1, 10.89.0.1; cross-host-router.sh), so RoCE v2 crosses a router as on a
# routed cluster fabric. Exit: 0 the ends and the check passed, 77 a VM cannot boot here, else
# 1 (124 a VM timed out).
#
# One retry, for one failure only: the client's send queue getting no completion at all
# within its timeout ("no completion within"), which soft-RoCE between two TCG guests did
# once in a clean-clone CI run (in calibrate's BW phase; with retransmission on, a
# lost packet gives an error completion within ~0.5 s, so the device stalled). The failed
# attempt's logs stay in OUTDIR/attempt1 and the retry says so; any other failure, or the
# same one twice, fails the test.
set -euo pipefail
cache=$1 bin=$2 out=$3 gid=$4 topo=${5:-plain}
here=$(cd "$(dirname "$0")" && pwd)
# a simple command, so that "${vm[@]}" ... & makes $! run-in-vm.sh itself, which a TERM stops
# the VM through
vm=("$here/run-in-vm.sh" --cache "$cache" --hintsim "$bin" --smp 1 --timeout 420)

# attempt N DIR: both ends (and the router) once, logs and outputs in DIR; sets rc_s rc_c
# rc_r. UDP ports for the wires from this process's pid and N (two runs at once, or two
# attempts, do not share them).
attempt() {
    local n=$1 dir=$2 p srv cli rpid="" spid
    local -a slink clink
    p=$((20000 + ($$ % 2500) * 8 + (n - 1) * 4))
    rc_c=0 rc_s=0 rc_r=0
    rm -rf "$dir"
    mkdir -p "$dir/server" "$dir/client"
    if [ "$topo" = routed ]; then
        srv=10.88.0.2 cli=10.89.0.2
        "${vm[@]}" --link "$p:$((p + 1)):10.88.0.1/24" --link "$((p + 2)):$((p + 3)):10.89.0.1/24" \
            --forward "$here/cross-host-router.sh" "$srv" "$cli" >"$dir/router.log" 2>&1 &
        rpid=$!
        slink=(--link "$((p + 1)):$p:$srv/24" --gw 10.88.0.1)
        clink=(--link "$((p + 3)):$((p + 2)):$cli/24" --gw 10.89.0.1)
    else
        srv=10.88.0.1 cli=10.88.0.2
        slink=(--link "$p:$((p + 1)):$srv/24")
        clink=(--link "$((p + 1)):$p:$cli/24")
    fi
    "${vm[@]}" "${slink[@]}" --out "$dir/server" "$here/cross-host.sh" server "$cli" "$gid" \
        >"$dir/server.log" 2>&1 &
    spid=$!
    "${vm[@]}" "${clink[@]}" --out "$dir/client" "$here/cross-host.sh" client "$srv" "$gid" \
        >"$dir/client.log" 2>&1 || rc_c=$?
    if [ $rc_c -ne 0 ]; then
        # a client that failed may leave the server waiting for its next command (the
        # client's VM is gone without closing the connection): 30 s, then stop the VMs
        for _ in $(seq 30); do kill -0 $spid 2>/dev/null || break; sleep 1; done
        kill -TERM $spid ${rpid:+$rpid} 2>/dev/null || true
    fi
    wait $spid || rc_s=$?
    [ -z "$rpid" ] || wait "$rpid" || rc_r=$?
    [ -z "$rpid" ] || sed 's/^/router| /' "$dir/router.log"
    sed 's/^/server| /' "$dir/server.log"
    sed 's/^/client| /' "$dir/client.log"
}

rm -rf "$out"
attempt 1 "$out"
if [ $rc_c -ne 0 ] && [ $rc_c -ne 77 ] && grep -q "no completion within" "$out/client.log"; then
    mv "$out" "$out.attempt1"
    echo "cross-host-run: RETRY: the client's send queue got no completion (soft-RoCE stalled," \
        "above); attempt 1's logs in $out/attempt1"
    attempt 2 "$out"
    mv "$out.attempt1" "$out/attempt1"
fi
if [ $rc_s -eq 77 ] || [ $rc_c -eq 77 ] || [ $rc_r -eq 77 ]; then
    echo "cross-host-run: SKIP: a VM cannot boot here"
    exit 77
fi
[ $rc_s -eq 0 ] && [ $rc_c -eq 0 ] && [ $rc_r -eq 0 ] ||
    { echo "cross-host-run: FAIL: server exit $rc_s, client exit $rc_c, router exit $rc_r"; exit 1; }
HINTSIM_BIN=$bin bash "$here/cross-host-check.sh" "$out/client" "$topo"
