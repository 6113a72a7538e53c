#!/usr/bin/env bash
# The grouped GEMM (mixture of experts, issue 43) on a GPU machine in about
# 5 minutes (BUDGET seconds, default 290), the numbers first: it builds the
# library, bench_gemm and the Python modules, then runs, each step skipped
# with a note once the time is short:
#   bench    bench_gemm --grouped, bf16: ours (its kernel named) against the
#            cuBLAS loop and the read-once floor, four models at 1, 16, 128,
#            1024, 8192 tokens; then --weights mxfp4, nvfp4 (decode sizes)
#            and mxfp8 (1, 16 tokens): packed / ours bf16 and / read-once;
#   pytest   python/tests/test_grouped_gemm.py on the GPU (torch forward and
#            autograd against torch, packed weights, opcheck, torch.compile,
#            CUDA graphs, JAX ragged_dot and its gradients, the MoE example
#            compiled in a CUDA graph);
#   pybench  python -m warpforge.bench_grouped: torch._grouped_mm against
#            ours, forward and forward + backward;
#   tests    test_gpu (built now: its nvcc corpus takes minutes) GroupedGemmGpu.*:
#            every simulator case and published expert shapes against fp64;
#   sanitize compute-sanitizer memcheck, racecheck, synccheck on the
#            simulator cases of every kernel (GroupedGemmGpu.TheSimulators*).
# STEPS (default "bench pytest pybench tests sanitize") picks steps, e.g. a
# second call STEPS="tests sanitize" BUDGET=600 for the C++ tests. Logs go to
# $OUT (default build/gpu-moe); the last lines are a short table.
#
#   OUT=/tmp/out scripts/gpu-moe.sh      # BUILD_DIR, JOBS, BUDGET, STEPS may be set
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-moe}"
jobs="${JOBS:-$(nproc)}"
budget="${BUDGET:-290}"
steps=" ${STEPS:-bench pytest pybench tests sanitize} "
mkdir -p "$out"
summary=()
note() { summary+=("$1"); }
left() { echo $((budget - SECONDS)); }
wanted() { [[ "$steps" == *" $1 "* ]]; }
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
targets=(bench_gemm)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge:" && targets+=(_warpforge)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge_torch:" && targets+=(_warpforge_torch)
start=$SECONDS
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -20
  echo "gpu-moe: FAIL: build of ${targets[*]} (log $out/build.log)"
  exit 1
fi
note "build (${targets[*]}): $((SECONDS - start)) s"
bench="$build_dir/bench/bench_gemm"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

if wanted bench; then
  if [ -x "$bench" ]; then
    run bench-bf16 60 100 "$bench" --grouped --tokens 1,16,128,1024,8192 --reps 10 &&
      note "bench bf16: $(grep -E 'geometric mean' "$out/bench-bf16.log")"
    run bench-mxfp4 40 60 "$bench" --grouped --weights mxfp4 --models gpt-oss,deepseek,mixtral --tokens 1,16,128 --reps 10
    run bench-nvfp4 30 45 "$bench" --grouped --weights nvfp4 --models gpt-oss,qwen3 --tokens 1,16,128 --reps 10
    run bench-mxfp8 25 40 "$bench" --grouped --weights mxfp8 --models gpt-oss,qwen3 --tokens 1,16 --reps 10
  else
    note "bench: bench_gemm not built (no cuBLAS found by CMake)"
  fi
fi

export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
if ls "$build_dir"/python/warpforge/_warpforge*.so >/dev/null 2>&1; then
  if wanted pytest; then
    if run pytest 45 90 python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_grouped_gemm.py; then
      note "pytest test_grouped_gemm.py: $(tail -1 "$out/pytest.log")"
    else
      note "pytest test_grouped_gemm.py: FAILED: $(tail -1 "$out/pytest.log")"
    fi
  fi
  wanted pybench && run bench-python 30 60 python3 -m warpforge.bench_grouped --models gpt-oss,qwen3 \
    --tokens 1,16,128,1024,8192 --backward --reps 10
else
  note "python: the module was not built (no nanobind)"
fi

test_gpu="$build_dir/tests/test_gpu"
if wanted tests || wanted sanitize; then
  start=$SECONDS
  if [ "$(left)" -lt 60 ]; then
    note "test_gpu: not built (time: $(left) s left); run again with STEPS=\"tests sanitize\""
  elif timeout $(($(left) - 30)) cmake --build "$build_dir" -j "$jobs" --target test_gpu >"$out/build-tests.log" 2>&1; then
    note "build test_gpu: $((SECONDS - start)) s"
  else
    note "test_gpu: build failed or out of time after $((SECONDS - start)) s (log $out/build-tests.log)"
  fi
fi
if [ -x "$test_gpu" ] && wanted tests; then
  if run tests 20 120 "$test_gpu" --gtest_filter='GroupedGemmGpu.*'; then
    note "GPU tests: $(grep -E '^\[  PASSED  \]' "$out/tests.log")$(grep -q SKIPPED "$out/tests.log" && echo ' (some SKIPPED: see log)')"
  else
    note "GPU tests: FAILED $(grep -cE '^\[  FAILED  \] Grouped' "$out/tests.log") (log $out/tests.log)"
  fi
fi
if [ -x "$test_gpu" ] && wanted sanitize; then
  sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  if [ -x "$sanitizer" ]; then
    sanitized=0
    for tool in memcheck racecheck synccheck; do
      if run "sanitize-$tool" 20 60 "$sanitizer" --tool "$tool" --error-exitcode 99 "$test_gpu" \
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
