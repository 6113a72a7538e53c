#!/usr/bin/env bash
# The memory-bound row ops on a GPU machine. Two modes:
#
# Quick (the default, about 90 s of GPU once built): the GPU tests of the
# ops being tuned ($OPS_TESTS), bench_memory_bound (ours against the
# device-to-device copy of the same bytes) for those ops ($OPS) at rows
# 4096, 32768 x hidden 4096, 8192 (the quantized linear layer at 4096 tokens),
# and Nsight Compute (memory workload, occupancy, speed of light, launch) on
# the kernels named in $NCU_CASES; prints a short table last.
#
# ALL=1: every row op: builds what they need (test_gpu, bench_memory_bound,
# the Python extension), runs their GPU tests (every simulator case on the
# device, then the benchmark's shapes), compute-sanitizer's memcheck,
# racecheck and synccheck over the small cases, the Python tests on CUDA
# tensors (torch.compile, CUDA graphs, opcheck, JAX), bench_memory_bound and
# warpforge.bench_rows (against PyTorch eager, torch.compile and Liger
# Kernel where installed), on a trimmed grid (about five minutes).
# The machine is the one scripts/gpu-check.sh describes (CUDA driver, CMake,
# a compiler, GoogleTest sources in $WARPFORGE_GTEST_SOURCE, ./.gtest or
# /usr/src/googletest; torch, JAX, Triton, compute-sanitizer, ncu).
#
#   OUT=/tmp/out scripts/gpu-membound.sh
#   ALL=1 ...    the five-minute run of every row op
#   FULL=1 ...   (with ALL=1) the benchmarks over the whole grid (rows 1..32768 x hidden 2048..16384)
#
# BUILD_DIR (default build-membound) and JOBS (default nproc) may be set.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-$PWD/gpu-membound-out}"
build_dir="${BUILD_DIR:-build-membound}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$out"
source scripts/gpu-build-args.sh
summary=()
note() { summary+=("$1"); echo "gpu-membound: $1"; }
configure_args=("${cmake_args[@]}")
targets=(test_gpu bench_memory_bound)
[ -n "${ALL:-}" ] && targets+=(_warpforge)
if ! cmake -S . -B "$build_dir" "${configure_args[@]}" >"$out/configure.log" 2>&1 ||
  ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" "$out/configure.log" | head -30
  echo "gpu-membound: FAIL: build (logs in $out)"
  exit 1
fi

# The quick mode: what is being tuned now.
if [ -z "${ALL:-}" ]; then
  ops="${OPS:-rms,rms_bwd,layer,layer_bwd,rms_mxfp8,rms_nvfp4,ce,softmax}"
  # The simulator's cases of every row op touched, and the benchmark shapes of the norms and cross-entropy
  # (about 40 s; last, so that a slow test leaves the measurements done).
  ops_tests="${OPS_TESTS:-NormGpu.*:NormQuantizeGpu.TheSimulatorsCases:CrossEntropyGpu.*:SoftmaxGpu.TheSimulatorsCases}"
  # kernel regex : bench ops : rows : hidden, one ncu run each
  ncu_cases="${NCU_CASES:-^warpforge_layer_norm\$:layer:32768:8192 ^warpforge_rms_norm_backward\$:rms_bwd:32768:8192 ^warpforge_cross_entropy\$:ce:4096:131072}"
  "$build_dir/bench/bench_memory_bound" --ops "$ops" --rows 4096,32768 --hidden 4096,8192 --vocab 32768,131072 \
    --linear-rows 4096 --reps 10 >"$out/bench_memory_bound.txt" 2>&1
  note "bench_memory_bound --ops $ops: exit $? ($out/bench_memory_bound.txt)"
  if command -v ncu >/dev/null; then
    for c in $ncu_cases; do
      IFS=: read -r kernel op r h <<<"$c"
      log="$out/ncu-$op-${r}x$h.txt"
      timeout 120 ncu --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
        --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
        -k "regex:$kernel" -c 1 "$build_dir/bench/bench_memory_bound" --ops "$op" --rows "$r" --hidden "$h" \
        --vocab "$h" --linear-rows none --reps 1 >"$log" 2>&1
      note "ncu $op $r x $h: exit $? ($log)"
    done
  else
    note "ncu: not installed"
  fi
  "$build_dir/tests/test_gpu" --gtest_filter="$ops_tests" >"$out/gpu-tests.log" 2>&1
  note "gpu tests ($ops_tests): $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu-tests.log" | tr '\n' ' ')$(grep -c '^\[  SKIPPED' "$out/gpu-tests.log") skipped"
  echo
  echo "== bench_memory_bound (ours against the copy of the same bytes) =="
  grep -E "^GPU|^\|" "$out/bench_memory_bound.txt" | cut -d'|' -f1-9
  for log in "$out"/ncu-*.txt; do
    [ -f "$log" ] || continue
    echo
    echo "== $(basename "$log" .txt) =="
    grep -E "^  [a-z_]+.*\(|DRAM Throughput|Memory Throughput|Duration|L1/TEX Hit|L2 Hit|Registers Per|Block Size|Grid Size|Theoretical Occ|Achieved Occ|Block Limit|Waves Per SM|Max Active Clusters|Cluster Size|Issue Slots Busy|Issued Ipc Active|Warp Cycles Per Issued|One or More Eligible|stalled" "$log" | cut -c1-220 | head -40
  done
  echo
  for line in "${summary[@]}"; do echo "gpu-membound: $line"; done
  exit 0
fi

tests="NormGpu.*:SoftmaxGpu.*:SwigluGpu.*:CrossEntropyGpu.*:NormQuantizeGpu.*"
small="NormGpu.TheSimulatorsCases:SoftmaxGpu.TheSimulatorsCases:SwigluGpu.TheSimulatorsCases:CrossEntropyGpu.TheSimulatorsCases:NormQuantizeGpu.TheSimulatorsCases"

# 1. The GPU tests.
"$build_dir/tests/test_gpu" --gtest_filter="$tests" >"$out/gpu-tests.log" 2>&1
note "gpu tests ($tests): $(grep -E '^\[  (PASSED|FAILED) ' "$out/gpu-tests.log" | tr '\n' ' ')$(grep -c '^\[  SKIPPED' "$out/gpu-tests.log") skipped"

# 2. compute-sanitizer over the small cases.
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$build_dir/tests/test_gpu" --gtest_filter="$small" \
      >"$out/sanitizer-$tool.log" 2>&1
    rc=$?
    note "compute-sanitizer $tool: $([ $rc -eq 0 ] && echo clean || echo "FAILED (exit $rc)") ($(grep -oE 'ERROR SUMMARY: [0-9]+ errors?' "$out/sanitizer-$tool.log" | tail -1))"
  done
else
  note "compute-sanitizer: not installed"
fi

# 3. The Python tests on the GPU (torch.compile, CUDA graphs, opcheck, JAX).
export PYTHONPATH="$build_dir/python:$PWD/python"
python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_rows.py >"$out/pytest.log" 2>&1
note "pytest test_rows.py: $(tail -1 "$out/pytest.log")"

# 4. The benchmarks (a trimmed grid: FULL=1 for the issue's whole grid), and
# the Python DSL examples against the C++ ops.
rows="4096,32768"
hidden="4096,8192"
vocab="32768,131072"
linear="1,64,4096"
if [ -n "${FULL:-}" ]; then rows="1,64,4096,32768"; hidden="2048,4096,8192,16384"; vocab="32768,131072,262144"; fi
"$build_dir/bench/bench_memory_bound" --rows "$rows" --hidden "$hidden" --vocab "$vocab" --linear-rows "$linear" \
  >"$out/bench_memory_bound.txt" 2>&1
note "bench_memory_bound: exit $? ($out/bench_memory_bound.txt)"
compile_hidden="$hidden"
[ -z "${FULL:-}" ] && compile_hidden="4096"  # torch.compile compiles each shape: the trimmed run keeps to one width
python3 -m warpforge.bench_rows --rows "$rows" --hidden "$compile_hidden" --vocab "$vocab" >"$out/bench_rows.txt" 2>&1
note "bench_rows: exit $? ($out/bench_rows.txt)"
for example in rms_norm softmax; do
  (cd examples/python && python3 "$example.py" --torch) >"$out/example-$example.txt" 2>&1
  note "examples/python/$example.py --torch: exit $? ($out/example-$example.txt)"
done

echo
echo "== bench_memory_bound (ours against the copy of the same bytes) =="
grep -E "^GPU|^\|" "$out/bench_memory_bound.txt" | cut -d'|' -f1-9
echo
echo "== bench_rows (against PyTorch eager, torch.compile, Liger Kernel) =="
grep -E "^GPU|^\||^rows >=" "$out/bench_rows.txt"
echo
echo "== the Python DSL examples against the C++ ops =="
grep -hE "^\|" "$out"/example-*.txt
echo
for line in "${summary[@]}"; do echo "gpu-membound: $line"; done
