#!/usr/bin/env bash
# cross-host-run.sh CACHE HINTSIM OUTDIR GID [routed] - the live commands' --server and
# --connect ends in two soft-RoCE VMs (run-in-vm.sh --link: frames as UDP between qemu
# processes), each running cross-host.sh; then the host checks what the client brought back
# (cross-host-check.sh). Plain: one wire, server 10.88.0.1, client 10.88.0.2. routed: the
# server (10.88.0.2) and the client (10.89.0.2) on two subnets joined by a third VM that
# forwards (10.88.0.1, 10.89.0.1; cross-host-router.sh), so RoCE v2 crosses a router as on a
# routed cluster fabric. Exit: 0 the ends and the check passed, 77 a VM cannot boot here, else
# 1 (124 a VM timed out).
set -euo pipefail
cache=$1 bin=$2 out=$3 gid=$4 topo=${5:-plain}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out/server" "$out/client"
# UDP ports for the wires, from this process's pid (two runs at once do not share them)
p=$((20000 + ($$ % 5000) * 4))
vm() { "$here/run-in-vm.sh" --cache "$cache" --hintsim "$bin" --smp 1 --timeout 420 "$@"; }
rc_c=0 rc_s=0 rc_r=0 rpid=""
if [ "$topo" = routed ]; then
    srv=10.88.0.2 cli=10.89.0.2
    vm --link "$p:$((p + 1)):10.88.0.1/24" --link "$((p + 2)):$((p + 3)):10.89.0.1/24" \
        --forward "$here/cross-host-router.sh" "$srv" "$cli" >"$out/router.log" 2>&1 &
    rpid=$!
    slink=(--link "$((p + 1)):$p:$srv/24" --gw 10.88.0.1)
    clink=(--link "$((p + 3)):$((p + 2)):$cli/24" --gw 10.89.0.1)
else
    srv=10.88.0.1 cli=10.88.0.2
    slink=(--link "$p:$((p + 1)):$srv/24")
    clink=(--link "$((p + 1)):$p:$cli/24")
fi
vm "${slink[@]}" --out "$out/server" "$here/cross-host.sh" server "$cli" "$gid" \
    >"$out/server.log" 2>&1 &
spid=$!
vm "${clink[@]}" --out "$out/client" "$here/cross-host.sh" client "$srv" "$gid" \
    >"$out/client.log" 2>&1 || rc_c=$?
wait $spid || rc_s=$?
[ -z "$rpid" ] || wait "$rpid" || rc_r=$?
[ -z "$rpid" ] || sed 's/^/router| /' "$out/router.log"
sed 's/^/server| /' "$out/server.log"
sed 's/^/client| /' "$out/client.log"
if [ $rc_s -eq 77 ] || [ $rc_c -eq 77 ] || [ $rc_r -eq 77 ]; then
    echo "cross-host-run: SKIP: a VM cannot boot here"
    exit 77
fi
[ $rc_s -eq 0 ] && [ $rc_c -eq 0 ] && [ $rc_r -eq 0 ] ||
    { echo "cross-host-run: FAIL: server exit $rc_s, client exit $rc_c, router exit $rc_r"; exit 1; }
HINTSIM_BIN=$bin bash "$here/cross-host-check.sh" "$out/client" "$topo"
