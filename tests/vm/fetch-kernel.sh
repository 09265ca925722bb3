#!/usr/bin/env bash
# fetch-kernel.sh CACHE_DIR - fetch Debian's kernel package for the soft-RoCE VM, once.
#
# Resolves linux-image-amd64's dependency (the real linux-image-<ver>-amd64 package),
# downloads it with `apt-get download` (running `apt-get update` once if that fails),
# extracts it with `dpkg-deb -x` and leaves in CACHE_DIR:
#   kernel/vmlinuz          the kernel image (bzImage)
#   kernel/vmlinux          the same kernel decompressed (ELF with a PVH entry note): qemu
#                           boots it directly, which saves the ~10 s that decompressing the
#                           bzImage takes under TCG; absent (kernel/vmlinux.none says why)
#                           if it cannot be extracted, and then vmlinuz is used
#   kernel/version          the kernel release (e.g. 6.1.0-57-amd64)
#   kernel/lib/modules/VER  its modules, uncompressed (.ko.xz / .ko.zst are decompressed,
#                           since busybox insmod cannot read compressed modules)
# Idempotent: a complete cache is left alone (a run that died half-way is redone).
# Safe to run concurrently (flock on CACHE_DIR/kernel.lock).
# Exit: 0 ready; 77 the package cannot be obtained here (no network, no apt): an
# environment reason, the VM tests are then reported skipped; 1 anything else.
set -euo pipefail

die() { echo "fetch-kernel: $*" >&2; exit 1; }
skip() { echo "fetch-kernel: SKIP: $*" >&2; exit 77; }

[ $# -eq 1 ] || { echo "usage: $0 CACHE_DIR" >&2; exit 2; }
CACHE=$1
mkdir -p "$CACHE" || die "cannot create cache directory '$CACHE'"
CACHE=$(cd "$CACHE" && pwd)
KDIR=$CACHE/kernel

complete() {
    [ -f "$KDIR/version" ] && [ -s "$KDIR/vmlinuz" ] &&
        [ -d "$KDIR/lib/modules/$(cat "$KDIR/version")/kernel" ]
}

# resolve_package: print the name of the real kernel image package (no version guess).
resolve_package() {
    local pkg
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
          sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
    if [ -z "$pkg" ]; then
        apt_update
        pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
              sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
    fi
    [ -n "$pkg" ] || skip "apt-cache cannot resolve linux-image-amd64 (no Debian apt sources?)"
    echo "$pkg"
}

UPDATED=0
apt_update() {
    [ $UPDATED -eq 1 ] && return 0
    UPDATED=1
    [ "$(id -u)" -eq 0 ] || { echo "fetch-kernel: not root, cannot apt-get update" >&2; return 0; }
    echo "fetch-kernel: running apt-get update" >&2
    timeout 600 apt-get update -qq >&2 || echo "fetch-kernel: apt-get update failed" >&2
}

# download PKG DIR: apt-get download into DIR, retrying once after apt-get update.
download() {
    local pkg=$1 dir=$2
    ( cd "$dir" && timeout 600 apt-get download -q "$pkg" >&2 ) && return 0
    apt_update
    ( cd "$dir" && timeout 600 apt-get download -q "$pkg" >&2 ) ||
        skip "apt-get download $pkg failed (offline?)"
}

# decompress_modules DIR: turn .ko.xz/.ko.zst/.ko.gz into plain .ko in place.
decompress_modules() {
    local f
    while IFS= read -r -d '' f; do
        case $f in
        *.ko.xz) xz -dc "$f" >"${f%.xz}" ;;
        *.ko.zst) zstd -qdc "$f" >"${f%.zst}" ;;
        *.ko.gz) gzip -dc "$f" >"${f%.gz}" ;;
        esac
        rm -f "$f"
    done < <(find "$1" \( -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz' \) -print0)
}

fetch() {
    local pkg tmp ver
    pkg=$(resolve_package)
    tmp=$(mktemp -d "$CACHE/fetch.XXXXXX")
    trap 'rm -rf "${tmp:-}"' EXIT    # also when skip or die ends the script
    download "$pkg" "$tmp"
    echo "fetch-kernel: extracting $(basename "$tmp"/*.deb)" >&2
    dpkg-deb -x "$tmp"/*.deb "$tmp/x" || die "dpkg-deb -x failed on $tmp/*.deb"
    ver=${pkg#linux-image-}
    [ -s "$tmp/x/boot/vmlinuz-$ver" ] || die "package $pkg has no boot/vmlinuz-$ver"
    [ -d "$tmp/x/lib/modules/$ver/kernel" ] || die "package $pkg has no lib/modules/$ver"
    decompress_modules "$tmp/x/lib/modules/$ver"
    rm -rf "$KDIR"
    mkdir -p "$KDIR/lib/modules"
    mv "$tmp/x/boot/vmlinuz-$ver" "$KDIR/vmlinuz"
    mv "$tmp/x/lib/modules/$ver" "$KDIR/lib/modules/$ver"
    echo "$pkg" >"$KDIR/package"
    echo "$ver" >"$KDIR/version"    # written last: marks the cache complete
    rm -rf "$tmp"
    echo "fetch-kernel: kernel $ver cached in $KDIR" >&2
}

# extract_vmlinux: find the compressed payload in the bzImage by its magic (as the kernel's
# scripts/extract-vmlinux does) and decompress it; keep it only if it is an ELF image.
extract_vmlinux() {
    local magic tool off tmp=$KDIR/vmlinux.tmp
    for magic in '\xfd7zXZ\x00 xz' '\x28\xb5\x2f\xfd zstd' '\x1f\x8b\x08\x00 gzip'; do
        tool=${magic#* }
        off=$(LC_ALL=C grep -obUaP "${magic% *}" "$KDIR/vmlinuz" | head -n1 | cut -d: -f1)
        [ -n "$off" ] || continue
        tail -c +$((off + 1)) "$KDIR/vmlinuz" | "$tool" -dc >"$tmp" 2>/dev/null || true
        if [ "$(head -c 4 "$tmp" | od -An -c | tr -d ' ')" = '177ELF' ]; then
            mv "$tmp" "$KDIR/vmlinux"
            return 0
        fi
    done
    rm -f "$tmp"
    echo "no xz/zstd/gzip ELF payload found in vmlinuz" >"$KDIR/vmlinux.none"
    echo "fetch-kernel: could not extract vmlinux; booting the slower bzImage" >&2
}

exec 9>"$CACHE/kernel.lock"
flock 9
complete || fetch
[ -s "$KDIR/vmlinux" ] || [ -f "$KDIR/vmlinux.none" ] || extract_vmlinux
