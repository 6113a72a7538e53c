#!/usr/bin/env bash
# Records the H100/H200 multifunction unit's f32 results over their whole
# input domains (issue 45): builds only warpforge-difftest and runs its
# `mufu` sweep (tools/difftest/mufu_sweep.hpp: rcp, sqrt, rsqrt, ex2, lg2
# .approx.f32, every mantissa of one or two binades, and samples of the
# forms without .ftz and of div.full/div.approx), then packs each
# function's arrays into one compressed .npz (as np.savez_compressed writes):
#   $OUT/mufu/{rcp,sqrt,rsqrt,ex2,lg2,div}.npz     (6 files, under 16 MiB each)
# Per set, <set>.d is the GPU's result minus the correctly rounded one in
# ulps (int8; -128: see <set>.xi/<set>.xb), sets.txt the PTX forms and input rules.
#
#   OUT=/path scripts/gpu-triton-mufu.sh     (default OUT: ./gpu-triton-out)
#
# BUILD_DIR: an already configured build directory is only built (the
# warpforge_difftest_cli target); otherwise it is configured as
# scripts/gpu-build-args.sh says, as the other GPU scripts do (default build-mufu). JOBS (default nproc),
# DEVICE=sim (the self-test: every set then agrees with the correctly
# rounded results, which is what the simulator computes) and THIN=N (every
# Nth input) may be set. Needs the CUDA driver, CMake, a C++20 compiler and
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
mkdir -p "$out/mufu" "$build_dir"

fail() {
  echo "gpu-triton-mufu: FAIL: $*"
  exit 1
}

if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  # Configured as every GPU script configures (the directory may be shared).
  source scripts/gpu-build-args.sh
  [ -f "$gtest_source/CMakeLists.txt" ] || cmake_args+=(-DWARPFORGE_TESTS=OFF)
  cmake -S . -B "$build_dir" "${cmake_args[@]}" >"$build_dir/mufu-configure.log" 2>&1 ||
    { tail -20 "$build_dir/mufu-configure.log"; fail "cmake configure failed"; }
fi
cmake --build "$build_dir" -j "$jobs" --target warpforge_difftest_cli >"$build_dir/mufu-build.log" 2>&1 ||
  { grep -E "error|Error" "$build_dir/mufu-build.log" | head -20; fail "build of warpforge_difftest_cli failed"; }
echo "gpu-triton-mufu: built in $(($(date +%s) - start)) s"

rm -rf "$work"
"$build_dir/warpforge-difftest" mufu --device "$device" --out "$work" --thin "$thin" ||
  fail "the sweep failed (exit $?)"
echo "gpu-triton-mufu: swept in $(($(date +%s) - start)) s"

python3 - "$work" "$out/mufu" <<'EOF' || fail "packing failed"
import os, sys, zipfile
from concurrent.futures import ProcessPoolExecutor
work, out = sys.argv[1:]

def pack(folder):  # deflate, as np.savez_compressed writes
    path = os.path.join(out, folder + ".npz")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name in sorted(os.listdir(os.path.join(work, folder))):
            z.write(os.path.join(work, folder, name), name)
    return path, os.path.getsize(path)

with ProcessPoolExecutor() as pool:
    packed = list(pool.map(pack, sorted(os.listdir(work))))
for path, size in packed:
    print(f"gpu-triton-mufu: {path}: {size / 2**20:.2f} MiB" + ("  OVER 16 MiB" if size > 16 * 2**20 else ""))
print(f"gpu-triton-mufu: {sum(s for _, s in packed) / 2**20:.2f} MiB in all")
EOF
echo "gpu-triton-mufu: done in $(($(date +%s) - start)) s"
