#!/usr/bin/env bash
# mkinitramfs.sh - build the cpio initramfs of the soft-RoCE VM.
#
# usage: mkinitramfs.sh -o OUT.cpio [-k KERNEL_DIR] [--overlay] [--hintsim PATH]
#                       [--bin PATH]... [--file HOST[:GUEST]]... [--module NAME]...
#
# A full image (the default) holds busybox-static with its applet links, /init
# (guest-init.sh), the modules soft-RoCE needs from KERNEL_DIR (as left by fetch-kernel.sh;
# dependencies resolved with modinfo, load order written to /etc/hs-modules), the verbs tools
# (perftest's ib_*_lat/bw, ibv_rc_pingpong, ibv_devinfo, iproute2's rdma), libibverbs' rxe
# provider and its /etc/libibverbs.d/rxe.driver, /etc files, and every shared library all of
# these need (from ldd, dynamic loader included; copied to the same path as on the host).
# --overlay builds only the items given on the command line (hintsim, --bin, --file) and
# their libraries: the kernel unpacks concatenated cpio archives in order, so run-in-vm.sh
# appends such an overlay to a cached base image.
#   --hintsim PATH       the project's binary, installed as /usr/bin/hintsim
#   --bin PATH           an extra executable, installed as /usr/bin/<name>
#   --file HOST[:GUEST]  any file; GUEST defaults to /hs/files/<name>; ELF files bring their
#                        libraries too
#   --module NAME        an extra kernel module (with its dependencies)
# The output is written to a temporary file and renamed: never half-written.
set -euo pipefail

die() { echo "mkinitramfs: $*" >&2; exit 1; }

# crc32_generic is not a link-time dependency of rdma_rxe but rxe needs the crc32 shash
# (without it: ENOENT); rdma_ucm gives librdmacm its /dev/infiniband/rdma_cm; virtio_blk
# carries the $OUT disk back to the host; virtio_net is the link between two VMs
# (run-in-vm.sh --link: another host, for --server/--connect).
MODULES=(crc32_generic rdma_rxe rdma_ucm dummy virtio_pci virtio_blk virtio_net)
TOOLS_REQUIRED=(ib_write_lat ib_write_bw ibv_rc_pingpong ibv_devinfo rdma)
TOOLS_OPTIONAL=(ib_send_lat ib_send_bw ib_read_lat ib_read_bw ibv_devices ibv_ud_pingpong
                ibv_srq_pingpong rping)
PROVIDER_DIR=/usr/lib/x86_64-linux-gnu/libibverbs
HERE=$(cd "$(dirname "$0")" && pwd)

OUT="" KDIR="" OVERLAY=0 HINTSIM=""
BINS=() FILES=() EXTRA_MODULES=()
STAGE=""

usage() { sed -n '3,5p' "$0" | sed 's/^# //' >&2; exit 2; }

parse_args() {
    while [ $# -gt 0 ]; do
        case $1 in
        -o) OUT=${2:?}; shift ;;
        -k) KDIR=${2:?}; shift ;;
        --overlay) OVERLAY=1 ;;
        --hintsim) HINTSIM=${2:?}; shift ;;
        --bin) BINS+=("${2:?}"); shift ;;
        --file) FILES+=("${2:?}"); shift ;;
        --module) EXTRA_MODULES+=("${2:?}"); shift ;;
        -h|--help) usage ;;
        *) echo "mkinitramfs: unknown argument '$1'" >&2; usage ;;
        esac
        shift
    done
    [ -n "$OUT" ] || usage
    if [ $OVERLAY -eq 0 ]; then
        [ -n "$KDIR" ] || die "a full image needs -k KERNEL_DIR (see fetch-kernel.sh)"
        [ -f "$KDIR/version" ] || die "$KDIR/version missing: run fetch-kernel.sh first"
    fi
    return 0
}

is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

# install_file HOST GUEST [MODE]: copy HOST (symlinks followed) to GUEST inside the image.
install_file() {
    local src=$1 dst=$STAGE$2
    case $2 in /lib/*|/lib64/*|/bin/*|/sbin/*) dst=$STAGE/usr$2 ;; esac    # merged /usr
    [ -f "$src" ] || die "'$src': no such file"
    mkdir -p "$(dirname "$dst")"
    rm -f "$dst"
    cp -L "$src" "$dst" || die "cannot copy '$src'"
    [ -z "${3:-}" ] || chmod "$3" "$dst"
}

# install_libs ELF: copy every shared library ldd resolves for ELF, and the loader.
install_libs() {
    local elf=$1 out lib
    is_elf "$elf" || return 0
    out=$(LC_ALL=C ldd "$elf" 2>&1) || {
        case $out in *"not a dynamic executable"*|*"statically linked"*) return 0 ;; esac
        die "ldd '$elf' failed: $out"
    }
    if grep -q "not found" <<<"$out"; then
        die "'$elf' needs libraries that are not installed: $(grep 'not found' <<<"$out" | tr -s ' \t' ' ')"
    fi
    for lib in $(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out"); do
        install_file "$lib" "$lib"
    done
}

install_elf() { install_file "$1" "$2" 755; install_libs "$1"; }

# make_skeleton: merged-/usr layout (as on Debian 12) so libraries land where ldd saw them.
make_skeleton() {
    mkdir -p "$STAGE"/usr/{bin,sbin,lib,lib64} "$STAGE"/{etc,proc,sys,dev,tmp,root,out,hs/files,run}
    ln -s usr/bin "$STAGE/bin"
    ln -s usr/sbin "$STAGE/sbin"
    ln -s usr/lib "$STAGE/lib"
    ln -s usr/lib64 "$STAGE/lib64"
    chmod 1777 "$STAGE/tmp"
    # the kernel opens /dev/console before /init runs; devtmpfs covers the rest
    mknod -m 600 "$STAGE/dev/console" c 5 1 2>/dev/null || true
}

install_busybox() {
    local bb applet
    bb=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
    is_elf "$bb" && LC_ALL=C ldd "$bb" >/dev/null 2>&1 &&
        die "$bb is dynamically linked: install busybox-static"
    install_file "$bb" /usr/bin/busybox 755
    for applet in $("$bb" --list-full); do
        applet=/usr/${applet#usr/}    # merged /usr: bin/sh -> /usr/bin/sh
        [ -e "$STAGE$applet" ] || ln -s /usr/bin/busybox "$STAGE$applet"
    done
}

install_tools() {
    local t p
    for t in "${TOOLS_REQUIRED[@]}"; do
        p=$(command -v "$t") || die "'$t' not found (packages perftest, ibverbs-utils, iproute2)"
        install_elf "$p" "/usr/bin/$t"
    done
    for t in "${TOOLS_OPTIONAL[@]}"; do
        p=$(command -v "$t") || continue
        install_elf "$p" "/usr/bin/$t"
    done
}

# install_provider: libibverbs dlopens providers named in /etc/libibverbs.d: ldd cannot see them.
install_provider() {
    local so
    [ -f /etc/libibverbs.d/rxe.driver ] || die "/etc/libibverbs.d/rxe.driver missing (ibverbs-providers)"
    install_file /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/rxe.driver
    so=$(ls "$PROVIDER_DIR"/librxe-rdmav*.so 2>/dev/null | head -n1)
    [ -n "$so" ] || die "no $PROVIDER_DIR/librxe-rdmav*.so (ibverbs-providers)"
    install_elf "$so" "$so"
}

install_etc() {
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n10.77.0.1\thsvm\n' >"$STAGE/etc/hosts"
    printf 'root:x:0:0:root:/root:/bin/sh\n' >"$STAGE/etc/passwd"
    printf 'root:x:0:\n' >"$STAGE/etc/group"
    printf 'hosts: files\npasswd: files\ngroup: files\n' >"$STAGE/etc/nsswitch.conf"
    echo hsvm >"$STAGE/etc/hostname"
    install_file "$HERE/guest-init.sh" /init 755
    install_file "$HERE/guest-lib.sh" /hs/lib.sh 644
}

# module_path NAME: the .ko of NAME (dashes and underscores are the same to the kernel).
module_path() {
    local f
    f=$(find "$MODROOT/kernel" \( -name "$1.ko" -o -name "${1//_/-}.ko" \) | head -n1)
    [ -n "$f" ] || die "kernel module '$1' not in $MODROOT (compressed? see fetch-kernel.sh)"
    echo "$f"
}

declare -A MOD_SEEN=()
MOD_ORDER=()
add_module() {
    local f dep
    [ -z "${MOD_SEEN[$1]:-}" ] || return 0
    MOD_SEEN[$1]=1
    f=$(module_path "$1")
    for dep in $(modinfo -F depends "$f" | tr ',' ' '); do
        add_module "$dep"
    done
    MOD_ORDER+=("$f")
}

install_modules() {
    local ver f m
    ver=$(cat "$KDIR/version")
    MODROOT=$KDIR/lib/modules/$ver
    command -v modinfo >/dev/null || die "modinfo not found (apt-get install kmod)"
    for m in "${MODULES[@]}" "${EXTRA_MODULES[@]}"; do
        add_module "$m"
    done
    : >"$STAGE/etc/hs-modules"
    for f in "${MOD_ORDER[@]}"; do
        install_file "$f" "/lib/modules/$ver/${f#"$MODROOT"/}"
        echo "/lib/modules/$ver/${f#"$MODROOT"/}" >>"$STAGE/etc/hs-modules"
    done
}

install_items() {
    local b f host guest
    [ -z "$HINTSIM" ] || install_elf "$HINTSIM" /usr/bin/hintsim
    for b in "${BINS[@]}"; do
        install_elf "$b" "/usr/bin/$(basename "$b")"
    done
    for f in "${FILES[@]}"; do
        host=${f%%:*}
        guest=/hs/files/$(basename "$host")
        [ "$host" = "$f" ] || guest=${f#*:}
        case $guest in /*) ;; *) guest=/hs/files/$guest ;; esac
        install_file "$host" "$guest"
        [ ! -x "$host" ] || chmod 755 "$STAGE$guest"
        install_libs "$host"
    done
}

write_cpio() {
    local tmp="$OUT.tmp.$$"
    mkdir -p "$(dirname "$OUT")"
    (cd "$STAGE" && find . -mindepth 1 | LC_ALL=C sort |
        cpio -o -H newc -R 0:0 --quiet) >"$tmp" || { rm -f "$tmp"; die "cpio failed"; }
    mv -f "$tmp" "$OUT"
}

main() {
    parse_args "$@"
    STAGE=$(mktemp -d "${TMPDIR:-/tmp}/hs-initramfs.XXXXXX")
    trap 'rm -rf "$STAGE"' EXIT
    if [ $OVERLAY -eq 0 ]; then
        make_skeleton
        install_busybox
        install_etc
        install_modules
        install_tools
        install_provider
    fi
    install_items
    write_cpio
}

main "$@"
