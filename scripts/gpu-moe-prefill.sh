#!/usr/bin/env bash
# The grouped GEMM's weight-only prefill (issue 43) on a GPU machine, in under
# a minute once the build is there (BUDGET seconds, default 50), in the order
# STEPS gives (default: mxfp4 nvfp4 tests memcheck ncu ab), each step while
# time is left; TESTS_TILING, MEMCHECK_TILING and NCU_TILING set
# WARPFORGE_RS_TILING (sm90a_grouped_rs.cpp) for those steps:
#   mxfp4     bench_gemm --grouped --weights mxfp4 at 128, 1024, 8192 tokens
#             (TOKENS), packed experts against the bf16 grouped GEMM of the
#             same run ("packed / ours bf16": the issue asks >= 2.0 at 128
#             tokens, >= 0.9 from 8192), a process a model;
#   nvfp4     the same rows in NVFP4 (mixtral, dense, gpt-oss);
#   sm90a-mxfp4, sm90a-nvfp4, stream-mxfp4, stream-nvfp4: the same rows on
#             the kernel named (--grouped-kernel), not automatic selection's;
#   ab        the RS design's tilings (WARPFORGE_RS_TILING=T,C[,S]: tokens,
#             consumer warpgroups, K split) at the rows AB_ROWS lists, one
#             "tiling model tokens format kernel" a line, each beside its
#             own bf16 row;
#   tests     GroupedGemmGpu's weight-only prefill cases on the sm90a path
#             (the RS design) and the stream kernel's block-scaled cases
#             (both read the packed FP4 layout) against fp64, in one process
#             (TESTS: a gtest filter of others);
#   memcheck  compute-sanitizer memcheck of the RS design's small ragged
#             cases (GroupedGemmGpu.WeightOnlyRs*);
#   ncu       Nsight Compute of our packed forward at NCU_ROW (default
#             "dense 8192 nvfp4"), the kernel NCU_KERNEL (default the RS
#             design's), and its SASS lines where warps stall most (the
#             source page, ncu-source.csv);
#   ncu-bf16  the peer's (grouped_gemm_sm90a's) speed of light and tensor
#             pipe at the same row;
#   causes    python -m warpforge.bench_grouped --backward --causes at 1024
#             and 8192 tokens (the sm90a design's rows) over the four models;
#   small     (on request) the causes at 1-128 tokens (the stream kernel).
# Logs go to $OUT (default build/gpu-moe-prefill), each step's output also to
# stdout as it runs (a hard time limit keeps what was printed); the last
# lines are a short table.
#
#   OUT=/tmp/out scripts/gpu-moe-prefill.sh     # BUILD_DIR, BUDGET, STEPS may be set
#   STEPS='tests mxfp4 ncu' scripts/gpu-moe-prefill.sh
set -uo pipefail
cd "$(dirname "$0")/.."

source scripts/gpu-build-args.sh
gpu_script moe-prefill
budget="${BUDGET:-50}"
steps=" ${STEPS:-mxfp4 nvfp4 tests memcheck ncu ab} "
tokens="${TOKENS:-128,1024,8192}"
wanted() { [[ "$steps" == *" $1 "* ]]; }
left() { echo $((budget - SECONDS)); }
# step NAME SECONDS_NEEDED LIMIT COMMAND...: COMMAND into $out/NAME.log and
# stdout, under a timeout of LIMIT (or the time left if less), when at least
# SECONDS_NEEDED remain.
step() {
  local name="$1" need="$2" limit="$3"
  shift 3
  if [ "$(left)" -lt "$need" ]; then
    summary+=("$name: skipped ($(left) s left, needs $need)")
    return 200
  fi
  [ "$limit" -gt "$(left)" ] && limit="$(left)"
  local start=$SECONDS
  echo "== $name ($limit s at most)"
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  summary+=("$name: exit $rc in $((SECONDS - start)) s")
  return "$rc"
}

# The build: a no-op where BUILD_DIR was built with everything.
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$out/configure.log" 2>&1 || {
    tail -20 "$out/configure.log"
    echo "gpu-moe-prefill: FAIL: cmake configure"
    exit 1
  }
fi
targets=(test_gpu _warpforge)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "bench_gemm:" && targets+=(bench_gemm)
cmake --build "$build_dir" --target help 2>/dev/null | grep -q "_warpforge_torch:" && targets+=(_warpforge_torch)
cmake --build "$build_dir" -j "$(nproc)" --target "${targets[@]}" >"$out/build.log" 2>&1 ||
  summary+=("build FAILED (log $out/build.log)")
summary+=("build (${targets[*]}): $SECONDS s")
SECONDS=0

export PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
bench=(python3 -m warpforge.bench_grouped --reps 6)
backward=(--backward)
bench_gemm="$build_dir/bench/bench_gemm"

run_tests() {
  step tests 10 20 env WARPFORGE_RS_TILING="${TESTS_TILING:-}" "$build_dir/tests/test_gpu" \
    --gtest_filter="${TESTS:-GroupedGemmGpu.WeightOnly*:GroupedGemmGpu.TheSimulatorsBlockScaledCases}"
  local rc=$?
  [ -f "$out/tests.log" ] && summary+=("tests: $(grep -E '^\[  (PASSED|FAILED) ' "$out/tests.log" | tr '\n' ' ')")
  # A test that hung (a kernel waiting forever) would hang the bench's backward too: then forward only.
  if [ "$rc" = 124 ]; then
    summary+=("tests timed out: the benches run the forward only")
    backward=()
  fi
}

# Weight-only prefill: packed experts (KERNEL: auto, stream or sm90a)
# against the bf16 grouped GEMM of the same process, a process a model (one
# that faults loses its own rows alone), in one log.
weights() {
  local name="$1" format="$2" kernel="$3" need="$4" limit="$5" models="$6" rows="${7:-$tokens}"
  step "$name" "$need" "$limit" bash -c 'for m in ${1//,/ }; do
      "$0" --grouped --weights "$2" --grouped-kernel "$3" --models "$m" --tokens "$4" --reps 5 ||
        echo "| $m | exit $? |"
    done' "$bench_gemm" "$models" "$format" "$kernel" "$rows"
}

# The RS design's tilings beside the default's: each AB_ROWS line
# "T,C[,S] model tokens format kernel" a process under
# WARPFORGE_RS_TILING=T,C[,S] (sm90a_grouped_rs.cpp), in priority order.
ab_rows="${AB_ROWS:-64,3 mixtral 128 mxfp4 sm90a
64,3 gpt-oss 1024 mxfp4 sm90a
64,3 deepseek 1024 mxfp4 sm90a
64,3 deepseek 1024 mxfp4 stream}"
run_ab() {
  step weights-ab 6 16 bash -c 'while read -r tiling model rows format kernel; do
      [ -n "$tiling" ] || continue
      echo "== WARPFORGE_RS_TILING=$tiling $model $rows $format $kernel"
      WARPFORGE_RS_TILING="$tiling" "$0" --grouped --weights "$format" --grouped-kernel "$kernel" --models "$model" \
        --tokens "$rows" --reps 5 || echo "| $model | exit $? |"
    done <<<"$1"' "$bench_gemm" "$ab_rows"
}

# Nsight Compute of our packed forward at one row (NCU_ROW "model tokens
# format"), its 4th launch (after the bench's 3 warm-ups): the figures that
# separate the bounds.
run_ncu() {
  local ncu_tool
  ncu_tool="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
  [ -x "$ncu_tool" ] || { summary+=("ncu: not found"); return; }
  read -r ncu_model ncu_tokens ncu_format <<<"${NCU_ROW:-dense 8192 nvfp4}"
  local report=/tmp/gpu-moe-prefill-ncu
  step ncu 8 12 env WARPFORGE_RS_TILING="${NCU_TILING:-}" bash -c '"$0" --export "$1" --force-overwrite --kernel-name regex:"$2" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section Occupancy --section LaunchStats \
    --section SchedulerStats --section WarpStateStats --section SourceCounters --section InstructionStats \
    --metrics "regex:^(smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio|sm__pipe_.*_cycles_active\\.avg\\.pct_of_peak_sustained_active)$" \
    "$3" --grouped --weights "$6" --models "$4" --tokens "$5" --reps 5 >/dev/null &&
    "$0" --import "$1.ncu-rep" --page details' \
    "$ncu_tool" "$report" "${NCU_KERNEL:-^grouped_gemm_sm90a_rs}" "$bench_gemm" "$ncu_model" "$ncu_tokens" "$ncu_format"
  # The SASS lines where the warps' stall samples fall most (the source page).
  [ -f "$report.ncu-rep" ] && [ "$(left)" -gt 3 ] &&
    timeout "$(left)" "$ncu_tool" --import "$report.ncu-rep" --page source --print-source sass --csv \
      >"$out/ncu-source.csv" 2>&1
}

# The peer's (the bf16 grouped kernel's) speed of light and pipes at NCU_ROW.
run_ncu_bf16() {
  local ncu_tool
  ncu_tool="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
  [ -x "$ncu_tool" ] || return
  read -r ncu_model ncu_tokens ncu_format <<<"${NCU_ROW:-dense 8192 nvfp4}"
  step ncu-bf16 6 12 "$ncu_tool" --kernel-name regex:'^grouped_gemm_sm90a$' --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats \
    --metrics sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
    "$bench_gemm" --grouped --weights "$ncu_format" --models "$ncu_model" --tokens "$ncu_tokens" --reps 5
}

for s in $steps; do
  case "$s" in
    memcheck)
      sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
      step memcheck 8 10 env WARPFORGE_RS_TILING="${MEMCHECK_TILING:-}" \
        "$sanitizer" --tool memcheck --error-exitcode 9 "$build_dir/tests/test_gpu" \
        --gtest_filter='GroupedGemmGpu.WeightOnlyRs*' ;;
    tests) run_tests ;;
    mxfp4) weights "weights-$s" "$s" auto 8 12 mixtral,dense,gpt-oss ;;
    # NVFP4 where the RS design runs most rows (its scales differ from MXFP4's).
    nvfp4) weights "weights-$s" "$s" auto 6 7 mixtral,dense 128,8192 ;;
    sm90a-mxfp4 | sm90a-nvfp4 | stream-mxfp4 | stream-nvfp4)
      weights "weights-$s" "${s#*-}" "${s%-*}" 8 17 qwen3,mixtral,deepseek,dense,gpt-oss ;;
    ab) run_ab ;;
    # The sm90a design's rows (1024, 8192 tokens).
    causes) step causes 18 24 "${bench[@]}" "${backward[@]}" --causes --models gpt-oss,qwen3,mixtral,deepseek --tokens 1024,8192 ;;
    # The stream kernel's rows (1-128 tokens).
    small) step small 10 28 "${bench[@]}" "${backward[@]}" --causes --models gpt-oss,qwen3,mixtral,deepseek --tokens 1,16,128 ;;
    ncu) run_ncu ;;
    ncu-bf16) run_ncu_bf16 ;;
    *) summary+=("$s: no such step") ;;
  esac
done

echo
echo "gpu-moe-prefill on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $SECONDS s; logs in $out"
for line in "${summary[@]}"; do echo "- $line"; done
[ -f "$out/ncu.log" ] && grep -E "^ +(Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|Issue Slots Busy|No Eligible|L2 Hit Rate|Grid Size|Waves Per SM|Mem Busy|Max Bandwidth|Mem Pipes Busy|Executed Ipc Active) " "$out/ncu.log" | head -18
[ -f "$out/ncu.log" ] && grep -E "issue_stalled_.*ratio|pipe_(tensor|alu|fma|shared)_cycles" "$out/ncu.log" |
  awk '{print $NF, $1}' | sort -gr | head -12
# The source page's SASS lines with the most stall samples (columns found by name).
[ -s "$out/ncu-source.csv" ] && python3 - "$out/ncu-source.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if any("Source" == c.strip() for c in r)), None)
if head is None:
    print("ncu-source.csv: no Source column;", rows[:2])
    sys.exit()
names = rows[head]
src = names.index(next(c for c in names if c.strip() == "Source"))
cols = [i for i, c in enumerate(names) if "Sampling" in c and "All" in c] or [i for i, c in enumerate(names) if "Sampl" in c]
if not cols:
    print("ncu-source.csv columns:", names)
    sys.exit()
def num(x):
    try:
        return float(x.replace(",", ""))
    except ValueError:
        return 0.0
body = [r for r in rows[head + 1:] if len(r) > max(cols + [src])]
total = sum(num(r[cols[0]]) for r in body) or 1
print(f"SASS lines by {names[cols[0]]} ({int(total)} samples):")
for r in sorted(body, key=lambda r: -num(r[cols[0]]))[:24]:
    print(f"{100 * num(r[cols[0]]) / total:5.1f}%  {r[src].strip()[:90]}")
PY
[ -f "$out/ncu-bf16.log" ] && echo "peer (bf16):" &&
  grep -E "^ +(Duration|Compute \(SM\) Throughput|Memory Throughput|Grid Size)|pipe_tensor|issue_active" "$out/ncu-bf16.log"
[ -f "$out/memcheck.log" ] && grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/memcheck.log" | head -3
for log in "$out"/weights-*.log; do
  [ -f "$log" ] || continue
  log="$(basename "$log" .log)"
  echo
  echo "$log: model, tokens, ours bf16, packed us, packed / ours bf16, packed read / ours"
  grep -E "^(== |\| [a-z-]+ \| ([0-9]+|exit [0-9]+) \|)" "$out/$log.log" | cut -d"|" -f2,3,5,8,9,13
done
for log in causes small; do
  [ -f "$out/$log.log" ] || continue
  echo
  echo "$log:"
  grep -E "^\| (model|[a-z])" "$out/$log.log" | cut -d"|" -f2,3,4,6,7,10,11,16,18,20 | head -13
  grep -E "geometric mean" "$out/$log.log"
done
