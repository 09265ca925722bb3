#!/bin/sh
# cross-host.sh ROLE PEER GID - runs inside one of two soft-RoCE VMs joined by a wire
# (run-in-vm.sh --link; cross-host-run.sh starts both): the live commands' --server /
# --connect ends on two hosts, each with its own kernel and device (rxe1 on eth0), the peer
# found by its address, not 127.0.0.1 (each server listens on its device's address, the
# default), both ends given the sessions' token. ROLE is server or client; PEER the other VM's
# address; GID the GID index both use (1: the IPv4-mapped GID, RoCE v2 over IPv4; 0: the
# IPv6 link-local one).
# In turn, each a session of its own: capture bench (two hints: the client reconnects per
# hint), calibrate, validate (the trace the first session captured, predicted with the
# profile the second one fitted); then one whose GIDs do not pair (the server's link-local
# against the client's GID) must fail at connection, naming both. The client
# leaves its outputs in $OUT for the host-side check (cross-host-check.sh); each end writes
# its console output there too.
set -u
ROLE=$1 PEER=$2 GID=$3
HS_NAME="cross-host-$ROLE"
. /hs/lib.sh # fail
P=18515
K="--token vm-cross-host-token" # the sessions' shared token
T="--timeout 120 $K"

# the wire: the peer answers ARP and ping once its VM is up (the two boot independently)
i=0
while ! ping -c 1 -W 1 "$PEER" >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 120 ] || fail "no answer from $PEER on eth0 after 120 tries"
done
echo "$HS_NAME: $PEER answers on eth0; rxe1 GID[$GID] $(cat /sys/class/infiniband/rxe1/ports/1/gids/$GID)"

# run NAME CMD...: CMD with its output in $OUT/NAME.out and .err, failing the script with
# them shown
run() {
    name=$1
    shift
    echo "$HS_NAME: $*"
    "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" ||
        { rc=$?; cat "$OUT/$name.out" "$OUT/$name.err"; fail "$name: exit $rc"; }
}

if [ "$ROLE" = server ]; then
    run srv-bench hintsim capture bench -d rxe1 -x "$GID" -P $P --server $T
    run srv-calibrate hintsim calibrate -d rxe1 -x "$GID" -P $P --server $T
    run srv-validate hintsim validate -d rxe1 -x "$GID" -P $P --server $T
    echo "$HS_NAME: served three sessions"
    # a fourth with GIDs that do not pair: this end's link-local one against the client's
    # IPv4 one fails to connect, naming both GIDs (exit 3)
    rc=0
    hintsim capture bench -d rxe1 -x 0 -P $P --server --timeout 60 $K >"$OUT/srv-gid.out" \
        2>"$OUT/srv-gid.err" || rc=$?
    cat "$OUT/srv-gid.err"
    [ $rc -eq 3 ] || fail "mismatched GIDs: exit $rc, not 3"
    exit 0
fi

run cli-bench hintsim capture bench -d rxe1 -x "$GID" -P $P --connect "$PEER" $T \
    --sizes 64,64K --hint 0,64K --iters 200 --warmup 20 -o "$OUT/cross.hst" --json
# calibrate exits 1 when a held-out class is over its bound (calib/README.md) and writes
# the profile all the same: that profile is what this test carries on with
echo "$HS_NAME: hintsim calibrate --connect $PEER"
rc=0
hintsim calibrate -d rxe1 -x "$GID" -P $P --connect "$PEER" $T --iters 100 --warmup 10 \
    -o "$OUT/cross-profile.json" --json -q >"$OUT/cli-calibrate.out" 2>"$OUT/cli-calibrate.err" ||
    rc=$?
# exit 1 is also a run that failed (the device, the peer): then there is no profile
{ [ $rc -le 1 ] && [ -s "$OUT/cross-profile.json" ]; } ||
    { cat "$OUT/cli-calibrate.out" "$OUT/cli-calibrate.err"; fail "cli-calibrate: exit $rc, no profile"; }
# the trace the first session captured, replayed with the profile the second one fitted
run cli-validate hintsim validate "$OUT/cross.hst" -d rxe1 -x "$GID" -P $P --connect "$PEER" $T \
    --profile "$OUT/cross-profile.json" --hint 0,64K --repeat 1 --limit 440 --mode closed \
    -o "$OUT/val" --json -q
hintsim trace validate "$OUT/cross.hst" >"$OUT/trace-validate.txt" 2>&1 ||
    { cat "$OUT/trace-validate.txt"; fail "the captured trace does not validate"; }
hintsim trace info "$OUT/cross.hst" --json >"$OUT/trace-info.json" 2>&1 || fail "trace info"
hintsim profile show "$OUT/cross-profile.json" --json >"$OUT/profile-show.json" 2>&1 ||
    fail "the calibrated profile does not load"
echo "$HS_NAME: three sessions against $PEER done"
rc=0
hintsim capture bench -d rxe1 -x "$GID" -P $P --connect "$PEER" --timeout 60 $K --sizes 64 \
    >"$OUT/cli-gid.out" 2>"$OUT/cli-gid.err" || rc=$?
cat "$OUT/cli-gid.err"
[ $rc -eq 3 ] || fail "mismatched GIDs: exit $rc, not 3"
grep -q "could not be connected to the peer's GID fe80:" "$OUT/cli-gid.err" ||
    fail "mismatched GIDs: the error does not name the peer's link-local GID"
