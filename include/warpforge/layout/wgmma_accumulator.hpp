// The f32 accumulator of wgmma.mma_async.m64nNk16 (PTX ISA 9.7.15.5.1.1.1,
// "Matrix Fragments for wgmma.mma_async.m64nNk16", Figure 149): N/2 registers
// per thread of the warpgroup. Warp w owns rows 16w .. 16w+15; within them
// each 8-column chunk is laid out like the mma.sync m16n8 accumulator:
//   row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2)
//   col = 8 * (i / 4) + 2 * (lane % 4) + i % 2
#pragma once

#include <cstdint>

#include "warpforge/layout/fragment.hpp"

namespace warpforge::layout {

// (lane, warp, value) -> (row, col) of the 64 x N tile. Throws LayoutError
// unless N is a multiple of 8 in [8, 256].
Fragment wgmma_accumulator(int64_t n);

}  // namespace warpforge::layout
