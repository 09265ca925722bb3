#!/bin/sh
# guest-init.sh - /init of the soft-RoCE VM (busybox sh, PID 1).
#
# Mounts the pseudo file systems, loads the modules listed in /etc/hs-modules (in order,
# dependencies first, chosen on the host by mkinitramfs.sh), brings up lo and a dummy
# netdev d0 (10.77.0.1/24: rxe refuses lo), creates rxe0 on d0 and waits for its port to be
# ACTIVE (and, with hs_net=... on the kernel command line, links to other VMs with rxe1 on
# eth0: setup_link). Then, if /hs/script.sh exists (run-in-vm.sh puts it there), runs it from
# /hs/files with OUT=/out, writes /out as a tar onto the first virtio disk (/dev/vda) and
# prints "HS-VM-<nonce>-EXIT rc=<script status> out=<ok|none|fail>" before powering off.
# Without a script it starts an interactive shell (run-in-vm.sh --shell).
# The setup prints "HS-VM-<nonce>-SETUP-FAILED <what>" and powers off if a step fails.

export PATH=/usr/local/bin:/usr/bin:/usr/sbin:/bin:/sbin HOME=/root TERM=${TERM:-vt100}
mount -t devtmpfs dev /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mkdir -p /proc /sys /tmp /dev/pts /dev/shm /run /root /out
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tmpfs -o mode=1777 tmp /dev/shm
mount -t devpts devpts /dev/pts
NONCE=$(cat /hs/nonce 2>/dev/null || echo none)

finish() {
    echo "HS-VM-$NONCE-EXIT rc=$1 out=$2"
    sync
    poweroff -f
}

setup_failed() {
    echo "HS-VM-$NONCE-SETUP-FAILED $*"
    dmesg | tail -n 20
    sync
    poweroff -f
}

load_modules() {
    local m
    while read -r m; do
        [ -n "$m" ] || continue
        insmod "$m" || setup_failed "insmod $m"
    done </etc/hs-modules
}

# wait_port_active DEV: an rxe port turns ACTIVE once its netdev is up; poll up to 20 s.
wait_port_active() {
    local i=0
    while [ $i -lt 200 ]; do
        ibv_devinfo -d "$1" 2>/dev/null | grep -q PORT_ACTIVE && return 0
        sleep 0.1
        i=$((i + 1))
    done
    ibv_devinfo -d "$1"
    setup_failed "$1 port not ACTIVE after 20 s"
}

setup_rxe() {
    ip link set lo up || setup_failed "ip link set lo up"
    ip link add d0 type dummy || setup_failed "ip link add d0 type dummy"
    ip addr add 10.77.0.1/24 dev d0 || setup_failed "ip addr add on d0"
    ip link set d0 up || setup_failed "ip link set d0 up"
    rdma link add rxe0 type rxe netdev d0 || setup_failed "rdma link add rxe0"
    wait_port_active rxe0
}

# save_out: write /out as a tar onto /dev/vda (the host's --out disk), if one is attached.
save_out() {
    [ -b /dev/vda ] || { echo none; return; }
    if tar -cf /dev/vda -C /out . && sync; then
        echo ok
    else
        echo fail
    fi
}

# setup_link: with hs_net=ADDR/PREFIX[,ADDR/PREFIX...] on the kernel command line
# (run-in-vm.sh --link), eth0, eth1, ... are links to other VMs with those addresses, and
# rxe1 runs on eth0 (another host's device, for --server/--connect across hosts);
# hs_gw=ADDR sets the default route, hs_forward=1 makes this VM a router between its links.
setup_link() {
    local net gw fwd i=0 a
    net=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^hs_net=//p')
    gw=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^hs_gw=//p')
    fwd=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^hs_forward=//p')
    [ -n "$net" ] || return 0
    for a in $(echo "$net" | tr ',' ' '); do
        ip link set eth$i up || setup_failed "ip link set eth$i up (no virtio NIC?)"
        ip addr add "$a" dev eth$i || setup_failed "ip addr add $a on eth$i"
        i=$((i + 1))
    done
    [ -z "$gw" ] || ip route add default via "$gw" || setup_failed "ip route add default via $gw"
    [ "$fwd" != 1 ] || echo 1 >/proc/sys/net/ipv4/ip_forward || setup_failed "ip_forward"
    rdma link add rxe1 type rxe netdev eth0 || setup_failed "rdma link add rxe1"
    wait_port_active rxe1
    LINK="; rxe1 on eth0 ($net${gw:+, via $gw}${fwd:+, forwarding})"
}

LINK=""
load_modules
setup_rxe
setup_link
echo "HS-VM-$NONCE-READY kernel $(uname -r), rxe0 up$LINK, $(nproc) cpu(s), $(cut -d" " -f1 /proc/uptime) s since kernel start"

if [ ! -f /hs/script.sh ]; then
    echo "hintsim VM: rxe0 on d0 (10.77.0.1); 'poweroff -f' to leave"
    cd /root && setsid cttyhack sh -l
    poweroff -f
fi

mkdir -p /hs/files
cd /hs/files
args=""
[ -f /hs/args ] && args=$(cat /hs/args)
export OUT=/out HS_VM=1
eval "sh /hs/script.sh $args" </dev/null    # the console is no input: never wait on it
rc=$?
cd /
finish "$rc" "$(save_out)"
