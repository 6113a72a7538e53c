#!/usr/bin/env bash
# The GPU check of issue 45 this session (60 to 75 s of an H100/H200 with
# torch and Triton; BUILD_DIR already built, so its builds here are no-ops):
#  1. the Triton driver's Python tests that failed on the GPU machine
#     (python/tests/test_triton_driver.py: a fault's source line through
#     Triton 3.6's debug information; WARPFORGE_TRITON with a GPU present),
#     first, their summary printed as soon as they end;
#  2. the difftest family triton_ptx recorded and replayed: ptxas's
#     contraction of products with sums (src/sim/contraction.hpp), out of
#     sample, and the kernel-built tensor map unit;
#  3. scripts/tensormap_probe.py: that kernel through the driver alone, in
#     the ways the difftest unit launches it differently (cuLink with
#     CU_JIT_TARGET, negative and outside coordinates, its 64 launches);
#  4. the multifunction unit's sweep of tanh.approx.f32 (the others are
#     recorded: docs/SIMULATOR.md): every x = k·2^-20 in [2^-10, 16), where
#     the first sweep showed the unit reads x to 2^-20, and the start of
#     every binade, packed as $OUT/mufu/tanh*.npz.
# 2-4 run beside 1. $OUT: log.txt (every log), gpu_truth/triton_ptx.truth,
# mufu/tanh.npz (or one .npz per set past 15 MiB).
#
#   OUT=/path BUILD_DIR=/path scripts/gpu-triton-check.sh
#   (defaults: ./gpu-triton-out and build; DEVICE=sim records on the simulator, the self-test)
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-$PWD/gpu-triton-out}"
build_dir="${BUILD_DIR:-build}"
python="${PYTHON:-python3}"
device="${DEVICE:-cuda}"
start=$(date +%s)
since() { echo "$(($(date +%s) - start)) s"; }
fail() {
  echo "gpu-triton-check: FAIL: $*"
  exit 1
}

source scripts/gpu-difftest-tool.sh  # a no-op build where BUILD_DIR is built
logs="$build_dir/gpu-triton-check"
rm -rf "$logs"
mkdir -p "$logs" "$out/mufu" "$out/gpu_truth"
( timeout 30 "$tool" record --device "$device" --out "$out/gpu_truth" --family triton_ptx &&
    "$tool" replay --truth "$out/gpu_truth" --family triton_ptx ) >"$logs/triton_ptx.txt" 2>&1 &
family_pid=$!
timeout 40 "$python" scripts/tensormap_probe.py >"$logs/probe.txt" 2>&1 &
probe_pid=$!
( timeout 50 "$tool" mufu --device "$device" --out "$logs/sweep" --function tanh &&
    "$python" scripts/pack_mufu_sweep.py "$logs/sweep" "$out/mufu" ) >"$logs/mufu.txt" 2>&1 &
sweep_pid=$!

PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}" timeout 52 "$python" -m pytest -q -rA \
  -p no:cacheprovider python/tests/test_triton_driver.py \
  -k "shared_memory_race or environment_variable" >"$logs/pytest.txt" 2>&1
echo "== 1. python tests (rc $?, $(since)):"
grep -E "^(PASSED|FAILED|ERROR) |[0-9]+ (passed|failed)" "$logs/pytest.txt" | tail -8

wait $family_pid
echo "== 2. difftest family triton_ptx (rc $?, $(since)):"
grep -vE "^\s*$" "$logs/triton_ptx.txt" | tail -12

wait $probe_pid
echo "== 3. tensormap probe ($(since)):"
grep -E "^[a-z0-9_]+: " "$logs/probe.txt"

wait $sweep_pid
echo "== 4. mufu sweep of tanh (rc $?, $(since)):"
grep -E "^mufu: |^pack: |FAIL|rror" "$logs/mufu.txt" | sed 's/, [0-9.e-]* s$//'
for f in pytest triton_ptx probe mufu; do echo "==== $f"; cat "$logs/$f.txt"; done >"$out/log.txt"
echo "gpu-triton-check: done in $(since)"
