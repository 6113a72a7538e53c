// Matrix A of wgmma.mma_async held in registers (PTX ISA 9.7.15.5.1.1,
// "Register Fragments": Figure 148 for m64nNk16 with .f16/.bf16, and the
// m64nNk32 figure for .e4m3/.e5m2): four .b32 registers per thread of the
// warpgroup, elements packed low to high. Warp w owns rows 16w .. 16w+15 of
// the 64 x K tile and lays them out like the mma.sync m16n8 A operand of the
// same element width (16 x 16 for 16-bit, 16 x 32 for 8-bit elements):
//   16-bit, a0..a7:  row = 16w + lane/4 + 8 * ((i / 2) % 2)
//                    col = 2 * (lane % 4) + i % 2 + 8 * (i / 4)
//   8-bit, a0..a15:  row = 16w + lane/4 + 8 * ((i / 4) % 2)
//                    col = 4 * (lane % 4) + i % 4 + 16 * (i / 8)
#pragma once

#include "warpforge/layout/fragment.hpp"

namespace warpforge::layout {

// (lane, warp, value) -> (row, col) of the 64 x K tile, K = 256 /
// element_bits. Throws LayoutError unless element_bits is 16 (bf16, f16:
// m64nNk16) or 8 (e4m3, e5m2: m64nNk32).
Fragment wgmma_a_fragment(int element_bits);

}  // namespace warpforge::layout
