#!/usr/bin/env bash
# Every row op's kernels (forward and backward, rms_norm_quantize's three
# formats) against the device-to-device copy of the same bytes, at rows
# 4096, 32768 x hidden 4096, 8192 (cross-entropy at vocabulary 131072),
# first; then the GPU tests of the kernels being tuned; warpforge.bench_rows
# (ours against PyTorch eager and Liger Kernel) over $PY_OPS; Nsight Compute
# on $NCU_CASES. It is scripts/gpu-membound.sh's quick mode with these
# stages chosen (its variables override them); BUDGET_S defaults to 63 for
# a 65 s window.
#
#   OUT=/tmp/out scripts/gpu-rows.sh
#   PY_OPS= BUDGET_S=53 OUT=/tmp/out scripts/gpu-rows.sh   # a 55 s window, without bench_rows
set -uo pipefail
cd "$(dirname "$0")/.."
# (the largest gaps first: a hard timeout keeps the rows printed)
every_op=rms_nvfp4,rms_mxfp4,layer_bwd,ce,layer,rms,rms_mxfp8,rms_bwd,softmax,softmax_bwd,swiglu,swiglu_bwd
export OPS="${OPS-$every_op}" BUDGET_S="${BUDGET_S-63}" CPP_SHARE="${CPP_SHARE-40}" \
  OPS_TESTS="${OPS_TESTS-NormGpu.TheSimulatorsCases:CrossEntropyGpu.TheSimulatorsCases}" TESTS_SHARE="${TESTS_SHARE-35}" \
  PY_OPS="${PY_OPS-rms_bwd,layer_bwd,layer,rms,ce}" PY_SHARE="${PY_SHARE-85}" \
  NCU_CASES="${NCU_CASES-layer_norm_backward:layer_bwd:4096:8192 warpforge_cross_entropy\$:ce:4096:131072}" \
  NCU_SHARE="${NCU_SHARE-60}" HOST_COST="${HOST_COST-}" PY_TESTS="${PY_TESTS-}"
exec scripts/gpu-membound.sh
