#!/usr/bin/env bash
# Weight-only decode (bf16 tokens x packed block-scaled weights, the stream
# kernel, issue 43) on a GPU machine, inside BUDGET seconds (default 65, for
# a 70 s window; the build is expected to be there already), in this order,
# each step while time is left, printing as it goes:
#   mxfp4     bench_gemm --grouped --weights mxfp4 over dense (N = K = 8192),
#             gpt-oss and mixtral at 1 and 16 tokens: "packed read / ours"
#             is the read-once floor of the same bytes over ours (the issue
#             asks >= 0.85);
#   ncu16     Nsight Compute of the stream kernel, dense MXFP4 at 16 tokens,
#             at the GPU's own clocks: duration, clock, DRAM bytes and
#             throughput, L2 bytes and throughput (A's copies and the split
#             sums pass there beside the weights), instructions issued,
#             issue-slot use, warps a scheduler, registers, each pipe's busy share, shared-memory
#             wavefronts, stall reasons (cycles a issued instruction);
#   nvfp4, mxfp8  the rows of mxfp4 in those formats;
#   sel       the selection between the stream kernel and the RS design
#             where groups average 32 tokens (mixtral 128, gpt-oss and
#             deepseek 1024; MXFP4): the automatic choice, then the stream
#             kernel named (--grouped-kernel); MXFP8 (which automatic
#             selection streams up to 32) at 24 and 32 tokens a group
#             (mixtral 96 and 128, gpt-oss and deepseek 1024): the automatic
#             choice, then the RS design named;
#   memcheck  compute-sanitizer memcheck of the tests step's cases;
#   ncu1      ncu16's figures at one token;
#   sass1, sass16  ncu's source counters of the stream kernel at 1 and 16
#             tokens (dense MXFP4): each SASS line's stall samples by reason,
#             shared wavefronts and L2 sectors, as CSV (sass1.csv,
#             sass16.csv in $OUT);
#   curve     dense MXFP4 at 1, 2, 8, 9 and 16 tokens: what a token row of A
#             costs (1 -> 8: A's copied rows, one token tile) against what a
#             second token tile costs (8 -> 9: its mma and A loads);
#   sweep     rows under other tilings of the stream kernel, each in the
#             same run as the format's own rows (SWEEP lists entries
#             TILING:MODELS:TOKENS[:FORMAT], space-separated, MXFP4 where no
#             format is given; TILING is WARPFORGE_STREAM_TILING's
#             warps,row_tiles,stages[,splits[,ctas_per_sm]], a split of 0 for
#             the automatic one; default: dense MXFP4 at one row tile a warp
#             in 4 stages, 1 and 16 tokens (session 10's design 1, lost);
#   tests     test_gpu's stream-kernel cases against fp64 (the simulator's
#             block-scaled cases) and the RS design's three-warpgroup ones
#             (T = 128 and 64); 20 s at most;
# STEPS picks and orders them (default "mxfp4 nvfp4 mxfp8 sel tests memcheck ncu16 sweep curve ncu1
# sass1 sass16"; session 10's one window ran out before memcheck in the old order).
# Logs go to $OUT (default $BUILD_DIR/gpu-wo-decode): rows.log, sweep.log,
# ncu.log, tests.log (tests and memcheck; each step's output under a "== step" line, as it
# ends) and build.log; the last lines are a short table (the rows, the profile's
# figures).
#
#   OUT=/tmp/out scripts/gpu-wo-decode.sh    # BUILD_DIR, JOBS, BUDGET, STEPS, SWEEP may be set
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-build-args.sh
gpu_script wo-decode
budget="${BUDGET:-65}"
steps="${STEPS:-mxfp4 nvfp4 mxfp8 sel tests memcheck ncu16 sweep curve ncu1 sass1 sass16}"
left() { echo $((budget - SECONDS)); }
logs="$(mktemp -d)"  # a step's own log, appended to $out's file of its kind when it ends

gpu_build bench_gemm
bench="$build_dir/bench/bench_gemm"
ncu_tool="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"

# step NAME SECONDS_NEEDED COMMAND...: COMMAND into $out/NAME.log and stdout
# (the table rows only), under a timeout of the time left, when at least
# SECONDS_NEEDED remain.
step() {
  local name="$1" need="$2"
  shift 2
  budget_step "$name" "$need" "$logs/$name.log" "$@"
  local rc=$?
  [ "$step_ran" = 1 ] || return 0
  local kind=rows
  case "$name" in sweep-*) kind=sweep ;; ncu* | sass*) kind=ncu ;; tests | memcheck) kind=tests ;; esac
  { echo "== $name: exit $rc"; cat "$logs/$name.log"; } >>"$out/$kind.log"
  grep -E "^\| [a-z]" "$logs/$name.log" | grep -v "^| model" | cut -c1-200
  [ $rc -ne 0 ] && note "$name: exit $rc"
  echo "   ($name: $step_seconds s)"
}
rows=("$bench" --grouped --reps 10 --weights)  # then FORMAT --models M --tokens T
# The stream kernel's launch after bench_gemm's bf16 runs of the same shape
# (3 warm-ups and 5 runs at --reps 5, where bf16 takes the stream kernel:
# up to 16 tokens): launch 9 is the packed weights' first.
# One regex of the figures (a name this ncu lacks matches nothing, where a
# plain list would fail the run).
ncu_metrics="gpu__time_duration\\.sum|sm__cycles_elapsed\\.avg\\.per_second|dram__bytes_read\\.sum|\
dram__throughput\\.avg\\.pct_of_peak_sustained_elapsed|lts__t_(bytes|sectors)\\.sum|\
lts__throughput\\.avg\\.pct_of_peak_sustained_elapsed|lts__t_sectors_srcunit_tex_op_read\\.sum|smsp__inst_executed\\.sum|\
smsp__issue_active\\.avg\\.pct_of_peak_sustained_active|smsp__warps_(active|eligible)\\.avg\\.per_cycle_active|\
launch__registers_per_thread|launch__occupancy_limit_(registers|shared_mem)|launch__grid_size|\
l1tex__data_pipe_lsu_wavefronts_mem_shared\\.sum|sm__pipe_.*_cycles_active\\.avg\\.pct_of_peak_sustained_active|\
smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
# Then FORMAT --tokens T.
ncu_stream=("$ncu_tool" --clock-control none --kernel-name regex:grouped_gemm_stream --launch-skip 8 --launch-count 1
  --metrics "regex:^($ncu_metrics)$" "$bench" --grouped --models dense --reps 5 --weights)
sweep="${SWEEP:-4,1,4,0,4:dense:1 8,1,4,0,2:dense:16}"
for s in $steps; do
  case "$s" in
    mxfp4 | nvfp4 | mxfp8) step "$s" 4 "${rows[@]}" "$s" --models dense,gpt-oss,mixtral --tokens 1,16 ;;
    curve) step curve 3 "${rows[@]}" mxfp4 --models dense --tokens 1,2,8,9,16 ;;
    tests | memcheck)
      test_gpu="$build_dir/tests/test_gpu"
      cases='GroupedGemmGpu.TheSimulatorsBlockScaledCases:GroupedGemmGpu.WeightOnlyRsThreeWarpgroups'
      sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
      if [ ! -x "$test_gpu" ]; then
        note "$s: $test_gpu not built"
      elif [ "$s" = tests ]; then
        step tests 6 timeout 20 "$test_gpu" --gtest_filter="$cases"
        note "tests: $(grep -E '^\[  (PASSED|FAILED) ' "$logs/tests.log" | tr '\n' ' ')"
      else
        step memcheck 6 timeout 30 "$sanitizer" --tool memcheck --error-exitcode 9 "$test_gpu" --gtest_filter="$cases"
        note "memcheck: $(grep -E '^\[  (PASSED|FAILED) |ERROR SUMMARY' "$logs/memcheck.log" | tr '\n' ' ')"
      fi
      ;;
    ncu16) [ -x "$ncu_tool" ] && step ncu16 8 "${ncu_stream[@]}" mxfp4 --tokens 16 ;;
    ncu1) [ -x "$ncu_tool" ] && step ncu1 8 "${ncu_stream[@]}" mxfp4 --tokens 1 ;;
    sass1 | sass16)
      if [ -x "$ncu_tool" ]; then
        tokens="${s#sass}"
        step "$s" 8 "$ncu_tool" --clock-control none --kernel-name regex:grouped_gemm_stream --launch-skip 8 \
          --launch-count 1 --section SourceCounters --section WarpStateStats -o "$logs/$s" -f \
          "$bench" --grouped --models dense --reps 5 --weights mxfp4 --tokens "$tokens"
        [ -f "$logs/$s.ncu-rep" ] &&
          "$ncu_tool" --import "$logs/$s.ncu-rep" --page source --csv --print-source sass >"$out/$s.csv" 2>&1
      fi
      ;;
    sweep)
      for entry in $sweep; do
        IFS=: read -r t models tokens format <<<"$entry"
        format="${format:-mxfp4}"
        WARPFORGE_STREAM_TILING="$t" step "sweep-$format-${t//,/_}-${models//,/_}-${tokens//,/_}" 3 "${rows[@]}" \
          "$format" --models "$models" --tokens "$tokens"
      done
      ;;
    sel)
      for k in auto stream; do
        step "sel-$k-128" 4 "$bench" --grouped --weights mxfp4 --models mixtral --tokens 128 --reps 10 --grouped-kernel "$k"
        step "sel-$k-1024" 5 "$bench" --grouped --weights mxfp4 --models gpt-oss,deepseek --tokens 1024 --reps 10 \
          --grouped-kernel "$k"
      done
      for k in auto sm90a; do
        step "sel8-$k-128" 4 "$bench" --grouped --weights mxfp8 --models mixtral --tokens 96,128 --reps 10 --grouped-kernel "$k"
        step "sel8-$k-1024" 5 "$bench" --grouped --weights mxfp8 --models gpt-oss,deepseek --tokens 1024 --reps 10 \
          --grouped-kernel "$k"
      done
      ;;
    *) note "unknown step $s" ;;
  esac
done

echo
echo "gpu-wo-decode on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $SECONDS s; logs in $out"
echo "model | tokens | experts | ours bf16 | loop | . | packed us | packed/bf16 | bf16 floor | . | packed floor us | floor/ours"
for f in mxfp4 nvfp4 mxfp8 curve sel-auto-128 sel-auto-1024 sel-stream-128 sel-stream-1024 sel8-auto-128 sel8-auto-1024 \
  sel8-sm90a-128 sel8-sm90a-1024 $(cd "$logs" && ls sweep-*.log 2>/dev/null | sed 's/\.log$//'); do
  [ -f "$logs/$f.log" ] || continue
  echo "$f:"
  grep -E "^\| [a-z]" "$logs/$f.log" | grep -v "^| model" | cut -c1-200
  grep -oE ": kernel (stream|sm90a|sm80), [^>]*" "$logs/$f.log" | sed 's/, workspace.*//' | cut -c1-160 | head -1
done
for f in ncu16 ncu1; do
  [ -f "$logs/$f.log" ] || continue
  echo "$f:"
  grep -E "^ +[a-z_]+__[a-z_.]+ " "$logs/$f.log" | awk '$NF != "0" && $NF != "0.00" {print $1, $(NF-1), $NF}' |
    grep -vE "stalled_(.*_not_issued|selected)" | sort | head -60
done
for line in "${summary[@]}"; do echo "- $line"; done
exit 0
