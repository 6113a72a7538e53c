#!/usr/bin/env bash
# The sm90a attention forward on a GPU machine (an H100/H200 with CUDA 13,
# torch, ncu, compute-sanitizer): what it costs from Python and from C++
# against SDPA's backends, whether it is right, and where its warps wait.
# Most important first, each stage's table printed as it ends (a hard time
# limit may cut the run; BUDGET, default 53 s from the start, caps each
# stage at what is left):
#
#   1. bench_attention --prefill --quick: the C++ forward rows (head_dim
#      64 on three consumer warpgroups, 192 query rows, where the spec
#      takes them: sm90a_attention_spec);
#   2. the forward GPU tests (every case on every forward kernel);
#   3. python -m warpforge.bench_attention --prefill --quick: ours beside
#      each SDPA backend (cuDNN, flash, efficient), the issue's figure;
#   4. compute-sanitizer racecheck and synccheck of the sm90a forward's
#      small and ragged shapes;
#   5. ncu --set full of our forward at d64 8k (not causal): details and
#      SASS lines' PC samples and stall reasons
#      (scripts/ncu_sass_hotspots.py reads them).
#
# Builds test_gpu, bench_attention and the Python module in BUILD_DIR
# (default build; configured as scripts/gpu-build-args.sh says where it is
# not; scripts/gpu-stages.sh). Logs go to $OUT (default $BUILD_DIR/gpu-attn-fwd):
# ncu-details.log and ncu-source.csv hold every profiled kernel's pages.
set -uo pipefail
cd "$(dirname "$0")/.."

NAME=gpu-attn-fwd budget=53
source scripts/gpu-stages.sh
build_targets test_gpu bench_attention
bench="$build_dir/bench/bench_attention"
python=(env PYTHONPATH="$build_dir/python:python" python3 -u -W ignore)
reports="$(mktemp -d)"
: >"$out/ncu-details.log"
: >"$out/ncu-source.csv"

# ncu --set full of one process's launches (the first LAUNCHES that
# KERNEL_REGEX matches): the details page and the source page (SASS) of
# each appended to $out; the key figures and the hot spots printed.
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
profile() {  # profile NAME LIMIT KERNEL_REGEX LAUNCHES COMMAND...
  local name="$1" limit="$2" regex="$3" launches="$4" rep="$reports/${1// /_}"
  shift 4
  [ -x "$ncu" ] && [ "$(left)" -gt 8 ] || return 0
  stage "ncu $name" "$limit" "$rep.log" "$ncu" --set full --import-source yes -f -o "$rep" \
    --kernel-name "regex:$regex" --launch-count "$launches" \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_elapsed \
    "$@"
  cat "$rep.log" >>"$out/ncu-details.log"
  [ -f "$rep.ncu-rep" ] || return 0
  "$ncu" -i "$rep.ncu-rep" --page details >"$rep.details" 2>&1
  "$ncu" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>&1
  cat "$rep.details" >>"$out/ncu-details.log"
  cat "$rep.csv" >>"$out/ncu-source.csv"
  echo "== ncu: $name =="
  grep -E "\([0-9]+, [0-9]+, [0-9]+\)x\(|^ *(Duration|Block Size|Grid Size|Compute \(SM\) Throughput|Memory Throughput|Registers Per Thread|Dynamic Shared Memory Per Block|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc Active|No Eligible|Executed Instructions) |pipe_" \
    "$rep.details" | sed 's/^ *//; s/  */ /g' | cut -c1-160
  python3 scripts/ncu_sass_hotspots.py "$rep.csv" --top 22
}
# 1. C++: the forward rows.
stage "bench_attention --prefill --quick" 12 "$out/bench_forward.log" "$bench" --prefill --quick --reps 5
echo "== forward, C++ (TFLOP/s) =="
grep -E "^\|" "$out/bench_forward.log"

# 2. The forward GPU tests: every case on every forward kernel.
stage "GPU tests ForwardCases*" 9 "$out/tests.log" \
  "$build_dir/tests/test_gpu" --gtest_filter='AttentionGpu.ForwardCases*'
echo "== the forward GPU tests =="
grep -E "^\[ +(OK|FAILED|PASSED) |outside the bound|Failure|exception" "$out/tests.log" | head -10

# 3. Python: ours beside every SDPA backend.
stage "bench_attention.py --prefill --quick" 20 "$out/bench_python.log" \
  "${python[@]}" -m warpforge.bench_attention --prefill --quick --reps 5
echo "== forward from Python beside each SDPA backend (TFLOP/s) =="
grep -E "^\||^geometric" "$out/bench_python.log"

# 4. The sanitizer: the sm90a forward's small and ragged shapes.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
: >"$out/sanitize.log"
for tool in racecheck synccheck; do
  [ -x "$sanitizer" ] && [ "$(left)" -gt 5 ] || break
  stage "sanitizer $tool (SanitizeForward)" 8 "$reports/$tool.log" \
    "$sanitizer" --tool "$tool" --error-exitcode 99 "$build_dir/tests/test_gpu" \
    --gtest_filter='AttentionGpu.SanitizeForward*'
  cat "$reports/$tool.log" >>"$out/sanitize.log"
  echo "== compute-sanitizer $tool: $(grep -E "SUMMARY" "$reports/$tool.log" | tail -1) =="
done

# 5. Ours at d64 8k, profiled.
profile "ours d64 8k" 10 'attention_fwd_sm90a.*_d64_' 1 "$bench" --prefill --prefill-shape 8192,64,16 --reps 1

rm -rf "$reports"
summary
