#!/usr/bin/env bash
# Attention on a GPU machine (an H100/H200 with CUDA 13, torch, JAX,
# compute-sanitizer): builds what attention needs (test_gpu, bench_attention,
# the Python module), then runs, each stage under a time limit so that the
# whole stays within about five minutes:
#   1. the attention GPU tests (tests/gpu/attention_gpu_test.cpp: every
#      correctness case of the simulator on the device, both forward kernels,
#      the backward fast and deterministic, decode, device-sized shapes;
#      fresh random inputs, large logits, rows that see no key, ragged lengths);
#   2. compute-sanitizer memcheck, racecheck and synccheck on the small and
#      ragged shapes of every kernel (AttentionGpu.SanitizeSmallAndRagged);
#   3. python/tests/test_attention.py's GPU and JAX tests (torch on CUDA
#      tensors, CUDA graph capture, a Llama-class layer's training step under
#      torch.compile, jax.jit and jax.grad on the GPU's arrays);
#   4. bench_attention --quick (ours, TFLOP/s; decode against the read floor);
#   5. python -m warpforge.bench_attention --quick (PyTorch SDPA's backends
#      beside ours, the best named).
# Logs go to $OUT (default $BUILD_DIR/gpu-attention); the last lines are a
# table of the stages. FULL=1 runs the issue's whole benchmark grid instead
# of --quick (longer than five minutes). BUILD_DIR (default build), JOBS
# (default nproc) and WARPFORGE_GTEST_SOURCE (GoogleTest's sources; else
# ./.gtest, else /usr/src/googletest) may be set; a BUILD_DIR configured
# before (by scripts/gpu-check.sh, say) is reused as it is.
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"
out="${OUT:-$build_dir/gpu-attention}"
mkdir -p "$out"
quick=--quick
[ "${FULL:-0}" = 1 ] && quick=
declare -a rows=()
status=PASS

# row STAGE RESULT SECONDS
row() {
  rows+=("$(printf '| %-28s | %-70s | %5ss |' "$1" "$2" "$3")")
}
# timed LIMIT LOG COMMAND...: runs COMMAND under `timeout`, output to LOG; sets rc, seconds.
timed() {
  local limit="$1" log="$2"
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$log" 2>&1
  rc=$?
  seconds=$((SECONDS - start))
}

# --- build -------------------------------------------------------------------------
start=$SECONDS
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  gtest_source="${WARPFORGE_GTEST_SOURCE:-$PWD/.gtest}"
  [ -f "$gtest_source/CMakeLists.txt" ] || gtest_source=/usr/src/googletest
  dlpack_args=()
  dlpack_dir="${WARPFORGE_DLPACK_INCLUDE_DIR:-$PWD/.dlpack}"
  [ -f "$dlpack_dir/dlpack/dlpack.h" ] && dlpack_args=(-DWARPFORGE_DLPACK_INCLUDE_DIR="$dlpack_dir")
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_GTEST_SOURCE="$gtest_source" \
    "${dlpack_args[@]}" >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; echo "gpu-attention: FAIL: configure (log: $out/configure.log)"; exit 1; }
fi
targets=(test_gpu bench_attention)
grep -q "_warpforge" "$build_dir/build.ninja" 2>/dev/null && targets+=(_warpforge)
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error" "$out/build.log" | head -20
  echo "gpu-attention: FAIL: build (log: $out/build.log)"
  exit 1
fi
row "build (${targets[*]})" "ok" $((SECONDS - start))

test_gpu="$build_dir/tests/test_gpu"
probe="$("$test_gpu" --gtest_filter=VectorAdd.ReportsTheDevice 2>&1)"
if ! grep -q "^\[  PASSED  \] 1 test" <<<"$probe" || grep -q "SKIPPED" <<<"$probe"; then
  echo "$probe" | tail -5
  echo "gpu-attention: FAIL: no usable CUDA GPU (the device probe did not pass)"
  exit 1
fi
gpu="$(sed -n 's/^\[ device   \] //p' <<<"$probe")"

# --- 1. the GPU tests ------------------------------------------------------------------
timed 120 "$out/tests.log" "$test_gpu" --gtest_filter='AttentionGpu.*:-AttentionGpu.Sanitize*'
passed=$(grep -c "^\[       OK \] AttentionGpu" "$out/tests.log")
failed=$(grep -c "^\[  FAILED  \] AttentionGpu.*(" "$out/tests.log")
result="$passed passed, $failed failed"
[ $rc -eq 124 ] && result="$result, TIMED OUT"
[ $rc -ne 0 ] && status=FAIL && grep -E "outside the bound|Failure" "$out/tests.log" | head -10
row "GPU tests (AttentionGpu)" "$result" "$seconds"

# --- 2. compute-sanitizer --------------------------------------------------------------
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
for tool in memcheck racecheck synccheck; do
  if [ ! -x "$sanitizer" ]; then
    row "sanitizer $tool" "compute-sanitizer not found" 0
    status=FAIL
    continue
  fi
  timed 75 "$out/sanitize-$tool.log" "$sanitizer" --tool "$tool" --error-exitcode 99 "$test_gpu" \
    --gtest_filter=AttentionGpu.SanitizeSmallAndRagged
  errors="$(grep -oE "ERROR SUMMARY: [0-9]+ error" "$out/sanitize-$tool.log" | tail -1)"
  if [ $rc -eq 0 ]; then
    result="clean (${errors:-no summary})"
  elif [ $rc -eq 124 ]; then
    result="TIMED OUT after 75 s (log: $out/sanitize-$tool.log)"
    status=FAIL
  else
    result="FAILED: ${errors:-exit $rc} (log: $out/sanitize-$tool.log)"
    status=FAIL
  fi
  row "sanitizer $tool" "$result" "$seconds"
done

# --- 3. the Python GPU tests --------------------------------------------------------------
if [ -d "$build_dir/python/warpforge" ]; then
  timed 120 "$out/python.log" env PYTHONPATH="$build_dir/python:python" python3 -m pytest -q -rs -p no:cacheprovider \
    -k "cuda or jax or llama or graph" python/tests/test_attention.py
  result="$(grep -oE "[0-9]+ (passed|failed)[^=]*" "$out/python.log" | tail -1)"
  [ $rc -ne 0 ] && status=FAIL && result="FAILED: ${result:-exit $rc} (log: $out/python.log)"
  row "pytest test_attention (GPU, JAX)" "$result" "$seconds"
else
  row "pytest test_attention (GPU, JAX)" "skipped: the Python module was not built (no nanobind)" 0
fi

# --- 4, 5. the benchmarks ---------------------------------------------------------------------
timed 90 "$out/bench_attention.log" "$build_dir/bench/bench_attention" $quick
[ $rc -ne 0 ] && status=FAIL
row "bench_attention $quick" "$([ $rc -eq 0 ] && echo ok || echo "exit $rc") (log: $out/bench_attention.log)" "$seconds"
if [ -d "$build_dir/python/warpforge" ]; then
  timed 150 "$out/bench_attention_python.log" env PYTHONPATH="$build_dir/python:python" \
    python3 -m warpforge.bench_attention $quick
  [ $rc -ne 0 ] && status=FAIL
  summary="$(grep -E "^geometric mean" "$out/bench_attention_python.log" | head -1)"
  row "bench_attention.py $quick" "${summary:-exit $rc} (log: $out/bench_attention_python.log)" "$seconds"
fi

echo
echo "== bench_attention (ours; decode against the read floor) =="
grep -E "^\|" "$out/bench_attention.log"
if [ -f "$out/bench_attention_python.log" ]; then
  echo
  echo "== PyTorch SDPA backends beside ours =="
  grep -E "^\||^geometric" "$out/bench_attention_python.log"
fi
echo
echo "gpu-attention on $gpu ($(date -u +%Y-%m-%d)):"
printf '| %-28s | %-70s | %6s |\n|---|---|---|\n' stage result time
printf '%s\n' "${rows[@]}"
echo "gpu-attention: $status"
[ "$status" = PASS ]
