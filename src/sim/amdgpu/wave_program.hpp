// A kernel's structured body flattened into steps with jumps, which is how a
// wave runs it: if and loop become exec-mask pushes, narrowings and pops, as
// compiled AMDGPU code does with EXEC (AMD CDNA3 ISA, "Program Flow Control":
// the wave skips a block only when EXEC is zero for it).
#pragma once

#include <vector>

#include "warpforge/amdgpu/ir.hpp"

namespace warpforge::sim::amdgpu {

struct Step {
  enum class Kind { inst, if_begin, else_, end_if, loop_init, loop_head, loop_latch, loop_end };
  Kind kind;
  const warpforge::amdgpu::Inst* inst = nullptr;  // Kind::inst
  const warpforge::amdgpu::Stmt* stmt = nullptr;  // the if or loop
  int jump =
      -1;  // if_begin: the else_ step; else_: end_if; loop_head: loop_end; loop_latch: loop_head
};

std::vector<Step> flatten(const warpforge::amdgpu::Block& body);

}  // namespace warpforge::sim::amdgpu
