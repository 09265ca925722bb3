#!/usr/bin/env bash
# capture-replay-check-selftest.sh CHECK TMPDIR - capture-replay-check.sh on made-up rounds:
# it passes when validate reads like its benches (still or drifting device, or slow only in
# rounds where the host ran it slower than its benches), fails when validate is ten times
# late, or 40% slow while the device and the host hold still, and cannot decide (exit 77)
# when the host's speed differed in most rounds.
set -euo pipefail
check=$1 dir=$2
mkdir -p "$dir"
# bench FILE GAP P50 COUNT POLLGAP / val FILE P50 COUNT POLLGAP: the fields
# capture-replay-check.sh reads
bench() {
    printf '{"results":[{"post_to_completion":{"count":%s,"p50_us":%s,"gap_us":%s,' \
        "$4" "$3" "$2" >"$1"
    printf '"poll_gap_us":{"p50":%s,"p99":1,"max":2}}}]}\n' "$5" >>"$1"
}
val() {
    local o='"p50":%s,"p99":%s,"max":%s'
    printf '{"results":[{"measured":{"p50_us":%s}}],"replay_overhead":{"posts":%s,"polls":%s,' \
        "$2" "$3" $(($3 + 100)) >"$1"
    printf "\"poll_gap_us\":{$o},\"post_late_us\":{$o},\"post_to_completion_us\":{$o}}}\n" \
        "$4" 2 3 2 3 4 "$2" "$2" "$2" >>"$1"
}
# mkcase CASE: seven rounds; each round's bench before, validate, bench after (latency p50
# and time between polls, us) from the case
mkcase() {
    local d=$dir/$1 r b a v g=0.18 vg
    rm -rf "$d" && mkdir -p "$d"
    for r in 1 2 3 4 5 6 7; do
        vg=$g
        case $1 in
        still) b=100 a=102 v=101 ;;
        drift) b=$((60 * r)) a=$((300 - 40 * r)) v=$((150 + r)) ;;
        late) b=100 a=100 v=1000 ;;
        slow) b=100 a=104 v=145 ;;
        # validate 1.6x slower in 4 rounds of 7 (a median over all rounds would fail), in
        # each with the host 1.5x slower for it
        hostslow) b=100 a=102 v=$((r % 2 && r > 1 ? 101 : 160)) vg=$((r % 2 && r > 1)) ;;
        # the host slower for validate in 5 rounds of 7: too few rounds to judge
        hostnoise) b=100 a=102 v=$((r < 6 ? 160 : 101)) vg=$((r < 6 ? 0 : 1)) ;;
        esac
        case $vg in 0) vg=0.27 ;; 1) vg=$g ;; esac
        for t in bench_ll:sparse_ll:500:3000 bench_ll5ms:sparse5ms_ll:5000:300 \
            bench_bw:pingpong_bw:230:3000; do
            IFS=: read -r bn vn gap cnt <<<"$t"
            bench "$d/${bn}_$r.json" "$gap" "$b" "$cnt" "$g"
            bench "$d/${bn}_after_$r.json" "$gap" "$a" "$cnt" 0.19
            val "$d/${vn}_$r.json" "$v" "$cnt" "$vg"
        done
        bench "$d/bench_llb2b_$r.json" 0 50 300 "$g"
    done
    echo "$d"
}
expect() { # expect pass|fail|undecided CASE
    local rc=0
    bash "$check" "$(mkcase "$2")" >"$dir/$2.log" 2>&1 || rc=$?
    if [ "$1" = pass ] && [ $rc -ne 0 ]; then
        cat "$dir/$2.log"; echo "selftest: FAIL: $2 should pass"; exit 1
    fi
    if [ "$1" = undecided ] && { [ $rc -ne 77 ] || ! grep -q "UNDECIDED: 2 rounds" "$dir/$2.log"; }; then
        cat "$dir/$2.log"; echo "selftest: FAIL: $2 should be undecided (exit $rc)"; exit 1
    fi
    if [ "$1" = fail ] && { [ $rc -ne 1 ] || ! grep -q "FAIL: 64 B" "$dir/$2.log"; }; then
        cat "$dir/$2.log"; echo "selftest: FAIL: $2 should fail the ratio check (exit $rc)"; exit 1
    fi
    echo "selftest: $2: $1 as expected"
}
expect pass still
expect pass drift
expect fail late
expect fail slow
expect pass hostslow
grep -q "round 2: .*host speed differed" "$dir/hostslow.log" ||
    { cat "$dir/hostslow.log"; echo "selftest: FAIL: round 2's host speed not reported"; exit 1; }
expect undecided hostnoise
rm "$dir/still/bench_ll_after_3.json"
rc=0; bash "$check" "$dir/still" >"$dir/missing.log" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "bench_ll_after_3.json missing" "$dir/missing.log" ||
    { cat "$dir/missing.log"; echo "selftest: FAIL: a missing bench not named"; exit 1; }
echo "selftest: a missing bench is named"
