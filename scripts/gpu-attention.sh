#!/usr/bin/env bash
# Attention on a GPU machine (an H100/H200 with CUDA 13, torch, ncu,
# compute-sanitizer): builds what attention needs (test_gpu, bench_attention,
# the Python module), then, each stage under a time limit:
#
#   quick (the default; about 90 s of GPU after the build):
#     1. the attention GPU tests' decode and forward cases (every kernel;
#        tests/gpu/attention_gpu_test.cpp);
#     2. bench_attention --quick --backward (ours: forward and backward
#        TFLOP/s, decode against the read floor), and decode at batch 1 for
#        several split counts (KV 8k and 128k), each against the same floor;
#     3. ncu of the decode kernels (split and combine) at batch 1, KV 8k:
#        duration, memory workload, occupancy, warp stall reasons;
#     4. python -m warpforge.bench_attention --quick, forward and decode
#        (PyTorch SDPA's cuDNN, flash and efficient backends beside ours, the
#        best named); scripts/decode_host_cost.py (the Python decode call's
#        host microseconds);
#     5. compute-sanitizer memcheck and racecheck on the small and ragged
#        shapes of every kernel (AttentionGpu.SanitizeSmallAndRagged), 30 s
#        each (a timeout is reported, not counted as a finding).
#   FULL=1 (or --full; longer than five minutes): every AttentionGpu test,
#     synccheck too, the Python GPU and JAX tests, the
#     benchmarks over the issue's whole grid, and the Python backward beside
#     SDPA's backends.
#
# Logs go to $OUT (default $BUILD_DIR/gpu-attention); the last lines are the
# tables (decode, forward, backward) and a table of the stages. BUILD_DIR
# (default build) and JOBS (default nproc) may be set; GoogleTest and DLPack
# are found as scripts/gpu-build-args.sh says. A BUILD_DIR configured before
# (by scripts/gpu-check.sh, say) is reused as it is.
set -uo pipefail
cd "$(dirname "$0")/.."

full="${FULL:-0}"
for arg in "$@"; do
  case "$arg" in
    --quick) full=0 ;;
    --full) full=1 ;;
    *) echo "gpu-attention: unknown argument '$arg' (--quick, the default, or --full)"; exit 2 ;;
  esac
done
build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"
out="${OUT:-$build_dir/gpu-attention}"
mkdir -p "$out"
quick=--quick
[ "$full" = 1 ] && quick=
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
  source scripts/gpu-build-args.sh
  cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1 ||
    { tail -20 "$out/configure.log"; echo "gpu-attention: FAIL: configure (log: $out/configure.log)"; exit 1; }
fi
targets=(test_gpu bench_attention)
grep -q "_warpforge" "$build_dir/build.ninja" "$build_dir/Makefile" 2>/dev/null && targets+=(_warpforge)
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E "error" "$out/build.log" | head -20
  echo "gpu-attention: FAIL: build (log: $out/build.log)"
  exit 1
fi
row "build (${targets[*]})" "ok" $((SECONDS - start))

test_gpu="$build_dir/tests/test_gpu"
bench="$build_dir/bench/bench_attention"
probe="$("$test_gpu" --gtest_filter=VectorAdd.ReportsTheDevice 2>&1)"
if ! grep -q "^\[  PASSED  \] 1 test" <<<"$probe" || grep -q "SKIPPED" <<<"$probe"; then
  echo "$probe" | tail -5
  echo "gpu-attention: FAIL: no usable CUDA GPU (the device probe did not pass)"
  exit 1
fi
gpu="$(sed -n 's/^\[ device   \] //p' <<<"$probe")"
python_module=0
[ -d "$build_dir/python/warpforge" ] && python3 -c "import torch" 2>/dev/null && python_module=1
py=(env PYTHONPATH="$build_dir/python:python" python3)

# --- 1. the GPU tests ------------------------------------------------------------------
filter='AttentionGpu.DecodeCases:AttentionGpu.ForwardCases*'
[ "$full" = 1 ] && filter='AttentionGpu.*:-AttentionGpu.Sanitize*'
timed "$([ "$full" = 1 ] && echo 120 || echo 60)" "$out/tests.log" "$test_gpu" --gtest_filter="$filter"
passed=$(grep -c "^\[       OK \] AttentionGpu" "$out/tests.log")
failed=$(grep -c "^\[  FAILED  \] AttentionGpu.*(" "$out/tests.log")
result="$passed passed, $failed failed"
[ $rc -eq 124 ] && result="$result, TIMED OUT"
[ $rc -ne 0 ] && status=FAIL && grep -E "outside the bound|Failure" "$out/tests.log" | head -10
row "GPU tests ($([ "$full" = 1 ] && echo all || echo cases))" "$result" "$seconds"

# --- 2. the C++ benchmark ---------------------------------------------------------------------
timed 60 "$out/bench_attention.log" "$bench" $quick --backward --reps 10
[ $rc -ne 0 ] && status=FAIL
row "bench_attention $quick --backward" "$([ $rc -eq 0 ] && echo ok || echo "exit $rc")" "$seconds"
timed 30 "$out/decode_splits.log" bash -c "for len in 8192 131072; do
  '$bench' --decode --decode-shape 1,\$len --decode-splits 0,16,24,66 --reps 20 || exit; done"
[ $rc -ne 0 ] && status=FAIL
row "decode split counts (batch 1)" "$([ $rc -eq 0 ] && echo ok || echo "exit $rc")" "$seconds"

# --- 3. ncu of the decode kernels at batch 1, KV 8k -----------------------------------------------
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
if [ -x "$ncu" ]; then
  timed 45 "$out/ncu_decode.log" "$ncu" --kernel-name regex:attention_decode --launch-count 2 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats "$bench" --decode --decode-shape 1,8192 --reps 1
  row "ncu decode (batch 1, KV 8k)" "$([ $rc -eq 0 ] && echo ok || echo "exit $rc") (log: $out/ncu_decode.log)" "$seconds"
  # The split kernel in its steady state (62 blocks a CTA).
  timed 45 "$out/ncu_decode_128k.log" "$ncu" --kernel-name regex:attention_decode_sm80 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section SchedulerStats "$bench" --decode --decode-shape 1,131072 --reps 1
  row "ncu decode split (b1, KV 128k)" "$([ $rc -eq 0 ] && echo ok || echo "exit $rc")" "$seconds"
else
  row "ncu decode (batch 1, KV 8k)" "ncu not found" 0
fi

# --- 4. the Python benchmark (SDPA's backends beside ours) -------------------------------------
if [ $python_module = 1 ]; then
  timed 75 "$out/bench_attention_python.log" "${py[@]}" -W ignore -m warpforge.bench_attention $quick --reps 5
  [ $rc -ne 0 ] && status=FAIL
  summary="$(grep -E "^geometric mean" "$out/bench_attention_python.log" | head -1)"
  row "bench_attention.py $quick" "${summary:-exit $rc}" "$seconds"
  if [ "$full" = 1 ]; then
    timed 150 "$out/bench_attention_python_backward.log" "${py[@]}" -W ignore -m warpforge.bench_attention --prefill \
      --backward --reps 5
    [ $rc -ne 0 ] && status=FAIL
    summary="$(grep -E "^geometric mean" "$out/bench_attention_python_backward.log" | head -1)"
    row "bench_attention.py backward" "${summary:-exit $rc}" "$seconds"
  fi
  # The Python call's host cost (what the Python benchmark's decode pays over C++'s).
  timed 40 "$out/decode_host_cost.log" "${py[@]}" scripts/decode_host_cost.py
  row "decode host cost (Python)" "$([ $rc -eq 0 ] && echo ok || echo "exit $rc")" "$seconds"
else
  row "bench_attention.py" "skipped: no Python module or no torch" 0
fi

# --- 5. compute-sanitizer (quick: memcheck and racecheck), the Python GPU tests (full) ----
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
tools="memcheck racecheck"
[ "$full" = 1 ] && tools="memcheck racecheck synccheck"
for tool in $tools; do
  if [ ! -x "$sanitizer" ]; then
    row "sanitizer $tool" "compute-sanitizer not found" 0
    status=FAIL
    continue
  fi
  timed "$([ "$full" = 1 ] && echo 75 || echo 30)" "$out/sanitize-$tool.log" "$sanitizer" --tool "$tool" \
    --error-exitcode 99 "$test_gpu" --gtest_filter=AttentionGpu.SanitizeSmallAndRagged
  errors="$(grep -oE "ERROR SUMMARY: [0-9]+ error" "$out/sanitize-$tool.log" | tail -1)"
  if [ $rc -eq 0 ]; then
    result="clean (${errors:-no summary})"
  elif [ $rc -eq 124 ]; then
    result="timed out, no verdict (${errors:-no summary so far})"
  else
    result="FAILED: ${errors:-exit $rc} (log: $out/sanitize-$tool.log)"
    status=FAIL
  fi
  row "sanitizer $tool" "$result" "$seconds"
done
if [ "$full" = 1 ] && [ $python_module = 1 ]; then
  timed 120 "$out/python.log" "${py[@]}" -m pytest -q -rs -p no:cacheprovider \
    -k "cuda or jax or llama or graph" python/tests/test_attention.py
  result="$(grep -oE "[0-9]+ (passed|failed)[^=]*" "$out/python.log" | tail -1)"
  [ $rc -ne 0 ] && status=FAIL && result="FAILED: ${result:-exit $rc} (log: $out/python.log)"
  row "pytest test_attention (GPU, JAX)" "$result" "$seconds"
fi

for log in ncu_decode ncu_decode_128k; do
  [ -f "$out/$log.log" ] || continue
  echo
  echo "== $log: the decode kernels at batch 1 (8k: split, then combine; 128k: split) =="
  grep -E "warpforge_attention_decode|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Warp Cycles Per Issued|Issued Warp|L2 Hit Rate|Mem Busy|Max Bandwidth|Waves Per SM|Stall|stalled|Eligible" \
    "$out/$log.log" 2>/dev/null | sed 's/^ *//' | head -40
done
echo
echo "== bench_attention (ours): forward and backward TFLOP/s; decode against the read floor =="
grep -E "^\|" "$out/bench_attention.log"
echo
echo "== decode at batch 1 by split count (the floor of the same run) =="
grep -E "^\| 1 " "$out/decode_splits.log"
for log in bench_attention_python bench_attention_python_backward; do
  if [ -f "$out/$log.log" ]; then
    echo
    echo "== PyTorch SDPA backends beside ours ($log) =="
    grep -E "^\||^geometric|^Prefill|^Decode" "$out/$log.log"
  fi
done
if [ -f "$out/decode_host_cost.log" ]; then
  echo
  echo "== warpforge.attention_decode from torch: host us a call, event-timed us =="
  grep -E "^batch|^step" "$out/decode_host_cost.log"
fi
echo
echo "gpu-attention on $gpu ($(date -u +%Y-%m-%d)):"
printf '| %-28s | %-70s | %6s |\n|---|---|---|\n' stage result time
printf '%s\n' "${rows[@]}"
echo "gpu-attention: $status"
[ "$status" = PASS ]
