#!/usr/bin/env bash
# Attention decode on a GPU machine (an H100/H200 with CUDA 13, torch, ncu,
# compute-sanitizer): most important first, each stage's lines printed as it
# ends (a hard time limit may cut the run; BUDGET, default 63 s from the
# start, the build included, caps each stage at what is left):
#
#   1. bench_attention --decode --quick: ours against the read floor (the
#      same K and V bytes read once by stream_read, the fastest of 1, 2, 4,
#      8 CTAs an SM), batch 1 and 8, KV 1k to 128k;
#   2. ncu of the decode kernel at batch 1, KV 128k: L2's lookups by source
#      (the SMs', the fabric's) and hits, DRAM's bytes, L2's and DRAM's
#      throughput (FULL=1: the full set and its SASS stall lines, and the
#      floor's 8-CTA launch);
#   3. python -m warpforge.bench_attention --decode --quick: the Python call
#      beside SDPA's backends, each as a fraction of the copy rate;
#   4. the sanitizer matrix: compute-sanitizer memcheck, racecheck and
#      synccheck of every attention kernel at small and ragged shapes
#      (AttentionGpu.Sanitize*: forward sm90a and sm80, backward sm90a and
#      sm80, decode TMA-fed and cp.async; each against fp64);
#   5. the Llama-class layer's training step under torch.compile against
#      SDPA (python/tests/test_attention.py -k llama_layer; ~21 s), where 30 s
#      are left; 6. the decode GPU tests and the Python GPU decode tests (CUDA
#      graphs) where time is left.
#
# FULL=1: every stage whatever the time (BUDGET 400).
set -uo pipefail
cd "$(dirname "$0")/.."

NAME=gpu-attn-decode budget=63
[ "${FULL:-0}" = 1 ] && budget=400
source scripts/gpu-stages.sh
# Each stage's log in $logs, then appended to one of five files in $out
# (bench.log, ncu.log, ncu-source.csv, tests.log, pytest.log; the run's
# copy-back takes at most 8 files).
logs="$(mktemp -d)"
keep() { cat "$logs/$1" >>"$out/$2" 2>/dev/null; }
build_targets test_gpu bench_attention
py=(env PYTHONPATH="$build_dir/python:python" python3 -W ignore)
bench="$build_dir/bench/bench_attention"
test_gpu="$build_dir/tests/test_gpu"

# 1. C++: ours against the read floor.
stage "bench_attention --decode --quick" 10 "$logs/bench_decode.log" "$bench" --decode --quick --reps 20
echo "== decode, C++: ours against the read floor (same run) =="
grep -E "^\||rror" "$logs/bench_decode.log"
keep bench_decode.log bench.log

# 2. ncu at batch 1, KV 128k: L2's work a byte.
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
metrics='regex:^(dram__bytes_read\.sum|lts__t_sectors_srcunit_(tex|ltcfabric)_op_read(_lookup_hit)?\.sum|lts__t_sectors_fill_device\.sum|sm__cycles_active\.(avg|max)|gpu__time_duration\.sum)$'
show_metrics() {
  grep -E "^ *(dram__bytes|lts__t_|sm__cycles|gpu__time|DRAM Throughput|L2 Cache Throughput|SM Frequency)" "$1" |
    sed 's/^ *//; s/  */ /g' | sort -u | head -24
}
if [ -x "$ncu" ] && [ "$(left)" -ge 6 ]; then
  stage "ncu decode (b1, 128k)" 6 "$logs/ncu_decode.log" \
    "$ncu" --clock-control none --kernel-name regex:attention_decode --launch-count 1 --section SpeedOfLight \
    --metrics "$metrics" "$bench" --decode --decode-shape 1,131072 --reps 1
  echo "== ncu, decode at batch 1, KV 131072 (the GPU's clocks) =="
  show_metrics "$logs/ncu_decode.log"
  keep ncu_decode.log ncu.log
fi
if [ "${FULL:-0}" = 1 ] && [ -x "$ncu" ]; then
  rep="$logs/ncu_decode_131072"
  stage "ncu decode full set (b1, KV 131072)" 60 "$rep.log" "$ncu" --clock-control none --set full \
    --import-source yes -f -o "$rep" --kernel-name regex:attention_decode --launch-count 1 --metrics "$metrics" \
    "$bench" --decode --decode-shape 1,131072 --reps 1
  if [ -f "$rep.ncu-rep" ]; then
    "$ncu" -i "$rep.ncu-rep" --page details --print-details all >"$rep.details" 2>&1 ||
      "$ncu" -i "$rep.ncu-rep" --page details >"$rep.details" 2>&1
    "$ncu" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>&1
    show_metrics "$rep.details"
    python3 scripts/ncu_sass_hotspots.py "$rep.csv" --top 16
    keep ncu_decode_131072.details ncu.log
    keep ncu_decode_131072.csv ncu-source.csv
  fi
  # Launches of the floor, 4 a grid (K and V, a warm-up and --reps 1): the 13th is 8 CTAs an SM.
  stage "ncu floor stream_read (8 CTAs an SM)" 30 "$logs/ncu_floor.log" "$ncu" --clock-control none \
    --kernel-name regex:stream_read --launch-skip 12 --launch-count 1 --section SpeedOfLight \
    --metrics "$metrics" "$bench" --decode --decode-shape 1,131072 --reps 1
  echo "== ncu, the floor's stream_read (8 CTAs an SM, K's bytes), KV 131072 =="
  show_metrics "$logs/ncu_floor.log"
  keep ncu_floor.log ncu.log
fi

# 3. Python: ours beside SDPA's backends, each against the copy rate.
stage "bench_attention.py --decode --quick" 10 "$logs/bench_decode_python.log" \
  "${py[@]}" -m warpforge.bench_attention --decode --quick --reps 10
echo "== decode from Python beside SDPA (GB/s of K and V; fractions of the copy rate) =="
grep -E "^\||copy rate" "$logs/bench_decode_python.log"
keep bench_decode_python.log bench.log

# 4. The sanitizer matrix: every attention kernel's small and ragged shapes under each tool.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
for tool in memcheck racecheck synccheck; do
  [ -x "$sanitizer" ] || { rows+=("| sanitizer | compute-sanitizer not found | 0s |"); break; }
  [ "$(left)" -ge 5 ] || break
  stage "$tool AttentionGpu.Sanitize*" 20 "$logs/$tool.log" "$sanitizer" --tool $tool --error-exitcode 99 \
    "$test_gpu" --gtest_filter='AttentionGpu.Sanitize*'
  echo "== compute-sanitizer $tool: $(grep -E "SUMMARY" "$logs/$tool.log" | tail -1); \
$(grep -cE "^\[       OK \]" "$logs/$tool.log") tests ok =="
  grep -E "^========= (Error|Race|Invalid|Barrier)|^\[  FAILED" "$logs/$tool.log" | sort | uniq -c | head -5
  keep $tool.log tests.log
done

# 5. The Llama-class layer's training step under torch.compile; 6. the decode GPU tests, Python's.
if [ "$(left)" -ge 30 ]; then
  stage "pytest llama layer (torch.compile)" 40 "$logs/pytest_llama.log" "${py[@]}" -m pytest -q -rs \
    -p no:cacheprovider -k "llama_layer" python/tests/test_attention.py
  echo "== the Llama layer's step under torch.compile: $(tail -1 "$logs/pytest_llama.log") =="
  grep -E "Error|assert" "$logs/pytest_llama.log" | head -4
  keep pytest_llama.log pytest.log
fi
if [ "$(left)" -ge 7 ]; then
  stage "GPU tests AttentionGpu.DecodeCases" 8 "$logs/tests.log" "$test_gpu" --gtest_filter='AttentionGpu.DecodeCases'
  grep -E "^\[  (PASSED|FAILED) |outside the bound|rror" "$logs/tests.log" | head -8
  keep tests.log tests.log
fi
if [ "$(left)" -ge 8 ]; then
  stage "pytest decode (cuda, graph)" 12 "$logs/pytest_decode.log" "${py[@]}" -m pytest -q -rs \
    -p no:cacheprovider -k "decode and (cuda or graph)" python/tests/test_attention.py
  echo "== the Python decode tests: $(tail -1 "$logs/pytest_decode.log") =="
  keep pytest_decode.log pytest.log
fi

summary
