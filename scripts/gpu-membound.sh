#!/usr/bin/env bash
# The memory-bound row ops on a GPU machine. Two modes:
#
# Quick (the default): inside $BUDGET_S seconds (65; the lead's window is
# 70), printing as it goes, the most important first: bench_memory_bound
# (ours against the device-to-device copy of the same bytes; $CPP_SHARE
# percent of the time left) over $OPS at rows 4096, 32768 x hidden 4096,
# 8192 (cross-entropy at vocabularies $VOCAB); the GPU tests $OPS_TESTS (a
# gtest filter; $TESTS_SHARE percent); warpforge.bench_rows (ours against
# PyTorch eager and Liger Kernel, torch.compile with COMPILE=1) over $PY_OPS
# at rows 4096, 32768 (cross-entropy at vocabularies $PY_VOCAB); Nsight
# Compute on $NCU_CASES (LayerNorm's backward, cross-entropy's kernel;
# $NCU_SHARE percent each) with the warps' stall reasons;
# scripts/rows_host_cost.py $HOST_COST (--forward: RMSNorm's forward's host
# time); the Python tests' GPU cases $PY_TESTS; last, the copy fractions
# again, four cases a line. An empty variable skips its stage.
# scripts/gpu-rows.sh is this mode over every op.
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

source scripts/gpu-build-args.sh
gpu_script membound build-membound
note() { summary+=("$1 (at ${SECONDS} s)"); echo "gpu-membound: $1 (at ${SECONDS} s)"; }
configure_args=("${cmake_args[@]}")
targets=(test_gpu bench_memory_bound warpforge_python)  # (warpforge_python: _warpforge and, with torch, _warpforge_torch)
# (One log for both steps: the lead's runs bring back at most 8 files.)
if ! cmake -S . -B "$build_dir" "${configure_args[@]}" >"$out/build.log" 2>&1 ||
  ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >>"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -30
  echo "gpu-membound: FAIL: build (logs in $out)"
  exit 1
fi

# The quick mode: what is being tuned now, inside a wall-clock budget
# ($BUDGET_S, default 65 s, for a 70 s limit); each stage prints as it goes
# (a hard timeout leaves what was measured), the most important first.
if [ -z "${ALL:-}" ]; then
  deadline=${BUDGET_S:-65}  # seconds from the script's start (the build included)
  left() { local s=$((deadline - SECONDS)); echo $((s > 3 ? s : 3)); }
  export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
  # 1. Ours against the copy of the same bytes (C++) over $OPS at rows 4096, 32768 x hidden 4096, 8192
  # (cross-entropy at vocabularies $VOCAB).
  ops="${OPS-rms_bwd,layer_bwd,ce}"
  if [ -n "$ops" ] && [ "$(left)" -gt 6 ]; then
    echo "== bench_memory_bound: ours against the copy of the same bytes =="
    timeout $(($(left) * ${CPP_SHARE:-30} / 100)) "$build_dir/bench/bench_memory_bound" --ops "$ops" --rows 4096,32768 \
      --hidden 4096,8192 --vocab "${VOCAB:-131072}" --linear-rows none --reps 10 2>&1 | tee "$out/bench_memory_bound.txt" | cut -d'|' -f1-9
    note "bench_memory_bound --ops $ops: exit ${PIPESTATUS[0]} ($out/bench_memory_bound.txt)"
  fi
  # 2. The GPU tests of the kernels that changed ($OPS_TESTS, a gtest filter: each simulator case on the device).
  ops_tests="${OPS_TESTS-CrossEntropyGpu.TheSimulatorsCases:NormGpu.TheSimulatorsCases}"
  if [ -n "$ops_tests" ] && [ "$(left)" -gt 5 ]; then
    timeout $(($(left) * ${TESTS_SHARE:-30} / 100)) "$build_dir/tests/test_gpu" --gtest_filter="$ops_tests" >"$out/gpu-tests.log" 2>&1
    note "gpu tests ($ops_tests): exit $? $(grep -E '^\[ +(OK|PASSED|FAILED) ' "$out/gpu-tests.log" | tr '\n' ' ' | cut -c1-300)"
  fi
  # 3. Ours against PyTorch eager and Liger Kernel (torch.compile only with COMPILE=1: it compiles each shape).
  py_ops="${PY_OPS-ce,rms_bwd,layer_bwd}"
  compile_flag=(--no-compile)
  [ -n "${COMPILE:-}" ] && compile_flag=()
  if [ -n "$py_ops" ] && [ "$(left)" -gt 10 ]; then
    echo
    echo "== bench_rows: ours against PyTorch eager and Liger Kernel =="
    # (One width, 4096: Triton compiles each of Liger's kernels for each width.)
    timeout $(($(left) * ${PY_SHARE:-35} / 100)) python3 -u -m warpforge.bench_rows "${compile_flag[@]}" --ops "$py_ops" \
      --rows 4096,32768 --hidden "${PY_HIDDEN:-4096}" --vocab "${PY_VOCAB:-131072}" --reps 10 2>&1 | tee "$out/bench_rows.txt"
    note "bench_rows --ops $py_ops: exit ${PIPESTATUS[0]} ($out/bench_rows.txt)"
  fi
  # 4. Nsight Compute ($NCU_CASES="kernel-regex:op:rows:hidden ...", one kernel a case), where time is left,
  # with where the warps stall (cycles a warp spends in each state per instruction issued).
  # ($NCU_FLAGS: more of ncu's options, e.g. "--clock-control none --cache-control none": the GPU's own clocks and a warm L2.)
  stall_metrics=""
  for reason in long_scoreboard short_scoreboard barrier membar not_selected selected wait math_pipe_throttle \
    mio_throttle lg_throttle dispatch_stall no_instruction branch_resolving drain; do
    stall_metrics+="${stall_metrics:+,}smsp__average_warps_issue_stalled_${reason}_per_issue_active.ratio"
  done
  for c in ${NCU_CASES-layer_norm_backward:layer_bwd:32768:4096 warpforge_cross_entropy\$:ce:4096:131072}; do
    [ "$(left)" -gt 8 ] || { note "ncu $c: no time left"; continue; }
    IFS=: read -r kernel op r h <<<"$c"
    log="$out/ncu-$op-${r}x$h-${kernel//[^a-z_]/}.txt"  # (the kernel in the name: two cases may share a shape)
    timeout $(($(left) * ${NCU_SHARE:-60} / 100)) ncu ${NCU_FLAGS:-} --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
      --section LaunchStats --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
      --section InstructionStats --metrics "$stall_metrics" -k "regex:$kernel" -c 1 \
      "$build_dir/bench/bench_memory_bound" --ops "$op" --rows "$r" --hidden "$h" --vocab "$h" --linear-rows none \
      --reps 1 >"$log" 2>&1
    note "ncu $op $r x $h: exit $? ($log)"
    grep -E "DRAM Throughput|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc Active|Warp Cycles Per Issued|Executed Instructions  |issue_stalled" "$log" |
      sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | cut -c1-160
  done
  # 5. Where a row op's host time goes from Python (scripts/rows_host_cost.py $HOST_COST: --backward, the
  # RMSNorm backward's; --forward, its forward's against F.rms_norm's).
  host_cost="${HOST_COST---forward}"
  if [ -n "$host_cost" ] && [ "$(left)" -gt 8 ]; then
    timeout $(($(left) * 60 / 100)) python3 -u scripts/rows_host_cost.py $host_cost 2>&1 | tee "$out/host-cost.txt" |
      grep -E "us/call|not run"
    note "rows_host_cost.py $host_cost: exit ${PIPESTATUS[0]} ($out/host-cost.txt)"
  fi
  # 6. The Python tests on the GPU ($PY_TESTS, tests of python/tests/test_rows.py): values and gradients against
  # PyTorch's, opcheck, torch.compile (fullgraph) and a CUDA graph.
  py_tests="${PY_TESTS-torch_norm_values_and_gradients opcheck torch_compile_fullgraph_and_cuda_graph}"
  if [ -n "$py_tests" ] && [ "$(left)" -gt 10 ]; then
    read -ra tests <<<"$py_tests"
    timeout $(($(left) - 1)) python3 -m pytest -v -rs -p no:cacheprovider -m gpu \
      "${tests[@]/#/python/tests/test_rows.py::test_}" >"$out/pytest-gpu.log" 2>&1
    note "pytest -m gpu test_rows.py: exit $? $(grep -cE ' PASSED' "$out/pytest-gpu.log") passed, $(grep -cE ' FAILED' "$out/pytest-gpu.log") failed"
  fi
  echo
  [ -f "$out/bench_memory_bound.txt" ] && echo "== of the copy (op rows hidden fraction) ==" &&
    awk -F'|' '/^\| [a-z]/ && $9 ~ /[0-9]/ {gsub(/ /, "", $2); printf "%s %d %d %s\n", $2, $3, $4, $9}' "$out/bench_memory_bound.txt" |
    paste -d' ' - - - -
  for log in "$out"/ncu-*.txt; do
    [ -f "$log" ] || continue
    echo "== $(basename "$log" .txt): the largest stalls (cycles a warp waits per issued instruction), then the rates =="
    grep -E "issue_stalled" "$log" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' |
      awk '{print $NF, $1}' | sort -rn | head -6 | tr '\n' ' '
    echo
    grep -E "DRAM Throughput|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Instructions  " "$log" |
      awk '{printf "%s %s; ", $1" "$2, $NF}'
    echo
  done
  [ -f "$out/bench_rows.txt" ] && grep -E "^rows >=" "$out/bench_rows.txt"
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
export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
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
