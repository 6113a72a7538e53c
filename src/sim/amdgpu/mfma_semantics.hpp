// MFMA operand layouts, written from AMD's instruction tables (CDNA3 ISA,
// "Matrix Fused Multiply-Add" and AMD's Matrix Instruction Calculator for
// v_mfma_f32_32x32x8_{bf16,f16} and v_mfma_f32_16x16x16_{bf16,f16}), on
// purpose independently of layout/mfma_atom so that each checks the other.
#pragma once

#include "warpforge/amdgpu/mfma.hpp"

namespace warpforge::sim::amdgpu {

struct LaneSlot {
  int lane;
  int slot;  // the 16-bit element of A/B (0..3) or the f32 register of C/D
};

// Where A[i][k], B[k][j] and C/D[i][j] live.
LaneSlot mfma_a(warpforge::amdgpu::Mfma m, int i, int k);
LaneSlot mfma_b(warpforge::amdgpu::Mfma m, int k, int j);
LaneSlot mfma_c(warpforge::amdgpu::Mfma m, int i, int j);

}  // namespace warpforge::sim::amdgpu
