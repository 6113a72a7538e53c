#!/usr/bin/env bash
# The grouped GEMM (mixture of experts, issue 43) on a GPU machine.
#
# Quick mode (the default; at most BUDGET seconds after the build, default
# 48: a window's hard limit, 55-65 s, counts CMake's configure too):
# GemmAmax's swapped kernel at decode sizes, in this order, each step while
# time is left:
#   swapped  bench_gemm --block-scaled nvfp4 (later mxfp8) --kernel swapped
#            at M = 1, 16, 64 x 8192 x 8192 and 16 x 4096 x 4096 (the fused
#            layer's GEMM): "ours / read once" (the issue asks 0.85);
#   tilings  NVFP4 under other tilings (WARPFORGE_SWAPPED_TILING: K splits
#            as a cluster or through the workspace);
#   kernels  Nsight Compute at the GPU's own clocks (--clock-control none):
#            each launch's duration, the A pre-pass and the swapped kernel,
#            NVFP4 at M = 16: the kernel alone against the call;
#   stream   weight-only decode on the stream kernel (bench_gemm --grouped
#            --weights mxfp4, dense and gpt-oss, 1 and 16 tokens);
#   swaptest GemmAmaxExactnessGpu.SwappedKernel (against fp64, cancelling);
#   ncuswap  the swapped kernel's stall reasons, pipes and DRAM bytes (NVFP4,
#            M = 16), then its full sections.
# STEPS="bench tests ncu sweep amaxtest amax" runs the stream kernel's
# quick steps instead (session 6's):
#   bench    bench_gemm --grouped --weights mxfp4, nvfp4, mxfp8 over the
#            dense N = K = 8192 GEMM, gpt-oss and qwen3 at 1 and 16 tokens:
#            each row has ours bf16 and packed beside their read-once floors
#            ("bf16 read / ours", "packed read / ours": the issue asks 0.85);
#   tests    the quick GroupedGemmGpu cases (TheSimulators*: every format,
#            tails, split K, bf16 weights), each in a process of its own
#            (10 s at most), against fp64;
#   ncu      Nsight Compute of the stream kernel, MXFP4 dense 8192² at 16
#            tokens (memory, shared-memory tables, occupancy, scheduler,
#            warp states, pipes, instruction mix, source counters), each
#            pipe's busy share, shared wavefronts and L2/DRAM bytes at 16
#            and 1 tokens, the 1-token launch's stall reasons and its SASS
#            lines' source counters (the bound at one token);
#   sweep    the MXFP4 bench again under other tilings of the stream kernel
#            (WARPFORGE_STREAM_TILING and _BF16: warps, row tiles a warp,
#            stages, K split (0: the default's), CTAs an SM;
#            stream_grouped_path.cpp);
#   amaxtest GemmAmaxExactnessGpu.StreamKernel (its stream path, fp64);
#   amax     bench_gemm --block-scaled mxfp8, mxfp4, nvfp4 at M = 1, 16, 64
#            x 8192 x 8192: GemmAmax's decode on the stream kernel (named)
#            and on the automatic choice ("ours / read once").
# Logs go to $OUT as a few files that grow as each step ends (tests.log,
# bench.log, ncu.log, ncu-source.csv, amax.log, other.log: a window keeps
# 8 files), each step's output under a "== step" line.
#
# FULL=1: the whole check in about 5 minutes (BUDGET seconds, default 290,
# the build included): every GroupedGemmGpu test; compute-sanitizer memcheck
# on the small cases (memcheck); bench_gemm --grouped bf16 against the cuBLAS
# loop over four models at 1-8192 tokens and the packed formats at decode
# sizes; python/tests/test_grouped_gemm.py on the GPU (pytest);
# python -m warpforge.bench_grouped against torch._grouped_mm (pybench);
# racecheck and synccheck (sanitize).
# STEPS picks steps of either mode, e.g. STEPS="pytest sanitize". $OUT
# defaults to build/gpu-moe; the last lines are a short table.
#
#   OUT=/tmp/out scripts/gpu-moe.sh      # BUILD_DIR, JOBS, BUDGET, STEPS, FULL may be set
set -uo pipefail
cd "$(dirname "$0")/.."
# First, so that the functions below are this script's (note, run).
gpu_script_name=moe
source scripts/gpu-build-args.sh

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-moe}"
jobs="${JOBS:-$(nproc)}"
budget="${BUDGET:-290}"
full="${FULL:-0}"
if [ "$full" = 1 ]; then
  steps=" ${STEPS:-tests memcheck bench pytest pybench sanitize} "
else
  steps=" ${STEPS:-swapped tilings kernels stream swaptest ncuswap} "
fi
mkdir -p "$out"
# Each step's own log, read back by the steps' checks; appended to $out's
# file of its kind when the step ends.
logs="$(mktemp -d)"
kind_of() {
  case "$1" in
    test-*) echo tests.log ;;
    bench-* | sweep-*) echo bench.log ;;
    ncu-source-*) echo ncu-source.csv ;;
    ncu-*) echo ncu.log ;;
    amax-* | swapped-* | tiling-*) echo amax.log ;;
    *) echo other.log ;;
  esac
}
summary=()
note() { summary+=("$1"); }
left() { echo $((budget - SECONDS)); }
wanted() { [[ "$steps" == *" $1 "* ]]; }
# run NAME SECONDS_NEEDED TIMEOUT COMMAND...: runs COMMAND into $logs/NAME.log
# (then appended to its kind's file in $out) when at least SECONDS_NEEDED
# remain, under a timeout (TIMEOUT, or the time left if less); returns its
# status, or 200 (noted) when skipped.
run() {
  local name="$1" need="$2" limit="$3"
  shift 3
  if [ "$(left)" -lt "$need" ]; then
    note "$name: skipped (time: $(left) s left, needs $need)"
    return 200
  fi
  [ "$limit" -gt "$(left)" ] && limit="$(left)"
  local start=$SECONDS
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  local kind
  kind="$(kind_of "$name")"
  { echo "== $name: exit $rc in $((SECONDS - start)) s"; cat "$logs/$name.log"; } >>"$out/$kind"
  echo "== $name: exit $rc in $((SECONDS - start)) s (in $out/$kind)"
  return $rc
}

if ! cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/build.log" 2>&1; then
  tail -20 "$out/build.log"
  echo "gpu-moe: FAIL: cmake configure (log $out/build.log)"
  exit 1
fi
targets=(bench_gemm)
{ wanted tests || wanted amaxtest || wanted swaptest || wanted memcheck || wanted sanitize; } && targets+=(test_gpu)
if wanted pytest || wanted pybench; then
  cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge:" && targets+=(_warpforge)
  cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge_torch:" && targets+=(_warpforge_torch)
fi
start=$SECONDS
# One parallel build; where it fails, each target again on its own, so
# that one that does not build (its steps skipped) leaves the others.
broken=" "
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >>"$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -20
  for target in "${targets[@]}"; do
    cmake --build "$build_dir" -j "$jobs" --target "$target" >>"$out/build.log" 2>&1 || broken+="$target "
  done
fi
note "build (${targets[*]}): $((SECONDS - start)) s"
[ "$broken" != " " ] && note "build FAILED for:${broken}(log $out/build.log); their steps are skipped"
# Quick mode: BUDGET (default 55) seconds from here, the build left out
# (a window's hard limit counts CMake's configure, ~7 s, too).
if [ "$full" != 1 ]; then
  SECONDS=0
  budget="${BUDGET:-48}"
fi
built() { [[ "$broken" != *" $1 "* ]]; }
bench="$build_dir/bench/bench_gemm"
gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"

test_gpu="$build_dir/tests/test_gpu"
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
# sanitize TOOL: compute-sanitizer TOOL over the small and ragged cases.
sanitize() {
  if [ ! -x "$sanitizer" ]; then
    note "compute-sanitizer $1: not found"
  elif run "sanitize-$1" 20 90 "$sanitizer" --tool "$1" --error-exitcode 99 "$test_gpu" \
    --gtest_filter='GroupedGemmGpu.TheSimulators*'; then
    note "compute-sanitizer $1: clean on GroupedGemmGpu.TheSimulators* ($(grep -E '^\[  PASSED  \]' "$logs/sanitize-$1.log"))"
  else
    local rc=$?
    [ $rc -eq 200 ] && return
    note "compute-sanitizer $1: NOT clean (exit $rc: 99 a sanitizer error, else the tests'; $out/other.log)"
    grep -E "ERROR|Invalid|hazard|FAILED" "$logs/sanitize-$1.log" | head -5
  fi
}
# ncu_stream NAME SKIP WEIGHTS MODEL TOKENS: Nsight Compute of the stream
# kernel's launch SKIP + 1 of bench_gemm --grouped (launches 1-8 are ours
# bf16 where bf16 takes the stream kernel: 3 warm-ups and 5 runs; the 9th
# the packed weights' first). Its Duration is the kernel's alone: beside the
# bench's event time it separates the host's share.
ncu_tool="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
ncu_stream() {
  if [ -z "$ncu_tool" ] || [ ! -x "$ncu_tool" ]; then
    [ -n "$ncu_tool" ] && note "ncu: not found"
    ncu_tool=""
    return
  fi
  run "ncu-$1" 8 20 "$ncu_tool" --kernel-name regex:grouped_gemm_stream --launch-skip "$2" --launch-count 1 \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SpeedOfLight \
    --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section SourceCounters \
    --section MemoryWorkloadAnalysis_Tables --section InstructionStats \
    "$bench" --grouped --weights "$3" --models "$4" --tokens "$5" --reps 5 ||
    note "ncu $1: exit $? ($out/ncu.log)"
}

# GemmAmax's swapped kernel at decode sizes, named, with "ours / read once".
decode_shapes=1x8192x8192,16x8192x8192,64x8192x8192,16x4096x4096
swapped_rows() {
  run "swapped-$1" 10 25 "$bench" --block-scaled "$1" --kernel swapped --shapes "$decode_shapes" --reps 20
  grep -E "^\| [0-9]+ x [0-9]+ x [0-9]+ \| [0-9.]+ \|" "$logs/swapped-$1.log" 2>/dev/null  # as it goes
}
# Other tilings (format:tiling:shapes; tiling = stages,splits,cluster,
# blocks): at 16 x 4096^2, 4 splits as a cluster (the default until session
# 8), 4 (now the default) and 8 through the workspace.
tilings_entries="nvfp4:8,4,1,4:16x4096x4096 nvfp4:8,4,0,4:16x4096x4096 nvfp4:8,8,0,4:16x4096x4096"
tilings() {
  local entry tiling shapes name
  for entry in $tilings_entries; do
    [ "${entry%%:*}" = "$1" ] || continue
    tiling="${entry#*:}"
    shapes="${tiling#*:}" tiling="${tiling%%:*}"
    name="tiling-$1-${tiling//,/_}"
    WARPFORGE_SWAPPED_TILING="$tiling" run "$name" 5 12 "$bench" --block-scaled "$1" \
      --kernel swapped --shapes "$shapes" --reps 20
    grep -E "^\| [0-9]+ x [0-9]+ x [0-9]+ \| [0-9.]+ \|" "$logs/$name.log" 2>/dev/null
  done
}
# Each launch's duration at the GPU's own clocks (the pre-pass, the
# kernel; 3 calls), NVFP4 at M = 16: the kernel alone against the call.
kernels() {
  run "ncu-kernels-$1" 6 15 "$ncu_tool" --clock-control none \
    --kernel-name regex:'gemm_amax_(swapped|dequantize_a)' --launch-count 6 --metrics gpu__time_duration.sum \
    "$bench" --block-scaled nvfp4 --kernel swapped --shapes "$1" --reps 20
}
# swaptest NAME: one GPU exactness test of the swapped kernel, noted.
swaptest() {
  run "test-$1" 18 25 "$test_gpu" --gtest_filter="$1"
  local rc=$?
  if [ $rc -eq 0 ] && ! grep -q "SKIPPED" "$logs/test-$1.log"; then
    note "$1: passed"
  elif [ $rc -ne 200 ]; then
    note "$1: NOT passed (exit $rc; $out/tests.log)"
    grep -E "Failure|mismatch|Which is|SKIPPED" "$logs/test-$1.log" | head -4
  fi
}
# The order: what the window needs first (a timeout keeps what ran).
quick_order="swapped:nvfp4 tilings:nvfp4 kernels:16x4096x4096 stream:mxfp4 swapped:mxfp8 \
  kernels:16x8192x8192 swaptest:GemmAmaxExactnessGpu.SwappedKernel ncuswap"
for step in $quick_order; do
  name="${step%%:*}" arg="${step#*:}"
  if [ "$name" = swaptest ]; then
    wanted swaptest && [ -x "$test_gpu" ] && built test_gpu && swaptest "$arg"
    continue
  fi
  [ -x "$bench" ] && built bench_gemm || break
  case "$name" in
    swapped) wanted swapped && swapped_rows "$arg" ;;
    tilings) wanted tilings && tilings "$arg" ;;
    kernels) wanted kernels && [ -x "$ncu_tool" ] && kernels "$arg" ;;
    stream)
      # Weight-only decode (bf16 tokens, packed weights) on the stream kernel.
      wanted stream && run "bench-$arg" 6 15 "$bench" --grouped --weights "$arg" --models dense,gpt-oss \
        --tokens 1,16 --reps 10
      grep -E "^\| [a-z]" "$logs/bench-$arg.log" 2>/dev/null
      ;;
    ncuswap)
      wanted ncuswap && [ -x "$ncu_tool" ] &&
        run ncu-stalls-swapped-nvfp4-16 8 20 "$ncu_tool" --kernel-name regex:gemm_amax_swapped --launch-skip 3 \
          --launch-count 1 \
          --metrics "regex:^(smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio|sm__pipe_.*_cycles_active\\.avg\\.pct_of_peak_sustained_active|sm__inst_executed_pipe_.*\\.sum|dram__bytes_read\\.sum|gpu__time_duration\\.sum|smsp__inst_executed\\.sum)$" \
          "$bench" --block-scaled nvfp4 --kernel swapped --shapes 16x8192x8192 --reps 20
      ;;
    ncusections)
      # Launches: the pre-pass and the kernel a call; skip 3 warm-up calls.
      wanted ncuswap && [ -x "$ncu_tool" ] &&
        run ncu-swapped-nvfp4-16 8 20 "$ncu_tool" --kernel-name regex:'gemm_amax_(swapped|dequantize_a)' \
          --launch-skip 6 --launch-count 2 \
          --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SpeedOfLight \
          --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis \
          --section InstructionStats "$bench" --block-scaled nvfp4 --kernel swapped --shapes 16x8192x8192 --reps 20
      ;;
  esac
done
wanted swapped-mxfp4 && [ -x "$bench" ] && built bench_gemm && swapped_rows mxfp4
if wanted bench; then
  if [ -x "$bench" ] && built bench_gemm && [ "$full" = 1 ]; then
    run bench-bf16 60 100 "$bench" --grouped --tokens 1,16,128,1024,8192 --reps 10 &&
      note "bench bf16: $(grep -E 'geometric mean' "$logs/bench-bf16.log")"
    run bench-mxfp4 40 60 "$bench" --grouped --weights mxfp4 --models gpt-oss,deepseek,mixtral --tokens 1,16,128 --reps 10
    run bench-nvfp4 30 45 "$bench" --grouped --weights nvfp4 --models gpt-oss,qwen3 --tokens 1,16,128 --reps 10
    run bench-mxfp8 25 40 "$bench" --grouped --weights mxfp8 --models gpt-oss,qwen3 --tokens 1,16 --reps 10
  elif [ -x "$bench" ] && built bench_gemm; then
    for w in mxfp4 nvfp4 mxfp8; do
      run "bench-$w" 6 20 "$bench" --grouped --weights "$w" --models dense,gpt-oss,qwen3 --tokens 1,16 --reps 10
      grep -E "^\| [a-z]" "$logs/bench-$w.log" 2>/dev/null  # as it goes: a timeout keeps what ran
    done
  else
    note "bench: bench_gemm not built (no cuBLAS found by CMake, or its build failed)"
  fi
fi

if [ -x "$test_gpu" ] && built test_gpu && wanted tests; then
  passed=0 failed=""
  tests='GroupedGemmGpu.*:GemmAmaxExactnessGpu.StreamKernel'
  [ "$full" = 1 ] || tests='GroupedGemmGpu.TheSimulators*'
  # Suite.Test names from the listing ("Suite." lines, then "  Test" lines).
  for t in $("$test_gpu" --gtest_filter="$tests" --gtest_list_tests | awk '/^[^ ]/{suite=$1} /^  /{print suite $1}'); do
    run "test-$t" 5 "$([ "$full" = 1 ] && echo 120 || echo 10)" "$test_gpu" --gtest_filter="$t"
    rc=$?
    log="$logs/test-$t.log"
    if [ $rc -eq 0 ] && ! grep -q "SKIPPED" "$log"; then
      passed=$((passed + 1))
      continue
    fi
    why="exit $rc"
    [ $rc -eq 0 ] && why="skipped"
    [ $rc -eq 124 ] && why="timed out"
    [ $rc -gt 128 ] && [ $rc -lt 200 ] && why="killed by signal $((rc - 128))"
    [ $rc -eq 200 ] && why="not run: out of time"
    failed+=" $t ($why);"
    [ -f "$log" ] && grep -E "Failure|Which is|mismatch|refuse|Skipped" "$log" | head -6
  done
  note "GPU tests: $passed passed${failed:+; NOT passed:$failed} ($out/tests.log)"
elif wanted tests; then
  note "GPU tests: test_gpu not built (log $out/build.log)"
fi
if wanted ncu && [ -x "$bench" ] && built bench_gemm; then
  # Dense MXFP4 at 16 tokens after A's row-wide copies (window 1: 27.0 us,
  # 1.63M excess shared wavefronts, MIO throttle 0.69 a issue).
  ncu_stream mxfp4-dense-16 8 mxfp4 dense 16
  # Each pipe's busy share, shared memory's wavefronts, L2 and DRAM bytes,
  # at 16 tokens and at 1.
  for tokens in 16 1; do
    [ -n "$ncu_tool" ] && run "ncu-pipes-mxfp4-dense-$tokens" 8 20 "$ncu_tool" --kernel-name regex:grouped_gemm_stream \
      --launch-skip 8 --launch-count 1 \
      --metrics "regex:^(sm__pipe_.*_cycles_active\\.avg\\.pct_of_peak_sustained_active|sm__inst_executed_pipe_.*\\.sum|l1tex__data_pipe_lsu_wavefronts_mem_shared.*\\.sum|l1tex__data_bank_conflicts_pipe_lsu_mem_shared.*\\.sum|lts__t_bytes\\.sum|dram__bytes_read\\.sum|gpu__time_duration\\.sum)$" \
      "$bench" --grouped --weights mxfp4 --models dense --tokens "$tokens" --reps 5
  done
  # The 1-token launch's stall reasons (warps stalled a cycle, per issued
  # instruction) and its SASS lines' source counters: its bound.
  [ -n "$ncu_tool" ] && run ncu-stalls-mxfp4-dense-1 8 20 "$ncu_tool" --kernel-name regex:grouped_gemm_stream \
    --launch-skip 8 --launch-count 1 --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio" \
    "$bench" --grouped --weights mxfp4 --models dense --tokens 1 --reps 5
  [ -n "$ncu_tool" ] && run ncu-source-mxfp4-dense-1 8 20 "$ncu_tool" --kernel-name regex:grouped_gemm_stream \
    --launch-skip 8 --launch-count 1 --section SourceCounters --page source --print-source sass --csv \
    "$bench" --grouped --weights mxfp4 --models dense --tokens 1 --reps 5
fi

# Each entry: weights:packed tiling/bf16 tiling
# (warps,row_tiles,stages[,splits[,ctas_per_sm]]); the defaults are 4,2,2
# up to 16 tokens (FP4; FP8 4,1,2; 3 stages where 2 fit no more CTAs an SM),
# splits_for's K split (0), 4 CTAs an SM, and 8,1,3 (bf16 up to 16 tokens).
# 8 warps of 2 row tiles: 256 rows a CTA, so A is read by half as many
# CTAs (window 1: dense 16 tokens 23.0 us against 25.3, 1 token 19.0
# against 17.4); one row tile a warp with 3 stages at 4 CTAs an SM (a
# chunk's work a warp halved: the tail after the last copy), and 8 warps of
# one row tile (2 CTAs an SM).
sweeps="mxfp4:8,2,2/8,1,3 mxfp4:4,1,3,0,4/8,1,3 mxfp4:8,1,2/8,1,3"
if wanted sweep && [ -x "$bench" ] && built bench_gemm; then
  for entry in $sweeps; do
    w="${entry%%:*}" pair="${entry#*:}"
    WARPFORGE_STREAM_TILING="${pair%/*}" WARPFORGE_STREAM_TILING_BF16="${pair#*/}" \
      run "sweep-$w-${pair//[,\/]/_}" 6 15 "$bench" --grouped --weights "$w" --models dense,gpt-oss,qwen3 --tokens 1,16 --reps 10
      grep -E "^\| [a-z]" "$logs/sweep-$w-${pair//[,\/]/_}.log" 2>/dev/null
  done
fi

# GemmAmax's stream path against fp64 on cancelling inputs (quick mode: after its bench).
if [ "$full" != 1 ] && [ -x "$test_gpu" ] && built test_gpu && wanted amaxtest; then
  run test-GemmAmaxExactnessGpu.StreamKernel 10 25 "$test_gpu" --gtest_filter=GemmAmaxExactnessGpu.StreamKernel
  rc=$?
  if [ $rc -eq 0 ]; then
    note "GemmAmaxExactnessGpu.StreamKernel: passed"
  elif [ $rc -ne 200 ]; then  # 200: skipped, noted by run
    note "GemmAmaxExactnessGpu.StreamKernel: NOT passed (exit $rc; $out/tests.log)"
    grep -E "Failure|mismatch|Which is" "$logs/test-GemmAmaxExactnessGpu.StreamKernel.log" | head -4
  fi
fi

# GemmAmax's decode kernels (both operands quantized) at the issue's shapes.
if wanted amax && [ -x "$bench" ] && built bench_gemm; then
  for w in mxfp8 mxfp4 nvfp4; do
    for kernel in stream auto; do
      run "amax-$kernel-$w" 14 20 "$bench" --block-scaled "$w" --kernel "$kernel" \
        --shapes 1x8192x8192,16x8192x8192,64x8192x8192 --reps 20
    done
  done
fi


[ -x "$test_gpu" ] && built test_gpu && wanted memcheck && sanitize memcheck

export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
if ! wanted pytest && ! wanted pybench; then
  :
elif ls "$build_dir"/python/warpforge/_warpforge*.so >/dev/null 2>&1 && built _warpforge; then
  if wanted pytest; then
    if run pytest 45 90 python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_grouped_gemm.py; then
      note "pytest test_grouped_gemm.py: $(tail -1 "$logs/pytest.log")"
    else
      note "pytest test_grouped_gemm.py: FAILED: $(tail -1 "$logs/pytest.log")"
    fi
  fi
  wanted pybench && run bench-python 30 60 python3 -m warpforge.bench_grouped --models gpt-oss,qwen3 \
    --tokens 1,16,128,1024,8192 --backward --reps 10
else
  note "python: the module was not built (no nanobind, or its build failed)"
fi

if [ -x "$test_gpu" ] && built test_gpu && wanted sanitize; then
  sanitize racecheck
  sanitize synccheck
fi

echo
echo "gpu-moe on ${gpu:-an unnamed GPU}, $SECONDS s; logs in $out"
for line in "${summary[@]}"; do echo "- $line"; done
for log in bench-bf16 bench-mxfp4 bench-nvfp4 bench-mxfp8 bench-python $(cd "$logs" && ls sweep-*.log 2>/dev/null | sed 's/\.log$//'); do
  [ -f "$logs/$log.log" ] || continue
  echo
  echo "$log:"
  grep -E "^\| (model|[a-z])" "$logs/$log.log" | head -40
  grep -E "geometric mean" "$logs/$log.log"
done
# GemmAmax's decode rows: the kernel each shape took, then ours against the read-once ceiling.
for log in swapped-nvfp4 swapped-mxfp8 swapped-mxfp4 \
  $(cd "$logs" && ls tiling-*.log 2>/dev/null | sed 's/\.log$//') \
  amax-stream-mxfp8 amax-auto-mxfp8 amax-stream-mxfp4 amax-auto-mxfp4 amax-stream-nvfp4 amax-auto-nvfp4; do
  [ -f "$logs/$log.log" ] || continue
  echo
  echo "$log:"
  grep -E "^\| [0-9]+ x [0-9]+ x [0-9]+ \|" "$logs/$log.log" | cut -c1-160
done
# The profile's figures that separate the bounds: DRAM throughput (bytes in
# flight), issue slots (the conversion's instructions), occupancy, stalls.
for log in $(cd "$logs" && ls ncu-*.log 2>/dev/null | sed 's/\.log$//'); do
  [ -f "$logs/$log.log" ] || continue
  echo
  echo "$log:"
  grep -E "^ +(DRAM Throughput|Memory Throughput|Duration|Registers Per Thread|Dynamic Shared Memory Per Block|Achieved Occupancy|Theoretical Occupancy|Block Limit (Registers|Shared Mem)|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|Warp Cycles Per Issued Instruction|L2 Hit Rate|Mem Busy|Max Bandwidth|Grid Size|Waves Per SM|Executed Ipc Active|SM Busy|Executed Instructions|Issued Instructions) " "$logs/$log.log" | head -36
  grep -oE "[A-Za-z0-9 ]*(highest-utilized|pipeline is|stalled)[^.]*" "$logs/$log.log" | head -4
  # Shared memory: wavefronts beyond the accesses' need, bank conflicts.
  grep -oE "[^.]*(excessive wavefronts|bank conflicts|uncoalesced shared)[^.]*" "$logs/$log.log" | head -4
  # ncu-stalls-*: the stall reasons, largest first.
  grep -E "issue_stalled_.*ratio" "$logs/$log.log" | awk '{print $NF, $1}' | sort -gr | head -8
  # ncu-pipes-*: the pipes' busy shares and the bytes.
  grep -E "^ +(sm__pipe_|sm__inst_executed_pipe_|l1tex__data|lts__t_bytes|dram__bytes_read|gpu__time)" "$logs/$log.log" |
    awk '$NF != "0" && $NF != "0.00"' | head -40
done
# ncu-kernels: each launch's duration (us, the GPU's own clocks) by kernel
# and grid, in launch order: the pre-pass and the kernel of each call.
for log in $(cd "$logs" && ls ncu-kernels-*.log 2>/dev/null | sed 's/\.log$//'); do
  echo
  echo "$log:"
  awk '/^ +gemm_amax_(swapped|dequantize_a) \(/{name=$1" "$2} /gpu__time_duration.sum/{print name, $NF}' "$logs/$log.log"
done
