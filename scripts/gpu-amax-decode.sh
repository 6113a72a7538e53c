#!/usr/bin/env bash
# GemmAmax's decode (both operands quantized, M <= 64; issues 43, 44) on a
# GPU machine, inside BUDGET seconds (default 55, for a 60 s window; the
# build is expected to be there already), each step while time is left,
# printing its table rows as it goes:
#   source    Nsight Compute's full set with the SASS source page of the
#             swapped kernel (NVFP4 16 x 8192^2, the GPU's clocks): the key
#             figures, then the SASS lines with the most stall samples and
#             their reasons (scripts/ncu_sass_hotspots.py; the report, its
#             details and its source CSV in $OUT);
#   nvfp4     bench_gemm --block-scaled nvfp4 --kernel swapped at M = 1, 16,
#             64 x 8192 x 8192 and 16 x 4096 x 4096 (the fused quantized
#             layer's GEMM): "ours / read once" is the read-once ceiling
#             over ours (the issue asks >= 0.85);
#   ncu       the swapped kernel's issue, warps, stall reasons, pipes and
#             DRAM (NVFP4 16 x 8192^2), at the GPU's own clocks;
#   mxfp8     MXFP8 at M = 1, 16, 64 x 8192 x 8192;
#   mxfp4     MXFP4 at M = 1, 16 and 64 x 8192 x 8192;
#   skinny-F  the skinny kernel (FP4 format F: nvfp4, mxfp4) at M <= 16,
#             to set against the swapped rows of the same run;
#   auto-F    --kernel auto at the same shapes (what automatic selection
#             picks there);
#   tests     GemmAmaxExactnessGpu.TwoCtasAnSm (decode's default at two CTAs
#             an SM, ~10 s) against fp64 on cancelling inputs;
#   alltests  the rest of the swapped kernel's: .SwappedKernel (~16 s) and
#             .SplitsAddUpEitherWay;
#   one-cta   NVFP4 16 x 8192^2 under session 8's tiling (one CTA an SM, 2
#             K splits as a cluster: WARPFORGE_SWAPPED_TILING=8,2,1,4,1);
#   sweep     NVFP4 16 x 8192^2 under other tilings (SWEEP, space-separated
#             WARPFORGE_SWAPPED_TILING values; default 2 stages of 4 K
#             blocks at two CTAs an SM: half the default's bytes in flight,
#             Little's law's test of whether they bound it);
#   kernels   Nsight Compute, each launch's duration at the GPU's own clocks
#             (the A pre-pass, the swapped kernel), NVFP4 16 x 8192^2.
# STEPS picks and orders them (default "source nvfp4 skinny-nvfp4 tests
# mxfp8 skinny-mxfp4 mxfp4 sweep"); TILING sets WARPFORGE_SWAPPED_TILING for the rows' steps
# (stages,splits,cluster,blocks,ctas_per_sm; swapped_gemm_amax_path.cpp).
# Logs go to $OUT (default $BUILD_DIR/gpu-amax-decode), one file a step; the
# last lines are a short table.
#
#   OUT=/tmp/out scripts/gpu-amax-decode.sh    # BUILD_DIR, JOBS, BUDGET, STEPS, TILING may be set
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-build-args.sh
gpu_script amax-decode
budget="${BUDGET:-55}"
steps="${STEPS:-source nvfp4 skinny-nvfp4 tests mxfp8 skinny-mxfp4 mxfp4 sweep}"
left() { echo $((budget - SECONDS)); }

gpu_build bench_gemm test_gpu
bench="$build_dir/bench/bench_gemm"
test_gpu="$build_dir/tests/test_gpu"
ncu_tool="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

# step NAME SECONDS_NEEDED COMMAND...: COMMAND into $out/NAME.log (a
# file a step), under a timeout of the time left, when at least
# SECONDS_NEEDED remain; prints the table rows as they come.
step() {
  local name="$1" need="$2"
  shift 2
  budget_step "$name" "$need" "$out/$name.log" "$@"
  local rc=$?
  [ "$step_ran" = 1 ] || return 0
  grep -E "^\| [0-9]+ x [0-9]+ x [0-9]+ \| [0-9.]+ \||^\[  (PASSED|FAILED) |Failure|mismatch" "$out/$name.log" |
    head -12 | cut -c1-200
  [ $rc -ne 0 ] && note "$name: exit $rc ($out/$name.log)"
  echo "   ($name: $step_seconds s)"
}
shapes=1x8192x8192,16x8192x8192,64x8192x8192,16x4096x4096
small=1x8192x8192,16x8192x8192,16x4096x4096  # M <= 16: where the skinny kernel competes
# A step of rows: 16-18 s at 4 shapes on an H200 (session 10's window).
rows() {  # rows FORMAT [SHAPES [KERNEL [NAME]]]
  WARPFORGE_SWAPPED_TILING="${TILING:-}" step "${4:-$1}" 16 "$bench" --block-scaled "$1" --kernel "${3:-swapped}" \
    --shapes "${2:-$shapes}" --reps 20
}
# ncu's full set and source page of one swapped launch (the first timed
# one, after 3 warm-ups) at NVFP4 16 x 8192^2, then the hot SASS lines.
# bench_gemm takes --reps 20 at least.
source_page() {
  local rep="$out/source"
  [ -x "$ncu_tool" ] || { note "source: no ncu"; return 0; }
  step source 15 "$ncu_tool" --clock-control none --set full --import-source yes -f -o "$rep" \
    --kernel-name regex:gemm_amax_swapped --launch-skip 3 --launch-count 1 \
    "$bench" --block-scaled nvfp4 --kernel swapped --shapes 16x8192x8192 --reps 20
  [ -f "$rep.ncu-rep" ] && [ "$(left)" -gt 2 ] || return 0
  timeout "$(left)" "$ncu_tool" -i "$rep.ncu-rep" --page details >"$rep.details" 2>&1
  [ "$(left)" -gt 2 ] || return 0
  timeout "$(left)" "$ncu_tool" -i "$rep.ncu-rep" --page source --csv --print-source sass >"$rep.csv" 2>&1
  grep -E "^ *(Duration|SM Frequency|DRAM Throughput|Registers Per Thread|Achieved Occupancy|Issue Slots Busy|\
Warp Cycles Per Issued Instruction|No Eligible|Executed Instructions) " "$rep.details" | sed 's/^ *//; s/  */ /g' |
    cut -c1-120
  python3 scripts/ncu_sass_hotspots.py "$rep.csv" --top 24 >"$out/hotspots.txt" 2>&1
  sed -n '1,3p' "$out/hotspots.txt"
  grep -E "^\| [0-9]+ \|" "$out/hotspots.txt" | head -12
}
ncu_metrics="gpu__time_duration\\.sum|sm__cycles_elapsed\\.avg\\.per_second|dram__bytes_read\\.sum|\
dram__throughput\\.avg\\.pct_of_peak_sustained_elapsed|smsp__inst_executed\\.sum|\
smsp__issue_active\\.avg\\.pct_of_peak_sustained_active|smsp__warps_(active|eligible)\\.avg\\.per_cycle_active|\
launch__registers_per_thread|launch__occupancy_limit_(registers|shared_mem)|launch__grid_size|\
sm__pipe_.*_cycles_active\\.avg\\.pct_of_peak_sustained_active|\
smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
for s in $steps; do
  case "$s" in
    nvfp4) rows nvfp4 ;;
    mxfp8) rows mxfp8 1x8192x8192,16x8192x8192,64x8192x8192 ;;
    mxfp4) rows mxfp4 1x8192x8192,16x8192x8192,64x8192x8192 ;;
    skinny-nvfp4 | skinny-mxfp4 | auto-nvfp4 | auto-mxfp4) rows "${s#*-}" "$small" "${s%%-*}" "$s" ;;
    source) source_page ;;
    sweep)
      for tiling in ${SWEEP:-2,4,0,4,2}; do
        WARPFORGE_SWAPPED_TILING="$tiling" step "sweep-${tiling//,/_}" 10 "$bench" --block-scaled nvfp4 \
          --kernel swapped --shapes 16x8192x8192 --reps 20
      done
      ;;
    one-cta)
      WARPFORGE_SWAPPED_TILING=8,2,1,4,1 step one-cta 5 "$bench" --block-scaled nvfp4 --kernel swapped \
        --shapes 16x8192x8192 --reps 20
      ;;
    tests) step tests 10 "$test_gpu" --gtest_filter='GemmAmaxExactnessGpu.TwoCtasAnSm' ;;
    alltests)
      step alltests 20 "$test_gpu" \
        --gtest_filter='GemmAmaxExactnessGpu.SwappedKernel:GemmAmaxExactnessGpu.SplitsAddUpEitherWay'
      ;;
    kernels)
      # Launches in order: the pre-pass and the kernel of each call (3 calls).
      [ -x "$ncu_tool" ] && step kernels 6 "$ncu_tool" --clock-control none \
        --kernel-name regex:'gemm_amax_(swapped|dequantize_a)' --launch-count 6 --metrics gpu__time_duration.sum \
        "$bench" --block-scaled nvfp4 --kernel swapped --shapes 16x8192x8192 --reps 20
      ;;
    ncu)
      [ -x "$ncu_tool" ] && step ncu 8 "$ncu_tool" --clock-control none --kernel-name regex:gemm_amax_swapped \
        --launch-skip 3 --launch-count 1 --metrics "regex:^($ncu_metrics)$" \
        "$bench" --block-scaled nvfp4 --kernel swapped --shapes 16x8192x8192 --reps 20
      ;;
    *) note "step $s: unknown (source nvfp4 one-cta mxfp8 sweep tests alltests mxfp4 skinny-nvfp4 skinny-mxfp4 auto-nvfp4 auto-mxfp4 kernels ncu)" ;;
  esac
done

echo
echo "gpu-amax-decode on ${gpu:-an unnamed GPU}, $SECONDS s; logs in $out"
for line in "${summary[@]}"; do echo "- $line"; done
# The rows: shape | bf16 cuBLAS us | read once us | ours us | ... | ours / read once.
for s in nvfp4 skinny-nvfp4 auto-nvfp4 one-cta mxfp8 mxfp4 skinny-mxfp4 auto-mxfp4 $(cd "$out" && ls sweep-*.log 2>/dev/null | sed 's/\.log$//'); do
  [ -f "$out/$s.log" ] || continue
  echo "$s:"
  grep -E "^\| [0-9]+ x [0-9]+ x [0-9]+ \| [0-9.]+ \|" "$out/$s.log" | cut -c1-160
done
for s in tests alltests; do
  [ -f "$out/$s.log" ] && echo "$s: $(grep -E '^\[  (PASSED|FAILED) ' "$out/$s.log" | tr '\n' ' ')"
done
if [ -f "$out/hotspots.txt" ]; then
  echo "hot SASS (line, instruction, share of samples, main reasons):"
  grep -E "^\| [0-9]+ \|" "$out/hotspots.txt" | head -4 | awk -F'|' '{print " " $2 "|" $3 "|" $4 "|" $7}' | cut -c1-150
fi
if [ -f "$out/kernels.log" ]; then
  echo "kernels (us, launch order):"
  awk '/^ +gemm_amax_(swapped|dequantize_a) \(/{name=$1" "$2} /gpu__time_duration.sum/{print "  " name, $NF}' \
    "$out/kernels.log"
fi
if [ -f "$out/ncu.log" ]; then
  echo "ncu:"
  grep -E "^ +(gpu__time|sm__cycles|dram__|smsp__inst|smsp__issue|smsp__warps|launch__)" "$out/ncu.log" | head -16
  grep -E "issue_stalled_.*ratio" "$out/ncu.log" | awk '{print "  " $NF, $1}' | sort -gr | head -6
  grep -E "^ +sm__pipe_" "$out/ncu.log" | awk '$NF+0 > 5' | head -8
fi
