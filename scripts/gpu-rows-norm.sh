#!/usr/bin/env bash
# The normalizations (RMSNorm, LayerNorm) forward and backward on a GPU
# machine, inside a hard limit (BUDGET, default 50 s from the start, for a
# 55 s window), the most important first:
#   1. bench_memory_bound: the four ops ($OPS) at rows 4096, 32768 x hidden
#      4096, 8192, ours against the device-to-device copy of the same bytes
#      (median of 10);
#   2. Nsight Compute of the kernels of $NCU_OP at $NCU_ROWS x $NCU_HIDDEN
#      (LayerNorm's backward at 4096 x 4096: its row kernel and its column
#      sums) at the GPU's own clocks with a warm L2 (each kernel's time as
#      the benchmark runs it, not at ncu's locked clock after a flush);
#   3. the norms' GPU tests (each simulator case on the device, then the
#      benchmark's shapes where 35 s are left);
#   4. compute-sanitizer memcheck of the simulator's cases, where
#      $MEMCHECK_NEEDS (25) seconds are left;
# then a short table: ncu's figures and stalls for each kernel, the tests,
# the copy fractions four to a line, the stages. Logs go to $OUT (default
# $BUILD_DIR/gpu-rows-norm).
#
#   OUT=/tmp/out BUILD_DIR=/tmp/wb scripts/gpu-rows-norm.sh
set -uo pipefail
cd "$(dirname "$0")/.."

ops="${OPS:-layer_bwd,rms_bwd,layer,rms}"
ncu_op="${NCU_OP:-layer_bwd}" ncu_rows="${NCU_ROWS:-4096}" ncu_hidden="${NCU_HIDDEN:-4096}"
NAME=gpu-rows-norm budget=50
source scripts/gpu-stages.sh

build_targets test_gpu bench_memory_bound
bench="$build_dir/bench/bench_memory_bound"
test_gpu="$build_dir/tests/test_gpu"

# 1. Ours against the copy of the same bytes.
stage "bench_memory_bound ($ops)" 22 "$out/bench_memory_bound.txt" \
  "$bench" --ops "$ops" --rows 4096,32768 --hidden 4096,8192 --linear-rows none --reps 10
cut -d'|' -f1-9 "$out/bench_memory_bound.txt"

# 2. Nsight Compute: both kernels of the op (-c 2), with where the warps stall
# (cycles a warp spends in each state per instruction issued).
stalls=""
for reason in long_scoreboard short_scoreboard barrier membar not_selected wait math_pipe_throttle mio_throttle \
  lg_throttle no_instruction; do
  stalls+="${stalls:+,}smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio"
done
ncu_log="$out/ncu-$ncu_op-${ncu_rows}x$ncu_hidden.txt"
if command -v ncu >/dev/null; then
  stage "ncu $ncu_op $ncu_rows x $ncu_hidden" 16 "$ncu_log" \
    ncu --clock-control none --cache-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section SchedulerStats --section WarpStateStats --section InstructionStats --metrics "$stalls" \
    -k "regex:norm_backward|norm_column_sum" -c 2 \
    "$bench" --ops "$ncu_op" --rows "$ncu_rows" --hidden "$ncu_hidden" --linear-rows none --reps 1
fi

# 3. The GPU tests: the simulator's cases, then the benchmark's shapes where time is left.
stage "gpu tests NormGpu.TheSimulatorsCases" 12 "$out/gpu-tests.log" "$test_gpu" \
  --gtest_filter='NormGpu.TheSimulatorsCases'
if [ "$(left)" -gt 35 ]; then  # (about 31 s on an H200: tests/test_costs.cmake)
  stage "gpu tests NormGpu.TheBenchmarksShapes" "$(left)" "$out/gpu-tests-shapes.log" "$test_gpu" \
    --gtest_filter='NormGpu.TheBenchmarksShapes'
fi

# 4. compute-sanitizer over the simulator's cases.
if command -v compute-sanitizer >/dev/null && [ "$(left)" -gt "${MEMCHECK_NEEDS:-25}" ]; then
  stage "memcheck NormGpu.TheSimulatorsCases" "$(left)" "$out/memcheck.log" \
    compute-sanitizer --tool memcheck --error-exitcode 1 "$test_gpu" --gtest_filter='NormGpu.TheSimulatorsCases'
fi

echo
if [ -f "$ncu_log" ]; then
  echo "== ncu: each kernel's time, DRAM, issue, instructions and stalls (cycles a warp waits per issued instruction) =="
  grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Issue Slots Busy|Executed Instructions  |Registers Per|issue_stalled" \
    "$ncu_log" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' |
    awk '/\(/ {printf "%s%s:", (NR > 1 ? "\n" : ""), $1; next} {printf " %s %s;", $1, $NF} END {print ""}'
fi
grep -hE '^\[ +(OK|FAILED) ' "$out"/gpu-tests*.log 2>/dev/null | tr '\n' ' '
echo
echo "== of the copy (op rows hidden fraction) =="
awk -F'|' '/^\| [a-z]/ && $9 ~ /[0-9]/ {gsub(/ /, "", $2); printf "%s %d %d %s\n", $2, $3, $4, $9}' \
  "$out/bench_memory_bound.txt" | paste -d' ' - - - -
summary
