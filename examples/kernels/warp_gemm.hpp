// REFERENCE.md example 3: the warp-scope gemm tile primitive.
//  - warp_gemm_16x8x16: D[16,8] = A[16,16]·B[16,8], f16 in, f32 out, in one
//    m16n8k16 atom; A, B and D move between global memory and registers with
//    warp::copy.
//  - warp_gemm_64x32x32: D[64,32] = A[64,32]·B[32,32] + C, bf16 in, a nest of
//    4×4×2 atoms with beta = 1; A and B are staged through shared memory (A
//    swizzled) and read with ldmatrix by warp::copy.
// Both: one warp, A row-major (M×K), BT = Bᵀ row-major (N×K), C and D f32
// row-major (M×N).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::examples {

// Kernel `warp_gemm_16x8x16(A, BT, D)`.
ptx::Module warp_gemm_16x8x16_kernel(ptx::Target target);
// Kernel `warp_gemm_64x32x32(A, BT, C, D)`.
ptx::Module warp_gemm_64x32x32_kernel(ptx::Target target);

struct WarpGemmData {
  int m, n, k;
  bool bf16;                       // else f16
  std::vector<std::uint16_t> a;   // M×K
  std::vector<std::uint16_t> bt;  // N×K
  std::vector<float> c;           // M×N (empty when the kernel has no C)
  std::vector<float> reference;   // A·B (+ C), accumulated in double
};
WarpGemmData warp_gemm_16x8x16_data(std::mt19937& rng);
WarpGemmData warp_gemm_64x32x32_data(std::mt19937& rng);

}  // namespace warpforge::examples
