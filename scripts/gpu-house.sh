#!/usr/bin/env bash
# The house branch's check on a GPU machine (issue 42, build time): does the
# ops layer at -O1 (WARPFORGE_OPS_O1, which `make` builds use to save compile
# time) cost host time a call? scripts/decode_host_cost.py (attention
# decode from torch: host us a call of the public function, the dispatcher
# and execute_addresses alone) on BUILD_DIR's Python module (the default
# -O2 build, already built) and on one built here with the ops layer at -O1
# (O1_DIR: a fresh build of the module alone, no tests, no benchmarks).
# -O2 is measured first, then the -O1 module built and measured. Writes
# logs to $OUT and prints both runs' lines last.
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
  PYTHONPATH="$1/python:$PWD/python" timeout 20 python3 scripts/decode_host_cost.py >"$2" 2>&1
}
host_cost "$build_dir" "$out/o2.txt"

start=$SECONDS
{ cmake -S . -B "$o1_dir" "${cmake_args[@]}" -DWARPFORGE_OPS_O1=ON -DWARPFORGE_TESTS=OFF -DWARPFORGE_BENCH=OFF &&
  cmake --build "$o1_dir" -j "$jobs" --target warpforge_python; } >"$out/o1-build.log" 2>&1
o1_rc=$?
echo "ops -O1 module: build rc=$o1_rc in $((SECONDS - start)) s" | tee "$out/summary.txt"
[ $o1_rc -eq 0 ] && host_cost "$o1_dir" "$out/o1.txt"
for level in o2 o1; do
  echo "== ops at -${level^^}"
  grep -E "^batch|^step" "$out/$level.txt" 2>/dev/null || tail -3 "$out/$level.txt" 2>/dev/null
done | tee -a "$out/summary.txt"
