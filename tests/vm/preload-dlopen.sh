#!/bin/sh
# preload-dlopen.sh - runs inside the soft-RoCE VM (busybox sh): `hintsim capture run` around
# hcap_vapp (tests/test_hcap_vapp.c), a verbs program that loads libibverbs the way NCCL does
# (dlopen + dlvsym, or dlsym on the handle, RTLD_DEFAULT, RTLD_NEXT from a library) and posts
# through qp->context->ops, and around the same program linked normally. Each run leaves
# its traces, summaries and `capture run`'s messages in $OUT for preload-dlopen-check.sh:
#   dl-MODE, linked  QP A: WRITES RDMA WRITEs of SIZE B in chains of SIGNAL (the last of
#                    each signalled); QP B: SENDS signalled 64-byte SENDs
#   noaudit          capture run --no-audit around the nccl mode: nothing is seen (control)
#   quiet            the nccl mode with --post 0: a device opened, no WR
#   outside          QP B posts OUTSIDE WRITEs through the provider's post_send of a second
#                    libibverbs copy (dlmopen), not its context's ops; no SENDs
#   nodev            a command that opens no device, exit status 5
set -u
WRITES=600
SIZE=1024
SIGNAL=20
SENDS=100
OUTSIDE=50
LIB=/usr/lib/libhintcap.so
RES=$OUT/dlopen-results.txt

HS_NAME=preload-dlopen
. /hs/lib.sh # fail, record

# cap NAME [capture run options] -- CMD...: CMD under capture run into $OUT/NAME; its output
# (the program's and capture run's) in $OUT/NAME.txt, its exit status recorded.
cap() {
    name=$1; shift
    timeout 300 hintsim capture run --lib "$LIB" -o "$OUT/$name" "$@" >"$OUT/$name.txt" 2>&1
    record "${name}_exit" $?
}

: >"$RES"
[ -f "$LIB" ] || fail "$LIB missing in the guest"
[ -f /usr/lib/libhintcap-audit.so ] || fail "/usr/lib/libhintcap-audit.so missing in the guest"
W="--device rxe0 --writes $WRITES --size $SIZE --signal $SIGNAL"
for mode in nccl so1 default next; do
    cap "dl-$mode" -- hcap_vapp $mode $W --sends $SENDS
done
cap linked -- hcap_vapp_linked linked $W --sends $SENDS
cap noaudit --no-audit -- hcap_vapp nccl $W --sends $SENDS
cap quiet -- hcap_vapp nccl $W --post 0
cap outside -- hcap_vapp nccl $W --sends 0 --outside $OUTSIDE
cap nodev -- sh -c 'exit 5'
for f in "$OUT"/*/*.hst; do
    [ -e "$f" ] || continue
    hintsim trace validate "$f" >>"$OUT/validate.txt" 2>&1 || fail "trace validate $f"
done
echo "preload-dlopen: done"
