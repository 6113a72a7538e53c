#!/usr/bin/env bash
# The attention backward on a GPU machine (an H100/H200 with CUDA 13, torch,
# ncu, compute-sanitizer): its short run, most important first, each stage's
# table printed as it ends (a hard time limit may cut the run; BUDGET,
# default 67 s from the start, the build included, caps each stage at what
# is left). The forward's run is scripts/gpu-attn-fwd.sh, the decode's
# scripts/gpu-attn-decode.sh.
#
#   1. bench_attention --prefill --backward --quick (head_dim 64, 128, 256,
#      and GQA): the backward's TFLOP/s as the op chooses (sm90a);
#   2. the backward GPU tests (AttentionGpu.SanitizeBackward*: the sm90a
#      kernel's small and ragged shapes, d256 among them; with FULL=1
#      BackwardCases*, every case on both kernels), fast and deterministic,
#      against fp64;
#   3. python -m warpforge.bench_attention --prefill --backward --quick:
#      ours beside SDPA's cuDNN, flash and efficient backends (the best named);
#   4. compute-sanitizer racecheck of small and ragged d256 backward shapes
#      (AttentionGpu.SanitizeBackwardHeadDim256, each against fp64; with
#      FULL=1 every SanitizeBackward shape, and memcheck and synccheck);
#   5. ncu of the backward's dK/dV kernel at d256, sequence 8k (and d64,
#      d128 with FULL=1);
#   6. the Python attention tests on the GPU (the torch operators' C++
#      kernels, opcheck, CUDA graphs, fp64 gradients);
#   7. with FULL=1: scripts/attn_bwd_causes.py (where the Python call's time
#      goes).
#
# FULL=1: the benches over the issue's whole grid (longer than a minute).
# Builds test_gpu, bench_attention and the Python module in BUILD_DIR
# (default build; configured as scripts/gpu-build-args.sh says where it is
# not). Logs go to $OUT (default $BUILD_DIR/gpu-attn-bwd).
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-attn-bwd}"
budget="${BUDGET:-67}"
quick=--quick
[ "${FULL:-0}" = 1 ] && quick=
mkdir -p "$out"
NAME=gpu-attn-bwd
source scripts/gpu-stages.sh

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  source scripts/gpu-build-args.sh
  cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1 ||
    { tail -20 "$out/configure.log"; echo "gpu-attn-bwd: FAIL: configure"; exit 1; }
fi
targets=(test_gpu bench_attention)
for t in _warpforge _warpforge_torch; do  # the Python module, and its torch kernels where torch was found
  grep -q "$t" "$build_dir/build.ninja" "$build_dir/Makefile" 2>/dev/null && targets+=("$t")
done
if ! cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error" "$out/build.log" | head -20
  echo "gpu-attn-bwd: FAIL: build (log: $out/build.log)"
  exit 1
fi
test_gpu="$build_dir/tests/test_gpu"
bench="$build_dir/bench/bench_attention"
py=(env PYTHONPATH="$build_dir/python:python" python3 -W ignore)

# 1. C++: the op's choice (its compiles fill the binary cache the Python stages read).
stage "bench_attention --backward (auto)" 9 "$out/bench_backward.log" \
  "$bench" --prefill --backward $quick --reps 3
echo "== backward, C++: TFLOP/s (FlashAttention's count: 2.5x the forward's), the op's choice =="
grep -E "^\|" "$out/bench_backward.log"

# 2. The sm90a backward's small and ragged shapes against fp64 (FULL=1: every backward case on both kernels).
tests='AttentionGpu.SanitizeBackward*' limit=8
[ "${FULL:-0}" = 1 ] && tests='AttentionGpu.SanitizeBackward*:AttentionGpu.BackwardCases*' limit=60
stage "GPU tests $tests" $limit "$out/tests.log" "$test_gpu" --gtest_filter="$tests"
grep -E "^\[ +(OK|FAILED|PASSED) |outside the bound|Failure|exception" "$out/tests.log" | head -12

# 3. Python: ours beside SDPA's backends.
stage "bench_attention.py --prefill --backward" 34 "$out/bench_backward_python.log" \
  "${py[@]}" -m warpforge.bench_attention --prefill --backward $quick --reps 3
echo "== backward from Python beside SDPA (TFLOP/s) =="
grep -E "^\||^geometric" "$out/bench_backward_python.log"

# 4. compute-sanitizer on the small and ragged backward shapes.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
tools=racecheck sanitized=SanitizeBackwardHeadDim256
[ "${FULL:-0}" = 1 ] && tools="racecheck memcheck synccheck" sanitized="SanitizeBackward*"
for tool in $tools; do
  [ -x "$sanitizer" ] || { rows+=("| sanitizer $tool | compute-sanitizer not found | 0s |"); break; }
  [ "$(left)" -gt 5 ] || break
  stage "sanitizer $tool ($sanitized)" 8 "$out/sanitize-$tool.log" \
    "$sanitizer" --tool "$tool" --error-exitcode 99 "$test_gpu" --gtest_filter="AttentionGpu.$sanitized"
  echo "== compute-sanitizer $tool: $(grep -E "SUMMARY" "$out/sanitize-$tool.log" | tail -1) =="
  grep -E "^========= (Error|Race|Invalid)" "$out/sanitize-$tool.log" | sort | uniq -c | head -5
done

# 5. ncu of the dK/dV kernel at sequence 8k, d256 (and d64, d128 with FULL=1; not causal: the first launch).
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
dims=256
[ "${FULL:-0}" = 1 ] && dims="256 64 128"
for d in $dims; do
  [ -x "$ncu" ] && [ "$(left)" -gt 6 ] || break
  stage "ncu backward kv (d$d, 8k)" 6 "$out/ncu_backward_d$d.log" \
    "$ncu" --kernel-name regex:attention_bwd_.*kv --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    "$bench" --prefill --backward --prefill-shape 8192,$d,16 --reps 1
  echo "== ncu: the backward's dK/dV kernel at d$d 8k =="
  grep -E "attention_bwd|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|Stall|stall" \
    "$out/ncu_backward_d$d.log" | sed 's/^ *//' | cut -c1-160 | head -16
done

# 6. The Python GPU tests of the torch operators (the C++ backward kernel among them: its bits against the
#    Python kernel's, CUDA graph capture, fp64 gradients), with what is left.
stage "pytest test_attention.py (torch, GPU)" 18 "$out/pytest.log" \
  "${py[@]}" -m pytest -q -x python/tests/test_attention.py -k "((cpp_kernel or fp64) and cuda) or replays_the_forward_and_backward"
echo "== the Python attention tests: $(tail -1 "$out/pytest.log") =="

# 7. With FULL=1: where the Python call's time goes.
if [ "${FULL:-0}" = 1 ]; then
  stage "attn_bwd_causes.py" 30 "$out/causes.log" "${py[@]}" scripts/attn_bwd_causes.py
  grep -E "^\||^d[0-9]+ " "$out/causes.log" | cut -c1-900
fi

summary
