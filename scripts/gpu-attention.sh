#!/usr/bin/env bash
# The attention backward on a GPU machine (an H100/H200 with CUDA 13, torch,
# ncu, compute-sanitizer): its short run, most important first, each stage's
# table printed as it ends (a hard time limit may cut the run; BUDGET,
# default 70 s from the start, the build included, caps each stage at what
# is left). The decode run is scripts/gpu-attn-decode.sh.
#
#   1. the backward GPU tests (AttentionGpu.BackwardCases*: every case on
#      every backward kernel the GPU runs, fast and deterministic, against
#      the fp64 reference; tests/gpu/attention_gpu_test.cpp);
#   2. bench_attention --prefill --backward --quick: the backward's TFLOP/s
#      as the op chooses (auto: sm90a at head_dim 64 and 128);
#   3. python -m warpforge.bench_attention --prefill --backward --quick:
#      ours beside SDPA's cuDNN, flash and efficient backends (the best named);
#   4. compute-sanitizer racecheck of the small and ragged backward shapes
#      (AttentionGpu.SanitizeBackward; memcheck with FULL=1);
#   5. ncu of the backward's dK/dV kernel at d128, sequence 8k (one launch);
#   6. where time is left, the bench with --kernel sm80 (the session-3
#      kernels): the old/new ratio per shape on the same machine.
#
# FULL=1: the bench over the issue's whole grid (longer than a minute).
# Builds test_gpu, bench_attention and the Python module in BUILD_DIR
# (default build; configured as scripts/gpu-build-args.sh says where it is
# not). Logs go to $OUT (default $BUILD_DIR/gpu-attention).
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-attention}"
budget="${BUDGET:-70}"
quick=--quick
[ "${FULL:-0}" = 1 ] && quick=
mkdir -p "$out"
declare -a rows=()
status=PASS

left() { local s=$((budget - SECONDS)); echo $((s > 1 ? s : 1)); }
# stage NAME LIMIT LOG COMMAND...: COMMAND under timeout (at most what is left), output to LOG.
stage() {
  local name="$1" limit="$2" log="$3" start=$SECONDS
  shift 3
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  timeout "$limit" "$@" >"$log" 2>&1
  rc=$?
  local result=ok
  [ $rc -eq 124 ] && result="TIMED OUT after ${limit}s" && status=FAIL
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && result="exit $rc (log: $log)" && status=FAIL
  rows+=("$(printf '| %-40s | %-40s | %4ss |' "$name" "$result" $((SECONDS - start)))")
}

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  source scripts/gpu-build-args.sh
  cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1 ||
    { tail -20 "$out/configure.log"; echo "gpu-attention: FAIL: configure"; exit 1; }
fi
targets=(test_gpu bench_attention)
grep -q "_warpforge" "$build_dir/build.ninja" "$build_dir/Makefile" 2>/dev/null && targets+=(_warpforge)
if ! cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error" "$out/build.log" | head -20
  echo "gpu-attention: FAIL: build (log: $out/build.log)"
  exit 1
fi
test_gpu="$build_dir/tests/test_gpu"
bench="$build_dir/bench/bench_attention"
py=(env PYTHONPATH="$build_dir/python:python" python3 -W ignore)

# 1. The backward GPU tests (every case on both kernels, fast and deterministic).
stage "GPU tests AttentionGpu.BackwardCases*" 12 "$out/tests.log" \
  "$test_gpu" --gtest_filter='AttentionGpu.BackwardCases*'
echo "== the backward GPU tests =="
grep -E "^\[ +(OK|FAILED|PASSED) |outside the bound|Failure|exception" "$out/tests.log" | head -12

# 2. C++: the op's choice.
stage "bench_attention --backward (auto)" 10 "$out/bench_backward.log" \
  "$bench" --prefill --backward $quick --reps 5
echo "== backward, C++: TFLOP/s (FlashAttention's count: 2.5x the forward's), the op's choice =="
grep -E "^\|" "$out/bench_backward.log"

# 3. Python: ours beside SDPA's backends.
stage "bench_attention.py --prefill --backward" 28 "$out/bench_backward_python.log" \
  "${py[@]}" -m warpforge.bench_attention --prefill --backward $quick --reps 3
echo "== backward from Python beside SDPA (TFLOP/s) =="
grep -E "^\||^geometric" "$out/bench_backward_python.log"

# 4. compute-sanitizer on the small and ragged backward shapes.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
tools=racecheck
[ "${FULL:-0}" = 1 ] && tools="racecheck memcheck synccheck"
for tool in $tools; do
  [ -x "$sanitizer" ] || { rows+=("| sanitizer $tool | compute-sanitizer not found | 0s |"); break; }
  stage "sanitizer $tool (SanitizeBackward)" 12 "$out/sanitize-$tool.log" \
    "$sanitizer" --tool "$tool" --error-exitcode 99 "$test_gpu" --gtest_filter='AttentionGpu.SanitizeBackward*'
  echo "== compute-sanitizer $tool: $(grep -oE "ERROR SUMMARY: [0-9]+ error" "$out/sanitize-$tool.log" | tail -1) =="
  grep -E "^========= (Error|Race|Invalid)" "$out/sanitize-$tool.log" | sort | uniq -c | head -5
done

# 5. ncu of the dK/dV kernel at d128, sequence 8k (not causal: the first launch).
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
if [ -x "$ncu" ] && [ "$(left)" -gt 8 ]; then
  stage "ncu backward kv (d128, 8k)" 13 "$out/ncu_backward.log" \
    "$ncu" --kernel-name regex:attention_bwd_.*kv --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
    "$bench" --prefill --backward --prefill-shape 8192,128,16 --reps 1
  echo "== ncu: the backward's dK/dV kernel at d128 8k =="
  grep -E "attention_bwd|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Shared Memory Config|Warp Cycles Per Issued|Stall|Issue Slots Busy|Executed Ipc" \
    "$out/ncu_backward.log" | sed 's/^ *//' | head -24
fi

# 6. C++: the sm80 kernels (the session-3 backward), where time is left.
if [ "$(left)" -gt 6 ]; then
  stage "bench_attention --backward --kernel sm80" 8 "$out/bench_backward_sm80.log" \
    "$bench" --prefill --backward $quick --reps 3 --kernel sm80
  echo "== the same with --kernel sm80 (the session-3 kernels) =="
  grep -E "^\|" "$out/bench_backward_sm80.log"
fi

echo
echo "gpu-attention ($(date -u +%Y-%m-%dT%H:%MZ), ${SECONDS}s):"
printf '| %-40s | %-40s | %5s |\n|---|---|---|\n' stage result time
printf '%s\n' "${rows[@]}"
echo "gpu-attention: $status"
[ "$status" = PASS ]
