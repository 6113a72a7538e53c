#!/usr/bin/env bash
# The house-ir branch on a GPU machine (H100/H200, CUDA 13, torch): builds
# with scripts/gpu-check.sh's configuration (BUILD_ONLY=1), then
#   1. the GPU tests this branch changed (the planted PTX error of the
#      module and ptxas tests is now `add.pred`, the vocabulary having no
#      `.u33`) and the kernels ptxas assembles (every wrapper's PTX);
#   2. examples/python/warp_specialized_gemm.py --torch: the GEMM written in
#      Python on the warp-specialized template, checked against torch;
#   3. scripts/bench_python_gemm.py: that GEMM against ops::Gemm's C++
#      sm90a kernel at the same configuration, one run, the ratio per shape.
# Logs go to $OUT (default build/gpu-house-ir); the last line is the summary
# table's verdict. Within 5 minutes on 16 cores.
#
#   WARPFORGE_GTEST_SOURCE=/path/to/googletest scripts/gpu-house-ir.sh
set -uo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-house-ir}"
mkdir -p "$out"

BUILD_ONLY=1 BUILD_DIR="$build_dir" scripts/gpu-check.sh >"$out/build.log" 2>&1 ||
  { tail -20 "$out/build.log"; echo "gpu-house-ir: FAIL: build"; exit 1; }

"$build_dir/tests/test_gpu" \
  --gtest_filter='GpuModule.ReportsAPtxErrorWithTheLineItNames:KernelsAssemble.*' \
  >"$out/gpu_tests.log" 2>&1
tests_rc=$?
tests="$(grep -E '^\[  (PASSED|FAILED)  \]' "$out/gpu_tests.log" | tr '\n' ' ')"

export PYTHONPATH="$build_dir/python:python${PYTHONPATH:+:$PYTHONPATH}"
python3 examples/python/warp_specialized_gemm.py --torch >"$out/example.log" 2>&1
example_rc=$?

python3 scripts/bench_python_gemm.py >"$out/bench.log" 2>&1
bench_rc=$?

echo "== GPU tests: $tests"
echo "== example (exit $example_rc): $(tail -1 "$out/example.log")"
echo "== Python GEMM on the template vs the C++ sm90a kernel (same configuration, same run):"
cat "$out/bench.log"
status=PASS
[ $tests_rc -ne 0 ] || [ $example_rc -ne 0 ] || [ $bench_rc -ne 0 ] && status=FAIL
echo "gpu-house-ir: $status (logs in $out)"
[ "$status" = PASS ]
