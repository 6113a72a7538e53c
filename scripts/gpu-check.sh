#!/usr/bin/env bash
# Builds warpforge on a GPU machine and runs what needs the GPU: the tests
# labelled `gpu`, `warpforge demo`, and the Python package's pytest suite
# (built with the rest where nanobind is installed; with torch, JAX and CuPy
# present it runs their operators, torch.compile, CUDA graphs, opcheck and
# jax.jit on the GPU). For machines with the CUDA driver,
# CMake and a compiler but no GoogleTest and no network: GoogleTest is built
# from the source tree in $WARPFORGE_GTEST_SOURCE, else ./.gtest, else
# /usr/src/googletest. Without the DLPack header in the system include path,
# $WARPFORGE_DLPACK_INCLUDE_DIR (or ./.dlpack) must hold dlpack/dlpack.h (a
# copy of Debian's libdlpack-dev header). Ends with one summary line; exits
# non-zero when anything failed.
#
#   WARPFORGE_GTEST_SOURCE=/path/to/googletest scripts/gpu-check.sh
#
# BUILD_DIR (default build), JOBS (build jobs, default nproc) and TEST_JOBS
# (tests run at once, default half of nproc: the GPU tests are independent,
# their longest ones bound by host references on one core, and the GPU's
# memory holds all of them) may be set. The Python suite runs beside them.
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
jobs="${JOBS:-$(nproc)}"
test_jobs="${TEST_JOBS:-$(( $(nproc) > 1 ? $(nproc) / 2 : 1 ))}"
source scripts/gpu-build-args.sh
log_dir="$build_dir/gpu-check"

fail() {
  echo "gpu-check: FAIL: $*"
  exit 1
}

[ -f "$gtest_source/CMakeLists.txt" ] ||
  fail "no GoogleTest sources at $gtest_source (set WARPFORGE_GTEST_SOURCE, or copy /usr/src/googletest to ./.gtest)"

mkdir -p "$build_dir"
if ! cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$build_dir/gpu-check-configure.log" 2>&1; then
  tail -30 "$build_dir/gpu-check-configure.log"
  fail "cmake configure failed (log: $build_dir/gpu-check-configure.log)"
fi
mkdir -p "$log_dir"
if ! cmake --build "$build_dir" -j "$jobs" >"$log_dir/build.log" 2>&1; then
  grep -E "error|Error" "$log_dir/build.log" | head -30
  fail "build failed (log: $log_dir/build.log)"
fi

# The device probe: the one test that only reports the device. Without a
# usable GPU every GPU test would skip, which is no pass.
probe="$("$build_dir/tests/test_gpu" --gtest_filter=VectorAdd.ReportsTheDevice 2>&1)"
if ! grep -q "^\[  PASSED  \] 1 test" <<<"$probe" || grep -q "SKIPPED" <<<"$probe"; then
  echo "$probe" | grep -A1 -E "Skipped|Failure" | head -5
  fail "no usable CUDA GPU (the device probe did not pass)"
fi
gpu_name="$(sed -n 's/^\[ device   \] //p' <<<"$probe")"

# The Python package's pytest suite through ctest (label `python`), started
# now so that it runs beside the GPU tests; its results are read below.
python_pid=
if (cd "$build_dir" && ctest -N -L python | grep -q python_tests); then
  (cd "$build_dir" && ctest -V -L python -j 1) >"$log_dir/python.log" 2>&1 &
  python_pid=$!
fi

# The GPU tests, TEST_JOBS at once, the longest first (their COST:
# tests/test_costs.cmake). A skipped test (GTEST_SKIP, e.g. clusters before
# sm_90) is counted apart from passes.
(cd "$build_dir" && ctest -L gpu --output-on-failure -j "$test_jobs") >"$log_dir/ctest.log" 2>&1
tests_rc=$?
cat "$log_dir/ctest.log"
total=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#" "$log_dir/ctest.log")
skipped=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#.*(\*\*\*Skipped|Not Run)" "$log_dir/ctest.log")
failed=$(grep -cE "^ *[0-9]+/[0-9]+ Test +#.*\*\*\*(Failed|Exception|Timeout)" "$log_dir/ctest.log")
passed=$((total - skipped - failed))

# The demo, if this build has the command.
demo="absent (this build has no 'warpforge demo')"
demo_rc=0
if "$build_dir/warpforge" --help 2>/dev/null | grep -qE "^  demo "; then
  "$build_dir/warpforge" demo >"$log_dir/demo.log" 2>&1
  demo_rc=$?
  cat "$log_dir/demo.log"
  demo=$([ $demo_rc -eq 0 ] && echo "ok" || echo "FAILED (exit $demo_rc, log: $log_dir/demo.log)")
fi

# The Python package's suite, started before the GPU tests.
python_summary="absent (no nanobind for python3: the extension module was not built)"
python_rc=0
if [ -n "$python_pid" ]; then
  wait "$python_pid"
  python_rc=$?
  grep -E "^[0-9]+: (SKIPPED|FAILED|ERROR)" "$log_dir/python.log"
  # One result per ctest entry of the label (python_tests, python_plot, ...):
  # ctest -V prefixes each line of a test's output with its number, and its
  # status line ("1/2 Test #1753: python_tests ...") pairs number and name.
  python_summary=
  while read -r number name verdict; do
    pytest_line="$(grep -E "^$number: " "$log_dir/python.log" |
                   grep -oE "[0-9]+ (passed|failed|skipped|errors?|deselected)[^=]*" | tail -1 | sed "s/ *$//")"
    [ "$verdict" = Passed ] || pytest_line="FAILED${pytest_line:+: $pytest_line}"
    python_summary+="${python_summary:+; }$name ${pytest_line:-no pytest summary}"
  done < <(sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#([0-9]+): ([^ ]+) [ .*]*([A-Za-z]+).*/\1 \2 \3/p' "$log_dir/python.log")
  [ $python_rc -ne 0 ] && python_summary="FAILED: ${python_summary:-no summary} (log: $log_dir/python.log)"
fi

status=PASS
[ "$tests_rc" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$demo_rc" -ne 0 ] || [ "$python_rc" -ne 0 ] && status=FAIL
echo "gpu-check: $status on $gpu_name: gpu tests $passed passed, $failed failed, $skipped skipped of $total; demo $demo; python $python_summary"
[ "$status" = PASS ]
