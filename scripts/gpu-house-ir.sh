#!/usr/bin/env bash
# The Python warp-specialized GEMM (issue 42: a pipelined, warp-specialized
# GEMM written in Python on the template at >= 0.95x the C++ kernel) on a
# GPU machine (H100/H200, CUDA 13, torch):
#   1. builds the Python module (target _warpforge, with the configuration
#      scripts/gpu-build-args.sh gives every GPU script);
#   2. scripts/compare-python-gemm-ptx.sh: the Python kernel's PTX and the
#      C++ kernel's (ops::Gemm's sm90a design) for each configuration of the
#      example, and this machine's ptxas output of both: identical cubins
#      mean identical machine code, so identical speed, and the timing below
#      is only a check;
#   3. examples/python/warp_specialized_gemm.py --torch: 4096³, checked;
#   4. scripts/bench_python_gemm.py: both kernels, cuBLAS and a second
#      instance of the C++ kernel (the noise control) at 4096³ and 8192³ bf16
#      in one run, per configuration, in turns, 11 rounds.
# Logs in $OUT (default build/gpu-house-ir); the last line gives the worst
# C++/Python time ratio. GPU time about half a minute, the build excluded.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-build-args.sh
gpu_script house-ir
[ -f "$gtest_source/CMakeLists.txt" ] || cmake_args+=(-DWARPFORGE_TESTS=OFF)

start=$SECONDS
gpu_build _warpforge warpforge_ops warpforge_sim
echo "== build: $((SECONDS - start)) s"
export PYTHONPATH="$build_dir/python:python${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | sed 's/^/== GPU: /'

start=$SECONDS
scripts/compare-python-gemm-ptx.sh --build "$build_dir" "$out/ptx" >"$out/ptx.log" 2>&1
ptx_rc=$?
echo "== PTX and machine code, Python vs C++ ($((SECONDS - start)) s):"
cat "$out/ptx.log"

start=$SECONDS
timeout 120 python3 examples/python/warp_specialized_gemm.py --torch >"$out/example.log" 2>&1
example_rc=$?
echo "== example --torch (exit $example_rc, $((SECONDS - start)) s): $(tail -1 "$out/example.log")"

start=$SECONDS
timeout 180 python3 scripts/bench_python_gemm.py --rounds 11 >"$out/bench.log" 2>&1
bench_rc=$?
echo "== timing (exit $bench_rc, $((SECONDS - start)) s):"
head -n -1 "$out/bench.log"
status=PASS
[ $ptx_rc -ne 0 ] || [ $example_rc -ne 0 ] || [ $bench_rc -ne 0 ] && status=FAIL
echo "gpu-house-ir: $status; $(tail -1 "$out/bench.log")"
[ "$status" = PASS ]
