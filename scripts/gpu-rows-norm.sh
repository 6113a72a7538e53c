#!/usr/bin/env bash
# The normalizations (RMSNorm, LayerNorm) forward and backward on a GPU
# machine: scripts/gpu-rows.sh (gpu-membound.sh's quick mode) with these
# stages (its variables override them). First the C++ table, ours against
# the device-to-device copy of the same bytes at rows 4096, 32768 x hidden
# 4096, 8192; then the norms' GPU tests (each simulator case on the device);
# warpforge.bench_rows (ours against PyTorch eager and Liger Kernel) over
# $PY_OPS (the four, rows 4096 and 32768, hidden 4096); then Nsight Compute
# on LayerNorm's backward kernel and its column sums at 4096 x 4096 at the
# GPU's own clocks with a warm L2 (NCU_FLAGS: each kernel's time as the
# benchmark runs it, not at ncu's locked clock after a cache flush).
# BUDGET_S defaults to 53 for a 55 s window.
#
#   OUT=/tmp/out BUILD_DIR=/tmp/wb scripts/gpu-rows-norm.sh
#   PY_OPS= BUDGET_S=47 ...   a 50 s window without the Python table
set -uo pipefail
cd "$(dirname "$0")/.."
norm_ncu="layer_norm_backward:layer_bwd:4096:4096 norm_column_sum:layer_bwd:4096:4096"
OPS="${OPS-layer_bwd,rms_bwd,layer,rms}" BUDGET_S="${BUDGET_S-53}" OPS_TESTS="${OPS_TESTS-NormGpu.TheSimulatorsCases}" \
  PY_OPS="${PY_OPS-rms_bwd,layer_bwd,rms,layer}" NCU_CASES="${NCU_CASES-$norm_ncu}" \
  NCU_FLAGS="${NCU_FLAGS---clock-control none --cache-control none}" exec scripts/gpu-rows.sh
