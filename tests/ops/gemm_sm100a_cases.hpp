// The experimental sm100a GEMM kernel's correctness cases, shared by the
// simulator tests (tests/ops) and the GPU tests (tests/gpu, on an sm_100a
// GPU): every layout of A and B (K- and MN-major), bf16 and f16 inputs, f32,
// bf16 and f16 D (row- and column-major), with and without C, M, N, K that
// are 1, primes and not multiples of the 128 x 128 x 64 tile, more k-blocks
// than stages (the ring wraps), alpha and beta other than 1 and 0, batches;
// and the same over CTA pairs (cluster 2x1, .cta_group::2).
#pragma once

#include "ops/gemm_cases.hpp"

namespace warpforge::ops::testing {

inline GemmConfig sm100a_config(int stages, int cluster_m = 1) {
  return {.tile_m = 128,
          .tile_n = 128,
          .tile_k = 64,
          .stages = stages,
          .warps_m = 1,
          .warps_n = 1,
          .cluster_m = cluster_m};
}

inline std::vector<GemmCase> sm100a_cases() {
  using runtime::DType;
  std::vector<GemmCase> all;
  // (M, N, K) equal mod 8, and the pad that makes every leading dimension a
  // multiple of 8 elements (TMA's 16-byte stride rule).
  const std::int64_t shapes[][4] = {
      {37, 45, 53, 3}, {1, 9, 17, 7}, {131, 139, 203, 5}, {21, 29, 13, 3}};
  int i = 0;
  for (int layout = 0; layout < 4; ++layout)
    for (DType ab : {DType::bf16, DType::f16}) {
      const auto& s = shapes[i % 4];
      GemmCase c{s[0], s[1], s[2]};
      c.pad = s[3];
      c.ab = ab;
      c.d = i % 3 == 0 ? DType::f32 : i % 3 == 1 ? DType::bf16 : DType::f16;
      c.a_row = layout & 1;
      c.b_row = layout & 2;
      c.d_row = i % 4 != 3;
      c.with_c = i % 2 == 1;
      c.c_row = i % 4 != 1;
      c.beta = c.with_c ? 1.0f : 0.0f;
      c.config = sm100a_config(2);  // 203 = 4 k-blocks: the 2-slot ring wraps twice
      all.push_back(c);
      ++i;
    }
  // alpha and beta other than 1 and 0, three stages, three batches.
  GemmCase scaled{70, 38, 150};
  scaled.pad = 2;
  scaled.l = 3;
  scaled.d = DType::bf16;
  scaled.with_c = true;
  scaled.alpha = 0.5f;
  scaled.beta = -1.5f;
  scaled.config = sm100a_config(3);
  all.push_back(scaled);
  // The heuristic's configuration.
  GemmCase plain{40, 48, 64};
  all.push_back(plain);
  // CTA pairs (one M = 256 MMA over two CTAs, each loading half of B's 128
  // columns): M past one pair (300), one row into the odd CTA's tile (129),
  // within the even CTA's (37: the odd CTA's rows all lie past M), 261 over
  // two pairs with N = 13; every layout of A and B, with and without C,
  // three batches once.
  const std::int64_t pair_shapes[][4] = {
      {300, 140, 204, 4}, {129, 41, 57, 7}, {37, 45, 53, 3}, {261, 13, 69, 3}};
  for (int layout = 0; layout < 4; ++layout) {
    const auto& s = pair_shapes[layout];
    GemmCase c{s[0], s[1], s[2]};
    c.pad = s[3];
    c.ab = layout % 2 ? DType::f16 : DType::bf16;
    c.d = layout == 0 ? DType::f32 : layout == 1 ? DType::bf16 : DType::f16;
    c.a_row = layout & 1;
    c.b_row = layout & 2;
    c.d_row = layout != 3;
    c.with_c = layout % 2 == 0;
    c.beta = c.with_c ? 1.0f : 0.0f;
    c.l = layout == 2 ? 3 : 0;
    c.config = sm100a_config(2, 2);
    all.push_back(c);
  }
  return all;
}

}  // namespace warpforge::ops::testing
