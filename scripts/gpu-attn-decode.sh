#!/usr/bin/env bash
# Attention decode on a GPU machine (an H100/H200 with CUDA 13, torch, ncu,
# compute-sanitizer): most important first, each stage's lines printed as it
# ends (a hard time limit may cut the run; BUDGET, default 53 s from the
# start, the build included, caps each stage at what is left):
#
#   1. bench_attention --decode --quick: ours against the read floor (the
#      same K and V bytes read once by stream_read, the fastest of 1, 2, 4,
#      8 CTAs an SM), batch 1 and 8, KV 1k to 128k; then the same with the
#      splits' chunks static (WARPFORGE_DECODE_CLAIMS=0: session 8's A/B);
#   2. python -m warpforge.bench_attention --decode --quick: the Python call
#      beside SDPA's backends, each as a fraction of the copy rate;
#   3. at batch 1, KV 8k and 128k: claimed and static chunks alternating,
#      two runs each;
#   4. ncu of the decode kernel at batch 1, KV 128k (the full set, its SASS
#      stall lines), the static kernel's SM spread, and of the floor's
#      fastest launch (8 CTAs an SM), all at
#      the GPU's own clocks, with the L2's traffic by source (fabric, hits),
#      DRAM's bytes and the spread of the SMs' active cycles;
#   5. the decode GPU tests (AttentionGpu.DecodeCases);
#   6. the sanitizer matrix: compute-sanitizer memcheck, racecheck and
#      synccheck of every attention kernel at small and ragged shapes
#      (AttentionGpu.Sanitize*: forward sm90a and sm80, backward sm90a and
#      sm80, decode TMA-fed and cp.async), where time is left (FULL=1: all);
#   7. the Llama-class layer's training step under torch.compile against
#      SDPA (FULL=1 or where 25 s are left), the Python GPU decode tests.
#
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-attn-decode}"
budget="${BUDGET:-53}"
[ "${FULL:-0}" = 1 ] && budget="${BUDGET:-400}"
mkdir -p "$out"
# Each stage's log in $logs, then appended to one of five files in $out
# (bench.log, ncu.log, ncu-source.csv, tests.log, pytest.log; the run's
# copy-back takes at most 8 files).
logs="$(mktemp -d)"
keep() { cat "$logs/$1" >>"$out/$2" 2>/dev/null; }
NAME=gpu-attn-decode
source scripts/gpu-stages.sh
build_targets test_gpu bench_attention
py=(env PYTHONPATH="$build_dir/python:python" python3 -W ignore)
bench="$build_dir/bench/bench_attention"
test_gpu="$build_dir/tests/test_gpu"

# 1. C++: ours against the read floor; the A/B of session 8: splits that claim
#    their chunks (the default) and splits of static chunks (WARPFORGE_DECODE_CLAIMS=0).
stage "bench_attention --decode --quick" 10 "$logs/bench_decode.log" "$bench" --decode --quick --reps 20
echo "== decode, C++: ours (chunks claimed) against the read floor (same run) =="
grep -E "^\||rror" "$logs/bench_decode.log"
keep bench_decode.log bench.log
stage "bench_attention --decode --quick (static)" 10 "$logs/bench_static.log" \
  env WARPFORGE_DECODE_CLAIMS=0 "$bench" --decode --quick --reps 20
echo "== decode, C++: ours (static chunks: WARPFORGE_DECODE_CLAIMS=0) against the read floor (same run) =="
grep -E "^\| [0-9]|rror" "$logs/bench_static.log"
keep bench_static.log bench.log

# 2. Python: ours beside SDPA's backends, each against the copy rate.
stage "bench_attention.py --decode --quick" 12 "$logs/bench_decode_python.log" \
  "${py[@]}" -m warpforge.bench_attention --decode --quick --reps 10
echo "== decode from Python beside SDPA (GB/s of K and V; fractions of the copy rate) =="
grep -E "^\||copy rate" "$logs/bench_decode_python.log"
keep bench_decode_python.log bench.log

# 3. Batch 1, 8k and 128k: claimed and static, alternating, two runs each.
stage "decode b1: claimed, static x2" 9 "$logs/decode_b1.log" bash -c "
  for len in 8192 131072; do for run in 1 2; do for c in 1 0; do
    echo \"claims \$c, run \$run, KV \$len\"; WARPFORGE_DECODE_CLAIMS=\$c '$bench' --decode --decode-shape 1,\$len --reps 20 || exit
  done; done; done"
echo "== decode at batch 1: chunks claimed (1) and static (0), two runs =="
grep -E "^claims|^\| 1 " "$logs/decode_b1.log"
keep decode_b1.log bench.log

# 4. ncu at batch 1, KV 128k: ours (full set, SASS stall lines), then the floor's 8-CTA launch.
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
metrics='regex:^(dram__bytes_(read|write)\.sum|lts__t_sectors(_op_(read|write|atom|red))?(_lookup_(hit|miss))?\.sum|lts__t_sectors_srcunit_(tex|ltcfabric)(_op_(read|write))?(_lookup_(hit|miss))?\.sum|lts__t_requests_srcunit_tex_op_read\.sum|sm__cycles_active\.(avg|max|min)|sm__cycles_elapsed\.max|gpu__time_duration\.sum)$'
show_metrics() {
  grep -E "^ *(dram__bytes|lts__t_|sm__cycles|gpu__time|Duration|DRAM Throughput|L2 Cache Throughput|SM Frequency|L2 Hit Rate|L1/TEX Hit)" "$1" |
    sed 's/^ *//; s/  */ /g' | sort -u | head -40
}
if [ -x "$ncu" ] && [ "$(left)" -ge 10 ]; then
  rep="$logs/ncu_decode_131072"
  stage "ncu decode (b1, KV 131072)" 12 "$rep.log" "$ncu" --clock-control none --set full --import-source yes \
    -f -o "$rep" --kernel-name regex:attention_decode --launch-count 1 --metrics "$metrics" \
    "$bench" --decode --decode-shape 1,131072 --reps 1
  keep ncu_decode_131072.log ncu.log
  if [ -f "$rep.ncu-rep" ]; then
    "$ncu" -i "$rep.ncu-rep" --page details --print-details all >"$rep.details" 2>&1 ||
      "$ncu" -i "$rep.ncu-rep" --page details >"$rep.details" 2>&1
    "$ncu" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>&1
    rm -f "$rep.ncu-rep"
    echo "== ncu, decode at batch 1, KV 131072 (the GPU's clocks) =="
    show_metrics "$rep.details"
    grep -E "^ *(Registers Per|Achieved Occupancy|No Eligible|Warp Cycles Per Issued)" "$rep.details" | sed 's/^ *//; s/  */ /g'
    echo "-- the throughput breakdowns' largest (% of peak) --"
    grep -E "^ *[a-z0-9_]+__[a-z0-9_.]*pct_of_peak_sustained_elapsed +%" "$rep.details" | sed 's/^ *//; s/  */ /g' |
      sort -u | sort -t' ' -k3 -gr | head -14
    python3 scripts/ncu_sass_hotspots.py "$rep.csv" --top 16
    keep ncu_decode_131072.details ncu.log
    keep ncu_decode_131072.csv ncu-source.csv
  fi
fi
if [ -x "$ncu" ] && [ "$(left)" -ge 8 ]; then
  stage "ncu decode static (b1, KV 131072)" 6 "$logs/ncu_static_131072.log" env WARPFORGE_DECODE_CLAIMS=0 \
    "$ncu" --clock-control none --kernel-name regex:attention_decode --launch-count 1 \
    --metrics 'regex:^(sm__cycles_active\.(avg|max)|sm__cycles_elapsed\.max|gpu__time_duration\.sum|dram__bytes_read\.sum)$' \
    "$bench" --decode --decode-shape 1,131072 --reps 1
  echo "== ncu, decode static chunks at batch 1, KV 131072: the SMs' active cycles =="
  show_metrics "$logs/ncu_static_131072.log"
  keep ncu_static_131072.log ncu.log
fi
if [ -x "$ncu" ] && [ "$(left)" -ge 8 ]; then
  # Launches of the floor, 4 a grid (K and V, a warm-up and --reps 1): the 13th is 8 CTAs an SM.
  stage "ncu floor stream_read (8 CTAs an SM)" 8 "$logs/ncu_floor_131072.log" "$ncu" --clock-control none \
    --kernel-name regex:stream_read --launch-skip 12 --launch-count 1 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis_Tables --metrics "$metrics" "$bench" --decode --decode-shape 1,131072 --reps 1
  echo "== ncu, the floor's stream_read (8 CTAs an SM, K's bytes), KV 131072 (the GPU's clocks) =="
  grep -E "stream_read \(" "$logs/ncu_floor_131072.log" | sed 's/^ *//' | head -1
  show_metrics "$logs/ncu_floor_131072.log"
  keep ncu_floor_131072.log ncu.log
fi

# 5. The decode GPU tests.
stage "GPU tests AttentionGpu.DecodeCases" 8 "$logs/tests.log" "$test_gpu" --gtest_filter='AttentionGpu.DecodeCases'
grep -E "^\[  (PASSED|FAILED) |outside the bound|rror" "$logs/tests.log" | head -8
keep tests.log tests.log

# 6. The sanitizer matrix: every attention kernel's small and ragged shapes under each tool.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
for tool in memcheck racecheck synccheck; do
  [ -x "$sanitizer" ] || { rows+=("| sanitizer | compute-sanitizer not found | 0s |"); break; }
  [ "$(left)" -ge 6 ] || break
  stage "$tool AttentionGpu.Sanitize*" 30 "$logs/$tool.log" "$sanitizer" --tool $tool --error-exitcode 99 \
    "$test_gpu" --gtest_filter='AttentionGpu.Sanitize*'
  echo "== compute-sanitizer $tool: $(grep -E "SUMMARY" "$logs/$tool.log" | tail -1); \
$(grep -cE "^\[       OK \]" "$logs/$tool.log") tests ok =="
  grep -E "^========= (Error|Race|Invalid|Barrier)" "$logs/$tool.log" | sort | uniq -c | head -5
  keep $tool.log tests.log
done

# 7. The Llama-class layer's training step under torch.compile; the Python GPU decode tests.
if [ "$(left)" -ge 25 ]; then
  stage "pytest llama layer (torch.compile)" 40 "$logs/pytest_llama.log" "${py[@]}" -m pytest -q -rs \
    -p no:cacheprovider -k "llama_layer" python/tests/test_attention.py
  echo "== the Llama layer's step under torch.compile: $(tail -1 "$logs/pytest_llama.log") =="
  keep pytest_llama.log pytest.log
fi
if [ "$(left)" -ge 8 ]; then
  stage "pytest decode (cuda, graph)" 12 "$logs/pytest_decode.log" "${py[@]}" -m pytest -q -rs \
    -p no:cacheprovider -k "decode and (cuda or graph)" python/tests/test_attention.py
  echo "== the Python decode tests: $(tail -1 "$logs/pytest_decode.log") =="
  keep pytest_decode.log pytest.log
fi

summary
