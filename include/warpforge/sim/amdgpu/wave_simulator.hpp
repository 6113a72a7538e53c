// The wave64 simulator for AMDGPU IR kernels (amdgpu::AmdKernel). Each workgroup
// runs as ceil(size / 64) waves of 64 lanes with an exec mask, like CDNA
// hardware: divergent if / loop bodies run with the lanes that take them
// masked in (AMD CDNA3 ISA, "EXECute Mask"). Waves of a workgroup share its
// LDS and meet at barriers; MFMA follows AMD's published operand layouts;
// buffer loads and stores check the descriptor's range. Every global and LDS
// access is bounds- and alignment-checked: a bad one is a SimError naming the
// kernel, the instruction, the workgroup, wave and lane, and the address.
#pragma once

#include <cstdint>
#include <vector>

#include "warpforge/amdgpu/ir.hpp"
#include "warpforge/sim/global_memory.hpp"

namespace warpforge::sim::amdgpu {

struct Grid {
  std::uint32_t x = 1, y = 1, z = 1;  // workgroups per dimension
};

// One argument per kernel parameter: a pointer or i32 as its value, an f32 as
// its bits (f32_arg).
using Args = std::vector<std::uint64_t>;
std::uint64_t f32_arg(float v);

// Runs every workgroup of the grid; the workgroup size is the kernel's own.
void run(const warpforge::amdgpu::KernelIR& kernel, Grid grid, const Args& args,
         GlobalMemory& memory);

}  // namespace warpforge::sim::amdgpu
