#!/usr/bin/env bash
# The transpiler's round trip over the corpus files too large for `make test`
# (tests/transpiler/transpiler.cmake, WARPFORGE_TRANSPILE_LARGE_CORPUS): CUB's
# device radix sort, whose transpiled C++ takes GCC minutes to compile. Builds
# test_transpiler with them in a separate build folder and runs its round-trip
# tests: each rebuilt module must equal the parsed PTX. Needs nvcc.
#
#   scripts/transpile-large-corpus.sh        # BUILD_DIR (default build-large), JOBS (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${BUILD_DIR:-build-large}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWARPFORGE_TRANSPILE_LARGE_CORPUS=ON
cmake --build "$build_dir" -j "${JOBS:-2}" --target test_transpiler
"$build_dir/tests/test_transpiler" --gtest_filter='TranspilerRoundTrip.*'
