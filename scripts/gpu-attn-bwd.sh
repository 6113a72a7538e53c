#!/usr/bin/env bash
# The attention backward on a GPU machine (an H100/H200 with CUDA 13, torch,
# ncu, compute-sanitizer): its short run, most important first, each stage's
# table printed as it ends (a hard time limit may cut the run; BUDGET,
# default 85 s from the start, the build included, caps each stage at what
# is left: the window's hard limit is 90 s). The forward's run is
# scripts/gpu-attn-fwd.sh, the decode's scripts/gpu-attn-decode.sh.
#
#   1. bench_attention --prefill --backward --quick (head_dim 64, 128, 256,
#      and GQA): the backward's TFLOP/s as the op chooses (sm90a);
#   2. the backward GPU tests of the sm90a kernels' small shapes
#      (AttentionGpu.SanitizeBackward*: d64, d128, GQA with a window,
#      varlen, d256 causal GQA with a ragged key block, three query
#      blocks), fast and deterministic, against fp64 (FULL=1: every
#      BackwardCases* test too, both kernels);
#   3. python -m warpforge.bench_attention --prefill --backward --quick:
#      ours beside SDPA's cuDNN, flash and efficient backends (the best
#      named; rows printed as measured: a cut run keeps the first), for the
#      shape groups in PY_GROUPS (default d256,d128; FULL=1: all four);
#   4. compute-sanitizer racecheck of the small shapes (SANITIZED, default
#      SanitizeBackward*; FULL=1: memcheck and synccheck too);
#   5. scripts/attn_bwd_causes.py --quick (FULL=1: every shape), where 12 s
#      are left: where the Python call's time goes at d128, 1k and 8k (one
#      call's GPU activities beside SDPA's; backward / grad / op / execute /
#      stream µs);
#   6. one ncu profile of the backward's dK/dV kernel at sequence 8k, d256
#      (NCU_DIMS, default "256 128": d128 where time is left; d64, d128 and d256 with FULL=1),
#      printed twice: its throughputs, tensor and shared-memory pipes and
#      stall reasons, then its SASS lines with the most stall samples (the
#      source page) and the reason of each;
#   7. the Python attention tests on the GPU (the torch operators' C++
#      kernels, opcheck, CUDA graphs, fp64 gradients), where 12 s are left;
#
# FULL=1: the benches over the issue's whole grid (longer than a minute).
# Builds test_gpu, bench_attention and the Python module in BUILD_DIR
# (default build; configured as scripts/gpu-build-args.sh says where it is
# not; a no-op where built). Logs go to $OUT (default $BUILD_DIR/gpu-attn-bwd).
set -uo pipefail
cd "$(dirname "$0")/.."

quick=--quick
[ "${FULL:-0}" = 1 ] && quick=
NAME=gpu-attn-bwd budget=85
source scripts/gpu-stages.sh

build_targets test_gpu bench_attention
test_gpu="$build_dir/tests/test_gpu"
bench="$build_dir/bench/bench_attention"
py=(env PYTHONPATH="$build_dir/python:python" python3 -W ignore)

# 1. C++: the op's choice (its compiles fill the binary cache the Python stages read).
stage "bench_attention --backward (auto)" 9 "$out/bench_backward.log" \
  "$bench" --prefill --backward $quick --reps 3
echo "== backward, C++: TFLOP/s (FlashAttention's count: 2.5x the forward's), the op's choice =="
grep -E "^\|" "$out/bench_backward.log"

# 2. The sm90a kernels' small shapes against fp64 (FULL=1: every backward case on both kernels).
tests='AttentionGpu.SanitizeBackward*' limit=14
[ "${FULL:-0}" = 1 ] && tests='AttentionGpu.SanitizeBackward*:AttentionGpu.BackwardCases*' limit=60
stage "GPU tests $tests" $limit "$out/tests.log" "$test_gpu" --gtest_filter="$tests"
grep -E "^\[ +(OK|FAILED|PASSED) |outside the bound|Failure|exception" "$out/tests.log" | head -12

# The SASS lines of an ncu source page (CSV) with the most stall samples, the two largest reasons of each.
stall_lines() {
  python3 - "$1" <<'PY' || true
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if len(r) > 3]
head = next((i for i, r in enumerate(rows) if any("Source" in c for c in r)), None)
if head is None:
    sys.exit("no source table")
names, body = rows[head], rows[head + 1:]
def col(*keys):
    return next((i for i, n in enumerate(names) if all(k in n for k in keys)), None)
total, src = col("Warp Stall Sampling (All"), col("Source")
def num(r, i):
    try:
        return float(r[i].replace(",", ""))
    except (ValueError, IndexError):
        return 0.0
reasons = [i for i, n in enumerate(names) if i != total and (n.startswith("stall_") or ("Stall" in n and "Sampling" not in n))]
all_samples = sum(num(r, total) for r in body) or 1.0
for r in sorted(body, key=lambda r: -num(r, total))[:10]:
    top = sorted(((num(r, i), names[i]) for i in reasons), reverse=True)[:2]
    print(f"{num(r, total):8.0f} {num(r, total) / all_samples:6.1%}  {r[src][:66]:66}  " + ", ".join(f"{n} {v:.0f}" for v, n in top if v))
PY
}

# 3. Python: ours beside SDPA's backends (PY_GROUPS, default d256,d128: a window's 90 s do not hold all 16 rows).
groups="${PY_GROUPS:-d256,d128}"  # (not GROUPS: bash's own array of the user's group ids)
[ "${FULL:-0}" = 1 ] && groups=d64,d128,d256,gqa
stage "bench_attention.py --prefill --backward" 38 "$out/bench_backward_python.log" \
  "${py[@]}" -m warpforge.bench_attention --prefill --backward $quick --reps 3 --groups "$groups"
echo "== backward from Python beside SDPA (TFLOP/s) =="
grep -E "^\||^geometric" "$out/bench_backward_python.log"

# 4. compute-sanitizer on the small shapes.
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
tools=racecheck sanitized="${SANITIZED:-SanitizeBackward*}"
[ "${FULL:-0}" = 1 ] && tools="racecheck memcheck synccheck"
for tool in $tools; do
  [ -x "$sanitizer" ] || { rows+=("| sanitizer $tool | compute-sanitizer not found | 0s |"); break; }
  [ "$(left)" -gt 5 ] || break
  stage "sanitizer $tool ($sanitized)" 14 "$out/sanitize-$tool.log" \
    "$sanitizer" --tool "$tool" --error-exitcode 99 "$test_gpu" --gtest_filter="AttentionGpu.$sanitized"
  echo "== compute-sanitizer $tool: $(grep -E "SUMMARY" "$out/sanitize-$tool.log" | tail -1) =="
  grep -E "^========= (Error|Race|Invalid)" "$out/sanitize-$tool.log" | sort | uniq -c | head -5
done

# 5. Where the Python call's time goes (scripts/attn_bwd_causes.py: --quick, d128, with FULL=1 every shape): one call's
#    GPU activities beside SDPA's, and the table of backward / grad / op / execute / stream µs.
if [ "${FULL:-0}" = 1 ] || [ "$(left)" -gt 12 ]; then
  causes_args=(--quick) causes_limit=11
  [ "${FULL:-0}" = 1 ] && causes_args=() causes_limit=30
  causes_log="${TMPDIR:-/tmp}/gpu-attn-bwd-causes.log"  # printed whole: not in $out (8 files come back)
  stage "attn_bwd_causes.py ${causes_args[*]}" $causes_limit "$causes_log" \
    "${py[@]}" scripts/attn_bwd_causes.py "${causes_args[@]}"
  cut -c1-900 "$causes_log" | tail -40
fi

# 6. One ncu profile of the dK/dV kernel at sequence 8k, d256 (NCU_DIMS; d128, d64, d256 with FULL=1; not causal: the first
#    launch), printed twice from its report: throughputs and stall reasons, then the SASS lines with most stall samples.
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
dims="${NCU_DIMS:-256 128}"
[ "${FULL:-0}" = 1 ] && dims="128 64 256"
for d in $dims; do
  [ -x "$ncu" ] && [ "$(left)" -gt 6 ] || break
  report="${TMPDIR:-/tmp}/gpu-attn-bwd-ncu-d$d"  # the report: not in $out (8 files come back)
  rm -f "$report.ncu-rep"
  stage "ncu backward kv (d$d, 8k)" 9 "$out/ncu_backward_d$d.log" \
    "$ncu" --kernel-name regex:attention_bwd_.*kv --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats --section SourceCounters --section ComputeWorkloadAnalysis \
    --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed --export "$report" \
    "$bench" --prefill --backward --prefill-shape 8192,$d,16 --reps 1
  [ -f "$report.ncu-rep" ] || continue
  "$ncu" --import "$report.ncu-rep" --page details >>"$out/ncu_backward_d$d.log" 2>&1
  echo "== ncu: the backward's dK/dV kernel at d$d 8k =="
  grep -E "attention_bwd|Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|L1/TEX Cache Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|SM Busy|sm__pipe|stalled|represents about" \
    "$out/ncu_backward_d$d.log" | sed 's/^ *//' | cut -c1-160 | head -24
  "$ncu" --import "$report.ncu-rep" --page source --print-source sass --csv >"$out/ncu_source_d$d.csv" 2>&1
  echo "== ncu: the d$d 8k kernel's SASS lines with the most stall samples (share of all samples) =="
  stall_lines "$out/ncu_source_d$d.csv"
done

# 7. The Python GPU tests of the torch operators (the C++ backward kernel among them: its bits against the
#    Python kernel's, CUDA graph capture, fp64 gradients), with what is left.
if [ "$(left)" -gt 12 ]; then
  stage "pytest test_attention.py (torch, GPU)" 18 "$out/pytest.log" \
    "${py[@]}" -m pytest -q -x python/tests/test_attention.py -k "((cpp_kernel or fp64) and cuda) or replays_the_forward_and_backward"
  echo "== the Python attention tests: $(tail -1 "$out/pytest.log") =="
fi

summary
