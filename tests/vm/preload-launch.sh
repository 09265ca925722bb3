#!/bin/sh
# preload-launch.sh - runs inside the soft-RoCE VM (busybox sh): `hintsim capture run` around
# launchers that start the verbs processes as their children, for preload-launch-check.sh:
#   mpi    capture run -- mpirun -n 2 hcap_vapp nccl ...  (Open MPI 4 with the image's files;
#          the environment, LD_PRELOAD and LD_AUDIT included, reaches the ranks unchanged)
#   torch  capture run -- sh -c 'RANK=0 hcap_vapp ... & RANK=1 hcap_vapp ...; wait' (what
#          torchrun does: children with RANK in their environment)
# Each rank: QP A posts WRITES WRITEs of SIZE B in chains of SIGNAL, QP B posts SENDS SENDs.
set -u
WRITES=100
SIZE=2048
SIGNAL=10
SENDS=10
LIB=/usr/lib/libhintcap.so
RES=$OUT/launch-results.txt

HS_NAME=preload-launch
. /hs/lib.sh # fail, record

: >"$RES"
[ -f "$LIB" ] || fail "$LIB missing in the guest"
# the bare VM's host name is "(none)", which Open MPI refuses as a node name
hostname hs-launch-vm || fail "cannot set the host name"
V="hcap_vapp nccl --device rxe0 --writes $WRITES --size $SIZE --signal $SIGNAL --sends $SENDS"
if command -v mpirun >/dev/null 2>&1; then
    record mpi_available 1
    # no ssh here: the single-node 'isolated' launcher; as root in the VM
    timeout 300 hintsim capture run --lib "$LIB" -o "$OUT/mpi" -- mpirun --allow-run-as-root \
        --oversubscribe --mca plm isolated -n 2 $V >"$OUT/mpi.txt" 2>&1
    record mpi_exit $?
else
    record mpi_available 0
fi
timeout 300 hintsim capture run --lib "$LIB" -o "$OUT/torch" -- sh -c \
    "RANK=0 $V & RANK=1 $V & wait %1; a=\$?; wait %2; b=\$?; exit \$((a + b))" \
    >"$OUT/torch.txt" 2>&1
record torch_exit $?
echo "preload-launch: done"
