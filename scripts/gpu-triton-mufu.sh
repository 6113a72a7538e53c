#!/usr/bin/env bash
# Records the H100/H200 multifunction unit's f32 results over their whole
# input domains (issue 45): builds only warpforge-difftest and runs its
# `mufu` sweep (tools/difftest/mufu_sweep.hpp: rcp, sqrt, rsqrt, ex2, lg2,
# tanh .approx.f32, every mantissa of one or two binades, and samples of the
# forms without .ftz and of div.full/div.approx), then packs each
# function's arrays into one compressed .npz (scripts/pack_mufu_sweep.py):
#   $OUT/mufu/{rcp,sqrt,rsqrt,ex2,lg2,tanh,div}.npz   (under 16 MiB each)
# Per set, <set>.d is the GPU's result minus the correctly rounded one in
# ulps (int8; -128: see <set>.xi/<set>.xb), sets.txt the PTX forms and input rules.
#
#   OUT=/path scripts/gpu-triton-mufu.sh     (default OUT: ./gpu-triton-out)
#
# BUILD_DIR (default build-mufu): where warpforge-difftest is built
# (scripts/gpu-difftest-tool.sh). JOBS (default nproc),
# DEVICE=sim (the self-test; the simulator's sweep equals the H200's
# recording except for lg2, which it does not model) and THIN=N (every Nth
# input) may be set. Needs the CUDA driver, CMake, a C++20 compiler and
# python3 with numpy.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-$PWD/gpu-triton-out}"
build_dir="${BUILD_DIR:-build-mufu}"
jobs="${JOBS:-$(nproc)}"
device="${DEVICE:-cuda}"
thin="${THIN:-1}"
start=$(date +%s)
work="$build_dir/mufu-sweep"
mkdir -p "$out/mufu"

fail() {
  echo "gpu-triton-mufu: FAIL: $*"
  exit 1
}

source scripts/gpu-difftest-tool.sh
echo "gpu-triton-mufu: built in $(($(date +%s) - start)) s"

rm -rf "$work"
"$tool" mufu --device "$device" --out "$work" --thin "$thin" ||
  fail "the sweep failed (exit $?)"
echo "gpu-triton-mufu: swept in $(($(date +%s) - start)) s"

python3 scripts/pack_mufu_sweep.py "$work" "$out/mufu" || fail "packing failed"
echo "gpu-triton-mufu: done in $(($(date +%s) - start)) s"
