#!/usr/bin/env bash
# The sm90a attention forward on a GPU machine (an H100/H200 with CUDA 13,
# torch, ncu): what it costs from Python and from C++, against cuDNN, and
# what bounds its kernel. Most important first, each stage's table printed
# as it ends (a hard time limit may cut the run; BUDGET, default 70 s from
# the start, caps each stage at what is left):
#
#   1. scripts/attn_fwd_causes.py: per shape of the quick grid, ours and
#      cuDNN's SDPA from Python, one call on an idle GPU (the Python
#      benchmark's figure), 20 back to back (the GPU's time) and the host
#      microseconds a call; the data's effect; the kernels one call launches;
#   2. bench_attention --prefill --quick: the C++ forward rows;
#   3. the forward GPU tests (every case on every forward kernel; the
#      persistent CTAs over more items than SMs);
#   4. ncu of the forward at d128 8k not causal and at d64 1k causal;
#   5. where time is left, python -m warpforge.bench_attention --prefill
#      --quick: ours beside each SDPA backend (cuDNN, flash, efficient).
#
# Builds test_gpu, bench_attention and the Python module in BUILD_DIR
# (default build; configured as scripts/gpu-build-args.sh says where it is
# not; scripts/gpu-stages.sh). Logs go to $OUT (default $BUILD_DIR/gpu-attn-fwd).
set -uo pipefail
cd "$(dirname "$0")/.."

NAME=gpu-attn-fwd
build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-attn-fwd}"
budget="${BUDGET:-70}"
mkdir -p "$out"
source scripts/gpu-stages.sh
build_targets test_gpu bench_attention
bench="$build_dir/bench/bench_attention"

# 1. Python: ours and cuDNN, one call, a stream of calls, the host's share.
stage "attn_fwd_causes.py" 27 "$out/causes.log" \
  env PYTHONPATH="$build_dir/python:python" python3 -W ignore scripts/attn_fwd_causes.py
echo "== forward from Python beside cuDNN's SDPA: single call, back to back, host us a call =="
grep -vE "^(Traceback|  )" "$out/causes.log" | head -40

# 2. C++: the forward rows.
stage "bench_attention --prefill --quick" 10 "$out/bench_forward.log" "$bench" --prefill --quick --reps 5
echo "== forward, C++ (TFLOP/s) =="
grep -E "^\|" "$out/bench_forward.log"

# 3. The forward GPU tests.
stage "GPU tests AttentionGpu.Forward*" 12 "$out/tests.log" \
  "$build_dir/tests/test_gpu" --gtest_filter='AttentionGpu.Forward*'
echo "== the forward GPU tests =="
grep -E "^\[ +(OK|FAILED|PASSED) |outside the bound|Failure|exception" "$out/tests.log" | head -8

# 4. ncu of the forward: d128 8k not causal (the first launch), d64 1k causal (its kernel's first).
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
profile "d128 8k" "$out/ncu_d128_8k.log" 'attention_fwd_sm90a.*_d128_' 8192,128,16
profile "d64 1k causal" "$out/ncu_d64_1k_causal.log" 'attention_fwd_sm90a.*_d64_.*_wr' 1024,64,16

# 5. Python: ours beside every SDPA backend, where time is left.
if [ "$(left)" -gt 10 ]; then
  stage "bench_attention.py --prefill --quick" 25 "$out/bench_python.log" \
    env PYTHONPATH="$build_dir/python:python" python3 -W ignore -m warpforge.bench_attention --prefill --quick --reps 5
  echo "== forward from Python beside each SDPA backend (TFLOP/s) =="
  grep -E "^\||^geometric" "$out/bench_python.log"
fi

summary
