#!/usr/bin/env bash
# preload-tools-check.sh OUTDIR - host side of vm_preload_tools: converts every trace the
# guest captured to CSV with the host's hintsim and checks it against what the tools post
# by their own options (see preload-tools.sh): exact WR counts, sizes, opcodes, signalling,
# completion after post, cold-start flags on the first 100 WRs, nothing dropped, the hints
# in the headers, and the audit/merge/recommend results of the guest.
set -euo pipefail
dir=${1:?usage: preload-tools-check.sh OUTDIR}
bin=${HINTSIM_BIN:-hintsim}
res=$dir/preload-results.txt
fail() { echo "preload-tools-check: FAIL: $*" >&2; exit 1; }
[ -s "$res" ] || fail "$res missing: \$OUT did not come back"
val() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' "$res" || fail "no '$1' in $res"; }

# one_trace SUBDIR: the single .hst the process left there.
one_trace() {
    local n
    n=$(find "$dir/$1" -name '*.hst' | wc -l)
    [ "$n" = 1 ] || fail "$dir/$1: $n traces, wanted exactly 1 (one per process)"
    find "$dir/$1" -name '*.hst'
}

# check SUBDIR COUNT SIZE OPCODE SIGNALLED HINT SOURCE: the trace holds exactly COUNT WRs of
# SIZE bytes and OPCODE, SIGNALLED of them signalled (the rest completed implicitly), every
# completion known and not before its post, the first min(100, COUNT) flagged cold.
check() {
    local sub=$1 count=$2 size=$3 op=$4 sig=$5 hint=$6 src=$7 t csv
    t=$(one_trace "$sub")
    csv=$dir/$sub.csv
    "$bin" trace convert "$t" -o "$csv" >/dev/null || fail "$t: trace convert failed"
    head -1 "$csv" | grep -q "\"dropped\":0," || fail "$t: header says records were dropped"
    head -1 "$csv" | grep -q "\"hint_bytes\":$hint," || fail "$t: header hint is not $hint"
    head -1 "$csv" | grep -q "\"hint_source\":\"$src\"" || fail "$t: hint source is not $src"
    head -1 "$csv" | grep -q '"producer":"libhintcap"' || fail "$t: producer is not libhintcap"
    awk -F, -v count="$count" -v size="$size" -v op="$op" -v sig="$sig" -v t="$t" '
        function hex(h,   i, v) { v = 0; h = tolower(h); sub(/^0x/, "", h)
                                  for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
                                  return v }
        function bit(v, b) { return int(v / b) % 2 }
        NR <= 2 { next }
        { n++
          if ($3 != size) { print t ": record " n ": size " $3 ", wanted " size; bad = 1 }
          if ($5 != op) { print t ": record " n ": opcode " $5 ", wanted " op; bad = 1 }
          if ($2 == "" || $2 + 0 < $1 + 0) { print t ": record " n ": completion " $2 " before post " $1; bad = 1 }
          f = hex($7)
          if (bit(f, 8)) s++; else if (!bit(f, 64)) { print t ": record " n ": unsignalled, not implicit"; bad = 1 }
          if (bit(f, 16) != (n <= 100)) { print t ": record " n ": cold flag wrong"; bad = 1 } }
        END { if (n != count) { print t ": " n " records, wanted " count; bad = 1 }
              if (s != sig) { print t ": " s " signalled, wanted " sig; bad = 1 }
              exit bad }' "$csv" || fail "$sub"
    echo "preload-tools-check: $sub: $count x $size B $op, $sig signalled: ok"
}

check pp-server 200 64 send 200 4096 env
check pp-client 200 64 send 200 65536 config
check lat-server 300 8 write 300 16384 env
check lat-client 300 8 write 300 16384 env
check bw-client 2000 4096 write 20 16384 env    # perftest: every cq_mod (100)-th signalled
t=$(one_trace bw-server)
"$bin" trace info "$t" | grep -q '^records *0 ' || fail "$t: the write_bw server posted nothing, yet records"
[ "$(val audit_pp_exit)" = 1 ] || fail "trace audit did not report the differing hints (exit $(val audit_pp_exit))"
grep -q "differs" "$dir/audit-pp.txt" || fail "audit-pp.txt does not name the differing process"
[ "$(val audit_lat_exit)" = 0 ] || fail "trace audit of equal hints exited $(val audit_lat_exit)"
"$bin" trace info "$dir/lat-merged.hst" | grep -q '^records *600 ' || fail "merged trace does not hold 600 records"
[ "$(val recommend_exit)" = 0 ] || fail "recommend on the merged capture exited $(val recommend_exit)"
echo "preload-tools-check: OK; ib_write_bw MB/s plain $(val bw_plain_1_MBps) $(val bw_plain_2_MBps)," \
     "captured $(val bw_cap_1_MBps) $(val bw_cap_2_MBps) (soft-RoCE under TCG: noisy)"
if [ -s "$dir/retries.txt" ]; then
    echo "preload-tools-check: runs repeated in the guest (perftest failing by itself under emulation):"
    sed 's/^/  /' "$dir/retries.txt"
fi
