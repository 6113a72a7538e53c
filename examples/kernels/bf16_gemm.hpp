// REFERENCE.md example 2: a single-warp Ampere bf16 GEMM with
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32. A (M,K) bf16
// row-major, BT (N,K) bf16 row-major, D (M,N) f32 row-major; grid (N/8, M/16),
// block 32: one CTA per 16×8 tile of D, direct global loads, runtime K loop.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::examples {

// Kernel `bf16_gemm_m16n8k16(A, BT, D, M, N, K)`; needs M % 16, N % 8, K % 16 == 0.
ptx::Module bf16_gemm_kernel(ptx::Target target);

struct GemmCase {
  int m, n, k;
};
// The five cases of REFERENCE.md.
const std::vector<GemmCase>& bf16_gemm_cases();

struct Bf16GemmData {
  std::vector<std::uint16_t> a;   // M×K bf16 bits
  std::vector<std::uint16_t> bt;  // N×K bf16 bits
  std::vector<float> reference;   // M×N, fp32 (double-accumulated) product of the rounded inputs
};
// Inputs 0.1·N(0,1) rounded to bf16.
Bf16GemmData bf16_gemm_data(const GemmCase& c, std::mt19937& rng);

// allclose(atol = rtol = 1e-2): |out - ref| <= atol + rtol·|ref| everywhere
// (a NaN anywhere fails). Returns the number of elements that fail.
std::size_t count_mismatches(const std::vector<float>& out, const std::vector<float>& ref, double atol, double rtol);

}  // namespace warpforge::examples
