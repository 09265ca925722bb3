#!/bin/sh
# capture-hostile.sh - runs inside the soft-RoCE VM: the real `capture bench --server` under
# hostile connections (the cap_hostile tool: connect-then-close, a short hello, garbage, the
# old protocol, another version, a wrong or empty token, max_msg huge, wrapping 2^63+1, zero
# and negative as unsigned, a hint and flags out of bounds, and a connection that says
# nothing all along). Each must be refused as expected and logged, and the server must then
# serve the real client (two hints: it connects twice) and exit 0. Also: a server given no
# token makes one and prints it (the client takes it from HINTSIM_TOKEN); it listens on
# rxe0's address (10.77.0.1), not on 127.0.0.1; --bind 0.0.0.0 listens on every address; a
# client with a wrong token is refused (exit 1, saying so) and the server goes on to serve
# the right one.
set -u
HP=18560
HS_NAME=capture-hostile
. /hs/lib.sh # fail, wait_listen
A=10.77.0.1
unset HINTSIM_TOKEN

# 1. a server with a token of its own making, hostile clients, then the real one
timeout 180 hintsim capture bench -d rxe0 -x 0 --port $HP --server --timeout 60 \
    >"$OUT/srv.out" 2>"$OUT/srv.err" &
spid=$!
wait_listen $HP
tok=$(sed -n 's/.*this server.s token: \([0-9a-f]*\) .*/\1/p' "$OUT/srv.err")
[ ${#tok} -eq 32 ] || { cat "$OUT/srv.err"; fail "the server printed no 32-character token"; }
netstat -ltn | grep ":$HP " >"$OUT/listen.txt"
grep -q "$A:$HP " "$OUT/listen.txt" && ! grep -q -E "0.0.0.0:$HP |:::$HP " "$OUT/listen.txt" ||
    { cat "$OUT/listen.txt"; fail "the server does not listen on rxe0's address only"; }
./cap_hostile silent $A $HP 120 >"$OUT/silent.txt" 2>&1 &
qpid=$!
./cap_hostile cases $A $HP "$tok" >"$OUT/cases.txt" 2>&1 ||
    { cat "$OUT/cases.txt" "$OUT/srv.err"; fail "a hostile connection not refused as it should"; }
cat "$OUT/cases.txt"
# the loopback address is not served
timeout 30 env HINTSIM_TOKEN="$tok" hintsim capture bench -d rxe0 -x 0 --port $HP \
    --connect 127.0.0.1 --timeout 2 --sizes 64 >"$OUT/lo.out" 2>"$OUT/lo.err" &&
    fail "a client reached the server through 127.0.0.1"
grep -q "cannot reach 127.0.0.1" "$OUT/lo.err" ||
    { cat "$OUT/lo.err"; fail "127.0.0.1: not the error of an address nobody listens on"; }
HINTSIM_TOKEN="$tok" timeout 120 hintsim capture bench -d rxe0 -x 0 --port $HP --connect $A \
    --timeout 60 --sizes 64,4K --hint 0,4K --iters 20 --warmup 2 >"$OUT/cli.out" 2>"$OUT/cli.err" ||
    { cat "$OUT/cli.err" "$OUT/srv.err"; fail "the real client after the hostile ones"; }
wait $spid || { cat "$OUT/srv.err"; fail "the server did not survive the hostile connections"; }
wait $qpid || { cat "$OUT/silent.txt"; fail "the silent connection was left open"; }
cat "$OUT/srv.err"
n=$(grep -c "refused a connection from $A" "$OUT/srv.err")
[ "$n" -ge 14 ] || fail "the server logged $n refusals, expected 14 (13 cases and the silent one)"
for needle in "after 0 of the hello" "max_msg 9223372036854775809 is outside" \
    "max_msg 18446744073709551615 is outside" "max_msg 0 is outside" "wrong token" \
    "control protocol 1" "magic 0x4141414141414141"; do
    grep -q "$needle" "$OUT/srv.err" || fail "the server's log lacks '$needle'"
done
grep -q "Gb/s" "$OUT/cli.out" || { cat "$OUT/cli.out"; fail "the real client printed no results"; }
echo "capture-hostile: ok: 13 hostile connections and a silent one refused, then served"

# 2. a client with a wrong token is refused; the right one is served after it (tokens have
# 16 characters at least)
RIGHT=vm-hostile-right-token
timeout 120 hintsim capture bench -d rxe0 -x 0 --port $HP --server --timeout 60 --token $RIGHT \
    >"$OUT/srv2.out" 2>"$OUT/srv2.err" &
spid=$!
wait_listen $HP
timeout 60 hintsim capture bench -d rxe0 -x 0 --port $HP --connect $A --timeout 20 \
    --token vm-hostile-wrong-token --sizes 64 >"$OUT/wrong.out" 2>"$OUT/wrong.err"
rc=$?
[ $rc -eq 1 ] && grep -q "refused this client's token" "$OUT/wrong.err" ||
    { cat "$OUT/wrong.err"; fail "wrong token: exit $rc"; }
timeout 120 hintsim capture bench -d rxe0 -x 0 --port $HP --connect $A --timeout 60 \
    --token $RIGHT --sizes 64 --iters 20 --warmup 2 --phases pingpong >"$OUT/right.out" 2>&1 ||
    { cat "$OUT/right.out" "$OUT/srv2.err"; fail "the right token after a wrong one"; }
wait $spid || { cat "$OUT/srv2.err"; fail "server 2"; }
grep -q "refused a connection from $A: hello: wrong token" "$OUT/srv2.err" ||
    fail "the server did not log the wrong token"
echo "capture-hostile: ok: a wrong token refused, the right one served"

# 3. --bind 0.0.0.0: every address, as before the default changed
ANY=vm-hostile-any-token
timeout 120 hintsim capture bench -d rxe0 -x 0 --port $HP --server --timeout 60 --bind 0.0.0.0 \
    --token $ANY >"$OUT/srv3.out" 2>"$OUT/srv3.err" &
spid=$!
wait_listen $HP
HINTSIM_TOKEN=$ANY timeout 120 hintsim capture bench -d rxe0 -x 0 --port $HP --connect 127.0.0.1 \
    --timeout 60 --sizes 64 --iters 20 --warmup 2 --phases pingpong >"$OUT/any.out" 2>&1 ||
    { cat "$OUT/any.out" "$OUT/srv3.err"; fail "--bind 0.0.0.0: client over 127.0.0.1"; }
wait $spid || { cat "$OUT/srv3.err"; fail "server 3"; }
echo "capture-hostile: ok: --bind 0.0.0.0 serves 127.0.0.1"
echo "capture-hostile: PASS"
