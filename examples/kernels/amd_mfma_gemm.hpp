// The documented AMD CDNA tutorial (REFERENCE.md, example 4), written with
// amdgpu::AmdKernel: C = A·Bᵀ with A (m x k) and B (n x k) bf16 row-major and C
// (m x n) f32 row-major. A workgroup of 256 work-items (four waves) computes a
// 64 x 64 tile of C, each wave one 32 x 32 quarter with
// v_mfma_f32_32x32x8_bf16; K is staged 16 at a time through LDS.
//   amd_gemm_128:     m = n = k = 128, fixed; grid (2, 2)
//   amd_gemm_runtime: pointers + runtime m, n, k (m, n multiples of 64, k of 16)
//   amd_gemm_edge:    any m, n (k a multiple of 16): buffer-resource loads read
//                     zero past the matrices, stores are guarded per row and
//                     column; grid (ceil(n / 64), ceil(m / 64))
#pragma once

#include "warpforge/amdgpu/ir.hpp"
#include "warpforge/amdgpu/target.hpp"

namespace warpforge::examples {

inline constexpr int kAmdGemmTile = 64;        // C tile per workgroup (rows and columns)
inline constexpr int kAmdGemmWorkgroup = 256;  // work-items per workgroup: four waves

amdgpu::KernelIR amd_gemm_128_kernel(amdgpu::Target target);
amdgpu::KernelIR amd_gemm_runtime_kernel(amdgpu::Target target);
amdgpu::KernelIR amd_gemm_edge_kernel(amdgpu::Target target);

}  // namespace warpforge::examples
