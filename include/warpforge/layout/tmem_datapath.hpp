// The data-path layouts of tcgen05.ld and tcgen05.st (PTX ISA 9.7.16.2.3.1,
// "Matrix fragments", Figures 183-186): which tensor-memory cell each
// register of each thread of a warp holds. Rows are lanes of tensor memory
// counted from the address's lane; columns are 32-bit columns counted from
// the address's column. Register i of lane t, for .num = N:
//   32x32b   (32 rows, N cols):   row t,                      col i
//   16x64b   (16 rows, 2N cols):  row t/4 + 8*(t%2),          col 2i + (t/2)%2
//   16x128b  (16 rows, 4N cols):  row t/4 + 8*(i%2),          col 4*(i/2) + t%4
//   16x256b  (16 rows, 8N cols):  row t/4 + 8*((i%4)/2),      col 8*(i/4) + 2*(t%4) + i%2
// (The ISA gives these as figures; their reading here was cross-checked with
// CUTLASS's tensor-memory copy traits, cute/atom/copy_traits_sm100.hpp.)
// A warp reaches only its own 32-lane quarter of tensor memory (warp w of the
// CTA: lanes 32*(w%4) .. +31), so the address's lane is in that quarter, and
// for the 16-lane shapes the 16 rows lie in it too.
#pragma once

#include <cstdint>

#include "warpforge/layout/fragment.hpp"

namespace warpforge::layout {

enum class TmemDataPath { lanes32_bits32, lanes16_bits64, lanes16_bits128, lanes16_bits256 };

// (lane, value) -> (row, col) for `num` repetitions. Throws LayoutError unless
// num is a power of two up to the shape's largest (128, 128, 64, 32).
Fragment tmem_datapath(TmemDataPath shape, int64_t num);

}  // namespace warpforge::layout
