// The sm_80 GEMM kernel, written with warpforge's DSL and tile primitives:
// a multistage cp.async pipeline into swizzled shared memory, ldmatrix (plain
// or .trans, as each operand's major-ness needs) into warp register tiles,
// mma.sync m16n8k16 through tile::warp::gemm, and a predicated epilogue with
// alpha/beta. M, N, K, leading dimensions and batch strides are kernel
// parameters and the K loop is a runtime loop, so one kernel serves every
// shape of its specialisation (dtypes, layouts, copy widths, configuration).
#pragma once

#include <string>

#include "gemm_problem.hpp"
#include "warpforge/layout/swizzle.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/ptx/module.hpp"

namespace warpforge::ops {

// What one compiled sm_80 kernel is specialised on.
struct Sm80KernelSpec {
  runtime::DType ab_dtype = runtime::DType::bf16;
  runtime::DType d_dtype = runtime::DType::f32;  // C and D
  bool a_row_major = true, b_row_major = true, c_row_major = true, d_row_major = true;
  bool has_c = false;
  // Elements per global -> shared copy of A and B: 8, 4 or 2 (cp.async of 16,
  // 8 or 4 bytes) or 1 (ld.global.b16 + st.shared.b16, for operands whose base,
  // leading dimension or batch stride is only 2-byte aligned).
  int a_vector = 8, b_vector = 8;
  // Whether the epilogue reads/writes two adjacent elements of C/D at once
  // (row-major, and the pair's address aligned for it).
  bool c_pairs = false, d_pairs = false;
  GemmConfig config;

  int threads() const { return config.warps_m * config.warps_n * 32; }
  int shared_bytes() const {
    return config.stages * (config.tile_m + config.tile_n) * config.tile_k * 2;
  }
  std::string kernel_name() const;  // spells out the specialisation
  friend bool operator==(const Sm80KernelSpec&, const Sm80KernelSpec&) = default;
};

// The swizzle (on element offsets) of a shared-memory panel whose rows hold
// `panel` 16-bit elements (16 to 256, a power of two): for 2^e elements,
// Swizzle<min(3, e-3), 3, max(3, e-3)>. It XORs each row's 16-byte chunk
// index with the row index mod 8, so that the eight 16-byte rows one
// ldmatrix phase reads (8 consecutive rows, one chunk column; PTX ISA
// 9.7.14.5.15) fall in eight distinct 4-bank groups of the 128-byte bank
// window: no bank conflicts, for cp.async's 16-byte writes either.
layout::Swizzle sm80_panel_swizzle(int panel);

// The specialisation for `problem` under `config`.
Sm80KernelSpec sm80_spec(const GemmProblem& problem, const GemmConfig& config);

// Every reason the kernel builder cannot realise this configuration (tile
// sizes, warp grid, stages, copy widths that do not divide among the threads).
std::vector<std::string> sm80_config_refusals(const GemmConfig& config);

// The kernel's module, targeted at sm_80. Parameters, in order:
//   A, B, C, D (pointers; C is not read unless has_c),
//   M, N, K, lda, ldb, ldc, ldd (u32), batch_a, batch_b, batch_c, batch_d
//   (u64, element strides between batches), alpha, beta (f32).
// Launch: grid (ceil(M/tile_m)·ceil(N/tile_n), L), block threads(), dynamic
// shared memory shared_bytes().
ptx::Module build_sm80_gemm(const Sm80KernelSpec& spec);

}  // namespace warpforge::ops
