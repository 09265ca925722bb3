#!/usr/bin/env bash
# preload-dlopen-check.sh OUTDIR - host side of vm_preload_dlopen (see preload-dlopen.sh):
# the NCCL-style dlopen program is captured exactly as the linked one - every WR with its
# size, opcode, signalling and completion, nothing dropped - in each lookup mode; the
# per-process summary and `capture run`'s line agree; without LD_AUDIT nothing is seen; a
# process that posts nothing, and one whose QP posts outside its context's ops, are warned
# about; a command that opens no device is said so and keeps its exit status.
set -euo pipefail
dir=${1:?usage: preload-dlopen-check.sh OUTDIR}
bin=${HINTSIM_BIN:-hintsim}
res=$dir/dlopen-results.txt
WRITES=600 SIZE=1024 SIGNAL=20 SENDS=100 OUTSIDE=50
fail() { echo "preload-dlopen-check: FAIL: $*" >&2; exit 1; }
[ -s "$res" ] || fail "$res missing: \$OUT did not come back"
val() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' "$res" || fail "no '$1' in $res"; }
has() { grep -qF -- "$2" "$dir/$1.txt" || fail "$1.txt lacks '$2': $(tr '\n' ' ' <"$dir/$1.txt" | cut -c1-600)"; }
ntraces() { find "$dir/$1" -name '*.hst' 2>/dev/null | wc -l; }
summary() { find "$dir/$1" -name '*.summary.json' | head -1; }
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d=d[k]
print(d)' "$1" "$2"; }

# check_full NAME: one trace of WRITES writes + SENDS sends, all completed, counts as posted.
check_full() {
    local n=$1 t csv s
    [ "$(val "${n}_exit")" = 0 ] || fail "$n: exit $(val "${n}_exit"): $(tail -3 "$dir/$n.txt")"
    [ "$(ntraces "$n")" = 1 ] || fail "$n: $(ntraces "$n") traces, wanted 1"
    t=$(find "$dir/$n" -name '*.hst')
    csv=$dir/$n.csv
    "$bin" trace convert "$t" -o "$csv" >/dev/null || fail "$t: trace convert failed"
    head -1 "$csv" | grep -q '"dropped":0,' || fail "$t: header says records were dropped"
    awk -F, -v w="$WRITES" -v size="$SIZE" -v k="$SIGNAL" -v m="$SENDS" -v t="$t" '
        function hex(h,   i, v) { v = 0; h = tolower(h); sub(/^0x/, "", h)
                                  for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
                                  return v }
        function bit(v, b) { return int(v / b) % 2 }
        NR <= 2 { next }
        { f = hex($7)
          if ($2 == "" || $2 + 0 < $1 + 0) { print t ": completion " $2 " before post " $1; bad = 1 }
          if ($5 == "write" && $3 == size) { nw++; wq[$4] = 1; if (bit(f, 8)) sw++; else if (!bit(f, 64)) { print t ": write neither signalled nor implicit"; bad = 1 } }
          else if ($5 == "send" && $3 == 64) { ns++; sq[$4] = 1; if (bit(f, 8)) ss++ }
          else { print t ": unexpected record " $0; bad = 1 } }
        END { for (q in wq) { nwq++; if (q in sq) same = 1 }
              for (q in sq) nsq++
              if (nw != w || sw != w / k) { print t ": " nw " writes (" sw " signalled), wanted " w " (" w / k ")"; bad = 1 }
              if (ns != m || ss != m) { print t ": " ns " sends (" ss " signalled), wanted " m; bad = 1 }
              if (nwq != 1 || nsq != 1 || same) { print t ": writes on " nwq " QPs, sends on " nsq " (one each, apart)"; bad = 1 }
              exit bad }' "$csv" || fail "$n: records"
    s=$(summary "$n")
    [ -n "$s" ] || fail "$n: no summary"
    [ "$(jget "$s" wrs_posted)" = $((WRITES + SENDS)) ] || fail "$n: summary wrs_posted $(jget "$s" wrs_posted)"
    [ "$(jget "$s" wrs_completed)" = $((WRITES + SENDS)) ] || fail "$n: summary wrs_completed"
    [ "$(jget "$s" qps_seen)" = 2 ] && [ "$(jget "$s" qps_posting)" = 2 ] || fail "$n: summary QPs"
    [ "$(jget "$s" outside.completions)" = 0 ] || fail "$n: outside completions in a plain run"
    has "$n" "2 QPs (2 posting), $((WRITES + SENDS)) WRs posted, $((WRITES + SENDS)) completed, 0 dropped"
    if grep -q "warning" "$dir/$n.txt"; then fail "$n: warnings: $(grep warning "$dir/$n.txt")"; fi
    echo "preload-dlopen-check: $n: $WRITES writes + $SENDS sends captured, summary agrees: ok"
}

for m in nccl so1 default next; do
    check_full "dl-$m"
    has "dl-$m" "vapp: ibv_open_device from /usr/lib/libhintcap.so"
done
grep -q "vapp: ibv_open_device@IBVERBS_1.0 from .*libibverbs.so.1" "$dir/dl-nccl.txt" ||
    fail "dl-nccl: the IBVERBS_1.0 compat ibv_open_device did not stay libibverbs'"
check_full linked

# control: the same program without LD_AUDIT runs, and nothing is captured (said so)
[ "$(val noaudit_exit)" = 0 ] || fail "noaudit: exit $(val noaudit_exit)"
[ "$(ntraces noaudit)" = 0 ] || fail "noaudit: a trace without LD_AUDIT: the control is wrong"
has noaudit "no process opened a verbs device"

# a device opened, nothing posted
[ "$(val quiet_exit)" = 0 ] || fail "quiet: exit $(val quiet_exit)"
has quiet "0 WRs posted"
has quiet "but recorded no WR"

# QP B posting only outside its context's ops: its completions reported, with its number
[ "$(val outside_exit)" = 0 ] || fail "outside: exit $(val outside_exit): $(tail -3 "$dir/outside.txt")"
qpb=$(sed -n 's/.*, qp \([0-9]*\) 0 sends, .*/\1/p' "$dir/outside.txt")
[ -n "$qpb" ] || fail "outside: the program did not print QP B's number"
has outside "posted outside libibverbs: $OUTSIDE send completions on 1 QP (qp_num $(printf '0x%x' "$qpb"))"
s=$(summary outside)
[ "$(jget "$s" wrs_posted)" = "$WRITES" ] || fail "outside: wrs_posted $(jget "$s" wrs_posted), wanted $WRITES"
[ "$(jget "$s" outside.completions)" = "$OUTSIDE" ] || fail "outside: summary outside completions"
[ "$(jget "$s" dropped)" = 0 ] || fail "outside: completions of an outside QP counted as dropped"

# no device at all
[ "$(val nodev_exit)" = 5 ] || fail "nodev: exit $(val nodev_exit), wanted the command's 5"
has nodev "no process opened a verbs device"
echo "preload-dlopen-check: OK"
