#!/usr/bin/env bash
# The grouped GEMM (mixture of experts, issue 43) on a GPU machine in about
# 5 minutes (BUDGET seconds, default 290, the build included): correctness
# first, then the numbers. It builds test_gpu, bench_gemm and the Python
# modules (one build), then runs, each step skipped with a note once the
# time is short:
#   tests    every GroupedGemmGpu test of test_gpu, each in a process of its
#            own (a crash shows as that test's exit status, the others run):
#            every simulator case and published expert shapes against fp64;
#   memcheck compute-sanitizer memcheck on the small and ragged cases of
#            every kernel (GroupedGemmGpu.TheSimulators*);
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
#   sanitize compute-sanitizer racecheck and synccheck on the same cases.
# STEPS (default "tests memcheck bench pytest pybench sanitize") picks steps,
# e.g. a second call STEPS="pytest sanitize". Logs go to $OUT (default
# build/gpu-moe); the last lines are a short table.
#
#   OUT=/tmp/out scripts/gpu-moe.sh      # BUILD_DIR, JOBS, BUDGET, STEPS may be set
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-moe}"
jobs="${JOBS:-$(nproc)}"
budget="${BUDGET:-290}"
steps=" ${STEPS:-tests memcheck bench pytest pybench sanitize} "
mkdir -p "$out"
summary=()
note() { summary+=("$1"); }
left() { echo $((budget - SECONDS)); }
wanted() { [[ "$steps" == *" $1 "* ]]; }
# run NAME SECONDS_NEEDED TIMEOUT COMMAND...: runs COMMAND into $out/NAME.log
# when at least SECONDS_NEEDED remain, under a timeout (TIMEOUT, or the time
# left if less); returns its status, or 200 (noted) when skipped.
run() {
  local name="$1" need="$2" limit="$3"
  shift 3
  if [ "$(left)" -lt "$need" ]; then
    note "$name: skipped (time: $(left) s left, needs $need)"
    return 200
  fi
  [ "$limit" -gt "$(left)" ] && limit="$(left)"
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
{ wanted tests || wanted memcheck || wanted sanitize; } && targets+=(test_gpu)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge:" && targets+=(_warpforge)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge_torch:" && targets+=(_warpforge_torch)
start=$SECONDS
# One parallel build; where it fails, each target again on its own, so
# that one that does not build (its steps skipped) leaves the others.
broken=" "
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -20
  for target in "${targets[@]}"; do
    cmake --build "$build_dir" -j "$jobs" --target "$target" >>"$out/build.log" 2>&1 || broken+="$target "
  done
fi
note "build (${targets[*]}): $((SECONDS - start)) s"
[ "$broken" != " " ] && note "build FAILED for:${broken}(log $out/build.log); their steps are skipped"
built() { [[ "$broken" != *" $1 "* ]]; }
bench="$build_dir/bench/bench_gemm"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

test_gpu="$build_dir/tests/test_gpu"
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
# sanitize TOOL: compute-sanitizer TOOL over the small and ragged cases.
sanitize() {
  if [ ! -x "$sanitizer" ]; then
    note "compute-sanitizer $1: not found"
  elif run "sanitize-$1" 20 90 "$sanitizer" --tool "$1" --error-exitcode 99 "$test_gpu" \
    --gtest_filter='GroupedGemmGpu.TheSimulators*'; then
    note "compute-sanitizer $1: clean on GroupedGemmGpu.TheSimulators* ($(grep -E '^\[  PASSED  \]' "$out/sanitize-$1.log"))"
  else
    local rc=$?
    [ $rc -eq 200 ] && return
    note "compute-sanitizer $1: NOT clean (exit $rc: 99 a sanitizer error, else the tests'; log $out/sanitize-$1.log)"
    grep -E "ERROR|Invalid|hazard|FAILED" "$out/sanitize-$1.log" | head -5
  fi
}
if [ -x "$test_gpu" ] && built test_gpu && wanted tests; then
  passed=0 failed=""
  for t in $("$test_gpu" --gtest_filter='GroupedGemmGpu.*' --gtest_list_tests | awk '/^  /{print $1}'); do
    run "test-$t" 10 120 "$test_gpu" --gtest_filter="GroupedGemmGpu.$t"
    rc=$?
    log="$out/test-$t.log"
    if [ $rc -eq 0 ] && ! grep -q "SKIPPED" "$log"; then
      passed=$((passed + 1))
      continue
    fi
    why="exit $rc"
    [ $rc -eq 0 ] && why="skipped"
    [ $rc -eq 124 ] && why="timed out"
    [ $rc -gt 128 ] && [ $rc -lt 200 ] && why="killed by signal $((rc - 128))"
    [ $rc -eq 200 ] && why="not run: out of time"
    failed+=" $t ($why);"
    [ -f "$log" ] && grep -E "Failure|Which is|mismatch|refuse|Skipped" "$log" | head -6
  done
  note "GPU tests: $passed passed${failed:+; NOT passed:$failed} (logs $out/test-*.log)"
elif wanted tests; then
  note "GPU tests: test_gpu not built (log $out/build.log)"
fi
[ -x "$test_gpu" ] && built test_gpu && wanted memcheck && sanitize memcheck

if wanted bench; then
  if [ -x "$bench" ] && built bench_gemm; then
    run bench-bf16 60 100 "$bench" --grouped --tokens 1,16,128,1024,8192 --reps 10 &&
      note "bench bf16: $(grep -E 'geometric mean' "$out/bench-bf16.log")"
    run bench-mxfp4 40 60 "$bench" --grouped --weights mxfp4 --models gpt-oss,deepseek,mixtral --tokens 1,16,128 --reps 10
    run bench-nvfp4 30 45 "$bench" --grouped --weights nvfp4 --models gpt-oss,qwen3 --tokens 1,16,128 --reps 10
    run bench-mxfp8 25 40 "$bench" --grouped --weights mxfp8 --models gpt-oss,qwen3 --tokens 1,16 --reps 10
  else
    note "bench: bench_gemm not built (no cuBLAS found by CMake, or its build failed)"
  fi
fi

export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
if ls "$build_dir"/python/warpforge/_warpforge*.so >/dev/null 2>&1 && built _warpforge; then
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
  note "python: the module was not built (no nanobind, or its build failed)"
fi

if [ -x "$test_gpu" ] && built test_gpu && wanted sanitize; then
  sanitize racecheck
  sanitize synccheck
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
