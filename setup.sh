#!/usr/bin/env bash
# setup.sh - the two commands of the quick start, and the pieces they are made of.
#   ./setup.sh demo   install what is missing, build, recommend a hint for a sample trace
#   ./setup.sh test   install what is missing, build, run the whole test suite
#   ./setup.sh deps | build | bench
# Idempotent; works from a clean clone as root (or with sudo available) and no prior state.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$PWD
JOBS=$(nproc 2>/dev/null || echo 2)

PACKAGES=(build-essential cmake pkg-config clang libsimgrid-dev libibverbs-dev librdmacm-dev
          ibverbs-providers ibverbs-utils rdma-core perftest libcjson-dev gnuplot-nox
          qemu-system-x86 busybox-static cpio kmod iproute2 xz-utils libcmocka-dev valgrind
          openmpi-bin libopenmpi-dev chromium zlib1g-dev libclang-rt-14-dev fonts-liberation
          python3-numpy protobuf-compiler slurmctld slurmd slurm-client)

deps() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "setup: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build build -j"$JOBS"
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHINTSIM_SANITIZE=ON >/dev/null
    cmake --build build-asan -j"$JOBS"
}

demo() {
    # A key-value workload (4 KB values, 64 B control; seed 000's "narrow stable band" case):
    # recommend a hint with the analytical model and write the report.
    local trace=traces/samples/kv.hst out=out/demo-report
    ./build/cli/hintsim trace info "$trace"
    echo
    ./build/cli/hintsim recommend "$trace" --profile generic -o "$out"
    echo
    echo "open $out/report.html in a browser (report.md for the terminal)"
}

run_tests() {
    # Unit, integration and fuzz tests under ASan+UBSan; then what needs the optimised build
    # (the soft-RoCE VM boots it) and the valgrind pass.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
    ctest --test-dir build-asan --output-on-failure -j"$JOBS" -LE 'vm|valgrind|truth'
    ctest --test-dir build --output-on-failure -L 'vm|valgrind'
}

case "${1:-}" in
    deps) deps ;;
    build) deps; build ;;
    demo) deps; build; demo ;;
    test) deps; build; run_tests ;;
    bench) deps; build; cmake --build build --target bench ;;
    *) echo "usage: $0 demo|test|deps|build|bench" >&2; exit 2 ;;
esac
