#!/usr/bin/env bash
# capture-replay-check-selftest.sh CHECK TMPDIR - capture-replay-check.sh on made-up rounds:
# it passes when validate reads like its benches (still or drifting device) and fails when
# validate is ten times late, or 40% slow while the device holds still.
set -euo pipefail
check=$1 dir=$2
mkdir -p "$dir"
# bench FILE GAP P50 COUNT / val FILE P50 COUNT: the fields capture-replay-check.sh reads
bench() {
    printf '{"results":[{"post_to_completion":{"count":%s,"p50_us":%s,"gap_us":%s}}]}\n' \
        "$4" "$3" "$2" >"$1"
}
val() {
    local o='"p50":%s,"p99":%s,"max":%s'
    printf '{"results":[{"measured":{"p50_us":%s}}],"replay_overhead":{"posts":%s,"polls":%s,' \
        "$2" "$3" $(($3 + 100)) >"$1"
    printf "\"poll_gap_us\":{$o},\"post_late_us\":{$o},\"post_to_completion_us\":{$o}}}\n" \
        1 2 3 2 3 4 "$2" "$2" "$2" >>"$1"
}
# mkcase CASE: five rounds; each round's bench before, validate, bench after from the case
mkcase() {
    local d=$dir/$1 r b a v
    rm -rf "$d" && mkdir -p "$d"
    for r in 1 2 3 4 5; do
        case $1 in
        still) b=100 a=102 v=101 ;;
        drift) b=$((60 * r)) a=$((300 - 40 * r)) v=$((150 + r)) ;;
        late) b=100 a=100 v=1000 ;;
        slow) b=100 a=104 v=145 ;;
        esac
        for t in bench_ll:sparse_ll:500:3000 bench_ll5ms:sparse5ms_ll:5000:300 \
            bench_bw:pingpong_bw:230:3000; do
            IFS=: read -r bn vn gap cnt <<<"$t"
            bench "$d/${bn}_$r.json" "$gap" "$b" "$cnt"
            bench "$d/${bn}_after_$r.json" "$gap" "$a" "$cnt"
            val "$d/${vn}_$r.json" "$v" "$cnt"
        done
        bench "$d/bench_llb2b_$r.json" 0 50 300
    done
    echo "$d"
}
expect() { # expect pass|fail CASE
    local rc=0
    bash "$check" "$(mkcase "$2")" >"$dir/$2.log" 2>&1 || rc=$?
    if [ "$1" = pass ] && [ $rc -ne 0 ]; then
        cat "$dir/$2.log"; echo "selftest: FAIL: $2 should pass"; exit 1
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
rm "$dir/still/bench_ll_after_3.json"
rc=0; bash "$check" "$dir/still" >"$dir/missing.log" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "bench_ll_after_3.json missing" "$dir/missing.log" ||
    { cat "$dir/missing.log"; echo "selftest: FAIL: a missing bench not named"; exit 1; }
echo "selftest: a missing bench is named"
