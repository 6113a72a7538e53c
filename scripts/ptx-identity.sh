#!/usr/bin/env bash
# The PTX hash of every sm90a kernel configuration that tests, heuristics,
# autotuning and benchmarks build (scripts/ptx_identity.cpp says which), to
# show that a refactoring left the emitted PTX alone:
#
#   scripts/ptx-identity.sh > before.txt     # on the commit before the change
#   scripts/ptx-identity.sh > after.txt      # after it
#   diff before.txt after.txt                # nothing: identical PTX
#
# Usage: scripts/ptx-identity.sh [--build DIR] [--dump PTX_DIR]
# Builds the libraries it links (warpforge_ops, warpforge_sim) in DIR
# (default build/, configured as the README says), then the program beside
# them, and prints one line per kernel and a last line with the count and a
# hash over all. --dump also writes each kernel's PTX to PTX_DIR.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --dump) args+=(--dump "$2"); shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--dump PTX_DIR]" >&2; exit 2 ;;
  esac
done
cmake --build "$build" -j2 --target warpforge_ops warpforge_sim >&2
dlpack=$(sed -n 's/^WARPFORGE_DLPACK_INCLUDE_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
program=$build/ptx_identity
libs=()
for layer in ops sim tile dsl layout runtime ptx; do libs+=("$build/libwarpforge_$layer.a"); done
c++ -std=c++20 -O1 -I"$root/include" -I"$build/generated" ${dlpack:+-I"$dlpack"} \
  "$root/scripts/ptx_identity.cpp" -o "$program" "${libs[@]}" -lpthread -ldl
"$program" "${args[@]}"
