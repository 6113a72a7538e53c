#!/usr/bin/env bash
# The grouped GEMM (mixture of experts, issue 43) on a GPU machine, in about
# 5 minutes: builds what it needs (test_gpu, bench_gemm and the Python
# module; GoogleTest as scripts/gpu-build-args.sh finds it), then, each step
# skipped with a note once the time is short, in this order:
#   1. the GPU tests GroupedGemmGpu.* (every simulator case, then published
#      expert shapes) against the fp64 reference;
#   2. bench_gemm --grouped, bf16: ours against the cuBLAS loop and the
#      read-once floor over the four models at 1, 16, 128, 1024, 8192 tokens;
#   3. bench_gemm --grouped --weights mxfp4 and nvfp4 at decode sizes
#      (packed / ours bf16, packed / read-once floor), mxfp8 at 1 and 16;
#   4. compute-sanitizer memcheck, racecheck and synccheck on the simulator
#      cases of both kernels (GroupedGemmGpu.TheSimulators*);
#   5. the Python suite test_grouped_gemm.py (torch autograd, opcheck,
#      torch.compile, CUDA graphs, JAX ragged_dot, the MoE example);
#   6. python -m warpforge.bench_grouped: torch._grouped_mm against ours,
#      forward and forward + backward.
# Logs go to $OUT (default build/gpu-moe); the last lines are a short table.
#
#   OUT=/tmp/out scripts/gpu-moe.sh      # BUILD_DIR, JOBS, BUDGET (seconds, default 290) may be set
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-moe}"
jobs="${JOBS:-$(nproc)}"
budget="${BUDGET:-290}"
mkdir -p "$out"
summary=()
note() { summary+=("$1"); }
left() { echo $((budget - SECONDS)); }
# run NAME SECONDS_NEEDED TIMEOUT COMMAND...: runs COMMAND into $out/NAME.log
# when at least SECONDS_NEEDED remain, under a timeout; returns its status.
run() {
  local name="$1" need="$2" limit="$3"
  shift 3
  if [ "$(left)" -lt "$need" ]; then
    note "$name: skipped (time: $(left) s left, needs $need)"
    return 99
  fi
  local start=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "== $name: exit $rc in $((SECONDS - start)) s (log $out/$name.log)"
  return $rc
}

source scripts/gpu-build-args.sh
if ! cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1; then
  tail -20 "$out/configure.log"
  echo "gpu-moe: FAIL: cmake configure (log $out/configure.log)"
  exit 1
fi
targets=(test_gpu bench_gemm)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge" && targets+=(_warpforge)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge_torch" && targets+=(_warpforge_torch)
start=$SECONDS
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -20
  echo "gpu-moe: FAIL: build of ${targets[*]} (log $out/build.log)"
  exit 1
fi
note "build (${targets[*]}): $((SECONDS - start)) s"
test_gpu="$build_dir/tests/test_gpu"
bench="$build_dir/bench/bench_gemm"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

# 1. The GPU tests.
if run tests 40 120 "$test_gpu" --gtest_filter='GroupedGemmGpu.*'; then
  note "GPU tests: $(grep -E '^\[  PASSED  \]' "$out/tests.log")$(grep -q SKIPPED "$out/tests.log" && echo ' (some SKIPPED: see log)')"
else
  note "GPU tests: FAILED $(grep -cE '^\[  FAILED  \] Grouped' "$out/tests.log") (log $out/tests.log)"
fi
grep -E "^  (gpt-oss|Qwen3)" "$out/tests.log" >"$out/kernels-chosen.log" 2>/dev/null

# 2-3. The C++ benchmark.
if [ -x "$bench" ]; then
  run bench-bf16 60 100 "$bench" --grouped --tokens 1,16,128,1024,8192 --reps 10 &&
    note "bench bf16: $(grep -E 'geometric mean' "$out/bench-bf16.log")"
  run bench-mxfp4 40 60 "$bench" --grouped --weights mxfp4 --models gpt-oss,deepseek,mixtral --tokens 1,16,128 --reps 10
  run bench-nvfp4 30 45 "$bench" --grouped --weights nvfp4 --models gpt-oss,qwen3 --tokens 1,16,128 --reps 10
  run bench-mxfp8 25 40 "$bench" --grouped --weights mxfp8 --models gpt-oss,qwen3 --tokens 1,16 --reps 10
else
  note "bench: bench_gemm not built (no cuBLAS found by CMake)"
fi

# 4. The sanitizer on both kernels' simulator cases.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
if [ -x "$sanitizer" ]; then
  sanitized=0
  for tool in memcheck racecheck synccheck; do
    if run "sanitize-$tool" 25 60 "$sanitizer" --tool "$tool" --error-exitcode 99 "$test_gpu" \
      --gtest_filter='GroupedGemmGpu.TheSimulators*'; then
      sanitized=$((sanitized + 1))
    else
      grep -E "ERROR|Invalid|hazard|FAILED" "$out/sanitize-$tool.log" | head -5
    fi
  done
  note "compute-sanitizer: $sanitized of 3 tools clean on GroupedGemmGpu.TheSimulators*"
else
  note "compute-sanitizer: not found"
fi

# 5-6. Python.
export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
if [ -f "$build_dir/python/warpforge/__init__.py" ] || ls "$build_dir"/python/warpforge/_warpforge*.so >/dev/null 2>&1; then
  if run pytest 45 90 python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_grouped_gemm.py; then
    note "pytest test_grouped_gemm.py: $(tail -1 "$out/pytest.log")"
  else
    note "pytest test_grouped_gemm.py: FAILED: $(tail -1 "$out/pytest.log")"
  fi
  run bench-python 30 60 python3 -m warpforge.bench_grouped --models gpt-oss,qwen3 --tokens 1,16,128,1024,8192 \
    --backward --reps 10
else
  note "python: the module was not built (no nanobind)"
fi

echo
echo "gpu-moe on ${gpu:-an unnamed GPU}, $SECONDS s; logs in $out"
for line in "${summary[@]}"; do echo "- $line"; done
for log in bench-bf16 bench-mxfp4 bench-nvfp4 bench-mxfp8 bench-python; do
  [ -f "$out/$log.log" ] || continue
  echo
  echo "$log:"
  grep -E "^\| (model|[a-z])" "$out/$log.log" | head -40
  grep -E "geometric mean" "$out/$log.log"
done
