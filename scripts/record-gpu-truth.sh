#!/usr/bin/env bash
# Records the differential harness's GPU truth (issue 26): builds only the
# harness's program (warpforge-difftest), runs every family's units on CUDA
# GPU 0 -- an H100 or H200 (sm_90a), which the recordings are of -- and
# writes one file per family, <out>/<family>.truth (GPU name and driver in
# its header, outputs only: inputs are regenerated from seeds). Each family
# records in its own process, so a GPU fault in one cannot spoil the rest.
# Then it replays the recordings on the simulator and prints the summary
# and its table (`make test` replays tests/gpu_truth/ in CI).
#
#   scripts/record-gpu-truth.sh [out]        (default out: tests/gpu_truth)
#
# Environment:
#   FAMILIES="kernels nvcc"  only these families (default: all; `warpforge-difftest names`)
#   ONLY_MISSING=1           keep the units <out>/<family>.truth already holds and
#                            record only the others (units added since); a file of
#                            another GPU, driver or SM count is recorded anew, saying so
#   SEED=N                   an out-of-sample recording: every unit draws other random
#                            inputs (the edges stay); give it its own out directory.
#                            Its replay, anywhere, is one line:
#                            build/warpforge-difftest replay --truth OUT --markdown
#   DEVICE=sim               record on the simulator instead (the script's self-test:
#                            its replay must then agree everywhere)
#   BUILD_DIR (default build-truth), JOBS (default nproc)
#
# Needs the CUDA driver, CMake and a C++20 compiler; no GoogleTest (the test
# suite is not built); nvcc for the nvcc family (tests/corpus's CUDA sources,
# compiled at build time). Without the DLPack header in the system include
# path, $WARPFORGE_DLPACK_INCLUDE_DIR (or ./.dlpack) must hold dlpack/dlpack.h.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${1:-tests/gpu_truth}"
build_dir="${BUILD_DIR:-build-truth}"
jobs="${JOBS:-$(nproc)}"
device="${DEVICE:-cuda}"
record_args=()
[ -n "${SEED:-}" ] && record_args+=(--seed "$SEED")
[ "${ONLY_MISSING:-0}" = 1 ] && record_args+=(--missing)
dlpack_args=()
dlpack_dir="${WARPFORGE_DLPACK_INCLUDE_DIR:-$PWD/.dlpack}"
[ -f "$dlpack_dir/dlpack/dlpack.h" ] && dlpack_args=(-DWARPFORGE_DLPACK_INCLUDE_DIR="$dlpack_dir")
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
command -v ccache >/dev/null && generator+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

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
families="${FAMILIES:-$("$tool" names)}"
for family in $families; do
  timeout 300 "$tool" record --device "$device" --out "$out" --family "$family" "${record_args[@]}" || {
    echo "record-gpu-truth: family $family failed (exit $?)"
    status=1
  }
done
echo "record-gpu-truth: recorded in $(($(date +%s) - start)) s total; $(du -sh "$out" | cut -f1) in $out"
replay_args=()
for family in $families; do replay_args+=(--family "$family"); done
"$tool" replay --truth "$out" "${replay_args[@]}"
replayed=$?
"$tool" replay --truth "$out" "${replay_args[@]}" --markdown
echo "record-gpu-truth: done in $(($(date +%s) - start)) s (replay exit $replayed)"
exit $status
