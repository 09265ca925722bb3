#!/usr/bin/env bash
# capture-replay-check.sh OUTDIR - on the host, after capture-replay.sh: per round, validate's
# latency of the 64 B messages over capture bench's latency of the same message on the same
# path in the same boot, paced as the trace is, for the sparse open-loop traces on LL and the
# closed-loop ping-pong on BW. Like with like: the bench counts from when a post begins to when
# its completion is polled (post_to_completion), and so does validate's
# replay_overhead.post_to_completion_us; validate's measured latency counts from the trace's
# post time instead, which adds how late the post began (replay_overhead.post_late_us:
# printed, not asserted, since the guest's vCPUs are descheduled for milliseconds when the
# host is loaded).
# Each validate runs between two runs of its bench (before, after). This soft-RoCE drifts
# with the shared host's load within seconds (64 B after 5 ms of idle: p50 80-275 us in one
# boot), so the bench's two figures bound where the device was during the round: a round's
# deviation is 1 when validate's p50 lies between them, else validate's p50 over the nearer
# one. The median of the rounds' deviations must be within 25% of 1 for each trace; a replay
# that stamps completions late (open loop: only when the send queue is full; closed loop: at
# the next signalled WR, up to 15 messages later) is off by an order of magnitude, and one
# that is 25% off in most rounds fails whenever the device holds still.
set -euo pipefail
out=$1
fail() { echo "capture-replay-check: FAIL: $*" >&2; exit 1; }
# num FILE OBJ KEY: the first numeric "KEY" after the first "OBJ":{ in FILE
num() {
    tr -d ' \t\n\r' <"$1" | grep -o "\"$2\":{.*" | head -1 |
        grep -o -E "\"$3\":-?[0-9.eE+-]+" | head -1 | sed 's/.*://'
}
positive() { awk -v x="$1" 'BEGIN {exit !(x + 0 > 0)}'; }

ROUNDS=5
# p50 FILE: the bench's post-to-completion p50 in FILE, checked to be paced every $gap us
# over $count messages, as its validate's trace is
p50() {
    [ -s "$1" ] || fail "$1 missing"
    [ "$(num "$1" post_to_completion gap_us)" = "$gap" ] ||
        fail "$name, round $r: $1 was not paced every $gap us"
    [ "$(num "$1" post_to_completion count)" = "$count" ] ||
        fail "$name, round $r: $1 did not time $count messages"
    num "$1" post_to_completion p50_us
}
# deviations NAME BENCH VALIDATE GAP_US COUNT: prints each round's figures; the median
# deviation goes to $med
deviations() {
    local r b a v mp lp devs=""
    name=$1 gap=$4 count=$5
    for r in $(seq 1 $ROUNDS); do
        v=$out/$3_$r.json
        [ -s "$v" ] || fail "$v missing"
        b=$(p50 "$out/$2_$r.json")
        a=$(p50 "$out/$2_after_$r.json")
        vp=$(num "$v" post_to_completion_us p50)
        mp=$(num "$v" measured p50_us)
        lp=$(num "$v" post_late_us p50)
        for x in "$b" "$a" "$vp" "$mp"; do
            positive "$x" || fail "$name, round $r: a p50 missing or not positive in $v or a bench"
        done
        [ -n "$lp" ] || fail "$name, round $r: no post_late_us in $v"
        [ "$(num "$v" replay_overhead posts)" = "$count" ] ||
            fail "$v: replay_overhead.posts is not $count"
        q=$(awk -v v="$vp" -v b="$b" -v a="$a" 'BEGIN {
            lo = a < b ? a : b; hi = a < b ? b : a
            printf "%.3f", v < lo ? v / lo : (v > hi ? v / hi : 1) }')
        devs="$devs $q"
        echo "capture-replay-check: $name, round $r: post to completion p50: bench before $b us," \
            "validate $vp us, bench after $a us: deviation $q (validate's measured p50 $mp us," \
            "posts late p50 $lp us)"
    done
    med=$(tr ' ' '\n' <<<"$devs" | sed '/^$/d' | sort -g | sed -n "$(((ROUNDS + 1) / 2))p")
    echo "capture-replay-check: $name: median deviation $med"
}

check() { # check NAME BENCH VALIDATE GAP_US COUNT
    deviations "$@"
    awk -v m="$med" 'BEGIN {exit !(m >= 0.75 && m <= 1.25)}' ||
        fail "$1: validate's p50 is $med x the nearer of its two benches' for the same" \
            "message and path (goal 0.75-1.25)"
}

check "64 B every 500 us on LL, open loop" bench_ll sparse_ll 500 3000
check "64 B ping-pong on BW, closed loop, 1 WR in 16 signalled" bench_bw pingpong_bw 230 3000
check "64 B every 5 ms on LL, open loop" bench_ll5ms sparse5ms_ll 5000 300
# for the record (not asserted): how much slower the device is after 500 us of idle
for r in $(seq 1 $ROUNDS); do
    echo "capture-replay-check: bench round $r: 64 B on LL p50 every 500 us / back to back:" \
        "$(awk -v a="$(num "$out/bench_ll_$r.json" post_to_completion p50_us)" \
            -v b="$(num "$out/bench_llb2b_$r.json" post_to_completion p50_us)" \
            'BEGIN {printf "%.3f", a / b}') (not checked)"
done

# every measured candidate reports the replay's own overhead, with its figures
for f in "$out"/sparse_ll_*.json "$out"/sparse5ms_ll_*.json "$out"/pingpong_bw_*.json; do
    for o in poll_gap_us post_late_us post_to_completion_us; do
        for k in p50 p99 max; do
            [ -n "$(num "$f" "$o" "$k")" ] || fail "$f: replay_overhead lacks $o.$k"
        done
    done
    posts=$(num "$f" replay_overhead posts)
    polls=$(num "$f" replay_overhead polls)
    awk -v p="$polls" -v n="$posts" 'BEGIN {exit !(p >= n)}' ||
        fail "$f: replay_overhead.polls is $polls, fewer than its $posts posts"
    echo "capture-replay-check: $(basename "$f"): $polls polls, between two: p50" \
        "$(num "$f" poll_gap_us p50) p99 $(num "$f" poll_gap_us p99) max" \
        "$(num "$f" poll_gap_us max) us; posts late p50 $(num "$f" post_late_us p50)" \
        "p99 $(num "$f" post_late_us p99) us"
done
echo "capture-replay-check: PASS"
