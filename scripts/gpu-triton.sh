#!/usr/bin/env bash
# Records the GPU truth of warpforge.triton (issue 45) on an H100 or H200:
#  - every Triton tutorial case (python/warpforge/triton/tutorials) for
#    sm_80 and sm_90a: Triton compiles each kernel for the target, its PTX
#    runs on the GPU through warpforge's runtime (the CUDA driver's JIT,
#    which also runs sm_80's PTX on an sm_90 GPU), and the launches and
#    output bytes are written, one file per case and target
#    (python -m warpforge.triton.recording record); for sm_90a each file also
#    says whether Triton's own launch of its cubin gave the same bytes;
#  - the difftest family triton_ptx (scripts/record-gpu-truth.sh, which this
#    script runs with FAMILIES=triton_ptx);
# then replays all of them on the simulator, here, and prints the table of
# agreement last.
#
#   OUT=/path scripts/gpu-triton.sh        (default OUT: ./gpu-triton-out)
#
# $OUT receives four files: triton_truth.tar.gz (triton/*.json.gz and
# triton_ptx.truth, to be unpacked into tests/gpu_truth: tar -xzf
# triton_truth.tar.gz -C tests/gpu_truth), record.txt and replay.txt (the
# tables) and gpu-triton.log; the work (the recordings unpacked, Triton's
# cache) stays in the build directory. Needs the CUDA driver, CMake, a C++20
# compiler, nanobind, torch and Triton for python3 (PYTHON to choose
# another); no GoogleTest. Without the DLPack header in the system include
# path, $WARPFORGE_DLPACK_INCLUDE_DIR (or ./.dlpack) must hold dlpack/dlpack.h.
# BUILD_DIR (default build-triton) and JOBS (default nproc) may be set;
# DEVICE=sim records on the simulator instead (the script's self-test: the
# replay must then agree everywhere).
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-$PWD/gpu-triton-out}"
build_dir="${BUILD_DIR:-build-triton}"
jobs="${JOBS:-$(nproc)}"
python="${PYTHON:-python3}"
device="${DEVICE:-cuda}"
dlpack_args=()
dlpack_dir="${WARPFORGE_DLPACK_INCLUDE_DIR:-$PWD/.dlpack}"
[ -f "$dlpack_dir/dlpack/dlpack.h" ] && dlpack_args=(-DWARPFORGE_DLPACK_INCLUDE_DIR="$dlpack_dir")
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
command -v ccache >/dev/null && generator+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
mkdir -p "$build_dir" "$out"
build_abs="$(cd "$build_dir" && pwd)"
work="$build_abs/gpu-triton"
rm -rf "$work"
mkdir -p "$work/truth/triton"
log="$out/gpu-triton.log"
: >"$log"

fail() {
  echo "gpu-triton: FAIL: $*" | tee -a "$log"
  exit 1
}

start=$(date +%s)
"$python" -c "import torch, triton; assert '$device' == 'sim' or torch.cuda.is_available(), 'torch sees no GPU'; \
print('gpu-triton:', torch.cuda.get_device_name() if '$device' == 'cuda' else 'the simulator', 'torch', \
torch.__version__, 'triton', triton.__version__)" 2>&1 | tee -a "$log" | grep -q "^gpu-triton:" ||
  fail "torch with a CUDA GPU and triton are needed (see $log)"

# The extension module, then (the same build directory: only the harness
# compiles anew) the difftest family.
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_PYTHON=ON \
  -DWARPFORGE_TESTS=OFF -DWARPFORGE_BENCH=OFF -DPython_EXECUTABLE="$(command -v "$python")" "${dlpack_args[@]}" \
  >>"$log" 2>&1 || fail "cmake configure failed (log: $log)"
cmake --build "$build_dir" -j "$jobs" --target _warpforge >>"$log" 2>&1 || fail "build of _warpforge failed (log: $log)"
echo "gpu-triton: built in $(($(date +%s) - start)) s" | tee -a "$log"
BUILD_DIR="$build_dir" JOBS="$jobs" DEVICE="$device" FAMILIES=triton_ptx scripts/record-gpu-truth.sh "$work/truth" \
  >>"$log" 2>&1
difftest_rc=$?

export PYTHONPATH="$build_abs/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export TRITON_CACHE_DIR="$work/triton-cache"
timeout 600 "$python" -m warpforge.triton.recording record "$work/truth/triton" --device "$device" >"$out/record.txt" \
  2>>"$log"
record_rc=$?
cat "$out/record.txt" >>"$log"
timeout 600 "$python" -m warpforge.triton.recording replay "$work/truth/triton" >"$out/replay.txt" 2>>"$log"
replay_rc=$?
cat "$out/replay.txt" >>"$log"
tar -czf "$out/triton_truth.tar.gz" -C "$work/truth" triton $([ -f "$work/truth/triton_ptx.truth" ] && echo triton_ptx.truth)

echo
echo "gpu-triton: recordings ($(du -sh "$work/truth/triton" | cut -f1) in $out/triton_truth.tar.gz):"
cat "$out/record.txt"
echo
echo "gpu-triton: difftest family triton_ptx replayed on the simulator:"
grep -E "^triton_ptx:" "$log" | tail -1
echo
echo "gpu-triton: the GPU's bytes replayed on the simulator (done in $(($(date +%s) - start)) s):"
echo "| case | target | simulator against the GPU |"
echo "|---|---|---|"
cat "$out/replay.txt"
[ $record_rc -eq 0 ] && [ $replay_rc -eq 0 ] && [ $difftest_rc -eq 0 ]
