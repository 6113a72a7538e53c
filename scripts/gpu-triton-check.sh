#!/usr/bin/env bash
# The second GPU window of issue 45's session 3 (about 80 s of an H100/H200):
#  1. scripts/tensormap_probe.py: which part of the kernel-built tensor map
#     kernel the GPU refuses (each variant in its own process; seconds);
#  2. the difftest families float_approx on new inputs (seed 20261129: the
#     simulator's multifunction-unit tables, found from the window-1 sweep,
#     checked out of sample) and triton_ptx (its built-map kernel now loads
#     into .shared::cluster), written to $OUT/gpu_truth/;
#  3. Triton's persistent_matmul_device_descriptor tutorial, both targets
#     (scripts/gpu-triton.sh PART=tutorials CASES=..., which sets Triton's
#     allocator for its own launch), into $OUT/tests/gpu_truth/triton.
# Everything it writes is small (the window-1 output was lost to a size limit).
#
#   OUT=/path scripts/gpu-triton-w2.sh      BUILD_DIR (default build) as gpu-difftest-tool.sh;
#                                           DEVICE=sim records on the simulator (the self-test)
set -uo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-$PWD/gpu-triton-out}"
build_dir="${BUILD_DIR:-build}"
start=$(date +%s)
mkdir -p "$out/gpu_truth/seed20261129"

fail() {
  echo "gpu-triton-w2: FAIL: $*"
  exit 1
}

echo "== tensormap probe"
timeout 60 python3 scripts/tensormap_probe.py
echo "gpu-triton-w2: probed in $(($(date +%s) - start)) s"

source scripts/gpu-difftest-tool.sh
echo "gpu-triton-w2: built in $(($(date +%s) - start)) s"
timeout 40 "$tool" record --device "${DEVICE:-cuda}" --out "$out/gpu_truth/seed20261129" --family float_approx --seed 20261129 |
  grep -v "^  refused"
timeout 40 "$tool" record --device "${DEVICE:-cuda}" --out "$out/gpu_truth" --family triton_ptx
"$tool" replay --truth "$out/gpu_truth/seed20261129" --family float_approx | tail -3
"$tool" replay --truth "$out/gpu_truth" --family triton_ptx | tail -3
echo "gpu-triton-w2: difftest in $(($(date +%s) - start)) s"

echo "== persistent_matmul_device_descriptor"
OUT="$out" PART=tutorials CASES=persistent_matmul_device_descriptor FAMILIES_TOO=0 BUDGET=100 \
  bash scripts/gpu-triton.sh 2>&1 | tail -8
echo "gpu-triton-w2: done in $(($(date +%s) - start)) s"
