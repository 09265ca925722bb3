#!/bin/sh
# capture-replay.sh - runs inside the soft-RoCE VM: does validate's live replay measure the
# device, not itself? In one boot, side by side, each bench paced as its trace is
# (`--gap-us`), since this guest's soft-RoCE is slower after idle (after 500 us: 1.05-1.8x a
# back-to-back message, varying with the host's load; after 5 ms: 1.6-4x):
#  1. `capture bench` of 64 B on the LL path (hint 4K, latency phase, one message every
#     500 us, each waited for) and `validate` (open loop) of a sparse trace of the same
#     message, 64 B every 500 us, under hint 4K (every message on LL, each alone on the
#     wire). A replay that progresses completions while it waits measures each message as
#     the bench does; one that reads completions only when the send queue is full (32 WRs)
#     measures 31 gaps. The same at 5 ms; the bench back to back for the record.
#  2. The same on the BW path in closed loop: the bench's 64 B latency at hint 0 with every
#     WR signalled, one message every 230 us (about the ping-pong's cycle), and
#     `validate --mode closed` at hint 0 of a ping-pong trace (64 B, 200 us think time) with
#     the profile's selective signalling (generic: one WR in 16): the closed loop waits for
#     every message, so none of them waits for a later signalled WR.
# Seven rounds, each validate between two runs of its bench (before and after), so that a
# slow spell of the shared host shows in the figures of its round: the device's own drift
# within a round is what the two benches differ by, and each run's time between polls says
# how fast the guest ran it. capture-replay-check.sh compares them on the host.
set -u
HS_NAME=capture-replay
. /hs/lib.sh # fail

# Messages a run: the device flips between a fast and a slow state (64 B on BW: p50 about
# 30 or 65 us) within tenths of a second, so a run of 300 messages 230 us apart (70 ms)
# sits in one state or the other: 3000 (0.7-1.5 s) see both, as the bench's runs do. The
# trace 5 ms apart takes 1.5 s with 300.
N=3000 N5=300
hintsim trace gen --workload stream --count $N --seed 1 --set size=64 \
    --set post_gap_ns=500000 -o sparse.hst || fail "trace gen stream (sparse)"
hintsim trace gen --workload stream --count $N5 --seed 1 --set size=64 \
    --set post_gap_ns=5000000 -o sparse5ms.hst || fail "trace gen stream (5 ms apart)"
hintsim trace gen --workload pingpong --count $N --seed 1 --set size=64 \
    --set think_ns=200000 -o pingpong.hst || fail "trace gen pingpong"
# bench_ll NAME GAP_US ITERS: capture bench of 64 B on LL, one message every GAP_US, to
# $OUT/NAME_ROUND.json
bench_ll() {
    hintsim capture bench -d rxe0 -x 0 --sizes 64 --hint 4K --phases latency --iters "$3" \
        --warmup 20 --gap-us "$2" --json >"$OUT/$1_$round.json" ||
        fail "capture bench 64 B on LL, one every $2 us"
}
bench_bw() {
    hintsim capture bench -d rxe0 -x 0 --sizes 64 --hint 0 --phases latency --iters $N \
        --warmup 20 --gap-us 230 --set bw.signal_every=1 --set bw.coal_count=1 \
        --set bw.coal_period_us=0 --json >"$OUT/$1_$round.json" ||
        fail "capture bench 64 B on BW, all signalled"
}
for round in 1 2 3 4 5 6 7; do
    bench_ll bench_ll 500 $N
    hintsim validate sparse.hst -d rxe0 -x 0 --hint 4K --repeat 1 --mode open \
        --objective p50 --quiet --json >"$OUT/sparse_ll_$round.json" ||
        fail "validate of the sparse trace on LL"
    bench_ll bench_ll_after 500 $N
    bench_ll bench_ll5ms 5000 $N5
    hintsim validate sparse5ms.hst -d rxe0 -x 0 --hint 4K --repeat 1 --mode open \
        --objective p50 --quiet --json >"$OUT/sparse5ms_ll_$round.json" ||
        fail "validate of the trace 5 ms apart on LL"
    bench_ll bench_ll5ms_after 5000 $N5
    bench_ll bench_llb2b 0 $N5
    bench_bw bench_bw
    hintsim validate pingpong.hst -d rxe0 -x 0 --hint 0 --repeat 1 --mode closed \
        --objective p50 --quiet --json >"$OUT/pingpong_bw_$round.json" ||
        fail "validate of the ping-pong trace on BW (closed loop)"
    bench_bw bench_bw_after
done
echo "capture-replay: PASS"
