#!/usr/bin/env bash
# Attention decode on a GPU machine (an H100/H200 with CUDA 13, torch, ncu):
# the short run of the decode kernels and the Python decode call, most
# important first, each stage's lines printed as it ends (a hard time limit
# may cut the run; BUDGET, default 70 s from the start, the build included,
# caps each stage at what is left):
#
#   1. bench_attention --decode --quick: ours against the read floor (the
#      same K and V bytes read once by stream_read), batch 1 and 8; then
#      batch 1 at KV 8k and 128k by split count;
#   2. python -m warpforge.bench_attention --decode --quick: the Python call
#      beside SDPA's cuDNN and flash backends;
#   3. scripts/decode_host_cost.py: the Python decode call's host
#      microseconds, and where they go;
#   4. the decode GPU tests (AttentionGpu.DecodeCases), the Python ones
#      (pytest: CUDA tensors, CUDA graph capture), then batch 1 by tiling
#      (WARPFORGE_DECODE_TILING) and split count where 25 s are left;
#   5. ncu of the decode kernel at batch 1, KV 8k (skipped when under
#      15 s are left); 6. compute-sanitizer memcheck on the small and
#      ragged shapes (when 12 s are left).
#
# Builds test_gpu, bench_attention and the Python module in BUILD_DIR
# (default build; configured as scripts/gpu-build-args.sh says where it is
# not). Logs go to $OUT (default $BUILD_DIR/gpu-attn-decode).
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-attn-decode}"
budget="${BUDGET:-70}"
mkdir -p "$out"
declare -a rows=()
status=PASS

left() { local s=$((budget - SECONDS)); echo $((s > 1 ? s : 1)); }
# stage NAME LIMIT LOG COMMAND...: COMMAND under timeout (at most what is left), output to LOG.
stage() {
  local name="$1" limit="$2" log="$3" start=$SECONDS
  shift 3
  [ "$limit" -gt "$(left)" ] && limit=$(left)
  timeout "$limit" "$@" >"$log" 2>&1
  rc=$?
  local result=ok
  [ $rc -eq 124 ] && result="TIMED OUT after ${limit}s" && status=FAIL
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && result="exit $rc (log: $log)" && status=FAIL
  rows+=("$(printf '| %-34s | %-40s | %4ss |' "$name" "$result" $((SECONDS - start)))")
}

# Configure where BUILD_DIR is not (scripts/gpu-build-args.sh), then build the targets (a no-op where built).
[ -f "$build_dir/CMakeCache.txt" ] || { source scripts/gpu-build-args.sh &&
  cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1; } ||
  { echo "gpu-attn-decode: FAIL: configure (log: $out/configure.log)"; exit 1; }
targets=(test_gpu bench_attention)
grep -q "_warpforge" "$build_dir/build.ninja" "$build_dir/Makefile" 2>/dev/null && targets+=(_warpforge)
cmake --build "$build_dir" -j "${JOBS:-$(nproc)}" --target "${targets[@]}" >"$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -20; echo "gpu-attn-decode: FAIL: build (log: $out/build.log)"; exit 1; }
py=(env PYTHONPATH="$build_dir/python:python" python3 -W ignore)

# 1. C++: ours against the read floor.
stage "bench_attention --decode --quick" 15 "$out/bench_decode.log" \
  "$build_dir/bench/bench_attention" --decode --quick --reps 20
echo "== decode, C++: ours against the read floor (same run) =="
grep -E "^\|" "$out/bench_decode.log"

# 1b. Batch 1 by split count (0: the op's choice), each against the same floor.
stage "decode split counts (batch 1)" 10 "$out/decode_splits.log" bash -c "for len in 8192 131072; do
  '$build_dir/bench/bench_attention' --decode --decode-shape 1,\$len --decode-splits 0,8,16,24,66 --reps 20 || exit; done"
echo "== decode at batch 1 by split count =="
grep -E "^\| 1 " "$out/decode_splits.log"

# 2. Python: ours beside SDPA's backends.
stage "bench_attention.py --decode --quick" 20 "$out/bench_decode_python.log" \
  "${py[@]}" -m warpforge.bench_attention --decode --quick --reps 10
echo "== decode from Python beside SDPA (GB/s of K and V) =="
grep -E "^\|" "$out/bench_decode_python.log"

# 3. The Python call's host cost.
stage "decode_host_cost.py" 12 "$out/decode_host_cost.log" "${py[@]}" scripts/decode_host_cost.py
echo "== the Python decode call: host us a call =="
grep -E "^batch|^step" "$out/decode_host_cost.log"

# 4. The decode GPU tests.
stage "GPU tests AttentionGpu.DecodeCases" 12 "$out/tests.log" \
  "$build_dir/tests/test_gpu" --gtest_filter='AttentionGpu.DecodeCases'
grep -E "^\[  (PASSED|FAILED) |outside the bound" "$out/tests.log" | head -8

# 4a. The Python decode on the GPU: fp64 check, the op kept across calls, CUDA graph capture.
stage "pytest decode (cuda, graph)" 20 "$out/pytest_decode.log" "${py[@]}" -m pytest -q -rs -p no:cacheprovider \
  -k "decode and (cuda or graph)" python/tests/test_attention.py
grep -E "passed|failed|error" "$out/pytest_decode.log" | tail -2

# 4b. Batch 1 by tiling (WARPFORGE_DECODE_TILING=BLOCK_N,STAGES; 64,3 is the default) and split count: the
#     deeper rings of one CTA an SM with 16 splits a KV head (one wave of 128 CTAs), and three CTAs an SM
#     (64,2: 68 KB) with 49 splits (392 CTAs), where 25 s are left.
if [ "$(left)" -ge 25 ]; then
  stage "decode tilings x splits (batch 1)" 18 "$out/decode_tilings.log" bash -c "
    for len in 8192 131072; do for ts in 64,3:0,16 64,4:16 64,6:16 128,3:16 64,2:49; do echo \"tiling \${ts%%:*}\"
      WARPFORGE_DECODE_TILING=\${ts%%:*} '$build_dir/bench/bench_attention' --decode --decode-shape 1,\$len \
        --decode-splits \${ts#*:} --reps 10 || exit; done; done"
  echo "== decode at batch 1 by tiling (block_n,stages) and splits =="
  grep -E "^tiling|^\| 1 " "$out/decode_tilings.log"
fi

# 5. ncu of the decode kernels at batch 1, KV 8k.
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
if [ -x "$ncu" ] && [ "$(left)" -ge 15 ]; then
  stage "ncu decode (b1, KV 8k)" 20 "$out/ncu_decode.log" "$ncu" --kernel-name regex:attention_decode \
    --launch-count 3 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SchedulerStats \
    "$build_dir/bench/bench_attention" --decode --decode-shape 1,8192 --reps 1
  [ "$(left)" -ge 12 ] && stage "ncu decode (b1, KV 128k)" 12 "$out/ncu_decode_128k.log" "$ncu" \
    --kernel-name regex:attention_decode --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section SchedulerStats --section WarpStateStats \
    "$build_dir/bench/bench_attention" --decode --decode-shape 1,131072 --reps 1
  echo "== ncu, batch 1, KV 8k (then 128k) =="
  grep -E "warpforge_attention_decode|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|No Eligible" \
    -h "$out/ncu_decode.log" "$out/ncu_decode_128k.log" 2>/dev/null | sed 's/^ *//' | head -30
else
  rows+=("$(printf '| %-34s | %-40s | %4ss |' "ncu decode (b1, KV 8k)" "skipped (no ncu or under 15 s left)" 0)")
fi

# 6. compute-sanitizer memcheck on the small and ragged shapes (decode's
#    cases among them), where 12 s are left.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
if [ -x "$sanitizer" ] && [ "$(left)" -ge 12 ]; then
  stage "memcheck SanitizeSmallAndRagged" 20 "$out/memcheck.log" "$sanitizer" --tool memcheck --error-exitcode 99 \
    "$build_dir/tests/test_gpu" --gtest_filter=AttentionGpu.SanitizeSmallAndRagged
  grep -oE "ERROR SUMMARY: [0-9]+ error" "$out/memcheck.log" | tail -1
fi

echo
echo "gpu-attn-decode ($(date -u +%Y-%m-%dT%H:%M)):"
printf '%s\n' "${rows[@]}"
echo "gpu-attn-decode: $status"
[ "$status" = PASS ]
