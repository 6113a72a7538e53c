#!/usr/bin/env bash
# Records the differential harness's GPU truth (issue 26): builds only the
# harness's program (warpforge-difftest), runs every family's units on CUDA
# GPU 0 -- an H100 or H200 (sm_90a), which the recordings are of -- and
# writes one file per family, <out>/<family>.truth (GPU name and driver in
# its header, outputs only: inputs are regenerated from seeds). Each family
# records in its own process, so a GPU fault in one cannot spoil the rest.
# Then it replays the recordings on the simulator and prints the summary
# (`make test` does the same in CI, from tests/gpu_truth/).
#
#   scripts/record-gpu-truth.sh [out]        (default out: tests/gpu_truth)
#
# Needs the CUDA driver, CMake and a C++20 compiler; no GoogleTest (the test
# suite is not built). Without the DLPack header in the system include path,
# $WARPFORGE_DLPACK_INCLUDE_DIR (or ./.dlpack) must hold dlpack/dlpack.h.
# BUILD_DIR (default build-truth) and JOBS (default nproc) may be set;
# DEVICE=sim records on the simulator instead (the script's self-test: its
# replay must then agree everywhere).
set -uo pipefail
cd "$(dirname "$0")/.."

out="${1:-tests/gpu_truth}"
build_dir="${BUILD_DIR:-build-truth}"
jobs="${JOBS:-$(nproc)}"
device="${DEVICE:-cuda}"
dlpack_args=()
dlpack_dir="${WARPFORGE_DLPACK_INCLUDE_DIR:-$PWD/.dlpack}"
[ -f "$dlpack_dir/dlpack/dlpack.h" ] && dlpack_args=(-DWARPFORGE_DLPACK_INCLUDE_DIR="$dlpack_dir")
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

fail() {
  echo "record-gpu-truth: FAIL: $*"
  exit 1
}

start=$(date +%s)
mkdir -p "$build_dir" "$out"
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_TESTS=OFF \
  -DWARPFORGE_BENCH=OFF -DWARPFORGE_PYTHON=OFF "${dlpack_args[@]}" >"$build_dir/record-configure.log" 2>&1 ||
  { tail -30 "$build_dir/record-configure.log"; fail "cmake configure failed"; }
cmake --build "$build_dir" -j "$jobs" --target warpforge_difftest_cli >"$build_dir/record-build.log" 2>&1 ||
  { grep -E "error|Error" "$build_dir/record-build.log" | head -30; fail "build failed"; }
echo "record-gpu-truth: built in $(($(date +%s) - start)) s"
tool="$build_dir/warpforge-difftest"

status=0
for family in $("$tool" names); do
  timeout 300 "$tool" record --device "$device" --out "$out" --family "$family" || {
    echo "record-gpu-truth: family $family failed (exit $?)"
    status=1
  }
done
echo "record-gpu-truth: recorded in $(($(date +%s) - start)) s total; $(du -sh "$out" | cut -f1) in $out"
"$tool" replay --truth "$out"
echo "record-gpu-truth: done in $(($(date +%s) - start)) s (replay exit $?)"
exit $status
