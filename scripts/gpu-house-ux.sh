#!/usr/bin/env bash
# The house-ux branch's checks on a GPU machine (issue 42, items 5 and 6):
#   1. the CLI's refusals with a GPU present (tests/cli: commands without
#      --device then run on the GPU, and `--kernel sm100a` on an H100 must be
#      the op's refusal, one line, exit 1);
#   2. the verifier's ISA checks against this machine's ptxas (VerifierIsa:
#      every case accepted by the verifier must assemble, every refused one
#      must fail), and the nvcc corpus round trip, whose every file must
#      verify (RoundTrip: nvcc's PTX from this machine's CUDA toolkit);
#   3. how long the build takes here: CPU and wall time of the targets above.
# Writes logs to $OUT (default build-gpu-house-ux/out) and prints a table
# last; exits non-zero when anything failed. GoogleTest comes from
# $WARPFORGE_GTEST_SOURCE, ./.gtest or /usr/src/googletest, as for
# scripts/gpu-check.sh.
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build-gpu-house-ux}"
out="${OUT:-$build_dir/out}"
jobs="${JOBS:-$(nproc)}"
gtest_source="${WARPFORGE_GTEST_SOURCE:-$PWD/.gtest}"
[ -f "$gtest_source/CMakeLists.txt" ] || gtest_source=/usr/src/googletest
mkdir -p "$out"

rows=()
row() { rows+=("$(printf '%-44s %-6s %s' "$1" "$2" "$3")"); }

start=$(date +%s)
if ! cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_GTEST_SOURCE="$gtest_source" \
  >"$out/configure.log" 2>&1; then
  tail -20 "$out/configure.log"
  echo "gpu-house-ux: FAIL: configure (log: $out/configure.log)"
  exit 1
fi
/usr/bin/time -v -o "$out/build.time" cmake --build "$build_dir" -j "$jobs" --target warpforge_cli test_cli test_ptx \
  >"$out/build.log" 2>&1
build_rc=$?
cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.0f", u + s}' "$out/build.time")
row "build (warpforge, test_cli, test_ptx)" "$([ $build_rc -eq 0 ] && echo ok || echo FAIL)" \
  "$(( $(date +%s) - start )) s wall, ${cpu} s CPU on $jobs jobs"
if [ $build_rc -ne 0 ]; then
  grep -E "error" "$out/build.log" | head -20
  printf '%s\n' "${rows[@]}"
  exit 1
fi

gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
status=0
run_tests() {  # name, program, filter
  "$2" --gtest_filter="$3" >"$out/$1.log" 2>&1
  local rc=$?
  local summary
  summary="$(grep -E '^\[  (PASSED|FAILED)  \]|tests? from .* ran' "$out/$1.log" | tr '\n' ' ' | cut -c1-90)"
  row "$1" "$([ $rc -eq 0 ] && echo ok || echo FAIL)" "$summary"
  [ $rc -eq 0 ] || status=1
}
run_tests "tests/cli (GPU present: ${gpu:-none})" "$build_dir/tests/test_cli" '*'
run_tests "VerifierIsa against ptxas $(ptxas --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')" \
  "$build_dir/tests/test_ptx" 'VerifierIsa.*'
run_tests "nvcc corpus verifies and round-trips" "$build_dir/tests/test_ptx" 'NvccCorpus/*:RoundTripCorpus.*'

# An sm100a kernel on a Hopper GPU: the op refuses, in lines on stderr, exit 1.
"$build_dir/warpforge" gemm --m 64 --n 64 --k 64 --kernel sm100a --device cuda >"$out/sm100a.out" 2>"$out/sm100a.err"
rc=$?
row "gemm --kernel sm100a --device cuda" "$([ $rc -eq 1 ] && [ ! -s "$out/sm100a.out" ] && echo ok || echo FAIL)" \
  "exit $rc: $(head -1 "$out/sm100a.err" | cut -c1-80)"
[ $rc -eq 1 ] || status=1

echo
printf '%-44s %-6s %s\n' "check" "result" "detail"
printf '%s\n' "${rows[@]}"
exit $status
