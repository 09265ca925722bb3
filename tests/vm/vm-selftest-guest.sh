#!/bin/sh
# vm-selftest-guest.sh TOKEN-ARGS... - guest half of vm-selftest.sh: checks what the harness
# promises a script (arguments, files in, cwd, environment), writes a token, a binary file
# and its kernel command line to $OUT, and exits 7 so the host can check that the status and
# $OUT both come back.
fail() { echo "vm-selftest-guest: FAIL: $*"; exit 1; }
[ $# -eq 2 ] || fail "expected 2 arguments, got $#: $*"
[ "$1" = "a b" ] || fail "argument 1 is '$1', wanted 'a b'"
[ "$2" = "it's \$HOME" ] || fail "argument 2 is '$2', wanted \"it's \$HOME\""
[ "$(pwd)" = /hs/files ] || fail "cwd is $(pwd), wanted /hs/files"
[ "$OUT" = /out ] && [ "$HS_VM" = 1 ] || fail "OUT='$OUT' HS_VM='${HS_VM:-}'"
[ -s token.txt ] || fail "/hs/files/token.txt (default guest path) missing"
[ -s /opt/renamed/token-copy.txt ] || fail "/opt/renamed/token-copy.txt (explicit guest path) missing"
cmp token.txt /opt/renamed/token-copy.txt || fail "the two copies of the token differ"
# the shared helpers (guest-lib.sh as /hs/lib.sh): fail's prefix and status, listening's timeout
msg=$(HS_NAME=libcheck; . /hs/lib.sh; fail boom) ; rc=$?
[ $rc -eq 1 ] && [ "$msg" = "libcheck: FAIL: boom" ] || fail "/hs/lib.sh fail: rc $rc, '$msg'"
(. /hs/lib.sh; listening 1 2) && fail "/hs/lib.sh listening: found a server on port 1"
mkdir -p "$OUT/sub"
cp token.txt "$OUT/sub/token.txt"
dd if=/dev/urandom of="$OUT/blob.bin" bs=1024 count=512 2>/dev/null || fail "dd"
md5sum "$OUT/blob.bin" | cut -d' ' -f1 >"$OUT/blob.md5"
cat /proc/cmdline >"$OUT/cmdline"
echo "vm-selftest-guest: all checks passed, exiting 7 on purpose"
exit 7
