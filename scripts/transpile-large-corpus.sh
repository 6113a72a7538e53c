#!/usr/bin/env bash
# The transpiler's round trip over every corpus file (tests/corpus: nvcc's
# output for each source and flag set, Triton's where it is installed), where
# `make test` takes a representative set (tests/transpiler/transpiler.cmake,
# WARPFORGE_TRANSPILE_LARGE_CORPUS): the debug builds of CUB's algorithms
# transpile to C++ of tens of thousands of lines, and compiling all of it
# takes GCC about 13 minutes of CPU (6 to 7 on two idle cores; measured
# numbers in docs/TRANSPILER.md). Builds test_transpiler with
# all of them in a separate build folder and runs its round-trip tests: each
# rebuilt module must equal the parsed PTX and assemble to its machine code.
# Prints the table of docs/TRANSPILER.md (file, instructions, raw calls left,
# round trip). Needs nvcc.
#
#   scripts/transpile-large-corpus.sh        # BUILD_DIR (default build-large), JOBS (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build-large}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_TRANSPILE_LARGE_CORPUS=ON "${launcher[@]}"
# The library, the generator and the corpus first, so that the times below
# are the transpiled corpus's (and the test's few own sources).
cmake --build "$build_dir" -j "${JOBS:-2}" --target write_transpiled_sources ptx_corpus
# Wall and CPU time (user + sys, of all jobs) of each step, on stderr.
TIMEFORMAT="%R s wall, %U s user, %S s sys"
echo "transpile the corpus and compile the C++ (${JOBS:-2} jobs):" >&2
time cmake --build "$build_dir" -j "${JOBS:-2}" --target test_transpiler
status=0
echo "round trips (rebuild, compare, ptxas):" >&2
time "$build_dir/tests/test_transpiler" --gtest_filter='TranspilerRoundTrip.*' >"$build_dir/transpile-corpus.log" 2>&1 || status=$?
echo "| file | instructions | raw calls left | round trip |"
echo "|---|---:|---:|---|"
grep '^| ' "$build_dir/transpile-corpus.log" | sort
[ "$status" -eq 0 ] || { grep -E 'Failure|FAILED' -A3 "$build_dir/transpile-corpus.log" >&2; exit "$status"; }
