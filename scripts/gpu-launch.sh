#!/usr/bin/env bash
# runtime::Module::launch's host cost on a GPU machine, inside $BUDGET_S
# seconds (default 65, the build included), printing as it goes, the most
# important first:
# 1. bench_launch: a launch's host cost, 500 back to back, Module::launch and
#    PreparedLaunch against cuLaunchKernel of the same function with the same
#    values, for 6 parameters, the attention decode kernel's 34 and three
#    tensor maps + 4 (then the JIT and load costs);
# 2. the GPU tests of the launch paths (vector add's results, modules,
#    clusters);
# 3. scripts/python_host_cost.py: one warpforge call of each op family from
#    torch beside torch's op, host microseconds a call;
# 4. scripts/decode_host_cost.py (the decode call and its execute_addresses);
# 5. in what time is left, launches that overlap the previous kernel
#    (chained GEMMs), the Python tests that capture warpforge's ops in CUDA
#    graphs, and perf's profile of bench_launch where perf is installed.
# The machine is the one scripts/gpu-check.sh describes.
#
#   OUT=/tmp/out scripts/gpu-launch.sh
#
# BUILD_DIR (default build-launch) and JOBS (default nproc) may be set.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-$PWD/gpu-launch-out}"
build_dir="${BUILD_DIR:-build-launch}"
jobs="${JOBS:-$(nproc)}"
deadline=${BUDGET_S:-65}
left() { local s=$((deadline - SECONDS)); echo $((s > 3 ? s : 3)); }
mkdir -p "$out"
source scripts/gpu-build-args.sh
summary=()
note() { summary+=("$1"); echo "gpu-launch: $1"; }
# (A configured build folder is not configured again: that costs seconds of the budget.)
if ! { [ -f "$build_dir/CMakeCache.txt" ] || cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1; } ||
  ! cmake --build "$build_dir" -j "$jobs" --target bench_launch test_gpu _warpforge >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out"/*.log | head -30
  echo "gpu-launch: FAIL: build (logs in $out)"
  exit 1
fi
export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"

echo "== bench_launch: host cost of a launch against cuLaunchKernel =="
timeout 25 "$build_dir/bench/bench_launch" 2>&1 | tee "$out/bench_launch.txt"
note "bench_launch: exit ${PIPESTATUS[0]} ($out/bench_launch.txt)"

# The launch paths on the device, first (a wrong parameter shows here):
# vector add's results, modules, clusters.
timeout 15 "$build_dir/tests/test_gpu" --gtest_filter="VectorAdd.*:GpuModule.*" >"$out/gpu-tests.log" 2>&1
note "gpu tests (VectorAdd, GpuModule): exit $? $(grep -E '^\[ +(PASSED|FAILED) ' "$out/gpu-tests.log" | tr '\n' ' ')"

echo
echo "== one call of each op family from torch, host us a call =="
timeout $(($(left) * 60 / 100)) python3 -u scripts/python_host_cost.py 2>&1 | tee "$out/python_host_cost.txt"
note "python_host_cost.py: exit ${PIPESTATUS[0]} ($out/python_host_cost.txt)"

if [ "$(left)" -gt 12 ]; then
  echo
  echo "== the decode call =="
  timeout $(($(left) * 50 / 100)) python3 -u scripts/decode_host_cost.py 2>&1 | tee "$out/decode_host_cost.txt"
  note "decode_host_cost.py: exit ${PIPESTATUS[0]} ($out/decode_host_cost.txt)"
fi

# Launches that overlap the previous kernel, and warpforge's ops captured in CUDA graphs.
if [ "$(left)" -gt 6 ]; then
  timeout $(($(left) - 2)) "$build_dir/tests/test_gpu" --gtest_filter="GemmSm90aGpu.ChainedLaunchesGiveTheBitsOfOnesRunApart" \
    >"$out/gpu-tests-chained.log" 2>&1
  note "chained launches: exit $? $(grep -E '^\[ +(PASSED|FAILED) ' "$out/gpu-tests-chained.log" | tr '\n' ' ')"
fi
if [ "$(left)" -gt 8 ]; then
  timeout $(($(left) - 1)) python3 -m pytest -q -x -p no:cacheprovider python/tests/test_attention.py \
    python/tests/test_torch_cpp_gemm.py -k "cuda_graph" >"$out/pytest-graphs.log" 2>&1
  note "pytest -k cuda_graph (attention, gemm): exit $? $(tail -1 "$out/pytest-graphs.log")"
fi
# Where bench_launch's host time goes, where the machine has perf.
if command -v perf >/dev/null && [ "$(left)" -gt 10 ]; then
  timeout $(($(left) - 3)) perf record -q -g -o "$out/perf.data" "$build_dir/bench/bench_launch" >/dev/null 2>&1
  perf report -i "$out/perf.data" --no-children --percent-limit 0.7 --stdio 2>/dev/null | grep -E "^ +[0-9]" |
    head -40 >"$out/perf.txt"
  rm -f "$out/perf.data"
  note "perf of bench_launch: $(wc -l <"$out/perf.txt") lines ($out/perf.txt)"
  head -20 "$out/perf.txt" | cut -c1-160
fi
echo
for line in "${summary[@]}"; do echo "gpu-launch: $line"; done
exit 0
