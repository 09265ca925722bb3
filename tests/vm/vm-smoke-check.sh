#!/usr/bin/env bash
# vm-smoke-check.sh OUTDIR - host side of the VM smoke test: reads the results the guest
# wrote to $OUT (now OUTDIR) and checks them again, so a broken return channel fails.
set -euo pipefail
dir=${1:?usage: vm-smoke-check.sh OUTDIR}
res=$dir/smoke-results.txt
fail() { echo "vm-smoke-check: FAIL: $*" >&2; exit 1; }
[ -s "$res" ] || fail "$res missing or empty: \$OUT did not come back"
val() { awk -v k="$1" '$1 == k { print $2; found = 1 } END { exit !found }' "$res" ||
        fail "$res: key '$1' missing"; }
[ "$(val device)" = rxe0 ] || fail "$res: device is '$(val device)', not rxe0"
[ "$(val port_state)" = PORT_ACTIVE ] || fail "$res: port_state is not PORT_ACTIVE"
for end in server client; do
    [ "$(val pingpong_${end}_iters)" = 500 ] || fail "$res: pingpong_${end}_iters != 500"
    [ "$(val write_lat_${end}_iters)" = 1000 ] || fail "$res: write_lat_${end}_iters != 1000"
    [ "$(val write_bw_${end}_iters)" = 2000 ] || fail "$res: write_bw_${end}_iters != 2000"
    for k in pingpong_${end}_usec_per_iter write_lat_${end}_t_avg_us write_bw_${end}_avg_MBps; do
        awk -v v="$(val "$k")" 'BEGIN { exit !(v > 0) }' || fail "$res: $k = '$(val "$k")' not > 0"
    done
    for f in pingpong write_lat write_bw; do
        [ -s "$dir/$f-$end.txt" ] || fail "$dir/$f-$end.txt missing: raw output did not come back"
    done
done
echo "vm-smoke-check: OK: write_lat t_avg $(val write_lat_client_t_avg_us) us," \
     "write_bw $(val write_bw_client_avg_MBps) MB/s, pingpong $(val pingpong_client_usec_per_iter)" \
     "us/iter, boot $(val boot_s) s, tests $(val tests_s) s (guest clock)"
