#!/bin/sh
# cross-host-router.sh A B - the router VM of cross-host-run.sh's routed topology: forwards
# between its two links (run-in-vm.sh --forward) until both ends have come and gone: it waits
# up to 180 s for A and B to answer ping, then until neither has for 5 s in a row.
set -u
HS_NAME=cross-host-router
. /hs/lib.sh # fail
A=$1 B=$2
up() { ping -c 1 -W 1 "$1" >/dev/null 2>&1; }
i=0
until up "$A" && up "$B"; do
    i=$((i + 1))
    [ $i -lt 180 ] || fail "$A and $B did not both answer within 180 tries"
done
echo "$HS_NAME: $A and $B answer; forwarding"
gone=0
while [ $gone -lt 5 ]; do
    if up "$A" || up "$B"; then gone=0; else gone=$((gone + 1)); fi
    sleep 1
done
echo "$HS_NAME: both ends gone"
