// AMD CDNA v_mfma_f32_32x32x8 bf16 (wave64; gfx90a v_mfma_f32_32x32x8bf16_1k,
// gfx942 v_mfma_f32_32x32x8_bf16), per the AMD CDNA ISA matrix-instruction
// operand tables as summarised in REFERENCE.md:
//   A[i][k] (32 x 8): lane = 32 * (k / 4) + i, value k % 4 (four bf16, 2 VGPRs)
//   B[k][j] (8 x 32): lane = 32 * (k / 4) + j, value k % 4
//   C/D[i][j] (32 x 32, f32): VGPR r of lane l holds i = 8(r/4) + 4(l/32) + r%4, j = l % 32
#pragma once

#include <string>

#include "warpforge/layout/fragment.hpp"

namespace warpforge::layout {

struct MfmaAtom {
  std::string name;
  int64_t m, n, k;
  Fragment a;
  Fragment b;
  Fragment c;
};

MfmaAtom mfma_f32_32x32x8_bf16();

}  // namespace warpforge::layout
