#!/usr/bin/env bash
# The host time of warpforge.attention and warpforge.attention_decode from
# torch on a GPU machine (issue 46: a cached call <= 5 us of host), and what
# it moves in the Python benchmark against SDPA's backends. Most important
# first, each stage's lines printed as it ends (a hard time limit may cut the
# run; BUDGET, default 65 s from the start, caps each stage at what is left):
#
#   1. scripts/attention_host_cost.py: host us a cached call, each layer of
#      the call path alone (public function, C++ direct call, torch.ops, the
#      allocation floor, SDPA, torch.neg), forward and decode, then each C++
#      step alone;
#   2. python -m warpforge.bench_attention --prefill --quick, head_dim 64
#      and 128 (10 calls back to back a sample, every backend alike), ours / best;
#   3. the decode rows at batch 1, KV 8k, 32k, 128k (the same method);
#   4. the Python attention GPU tests (CUDA graphs, O from the allocator),
#      then the forward and decode GPU tests (the kept launch);
#   5. where time is left, the prefill d64/d128 rows and the decode rows
#      timed one call on an idle GPU (--calls 1: the method until session 10).
# Last, a short table: host us a call (ours, torch.neg), ours / best by method.
#
# Builds test_gpu and the Python modules in BUILD_DIR (default build;
# scripts/gpu-stages.sh). Logs go to $OUT (default $BUILD_DIR/gpu-attn-host).
set -uo pipefail
cd "$(dirname "$0")/.."

NAME=gpu-attn-host budget=65
source scripts/gpu-stages.sh
build_targets test_gpu
python=(env PYTHONPATH="$build_dir/python:python" python3 -u -W ignore)

# 1. Host us a call, each layer and each C++ step.
stage "host cost" 12 "$out/host.log" "${python[@]}" scripts/attention_host_cost.py --batches 5
cat "$out/host.log"

# 2, 3. ours / best, 10 calls back to back a sample.
stage "bench_attention.py --prefill d64, d128" 14 "$out/bench_prefill.log" \
  "${python[@]}" -m warpforge.bench_attention --prefill --quick --groups d64,d128 --reps 5
echo "== prefill from Python, 10 calls a sample (TFLOP/s) =="
grep -E "^\||^geometric" "$out/bench_prefill.log"
stage "bench_attention.py --decode b1" 8 "$out/bench_decode.log" \
  "${python[@]}" -m warpforge.bench_attention --decode --batches 1 --lengths 8192,32768,131072 --reps 10
echo "== decode from Python, 10 calls a sample =="
grep -E "^\||copy rate" "$out/bench_decode.log"

# 4. Correctness of the kept launch on the GPU.
stage "pytest -k attention (GPU)" 20 "$out/pytest.log" \
  "${python[@]}" -m pytest -q -x python/tests/test_attention.py -k "cuda or gpu or graph" -p no:cacheprovider
tail -3 "$out/pytest.log"
stage "test_gpu AttentionGpu forward, decode" 12 "$out/tests.log" "$build_dir/tests/test_gpu" \
  --gtest_filter='AttentionGpu.ForwardPersistentCtasWalkSeveralItems:AttentionGpu.DecodeCases'
grep -E "^\[  (PASSED|FAILED) " "$out/tests.log"

# 5. The one-call method, where time is left.
if [ "$(left)" -gt 6 ]; then
  stage "bench_attention.py one call (d64, d128)" 8 "$out/bench_one_call.log" \
    "${python[@]}" -m warpforge.bench_attention --prefill --quick --groups d64,d128 --reps 5 --calls 1
  grep -E "^\||^geometric" "$out/bench_one_call.log"
fi
if [ "$(left)" -gt 4 ]; then
  stage "bench_attention.py one call (decode b1)" 6 "$out/bench_decode_one_call.log" \
    "${python[@]}" -m warpforge.bench_attention --decode --batches 1 --lengths 8192,32768,131072 --reps 10 --calls 1
  grep -E "^\|" "$out/bench_decode_one_call.log"
fi

# The short table: the public calls' host us, then ours / best of each bench row.
echo
echo "== $NAME: host us a call and ours / best =="
[ -f "$out/host.log" ] &&
  echo "host: $(grep -E "\(public\)|^  _warpforge_torch|torch.neg" "$out/host.log" | awk '{printf "%s %s; ", $1, $NF}')"
for log in bench_prefill bench_decode bench_one_call bench_decode_one_call; do
  [ -f "$out/$log.log" ] || continue
  echo "$log: $(awk -F'|' '/ours \/ best/ { for (i = 1; i <= NF; i++) if ($i ~ /ours \/ best/) c = i; prefill = /head_dim/; next }
    c && /^\| *[0-9]/ { for (i = 2; i <= 6; i++) gsub(/ /, "", $i); gsub(/ /, "", $c)
      printf "%s ", prefill ? "d" $4 " " $2 ($6 == "yes" ? "c" : "") : "b" $2 " " $3
      printf "%s; ", $c }' "$out/$log.log")"
done
summary
