#!/usr/bin/env bash
# The GPU check of issue 45 this session (about 60 s of an H100/H200 with
# torch and Triton; BUILD_DIR already built, so its builds here are no-ops):
#  1. the Triton driver's Python tests that failed on the GPU machine
#     (python/tests/test_triton_driver.py: a fault's source line through
#     Triton 3.6's debug information; WARPFORGE_TRITON with a GPU present),
#     first, their summary printed as soon as they end;
#  2. scripts/tensormap_probe.py, beside them: the kernel-built tensor map
#     kernel through the driver alone, in the ways the difftest unit
#     triton_ptx launches it differently (cuLink with CU_JIT_TARGET,
#     negative and wholly outside coordinates, its 64 launches);
#  3. the multifunction unit's sweep of lg2 and tanh .approx.f32 (the
#     others are recorded: docs/SIMULATOR.md), also beside them, packed as
#     $OUT/mufu/<function>.npz (tanh per set where one file would pass
#     15 MiB).
# Logs: $OUT/pytest.txt, $OUT/probe.txt, $OUT/mufu/sweep.txt.
#
#   OUT=/path BUILD_DIR=/path scripts/gpu-triton-check.sh
#   (defaults: ./gpu-triton-out and build; DEVICE=sim sweeps on the simulator, the self-test)
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-$PWD/gpu-triton-out}"
build_dir="${BUILD_DIR:-build}"
python="${PYTHON:-python3}"
start=$(date +%s)
mkdir -p "$out/mufu"
since() { echo "$(($(date +%s) - start)) s"; }

fail() {
  echo "gpu-triton-check: FAIL: $*"
  exit 1
}

# 3 (its build a no-op) and 2 start first, in the background.
source scripts/gpu-difftest-tool.sh
sweep="$build_dir/mufu-sweep-check"
rm -rf "$sweep"
( timeout 50 "$tool" mufu --device "${DEVICE:-cuda}" --out "$sweep" --function lg2 --function tanh &&
    "$python" scripts/pack_mufu_sweep.py "$sweep" "$out/mufu" ) >"$out/mufu/sweep.txt" 2>&1 &
sweep_pid=$!
timeout 40 "$python" scripts/tensormap_probe.py >"$out/probe.txt" 2>&1 &
probe_pid=$!

# 1.
PYTHONPATH="$build_dir/python:$PWD/python${PYTHONPATH:+:$PYTHONPATH}" timeout 45 "$python" -m pytest -q -rA \
  -p no:cacheprovider python/tests/test_triton_driver.py \
  -k "shared_memory_race or environment_variable or debug_information" >"$out/pytest.txt" 2>&1
echo "== 1. python tests (rc $?, $(since)):"
grep -E "^(PASSED|FAILED|ERROR)|passed|failed" "$out/pytest.txt" | tail -8

wait $probe_pid
echo "== 2. tensormap probe ($(since)):"
grep -E "^[a-z0-9_]+: " "$out/probe.txt"

wait $sweep_pid
echo "== 3. mufu sweep of lg2, tanh (rc $?, $(since)):"
grep -E "^mufu: |MiB|FAIL|rror" "$out/mufu/sweep.txt" | sed 's/, [0-9.]* s$//'
echo "gpu-triton-check: done in $(since)"
