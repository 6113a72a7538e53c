// Fragment layouts of the warp-level mma.sync instructions (PTX ISA 9.7.14.5,
// "Matrix Fragments for mma.m16n8k*"), .row.col: A is M x K, B is K x N, C
// and D are M x N with f32 elements. Each operand is a Fragment whose layout
// maps (lane, value) onto its tile; with groupID = lane / 4 and
// threadID_in_group = lane % 4 the layouts reproduce the ISA's row/col formulas.
#pragma once

#include <cstdint>
#include <string>

#include "warpforge/layout/fragment.hpp"

namespace warpforge::layout {

struct MmaAtom {
  std::string name;
  int64_t m, n, k;
  Fragment a;
  Fragment b;
  Fragment c;  // C and D share one layout
};

// mma.sync.aligned.m16n8k8.row.col.f32.{f16,bf16}: A 2 regs, B 1 reg, C 4 f32.
MmaAtom mma_m16n8k8_f16();
// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: A 4 regs, B 2 regs, C 4 f32.
MmaAtom mma_m16n8k16_f16();
// mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}: A 4 regs, B 2 regs, C 4 f32.
MmaAtom mma_m16n8k32_f8();

}  // namespace warpforge::layout
