#!/usr/bin/env bash
# The house branch's check on a GPU machine (issue 42, build time): do
# `make`'s levels (WARPFORGE_QUICK_BUILD: the kernel-building layers at -O1,
# the ops layer at -O0, to save compile time) cost host time a call?
# scripts/decode_host_cost.py (attention decode from torch: host us a call
# of the public function, the dispatcher and execute_addresses alone) on BUILD_DIR's Python module (the default
# -O2 build, already built) and on one built here with `make`'s levels
# (O1_DIR: a fresh build of the module alone, no tests, no benchmarks).
# That module is built first, then both measured twice, alternately.
# Writes logs to $OUT and prints the runs' lines last.
#
#   BUILD_DIR=/tmp/wb OUT=/tmp/out scripts/gpu-house.sh
set -uo pipefail
cd "$(dirname "$0")/.."

build_dir="${BUILD_DIR:-build}"
out="${OUT:-$build_dir/gpu-house}"
o1_dir="${O1_DIR:-/tmp/warpforge-ops-o1}"
jobs="${JOBS:-$(nproc)}"
mkdir -p "$out"
source scripts/gpu-build-args.sh

host_cost() {  # $1: the build whose module runs, $2: the log
  PYTHONPATH="$1/python:$PWD/python" timeout 15 python3 scripts/decode_host_cost.py >"$2" 2>&1
}

# The quick-build module alone (torch's kernels, _warpforge_torch, hold no ops code:
# BUILD_DIR's copy is used).
start=$SECONDS
{ cmake -S . -B "$o1_dir" "${cmake_args[@]}" -DWARPFORGE_QUICK_BUILD=ON -DWARPFORGE_TESTS=OFF -DWARPFORGE_BENCH=OFF &&
  cmake --build "$o1_dir" -j "$jobs" --target _warpforge &&
  cp "$build_dir"/python/warpforge/_warpforge_torch*.so "$o1_dir/python/warpforge/"; } >"$out/o1-build.log" 2>&1
o1_rc=$?
echo "quick-build module: build rc=$o1_rc in $((SECONDS - start)) s" | tee "$out/summary.txt"
[ $o1_rc -eq 0 ] || exit 1
# Alternately, so that a drift of the machine's speed shows in both (window
# 1's single pair moved even the pure-Python steps 2x).
for run in 1 2; do
  host_cost "$build_dir" "$out/o2-$run.txt"
  host_cost "$o1_dir" "$out/o1-$run.txt"
done
for run in 1 2; do
  for level in o2 o1; do
    echo "== run $run, $([ $level = o2 ] && echo "all at -O2" || echo "make's levels")"
    grep -E "^batch|^step" "$out/$level-$run.txt" 2>/dev/null || tail -3 "$out/$level-$run.txt" 2>/dev/null
  done
done | tee -a "$out/summary.txt"
