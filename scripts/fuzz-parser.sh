#!/usr/bin/env bash
# Builds the PTX parser's libFuzzer target with clang and runs it.
#   scripts/fuzz-parser.sh [libFuzzer options...]   e.g. -max_total_time=600
# Seeds: the nvcc corpus from a CMake build (build/ptx_corpus) when present.
# Crashes land in build-fuzz/ as crash-* files; rerun one with
#   build-fuzz/parse_fuzzer build-fuzz/crash-<hash>
set -euo pipefail
cd "$(dirname "$0")/.."
CXX=${CXX:-clang++-14}
out=build-fuzz
mkdir -p "$out/corpus"
"$CXX" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iinclude -Isrc/ptx tests/fuzz/parse_fuzzer.cpp src/ptx/*.cpp -o "$out/parse_fuzzer"
seeds=()
[ -d build/ptx_corpus ] && seeds+=(build/ptx_corpus)
exec "$out/parse_fuzzer" -max_len=16384 -timeout=10 "$@" "$out/corpus" "${seeds[@]}"
