#!/usr/bin/env bash
# The normalizations (RMSNorm, LayerNorm) forward and backward on a GPU
# machine: scripts/gpu-rows.sh (gpu-membound.sh's quick mode) with these
# stages (its variables override them). First the C++ table, ours against
# the device-to-device copy of the same bytes at rows 4096, 32768 x hidden
# 4096, 8192; then the norms' GPU tests (each simulator case on the device);
# with PY_OPS set, warpforge.bench_rows (ours against PyTorch eager and
# Liger Kernel) over those ops; then Nsight Compute (the stalls, occupancy,
# DRAM rate) on LayerNorm's backward kernel and its column sums at 4096 x
# 4096 (the farthest from the copy) and RMSNorm's forward at 32768 x 4096.
# BUDGET_S defaults to 47 for a 50 s window.
#
#   OUT=/tmp/out BUILD_DIR=/tmp/wb scripts/gpu-rows-norm.sh
#   PY_OPS=rms_bwd,layer_bwd,rms,layer BUDGET_S=53 ...   a 55 s window with the Python table
set -uo pipefail
cd "$(dirname "$0")/.."
norm_ncu="layer_norm_backward:layer_bwd:4096:4096 norm_column_sum:layer_bwd:4096:4096 warpforge_rms_norm\$:rms:32768:4096"
OPS="${OPS-layer_bwd,rms_bwd,layer,rms}" BUDGET_S="${BUDGET_S-47}" OPS_TESTS="${OPS_TESTS-NormGpu.TheSimulatorsCases}" \
  PY_OPS="${PY_OPS-}" NCU_CASES="${NCU_CASES-$norm_ncu}" exec scripts/gpu-rows.sh
