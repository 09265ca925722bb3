#!/usr/bin/env bash
# vm-selftest.sh CACHE HINTSIM WORKDIR - tests of run-in-vm.sh itself (CTest vm_selftest):
# bad arguments (--link and --gw included) fail before booting; a missing or failing qemu gives 77; in one boot, the
# script's exit status, its quoted arguments, --file (default and explicit guest paths),
# $OUT (a text file in a subdirectory and a binary file, after a failing script) and the
# kernel arguments of HS_VM_TEST_APPEND and HS_VM_APPEND all work;
# a guest that never ends is killed at --timeout with status 124.
set -uo pipefail
CACHE=${1:?usage: vm-selftest.sh CACHE HINTSIM WORKDIR} HINTSIM=${2:?} WORK=${3:?}
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=("$HERE/run-in-vm.sh" --cache "$CACHE" --hintsim "$HINTSIM")
FAILS=0

check() {    # check WHAT WANTED GOT
    if [ "$2" = "$3" ]; then echo "vm-selftest: ok: $1"
    else echo "vm-selftest: FAIL: $1: wanted '$2', got '$3'"; FAILS=$((FAILS + 1)); fi
}

rm -rf "$WORK"
mkdir -p "$WORK"
printf 'echo hi\n' >"$WORK/noop.sh"

rc=0; "${RUN[@]}" "$WORK/missing.sh" 2>/dev/null || rc=$?
check "missing script exits 1 without booting" 1 $rc
rc=0; "${RUN[@]}" --timeout abc "$WORK/noop.sh" 2>/dev/null || rc=$?
check "bad --timeout exits 1" 1 $rc
rc=0; "${RUN[@]}" --mem 64x "$WORK/noop.sh" 2>/dev/null || rc=$?
check "bad --mem exits 1 (not 77: it is no environment reason)" 1 $rc
rc=0; "${RUN[@]}" --link 1:2:10.0.0.1 "$WORK/noop.sh" 2>/dev/null || rc=$?
check "--link without /PREFIX exits 1" 1 $rc
rc=0; "${RUN[@]}" --link 1:2:10.0.0.1/24 --gw host "$WORK/noop.sh" 2>/dev/null || rc=$?
check "--gw not an IPv4 address exits 1" 1 $rc
rc=0; HS_VM_QEMU=/nonexistent/qemu "${RUN[@]}" "$WORK/noop.sh" || rc=$?
check "missing qemu exits 77 (skipped)" 77 $rc
rc=0; HS_VM_QEMU=false "${RUN[@]}" "$WORK/noop.sh" || rc=$?
check "qemu failing to start exits 77 (skipped)" 77 $rc

token="token-$$-$RANDOM"
echo "$token" >"$WORK/token.txt"
rc=0
HS_VM_TEST_APPEND="hs_test_arg=$token" HS_VM_APPEND="hs_user_arg=$token" \
"${RUN[@]}" --timeout 600 --out "$WORK/out" --file "$WORK/token.txt" \
    --file "$WORK/token.txt:/opt/renamed/token-copy.txt" \
    "$HERE/vm-selftest-guest.sh" "a b" "it's \$HOME" || rc=$?
check "the script's exit status comes back" 7 $rc
check "\$OUT text file comes back (subdirectory)" "$token" "$(cat "$WORK/out/sub/token.txt" 2>&1)"
check "\$OUT binary file comes back intact" "$(cat "$WORK/out/blob.md5" 2>&1)" \
      "$(md5sum "$WORK/out/blob.bin" 2>&1 | cut -d' ' -f1)"
# hs_add_vm_test's APPEND (HS_VM_TEST_APPEND) and the user's HS_VM_APPEND both reach the
# guest kernel, the test's first
check "kernel arguments: the test's, then the user's" yes \
      "$(grep -q "hs_test_arg=$token.* hs_user_arg=$token" "$WORK/out/cmdline" && echo yes || echo no)"

printf 'echo sleeping forever; sleep 100000\n' >"$WORK/hang.sh"
t0=$(date +%s)
rc=0; "${RUN[@]}" --timeout 30 "$WORK/hang.sh" || rc=$?
check "a hung guest is killed at the timeout with 124" 124 $rc
t=$(( $(date +%s) - t0 ))
check "killed within timeout + 20 s (took ${t} s)" yes "$([ $t -le 50 ] && echo yes || echo no)"

[ $FAILS -eq 0 ] || { echo "vm-selftest: $FAILS check(s) failed"; exit 1; }
echo "vm-selftest: all checks passed"
