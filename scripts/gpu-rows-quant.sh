#!/usr/bin/env bash
# rms_norm_quantize and the quantized linear layer on a GPU machine, inside
# $BUDGET_S seconds (default 51, for a 55 s limit; the build included),
# printing as it goes, the most important first:
#   1. bench_memory_bound: rms_mxfp8, rms_mxfp4, rms_nvfp4 and cross-entropy
#      ($OPS) against the device-to-device copy of the same bytes, rows
#      16/4096/32768 x hidden 4096/8192 ($ROWS, $HIDDEN; vocabulary 128k; 16
#      rows: the quantized layer's kernel alone);
#   2. the GPU tests $TESTS (a gtest filter: the simulator's cases on the GPU);
#   3. the quantized linear layer: rms_norm_quantize + GemmAmax (fused)
#      against norm, quantize, GemmAmax (separate) and GemmAmax alone, same
#      run, rows $LINEAR_ROWS x K = N $LINEAR_HIDDEN, each run between its
#      own events and runs queued behind a spin (the GPU's time alone);
#   4. with PY_OPS (default ce; empty: none), warpforge.bench_rows: ours
#      against PyTorch eager and Liger Kernel at rows 4096/32768 (vocabulary
#      128k), torch.compile left out;
#   5. where time is left, Nsight Compute on $NCU_CASES ("op:rows:hidden ...", the vocabulary for ce:
#      the norm_quantize or cross_entropy kernel; default rms_nvfp4:32768:4096).
# Last, a short table (the lines of 1, 3 and 4). The machine is the one
# scripts/gpu-check.sh describes (CUDA driver, CMake, a compiler, GoogleTest
# sources: scripts/gpu-build-args.sh). scripts/gpu-membound.sh measures the
# other row ops.
#
#   OUT=/tmp/out scripts/gpu-rows-quant.sh
#
# BUILD_DIR (default build-rows-quant) and JOBS (default nproc) may be set.
# The Python stage needs the warpforge_python target (with torch).
set -uo pipefail
cd "$(dirname "$0")/.."

source scripts/gpu-build-args.sh
gpu_script rows-quant build-rows-quant
deadline=${BUDGET_S:-51}  # seconds from the script's start
left() { local s=$((deadline - SECONDS)); echo $((s > 3 ? s : 3)); }

targets=(bench_memory_bound)
py_ops="${PY_OPS-ce}"
[ -n "$py_ops" ] && targets+=(warpforge_python)
[ -n "${TESTS-NormQuantizeGpu.TheSimulatorsCases:CrossEntropyGpu.TheSimulatorsCases}" ] && targets+=(test_gpu)
gpu_build "${targets[@]}"
bench="$build_dir/bench/bench_memory_bound"

# 1. The three formats and cross-entropy against the copy of the same bytes.
echo "== rms_norm_quantize and cross-entropy against the copy of the same bytes =="
timeout $(($(left) * 40 / 100)) "$bench" --ops "${OPS:-rms_mxfp8,rms_mxfp4,rms_nvfp4,ce}" --rows "${ROWS:-16,4096,32768}" \
  --hidden "${HIDDEN:-4096,8192}" --vocab 131072 --linear-rows none --reps 10 2>&1 | tee "$out/bench_formats.txt" | cut -d'|' -f1-9
note "bench_memory_bound formats: exit ${PIPESTATUS[0]} ($out/bench_formats.txt)"

# 2. The GPU tests: the kernels' bits against ops::quantize of the norm, on the GPU.
if [ -n "${TESTS-NormQuantizeGpu.TheSimulatorsCases:CrossEntropyGpu.TheSimulatorsCases}" ] && [ "$(left)" -gt 6 ]; then
  timeout 15 "$build_dir/tests/test_gpu" --gtest_filter="${TESTS-NormQuantizeGpu.TheSimulatorsCases:CrossEntropyGpu.TheSimulatorsCases}" \
    >"$out/gpu-tests.log" 2>&1
  note "gpu tests: exit $? $(grep -E '^\[ +(PASSED|FAILED) ' "$out/gpu-tests.log" | tr '\n' ' ' | cut -c1-200)"
fi

# 3. The quantized linear layer: fused against separate, same run.
echo
echo "== quantized linear layer: fused against separate =="
[ "${LINEAR_ROWS-1,16,64}" = none ] || timeout $(($(left) * 75 / 100)) "$bench" --ops none --linear-rows "${LINEAR_ROWS-1,16,64}" \
  --linear-hidden "${LINEAR_HIDDEN:-4096,8192}" --reps 20 2>&1 | tee "$out/bench_linear.txt" | grep -E "^\| (format|mxfp8|nvfp4) "
note "bench_memory_bound linear: exit ${PIPESTATUS[0]} ($out/bench_linear.txt)"

# 4. Ours against PyTorch eager and Liger Kernel, from Python.
if [ -n "$py_ops" ] && [ "$(left)" -gt 10 ]; then
  echo
  echo "== bench_rows: ours against PyTorch eager and Liger Kernel =="
  PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}" timeout $(($(left) * 70 / 100)) \
    python3 -u -m warpforge.bench_rows --no-compile --ops "$py_ops" --rows 4096,32768 --vocab 131072 --reps 10 2>&1 |
    tee "$out/bench_rows.txt" | grep -E "^\||^rows >="
  note "bench_rows --ops $py_ops: exit ${PIPESTATUS[0]} ($out/bench_rows.txt)"
fi

# 5. Nsight Compute (executed instructions over the rows' elements: instructions an element), where time is left.
for c in ${NCU_CASES-rms_nvfp4:32768:4096}; do
  [ "$(left)" -gt 8 ] || { note "ncu $c: no time left"; continue; }
  IFS=: read -r op r h <<<"$c"
  log="$out/ncu-$op-${r}x$h.txt"
  timeout $(($(left) - 2)) ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section SchedulerStats --section WarpStateStats --section InstructionStats \
    -k "regex:^warpforge_(rms_norm_quantize|cross_entropy)$" -c 1 "$bench" --ops "$op" --rows "$r" --hidden "$h" --vocab "$h" --linear-rows none --reps 1 \
    >"$log" 2>&1
  note "ncu $op $r x $h: exit $? ($log)"
  grep -E "DRAM Throughput|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc Active|Warp Cycles Per Issued|Executed Instructions  " "$log" | cut -c1-120
done

echo
echo "== summary =="
grep -E "^\| (rms_|ce )" "$out/bench_formats.txt" | cut -d'|' -f1-9
grep -E "^\| (mxfp8|nvfp4) " "$out/bench_linear.txt" | cut -d'|' -f1-12
[ -f "$out/bench_rows.txt" ] && grep -E "^\| ce " "$out/bench_rows.txt"
for line in "${summary[@]}"; do echo "gpu-rows-quant: $line"; done
exit 0
