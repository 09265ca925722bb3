#!/usr/bin/env bash
# cross-host-check.sh OUTDIR [plain|routed] - on the host, after cross-host-run.sh: what the
# client VM brought back holds three sessions against the other VM (not a loopback): the
# captured trace validates here with every record of both hints; each output names the
# device, the GID and the peer (address and GID, the server's); calibrate fitted the link;
# validate measured both candidate hints with the calibrated profile.
set -euo pipefail
out=$1 topo=${2:-plain}
bin=${HINTSIM_BIN:-hintsim}
fail() { echo "cross-host-check: FAIL: $*"; exit 1; }
if [ "$topo" = routed ]; then srv=10.88.0.2 cli=10.89.0.2; else srv=10.88.0.1 cli=10.88.0.2; fi

"$bin" trace validate "$out/cross.hst" || fail "cross.hst does not validate on the host"
info=$("$bin" trace info "$out/cross.hst")
echo "$info" | sed -n '1,4p;/^records/,/^path/p'
# 2 hints x 2 sizes x (200 measured + 20 warm-up); hint 0: both sizes BW, 64K: both LL
grep -q "^records    880 " <<<"$info" || fail "cross.hst: expected 880 records"
grep -q "completion 880 of 880 known" <<<"$info" || fail "cross.hst: completion times missing"
grep -q "cold start 80 " <<<"$info" || fail "cross.hst: expected 80 cold-start records"
grep -q "path       LL 440  BW 440 " <<<"$info" || fail "cross.hst: expected 440 LL and 440 BW"
grep -q "device rxe1 " <<<"$info" || fail "cross.hst: not captured on rxe1 (eth0's device)"

# each session's output: this end's GID and the peer's address and GID (the server's)
for f in cli-bench.out cli-validate.out; do
    tr -d ' \t\n' <"$out/$f" >"$out/$f.flat"
    grep -q "\"role\":\"client\"" "$out/$f.flat" || fail "$f: role is not client"
    grep -q "\"gid\":\"::ffff:$cli\"" "$out/$f.flat" || fail "$f: this end's GID is not ::ffff:$cli"
    grep -q "\"peer\":{\"address\":\"$srv\",\"gid\":\"::ffff:$srv\"}" "$out/$f.flat" ||
        fail "$f: the peer is not $srv (::ffff:$srv)"
done
# capture bench: the four (hint, size) results, each with its three phases measured
[ "$(grep -o '"size_bytes":' "$out/cli-bench.out.flat" | wc -l)" -eq 4 ] ||
    fail "cli-bench.out: expected 4 results"
[ "$(grep -o '"round_trip_half":{"count":200,' "$out/cli-bench.out.flat" | wc -l)" -eq 4 ] ||
    fail "cli-bench.out: expected 200 ping-pongs per result"
[ "$(grep -o '"post_to_completion":{"count":200,' "$out/cli-bench.out.flat" | wc -l)" -eq 4 ] ||
    fail "cli-bench.out: expected 200 post-to-completion samples per result"
[ "$(grep -o '"stream":{"messages":200,"throughput_gbps":[0-9.e-]*[1-9]' "$out/cli-bench.out.flat" |
     wc -l)" -eq 4 ] || fail "cli-bench.out: a stream without throughput"

# calibrate: measured and fitted on this wire, and the profile loads here. Which terms the
# fit can determine is the fit's business (vm_calibrate_fit checks its quality): with three
# qemu guests on the host's cores the link rate or the wire latency may be kept, as the
# profile then says (or, pinned at a bound of its fit, keep the bound); at least one term
# must be fitted from this wire's figures.
prof=$("$bin" profile show "$out/cross-profile.json")
for k in link.gbps link.base_lat_ns; do
    grep -E "^${k//./\\.} .*calibrate: (fitted|not fitted|at the bound of its fit)" <<<"$prof" ||
        fail "$k: not calibrate's"
done
grep -qE "calibrate: fitted from" <<<"$prof" || fail "calibrate fitted no term on this wire"
grep -q "against the server at $srv, " "$out/cross-profile.json" ||
    fail "the profile's notes do not name the server it was measured against"
tr -d ' \t\n' <"$out/cross-profile.json" | grep -q "\"peer\":\"$srv\"" ||
    fail "the profile's meta.calibration.peer is not $srv"

# validate: both candidates measured (440 messages each) against predictions of that profile
grep -q '"profile":{"name":"calibrated-rxe1"' "$out/cli-validate.out.flat" ||
    fail "cli-validate.out: not predicted with the calibrated profile"
[ "$(grep -o '"measured":{"p50_us":[0-9.e+]*[1-9]' "$out/cli-validate.out.flat" | wc -l)" -eq 2 ] ||
    fail "cli-validate.out: expected measured figures for 2 hints"
grep -q '"validation":{"recommended_hint":0,' "$out/cli-validate.out.flat" ||
    fail "cli-validate.out: no validation summary"
# its report (tables only: the guest has no gnuplot) says where it was measured
grep -q "measured on rxe1 (GID ::ffff:$cli) against $srv (GID ::ffff:$srv): best hint" \
    "$out/val/report.html" || fail "val/report.html does not name the device and the peer"
echo "cross-host-check: PASS ($topo: client $cli, server $srv)"
