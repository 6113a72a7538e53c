#!/usr/bin/env bash
# Attention decode on a GPU machine (an H100/H200 with CUDA 13, torch, ncu):
# the short run of the decode kernels and the Python decode call, most
# important first, each stage's lines printed as it ends (a hard time limit
# may cut the run; BUDGET, default 68 s from the start, the build included,
# caps each stage at what is left):
#
#   1. the decode GPU tests (AttentionGpu.DecodeCases: every case on the
#      TMA-fed kernel where it runs, the cp.async one elsewhere);
#   2. bench_attention --decode --quick: ours against the read floor (the
#      same K and V bytes read once by stream_read), batch 1 and 8;
#   3. at batch 1, KV 8k and 128k: three more runs, each against the same
#      run's floor, then 20 calls back to back a sample (the GPU's time, no
#      host launch in it);
#   4. python -m warpforge.bench_attention --decode --quick: the Python call
#      beside SDPA's cuDNN and flash backends, each as a fraction of the
#      copy rate of the same run (the bound on ours / best);
#   5. ncu of the decode kernel at batch 1, KV 8k and 128k, and of the
#      floor's stream_read at 128k (skipped when under 12 s are left);
#      6. compute-sanitizer memcheck, then racecheck,
#      on the small and ragged shapes; 7. the Python GPU decode tests (CUDA
#      tensors, CUDA graph capture); 8. the Python call's host microseconds
#      (scripts/decode_host_cost.py).
#
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-attn-decode}"
budget="${BUDGET:-68}"
mkdir -p "$out"
NAME=gpu-attn-decode
source scripts/gpu-stages.sh
build_targets test_gpu bench_attention
py=(env PYTHONPATH="$build_dir/python:python" python3 -W ignore)
bench="$build_dir/bench/bench_attention"

# 1. The decode GPU tests, on the kernels the op now chooses.
stage "GPU tests AttentionGpu.DecodeCases" 12 "$out/tests.log" \
  "$build_dir/tests/test_gpu" --gtest_filter='AttentionGpu.DecodeCases'
grep -E "^\[  (PASSED|FAILED) |outside the bound|rror" "$out/tests.log" | head -8

# 2. C++: ours against the read floor.
stage "bench_attention --decode --quick (TMA)" 12 "$out/bench_decode.log" "$bench" --decode --quick --reps 20
echo "== decode, C++, TMA-fed kernel: ours against the read floor (same run) =="
grep -E "^\||rror" "$out/bench_decode.log"

# 3. Batch 1, 8k and 128k: three more runs, then back to back (GPU time alone).
stage "decode b1: three runs, back to back" 14 "$out/decode_b1.log" bash -c "
  for len in 8192 131072; do
    for run in 1 2 3; do echo \"run \$run, KV \$len\"; '$bench' --decode --decode-shape 1,\$len --reps 20 || exit; done
    echo \"back to back, KV \$len\"; '$bench' --decode --decode-shape 1,\$len --reps 10 --back-to-back 20 || exit
  done"
echo "== decode at batch 1: three runs; 20 calls back to back a sample =="
grep -E "^run|^back|^\| 1 " "$out/decode_b1.log"

# 4. Python: ours beside SDPA's backends, each against the copy rate.
stage "bench_attention.py --decode --quick" 12 "$out/bench_decode_python.log" \
  "${py[@]}" -m warpforge.bench_attention --decode --quick --reps 10
echo "== decode from Python beside SDPA (GB/s of K and V; fractions of the copy rate) =="
grep -E "^\||copy rate" "$out/bench_decode_python.log"

# 5. ncu of the TMA-fed decode kernel at batch 1, KV 8k, then 128k.
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
if [ -x "$ncu" ] && [ "$(left)" -ge 12 ]; then
  for len in 8192 131072; do
    stage "ncu decode (b1, KV $len)" 10 "$out/ncu_decode_$len.log" "$ncu" --kernel-name regex:attention_decode \
      --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
      --section LaunchStats --section WarpStateStats --section SchedulerStats \
      "$bench" --decode --decode-shape 1,$len --reps 1
    echo "== ncu, batch 1, KV $len =="
    grep -E "warpforge_attention_decode|Duration|DRAM Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issue Slots Busy|No Eligible" \
      -h "$out/ncu_decode_$len.log" 2>/dev/null | sed 's/^ *//' | head -12
  done
  stage "ncu stream_read (the floor, KV 131072)" 10 "$out/ncu_floor_131072.log" "$ncu" --kernel-name regex:stream_read \
    --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    "$bench" --decode --decode-shape 1,131072 --reps 1
  echo "== ncu, the floor's stream_read (its first launch: one CTA an SM, K's bytes), KV 131072 =="
  grep -E "stream_read|Duration|DRAM Throughput|L2 Cache Throughput|Achieved Occupancy" -h "$out/ncu_floor_131072.log" \
    2>/dev/null | sed 's/^ *//' | head -6
else
  rows+=("$(printf '| %-40s | %-40s | %4ss |' "ncu decode (b1)" "skipped (no ncu or under 12 s left)" 0)")
fi

# 6. compute-sanitizer memcheck, then racecheck, on the small and ragged
#    shapes (decode's cases among them), where 6 s are left.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
for tool in memcheck racecheck; do
  if [ -x "$sanitizer" ] && [ "$(left)" -ge 6 ]; then
    stage "$tool SanitizeSmallAndRagged" 12 "$out/$tool.log" "$sanitizer" --tool $tool --error-exitcode 99 \
      "$build_dir/tests/test_gpu" --gtest_filter=AttentionGpu.SanitizeSmallAndRagged
    grep -oE "ERROR SUMMARY: [0-9]+ error|RACECHECK SUMMARY: .*" "$out/$tool.log" | tail -1
  fi
done

# 7. The Python GPU decode tests; 8. the Python call's host cost.
[ "$(left)" -ge 8 ] && stage "pytest decode (cuda, graph)" 12 "$out/pytest_decode.log" "${py[@]}" -m pytest -q -rs \
  -p no:cacheprovider -k "decode and (cuda or graph)" python/tests/test_attention.py &&
  grep -E "passed|failed|error" "$out/pytest_decode.log" | tail -2
[ "$(left)" -ge 8 ] && stage "decode_host_cost.py" 8 "$out/decode_host_cost.log" "${py[@]}" scripts/decode_host_cost.py &&
  grep -E "^batch|^step" "$out/decode_host_cost.log"

summary
