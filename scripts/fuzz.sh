#!/usr/bin/env bash
# Runs a fuzz target for as long as asked:
#   scripts/fuzz.sh parse|transpile [SECONDS (default 600)]
# With clang++ (CXX, default clang++-14) and target `parse`, the parser is
# built with libFuzzer, ASan and UBSan into build-fuzz/ and fuzzed with
# coverage guidance; otherwise the target's standalone driver from the CMake
# build (build/tests/fuzz_<target>) mutates the corpus at random. Both start
# from tests/fuzz/corpus and tests/fuzz/regressions. A crash leaves its input
# in build-fuzz/ (libFuzzer: crash-<hash>; driver: <target>-crash-input):
# add it to tests/fuzz/regressions so that `make test` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh parse|transpile [seconds]}
seconds=${2:-600}
case "$target" in parse|transpile) ;; *) echo "fuzz.sh: unknown target '$target'; accepted: parse, transpile" >&2; exit 2 ;; esac
out=build-fuzz
mkdir -p "$out/corpus"
CXX=${CXX:-clang++-14}
if [ "$target" = parse ] && command -v "$CXX" >/dev/null; then
  "$CXX" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Iinclude -Isrc/ptx tests/fuzz/parse_fuzzer.cpp src/ptx/*.cpp -o "$out/parse_fuzzer"
  exec "$out/parse_fuzzer" -max_len=16384 -timeout=10 -max_total_time="$seconds" \
    "$out/corpus" tests/fuzz/corpus tests/fuzz/regressions
fi
cmake --build build --target "fuzz_$target" >/dev/null
exec "build/tests/fuzz_$target" --seconds "$seconds" --crash-file "$out/$target-crash-input" \
  tests/fuzz/corpus tests/fuzz/regressions
