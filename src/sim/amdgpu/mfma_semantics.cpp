#include "mfma_semantics.hpp"

namespace warpforge::sim::amdgpu {

// For one block of an M x N x K MFMA with M = N = 32 or 16 (wave64):
//  A (M x K): lane = i + M * (k / 4), element k % 4 of the lane's four values;
//  B (K x N): lane = j + N * (k / 4), element k % 4;
//  C/D (M x N): lane = j + N * ((i / 4) % (64 / N)), register
//    4 * (i / (4 * 64 / N)) + i % 4 (32x32: 16 registers, rows in groups of
//    four alternating between the wave's two halves; 16x16: 4 registers,
//    each quarter of the wave holding four consecutive rows).
LaneSlot mfma_a(warpforge::amdgpu::Mfma m, int i, int k) {
  int rows = warpforge::amdgpu::info(m).m;
  return {i + rows * (k / 4), k % 4};
}

LaneSlot mfma_b(warpforge::amdgpu::Mfma m, int k, int j) {
  int cols = warpforge::amdgpu::info(m).n;
  return {j + cols * (k / 4), k % 4};
}

LaneSlot mfma_c(warpforge::amdgpu::Mfma m, int i, int j) {
  int cols = warpforge::amdgpu::info(m).n;
  int groups = 64 / cols;  // lane groups stacked down the rows: 2 (32x32) or 4 (16x16)
  return {j + cols * ((i / 4) % groups), 4 * (i / (4 * groups)) + i % 4};
}

}  // namespace warpforge::sim::amdgpu
