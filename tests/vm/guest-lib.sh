# guest-lib.sh - helpers every in-VM test script shares; the base image holds it as
# /hs/lib.sh. A script sets HS_NAME (its prefix in messages) and RES (the file record()
# appends to, if it records) and sources it: `HS_NAME=my-test; . /hs/lib.sh`. busybox sh.

# fail MSG...: print "HS_NAME: FAIL: MSG" and end the script with status 1.
fail() { echo "${HS_NAME:-vm}: FAIL: $*"; exit 1; }

# record KEY VALUE: append "KEY VALUE" to $RES (for the host-side check) and print it.
record() { echo "$1 $2" >>"$RES"; echo "${HS_NAME:-vm}: $1 = $2"; }

# listening PORT [TENTHS]: 0 once a TCP server listens on PORT, 1 after TENTHS tenths of
# a second (default 200) without one.
listening() {
    _n=${2:-200} _i=0
    while [ $_i -lt "$_n" ]; do
        netstat -ltn 2>/dev/null | grep -q ":$1 " && return 0
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}

# wait_listen PORT: wait up to 20 s for a server on PORT, else fail.
wait_listen() { listening "$1" || fail "no server listening on port $1 after 20 s"; }
