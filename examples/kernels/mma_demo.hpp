// REFERENCE.md example 1: one warp runs mma.sync.m16n8k8 (f16 in, f32 out).
// A is 16×8 of ones except column 0 = 0, 1, ..., 15; B is 8×8 of ones except
// row 1 = 3; C = 0. Every element of row r of D = A·B is r + 9.
#pragma once

#include <cstdint>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::examples {

// Kernel `mma_m16n8k8_demo(A, BT, D)`: A 16×8 f16 row-major, BT = Bᵀ as 8×8
// f16 row-major (B column-major), D 16×8 f32 row-major. Launch 1 block of 32.
ptx::Module mma_demo_kernel(ptx::Target target);

struct MmaDemoData {
  std::vector<std::uint16_t> a;   // 16×8 f16 bits
  std::vector<std::uint16_t> bt;  // 8×8 f16 bits, Bᵀ
  std::vector<float> expected;    // 16×8, row r all r + 9
};
MmaDemoData mma_demo_data();

}  // namespace warpforge::examples
