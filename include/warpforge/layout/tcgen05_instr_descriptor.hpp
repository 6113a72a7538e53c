// The 32-bit instruction descriptor of tcgen05.mma (PTX ISA 9.7.16.4.2,
// "Instruction descriptor"), which gives the MMA its shape, element types,
// majorness and negation. Two tables share one frame:
//
//   bits     .kind::f16 / tf32 / f8f6f4      .kind::mxf8f6f4 / mxf4 / mxf4nvf4
//   0-1      sparsity selector (0: dense)    reserved
//   2        sparsity (0: dense)             sparsity (0: dense)
//   3        saturate (integer kinds only)   reserved
//   4-5      D type: 0 f16, 1 f32            B scale-factor ID (byte of the word)
//   7-9      A type                          A type
//   10-12    B type                          B type
//   13, 14   negate A, negate B              negate A, negate B
//   15, 16   A, B MN-major ("transpose")     A, B MN-major
//   17-22    N >> 3                          N >> 3
//   23       reserved                        scale type: 0 ue4m3, 1 ue8m0
//   24-28    M >> 4                          M >> 4 (M is 128 or 256)
//   29-30    reserved (bit 29)               A scale-factor ID
//
// Element type codes: kind::f16: f16 0, bf16 1; kind::tf32: tf32 2;
// kind::f8f6f4 and mxf8f6f4: e4m3 0, e5m2 1, e2m3 3, e3m2 4, e2m1 5;
// kind::mxf4 and mxf4nvf4: e2m1 1 (two per byte).
#pragma once

#include <cstdint>

namespace warpforge::layout {

enum class Tcgen05Element { f16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1 };

// The block scaling of a descriptor: none (kinds f16, tf32, f8f6f4), the
// mxf8f6f4 kind, or the packed-fp4 kinds (mxf4, mxf4nvf4), each with ue8m0
// scales, or mxf4nvf4 with ue4m3 scales.
enum class Tcgen05Scaling { none, mxf8f6f4_ue8m0, fp4_ue8m0, fp4_ue4m3 };

struct Tcgen05InstrDescriptor {
  Tcgen05Element a = Tcgen05Element::bf16;
  Tcgen05Element b = Tcgen05Element::bf16;
  bool d_f32 = true;  // D in f32 (false: f16; the block-scaled kinds accumulate in f32)
  int m = 128;
  int n = 128;
  bool a_mn_major = false;
  bool b_mn_major = false;
  bool negate_a = false;
  bool negate_b = false;
  Tcgen05Scaling scaling = Tcgen05Scaling::none;
  int scale_a_id =
      0;  // the byte of the tensor-memory word A's scale factors start at (block-scaled only)
  int scale_b_id = 0;

  // Throws LayoutError for a field value the descriptor cannot hold or the
  // ISA does not define: types outside the kind, M outside {64, 128, 256}
  // ({128, 256} when block-scaled), N not a multiple of 8 in 8..256, an
  // f16 D with block scaling, MN-major fp4/fp6 operands, scale IDs outside
  // 0..3.
  std::uint32_t encode() const;
};

}  // namespace warpforge::layout
