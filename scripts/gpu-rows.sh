#!/usr/bin/env bash
# Every row op's kernels (forward and backward, rms_norm_quantize's three
# formats) against the device-to-device copy of the same bytes, at rows
# 4096, 32768 x hidden 4096, 8192 (cross-entropy at vocabulary 131072),
# first; then the GPU tests of the kernels being tuned, Nsight Compute on
# $NCU_CASES, and (WITH_PYTHON=1) warpforge.bench_rows. It is
# scripts/gpu-membound.sh's quick mode with these stages chosen (its
# variables override them); BUDGET_S defaults to 53 for a 55 s window.
#
#   OUT=/tmp/out scripts/gpu-rows.sh
#   WITH_PYTHON=1 BUDGET_S=63 OUT=/tmp/out scripts/gpu-rows.sh   # a 65 s window, bench_rows after the table
set -uo pipefail
cd "$(dirname "$0")/.."
# (the largest gaps first: a hard timeout keeps the rows printed)
every_op=rms_nvfp4,rms_mxfp4,layer_bwd,ce,layer,rms,rms_mxfp8,rms_bwd,softmax,softmax_bwd,swiglu,swiglu_bwd
python_ops=""
[ -n "${WITH_PYTHON:-}" ] && python_ops=ce,rms,rms_bwd,layer,layer_bwd
export OPS="${OPS-$every_op}" CPP_SHARE="${CPP_SHARE-62}" TESTS_SHARE="${TESTS_SHARE-40}" NCU_SHARE="${NCU_SHARE-95}" BUDGET_S="${BUDGET_S-53}" PY_OPS="${PY_OPS-$python_ops}" \
  OPS_TESTS="${OPS_TESTS-NormQuantizeGpu.TheSimulatorsCases:NormGpu.TheSimulatorsCases:CrossEntropyGpu.TheSimulatorsCases:SoftmaxGpu.TheSimulatorsCases}" \
  NCU_CASES="${NCU_CASES-layer_norm_backward:layer_bwd:4096:8192}" HOST_COST="${HOST_COST-}" PY_TESTS="${PY_TESTS-}"
exec scripts/gpu-membound.sh
