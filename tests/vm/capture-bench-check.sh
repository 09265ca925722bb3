#!/usr/bin/env bash
# capture-bench-check.sh OUTDIR - on the host, after capture-bench.sh: the traces came back,
# validate, and hold what the bench says it wrote (records per size, cold start flagged,
# both paths used, completion times known).
set -euo pipefail
out=$1
bin=${HINTSIM_BIN:-hintsim}
fail() { echo "capture-bench-check: FAIL: $*"; exit 1; }

"$bin" trace validate "$out/loop.hst" || fail "loop.hst does not validate on the host"
info=$("$bin" trace info "$out/loop.hst")
echo "$info"
# 4 sizes x (40 measured + 5 warm-up)
grep -q "^records    180 " <<<"$info" || fail "loop.hst: expected 180 records"
grep -q "cold start 20 " <<<"$info" || fail "loop.hst: expected 20 cold-start records"
grep -q "path       LL 90  BW 90 " <<<"$info" || fail "loop.hst: expected 90 LL and 90 BW records"
grep -q "completion 180 of 180 known" <<<"$info" || fail "loop.hst: completion times missing"
grep -q -E '"moderation":[[:space:]]*"emulated"' "$out/loop.json" ||
    fail "loop.json does not say that rxe's CQ moderation is emulated"
"$bin" trace validate "$out/client.hst" || fail "client.hst does not validate"
[ -s "$out/hints.csv" ] || fail "hints.csv missing"
echo "capture-bench-check: PASS"
