#!/usr/bin/env bash
# run-in-vm.sh - run a script inside a qemu VM with a soft-RoCE (rdma_rxe) verbs device.
#
# usage: run-in-vm.sh [options] SCRIPT [ARGS...]
#        run-in-vm.sh [options] --shell
#   --timeout S          kill the VM after S seconds (default 600); exit 124
#   --file HOST[:GUEST]  put a host file in the guest (GUEST defaults to /hs/files/<name>,
#                        relative GUEST paths are under /hs/files, the script's directory)
#   --out HOSTDIR        bring the guest's $OUT (/out) back into HOSTDIR (created)
#   --hintsim PATH       the hintsim binary to install as /usr/bin/hintsim
#                        (default: $HINTSIM_BIN, else build/cli/hintsim)
#   --cache DIR          kernel and base-image cache (default: $HINTSIM_VM_CACHE, else
#                        build/vm-cache)
#   --mem MB --smp N     guest memory (default 1024) and virtual CPUs (default 2)
#   --link LPORT:RPORT:ADDR/PREFIX
#                        a virtio NIC whose frames go as UDP from 127.0.0.1:LPORT to
#                        127.0.0.1:RPORT (another VM started with the ports swapped is the
#                        other end of the wire); the guest gives it ADDR. Repeatable: the
#                        first is eth0, on which the guest runs rxe1, the next eth1, ...
#   --gw ADDR            the guest's default route goes through ADDR (over a --link)
#   --forward            the guest forwards IPv4 between its links (a router)
#   --shell              interactive shell in the VM instead of a script (Ctrl-a x quits)
#   --prepare            only fetch the kernel and build the cached base image
#
# SCRIPT runs under busybox sh as root in /hs/files, with OUT=/out and HS_VM=1; rxe0 is up
# on the dummy netdev d0 (10.77.0.1), and lo (127.0.0.1) is up. Exit status: SCRIPT's; 124
# the VM was killed at the timeout; 77 the VM cannot be booted here for an environment
# reason (no qemu, kernel package unobtainable, qemu refuses to start); 1 the guest failed
# to set up or ended without reporting, or $OUT could not be brought back.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TIMEOUT=600 MEM=1024 SMP=2 SHELL_MODE=0 PREPARE=0 OUTDIR="" GW="" FORWARD=0
LINKS=()
HINTSIM=${HINTSIM_BIN:-$ROOT/build/cli/hintsim}
QEMU_BIN=${HS_VM_QEMU:-qemu-system-x86_64}    # overridable for the harness's own tests
CACHE=${HINTSIM_VM_CACHE:-$ROOT/build/vm-cache}
FILES=() SCRIPT="" ARGS=()
TMP="" SIGNALLED=0 QPID=""

say() { echo "run-in-vm: $*" >&2; }
die() { say "$*"; exit 1; }
skip() { say "SKIP: $*"; exit 77; }
usage() { sed -n '3,/^#$/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }

parse_args() {
    while [ $# -gt 0 ]; do
        case $1 in
        --timeout) TIMEOUT=${2:?}; shift ;;
        --file) FILES+=("${2:?}"); shift ;;
        --out) OUTDIR=${2:?}; shift ;;
        --hintsim) HINTSIM=${2:?}; shift ;;
        --cache) CACHE=${2:?}; shift ;;
        --mem) MEM=${2:?}; shift ;;
        --smp) SMP=${2:?}; shift ;;
        --link) LINKS+=("${2:?}"); shift ;;
        --gw) GW=${2:?}; shift ;;
        --forward) FORWARD=1 ;;
        --shell) SHELL_MODE=1 ;;
        --prepare) PREPARE=1 ;;
        -h|--help) usage 0 ;;
        --) shift; break ;;
        -*) say "unknown option '$1'"; usage ;;
        *) break ;;
        esac
        shift
    done
    [ $PREPARE -eq 0 ] || return 0
    if [ $SHELL_MODE -eq 0 ]; then
        [ $# -ge 1 ] || usage
        SCRIPT=$1; shift
        ARGS=("$@")
        [ -f "$SCRIPT" ] || die "script '$SCRIPT': no such file"
    fi
    [[ $TIMEOUT =~ ^[0-9]+$ && $TIMEOUT -gt 0 ]] || die "--timeout '$TIMEOUT': not a positive number of seconds"
    [[ $MEM =~ ^[0-9]+$ && $MEM -ge 256 ]] || die "--mem '$MEM': not a number of MiB >= 256"
    [[ $SMP =~ ^[0-9]+$ && $SMP -ge 1 ]] || die "--smp '$SMP': not a positive number of CPUs"
    local l
    for l in "${LINKS[@]}"; do
        [[ $l =~ ^[0-9]+:[0-9]+:[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+/[0-9]+$ ]] ||
            die "--link '$l': not LPORT:RPORT:ADDR/PREFIX (IPv4)"
    done
    [[ -z $GW || $GW =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--gw '$GW': not an IPv4 address"
    [ -x "$HINTSIM" ] || die "hintsim binary '$HINTSIM' not found (build first, or --hintsim PATH)"
    return 0
}

# base_key: changes when anything that goes into the base image changes.
base_key() {
    local t
    {
        cat "$HERE/mkinitramfs.sh" "$HERE/guest-init.sh" "$HERE/guest-lib.sh" "$CACHE/kernel/version"
        for t in busybox ib_write_lat ib_write_bw ibv_rc_pingpong ibv_devinfo rdma; do
            stat -L -c '%n %s %Y' "$(command -v "$t" || echo /nonexistent)" 2>/dev/null || echo "$t"
        done
        stat -L -c '%n %s %Y' /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null || true
    } | sha256sum | cut -c1-16
}

# prepare_base: kernel and base initramfs, cached in $CACHE (built once, under a lock).
prepare_base() {
    local rc=0
    command -v "$QEMU_BIN" >/dev/null || skip "$QEMU_BIN not installed (qemu-system-x86)"
    "$HERE/fetch-kernel.sh" "$CACHE" || rc=$?
    [ $rc -eq 0 ] || { [ $rc -eq 77 ] && exit 77; die "kernel fetch failed"; }
    CACHE=$(cd "$CACHE" && pwd)
    BASE=$CACHE/base-$(base_key).cpio
    exec 8>"$CACHE/base.lock"
    flock 8
    if [ ! -s "$BASE" ]; then
        say "building base initramfs $BASE"
        "$HERE/mkinitramfs.sh" -k "$CACHE/kernel" -o "$BASE" || die "base initramfs failed"
        find "$CACHE" -maxdepth 1 -name 'base-*.cpio' ! -path "$BASE" -delete    # stale ones
    fi
    flock -s 8    # keep a shared lock until make_initrd has read $BASE
}

# quote ARG: ARG in single quotes for the guest's sh.
quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

# make_initrd: base + an overlay with hintsim, the files, the script, its arguments, a nonce.
make_initrd() {
    local items=(--hintsim "$HINTSIM") f a args=""
    for f in "${FILES[@]}"; do items+=(--file "$f"); done
    NONCE=$$-$RANDOM$RANDOM
    echo "$NONCE" >"$TMP/nonce"
    items+=(--file "$TMP/nonce:/hs/nonce")
    if [ $SHELL_MODE -eq 0 ]; then
        for a in "${ARGS[@]}"; do args+=" $(quote "$a")"; done
        printf '%s\n' "$args" >"$TMP/args"
        items+=(--file "$SCRIPT:/hs/script.sh" --file "$TMP/args:/hs/args")
    fi
    "$HERE/mkinitramfs.sh" --overlay -o "$TMP/overlay.cpio" "${items[@]}" ||
        die "overlay initramfs failed"
    cat "$BASE" "$TMP/overlay.cpio" >"$TMP/initrd.cpio"
    flock -u 8
}

qemu_args() {
    # the uncompressed vmlinux boots through its PVH entry: no bzImage decompression (slow
    # under TCG)
    local kernel=$CACHE/kernel/vmlinux append="console=ttyS0 panic=-1 quiet"
    local net=() addrs="" i=0 l
    [ -s "$kernel" ] || kernel=$CACHE/kernel/vmlinuz
    # a test's own arguments (hs_add_vm_test APPEND), then the user's
    append+=" ${HS_VM_TEST_APPEND:-} ${HS_VM_APPEND:-}"
    for l in "${LINKS[@]}"; do
        local lport=${l%%:*} rest=${l#*:} rport addr ip o
        rport=${rest%%:*} addr=${rest#*:}
        ip=${addr%/*}
        IFS=. read -r -a o <<<"$ip"
        # the MAC from the address's last two bytes: the NICs on one wire need their own
        net+=(-netdev "socket,id=l$i,udp=127.0.0.1:$rport,localaddr=127.0.0.1:$lport"
              -device "virtio-net-pci,netdev=l$i,mac=$(printf '52:54:00:88:%02x:%02x' "${o[2]}" "${o[3]}")")
        addrs+=${addrs:+,}$addr
        i=$((i + 1))
    done
    [ -z "$addrs" ] || append+=" hs_net=$addrs"
    [ -z "$GW" ] || append+=" hs_gw=$GW"
    [ $FORWARD -eq 0 ] || append+=" hs_forward=1"
    QEMU=("$QEMU_BIN" -accel tcg -cpu max -smp "$SMP" -m "$MEM" -no-reboot
          -nodefaults -no-user-config -display none
          -kernel "$kernel" -initrd "$TMP/initrd.cpio" -append "$append" "${net[@]}")
    if [ -n "$OUTDIR" ]; then
        truncate -s 1G "$TMP/out.img"    # sparse: costs only what the guest writes
        QEMU+=(-drive "file=$TMP/out.img,format=raw,if=virtio,cache=unsafe")
    fi
}

run_shell() {
    local rc=0
    "${QEMU[@]}" -serial mon:stdio || rc=$?
    exit $rc
}

# run_script: boot, stream the console (CRs removed) while qemu writes it to a file. qemu runs
# under timeout(1) in the background so that a TERM/INT sent to this script stops the VM
# (timeout passes the signal on to qemu) instead of leaving it running.
run_script() {
    local t0 tpid
    t0=$(date +%s.%N)
    : >"$TMP/console.raw"
    timeout -k 10 "$TIMEOUT" "${QEMU[@]}" -serial stdio </dev/null >"$TMP/console.raw" 2>&1 &
    QPID=$!
    trap 'SIGNALLED=1; kill -TERM $QPID 2>/dev/null' TERM INT HUP
    tail -s 0.2 --pid=$QPID -f "$TMP/console.raw" | tr -d '\r' &
    tpid=$!
    QEMU_RC=0
    wait $QPID || QEMU_RC=$?
    while kill -0 $QPID 2>/dev/null; do    # a trapped signal ends wait early
        QEMU_RC=0
        wait $QPID || QEMU_RC=$?
    done
    wait $tpid || true
    trap - TERM INT HUP
    tr -d '\r' <"$TMP/console.raw" >"$TMP/console.log"
    ELAPSED=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    [ $SIGNALLED -eq 0 ] || die "interrupted: VM stopped"
}

# collect: the script's status from the console markers, $OUT from the disk image.
collect() {
    local exit_line rc out
    if [ "$QEMU_RC" -eq 124 ] || [ "$QEMU_RC" -eq 137 ]; then
        say "TIMEOUT: the VM was killed after ${TIMEOUT} s"
        exit 124
    fi
    exit_line=$(grep -ao "HS-VM-$NONCE-EXIT rc=[0-9]* out=[a-z]*" "$TMP/console.log" | tail -n1 || true)
    if [ -z "$exit_line" ]; then
        if grep -aq "HS-VM-$NONCE-SETUP-FAILED" "$TMP/console.log"; then
            die "guest setup failed: $(grep -ao "HS-VM-$NONCE-SETUP-FAILED.*" "$TMP/console.log")"
        fi
        if ! grep -aq "HS-VM-$NONCE-READY" "$TMP/console.log" && [ "$QEMU_RC" -ne 0 ]; then
            skip "qemu could not start the VM (exit $QEMU_RC); see its message above"
        fi
        die "the guest ended without reporting a status (qemu exit $QEMU_RC): kernel panic?"
    fi
    rc=${exit_line#*rc=}; rc=${rc%% *}
    out=${exit_line##*out=}
    say "script exit $rc, VM wall time ${ELAPSED} s"
    if [ -n "$OUTDIR" ]; then
        [ "$out" = ok ] || die "the guest could not write \$OUT to its disk (out=$out)"
        mkdir -p "$OUTDIR"
        tar -xf "$TMP/out.img" -C "$OUTDIR" || die "cannot unpack \$OUT into '$OUTDIR'"
    fi
    exit "$rc"
}

main() {
    parse_args "$@"
    prepare_base
    [ $PREPARE -eq 0 ] || { say "kernel and base image ready in $CACHE"; exit 0; }
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/hs-vm.XXXXXX")
    trap 'rm -rf "$TMP"' EXIT
    make_initrd
    qemu_args
    [ $SHELL_MODE -eq 0 ] || run_shell
    run_script
    collect
}

main "$@"
