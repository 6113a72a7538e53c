#!/usr/bin/env bash
# The sm90a attention forward on a GPU machine (an H100/H200 with CUDA 13,
# torch, ncu, compute-sanitizer): what it costs from Python and from C++,
# against SDPA's backends, and what bounds its kernel. Most important first,
# each stage's table printed as it ends (a hard time limit may cut the run;
# BUDGET, default 67 s from the start, caps each stage at what is left):
#
#   1. python -m warpforge.bench_attention --prefill --quick: ours beside
#      each SDPA backend (cuDNN, flash, efficient), the issue's figure;
#   2. bench_attention --prefill --quick: the C++ forward rows;
#   3. the forward GPU tests (the persistent CTAs over more items than
#      SMs; every case on every forward kernel);
#   4. compute-sanitizer racecheck of the sm90a forward's small and ragged
#      shapes (head_dim 256's K and V rings wrapping, persistent pairs, varlen);
#   5. ncu of the forward at d128 1k and d64 1k, not causal;
#   6. where time is left, scripts/attn_fwd_causes.py --quick (seq 1k): ours
#      and cuDNN's SDPA from Python, one call on an idle GPU, 20 back to back
#      (the GPU's time) and the host microseconds a call.
#
# Builds test_gpu, bench_attention and the Python module in BUILD_DIR
# (default build; configured as scripts/gpu-build-args.sh says where it is
# not; scripts/gpu-stages.sh). Logs go to $OUT (default $BUILD_DIR/gpu-attn-fwd).
set -uo pipefail
cd "$(dirname "$0")/.."

NAME=gpu-attn-fwd
build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-attn-fwd}"
budget="${BUDGET:-67}"
mkdir -p "$out"
source scripts/gpu-stages.sh
build_targets test_gpu bench_attention
bench="$build_dir/bench/bench_attention"
python=(env PYTHONPATH="$build_dir/python:python" python3 -u -W ignore)

# 1. Python: ours beside every SDPA backend.
stage "bench_attention.py --prefill --quick" 22 "$out/bench_python.log" \
  "${python[@]}" -m warpforge.bench_attention --prefill --quick --reps 5
echo "== forward from Python beside each SDPA backend (TFLOP/s) =="
grep -E "^\||^geometric" "$out/bench_python.log"

# 2. C++: the forward rows.
stage "bench_attention --prefill --quick" 8 "$out/bench_forward.log" "$bench" --prefill --quick --reps 5
echo "== forward, C++ (TFLOP/s) =="
grep -E "^\|" "$out/bench_forward.log"

# 3. The forward GPU tests: the persistent CTAs first (items one stream of blocks), then every case.
stage "GPU test ForwardPersistent*" 12 "$out/tests-persistent.log" \
  "$build_dir/tests/test_gpu" --gtest_filter='AttentionGpu.ForwardPersistent*'
stage "GPU test ForwardCases*" 8 "$out/tests.log" \
  "$build_dir/tests/test_gpu" --gtest_filter='AttentionGpu.ForwardCases*'
echo "== the forward GPU tests =="
cat "$out/tests-persistent.log" "$out/tests.log" |
  grep -E "^\[ +(OK|FAILED|PASSED) |outside the bound|Failure|exception" | head -10

# 4. compute-sanitizer racecheck of the sm90a forward's small shapes.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
if [ -x "$sanitizer" ]; then
  stage "sanitizer racecheck (SanitizeForward)" 4 "$out/sanitize-racecheck.log" \
    "$sanitizer" --tool racecheck --error-exitcode 99 "$build_dir/tests/test_gpu" \
    --gtest_filter='AttentionGpu.SanitizeForward*'
  echo "== compute-sanitizer racecheck: $(grep -E "SUMMARY" "$out/sanitize-racecheck.log" | tail -1) =="
fi

# 5. ncu of the forward: the first launch of the shape (not causal).
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
profile() {  # profile NAME LOG KERNEL_REGEX SHAPE
  [ -x "$ncu" ] && [ "$(left)" -gt 8 ] || return 0
  stage "ncu $1" 12 "$2" "$ncu" --kernel-name "regex:$3" --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section SchedulerStats --section ComputeWorkloadAnalysis \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed \
    "$bench" --prefill --prefill-shape "$4" --reps 1
  echo "== ncu: the forward, $1 =="
  grep -E "attention_fwd|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|No Eligible|Stall|pipe_" \
    "$2" | sed 's/^ *//' | head -26
}
profile "d128 1k" "$out/ncu_d128_1k.log" 'attention_fwd_sm90a.*_d128_' 1024,128,16
profile "d64 1k" "$out/ncu_d64_1k.log" 'attention_fwd_sm90a.*_d64_' 1024,64,16

# 6. Python: ours and cuDNN at seq 1k, one call, a stream of calls, the host's share.
if [ "$(left)" -gt 6 ]; then
  stage "attn_fwd_causes.py --quick" 20 "$out/causes.log" "${python[@]}" scripts/attn_fwd_causes.py --quick
  echo "== forward from Python beside cuDNN's SDPA: single call, back to back, host us a call =="
  grep -vE "^(Traceback|  )" "$out/causes.log" | head -24
fi

summary
