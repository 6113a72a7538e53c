// The sm90a GEMM kernel's correctness cases, shared by the simulator tests
// (tests/ops) and the GPU tests (tests/gpu). Shapes are chosen so that one pad
// makes every leading dimension a multiple of 8 elements (TMA's 16-byte
// stride rule) while M, N and K stay 1, primes or non-multiples of every
// tile.
#pragma once

#include <utility>

#include "ops/gemm_cases.hpp"

namespace warpforge::ops::testing {

using runtime::DType;

inline GemmConfig sm90a_config(int tile_m, int tile_n, int stages, int cluster_m = 1, int cluster_n = 1) {
  return {.tile_m = tile_m, .tile_n = tile_n, .tile_k = 64, .stages = stages, .warps_m = tile_m / 64, .warps_n = 1,
          .cluster_m = cluster_m, .cluster_n = cluster_n};
}

inline std::vector<GemmCase> sm90a_cases() {
  std::vector<GemmCase> all;
  // (M, N, K) all equal mod 8, and the pad that rounds them up to a multiple of 8.
  const std::int64_t shapes[][4] = {{37, 45, 53, 3}, {1, 9, 17, 7}, {67, 131, 75, 5}, {21, 29, 13, 3}};
  const GemmConfig small = sm90a_config(64, 64, 2);
  int i = 0;
  for (int layout = 0; layout < 4; ++layout)
    for (DType ab : {DType::bf16, DType::f16})
      for (DType d : {DType::f32, DType::bf16}) {
        const auto& s = shapes[i % 4];
        GemmCase c{s[0], s[1], s[2]};
        c.pad = s[3];
        c.ab = ab;
        c.d = i % 3 == 2 ? DType::f16 : d;
        c.a_row = layout & 1;
        c.b_row = layout & 2;
        c.with_c = i % 2 == 1;
        c.c_row = i % 4 != 1;
        c.beta = c.with_c ? 1.0f : 0.0f;
        c.config = small;
        all.push_back(c);
        ++i;
      }
  GemmCase ones{1, 1, 1};
  ones.pad = 7;
  ones.config = small;
  all.push_back(ones);
  // Fewer rows than a two-warpgroup tile: A's loads shrink to 16 rows
  // (Sm90aSpec::a_rows), the tile's other rows stale, its D rows clipped.
  GemmCase thin{11, 75, 139};
  thin.pad = 5;
  thin.with_c = true;
  thin.beta = -1.0f;
  thin.config = sm90a_config(128, 64, 3);
  all.push_back(thin);
  // alpha and beta other than 1 and 0.
  GemmCase scaled{29, 37, 45};
  scaled.pad = 3;
  scaled.with_c = true;
  scaled.alpha = 0.5f;
  scaled.beta = -1.5f;
  scaled.config = small;
  all.push_back(scaled);
  // Batches (own operands; the batch is the tensor maps' third dimension).
  GemmCase batched{21, 29, 13, 3};
  batched.pad = 3;
  batched.with_c = true;
  batched.beta = 1.0f;
  batched.d = DType::bf16;
  batched.config = small;
  all.push_back(batched);
  // The big configurations: two consumer warpgroups, N tiles of 64 to 256,
  // each major-ness; K past several stages.
  int j = 0;
  for (const GemmConfig& config : {sm90a_config(128, 128, 3), sm90a_config(128, 256, 2), sm90a_config(128, 128, 4),
                                   sm90a_config(64, 192, 3), sm90a_config(128, 64, 6), sm90a_config(64, 128, 2),
                                   sm90a_config(128, 192, 3)}) {
    GemmCase c{131, 139, 267};  // all 3 mod 8
    c.pad = 5;
    c.config = config;
    c.a_row = j % 2 == 0;
    c.b_row = j % 3 != 0;
    c.d = j % 2 ? DType::bf16 : DType::f32;
    all.push_back(c);
    ++j;
  }
  // Tiles an odd multiple of 32 wide (K-major B): a 16-bit D's columns past
  // the last 64-wide store box go from registers (an odd N ends inside a
  // pair), batched and with C too; f32 D takes whole 32-column boxes.
  int tailed = 0;
  for (auto [tile_n, d] : {std::pair{160, DType::bf16}, std::pair{224, DType::f16}, std::pair{96, DType::bf16},
                           std::pair{160, DType::f32}}) {
    GemmCase c{131, 299, 75, tailed == 2 ? 2 : 0};  // all 3 mod 8
    c.pad = 5;
    c.config = sm90a_config(128, tile_n, tile_n == 224 ? 4 : 3);  // 128 x 224: the stages shared memory holds
    c.b_row = false;
    c.a_row = tailed % 2 == 0;
    c.d = d;
    c.with_c = tailed % 2 == 0;
    c.beta = c.with_c ? -0.5f : 0.0f;
    all.push_back(c);
    ++tailed;
  }
  // The same widths with N-major B, loaded in 32-column boxes of the 64-byte
  // swizzle (Sm90aSpec::b_box_cols), one wgmma reading all of them.
  for (int tile_n : {96, 160, 224}) {
    GemmCase c{131, 299, 139};  // all 3 mod 8; K past two stages
    c.pad = 5;
    c.config = sm90a_config(128, tile_n, tile_n == 224 ? 4 : 3);
    c.a_row = tile_n != 160;
    c.d = tile_n == 96 ? DType::f32 : DType::bf16;
    c.with_c = tile_n == 224;
    c.beta = c.with_c ? 1.0f : 0.0f;
    all.push_back(c);
  }
  // 2-CTA clusters sharing B (2x1) or A (1x2) by multicast, in every layout:
  // tile counts that leave the last pair half outside the matrix, and more
  // pairs' tiles than resident pairs (the simulator has one per two cores).
  for (int layout = 0; layout < 4; ++layout)
    for (auto [cm, cn] : {std::pair{2, 1}, std::pair{1, 2}}) {
      GemmCase c{203, 267, 139};  // all 3 mod 8; 2 x 3 tiles of 128 x 128
      c.pad = 5;
      c.config = sm90a_config(128, 128, 3, cm, cn);
      c.a_row = layout & 1;
      c.b_row = layout & 2;
      c.d = layout % 2 ? DType::bf16 : DType::f32;
      c.with_c = layout == 3;
      c.beta = c.with_c ? 1.0f : 0.0f;
      all.push_back(c);
    }
  // Ping-pong: the consumers take alternate tiles, 64 x 256 or 128 x 128 (two
  // accumulators), in every layout; more tiles than CTAs, so both
  // warpgroups walk several, and one with clusters.
  for (int layout = 0; layout < 4; ++layout) {
    GemmCase c{203, 267, 139};
    c.pad = 5;
    c.config = sm90a_config(layout % 2 ? 64 : 128, layout % 2 ? 256 : 128, 3);
    c.config->pingpong = true;
    if (layout == 3) c.config->cluster_m = 2;
    c.a_row = layout & 1;
    c.b_row = layout & 2;
    c.d = layout == 2 ? DType::f32 : DType::bf16;
    c.with_c = layout == 1;
    c.beta = c.with_c ? 1.0f : 0.0f;
    all.push_back(c);
  }
  // Stages that fit only with the epilogue in chunks: 128 x 256 in 4 stages
  // (two 128-column chunks of bf16), f32 D in 3 (two) and 4 (four 64-column
  // chunks), with C.
  int chunked = 0;
  for (auto [d, stages] : {std::pair{DType::bf16, 4}, std::pair{DType::f32, 3}, std::pair{DType::f32, 4}}) {
    GemmCase c{131, 299, 75};
    c.pad = 5;
    c.config = sm90a_config(128, 256, stages);
    c.d = d;
    c.b_row = chunked++ != 1;
    c.with_c = stages == 4;
    c.beta = c.with_c ? -0.5f : 0.0f;
    all.push_back(c);
  }
  // Half-tile shares: a K-major operand split in 32-row boxes, the widest N tile.
  for (const GemmConfig& config : {sm90a_config(64, 128, 4, 1, 2), sm90a_config(128, 256, 2, 2, 1)}) {
    GemmCase c{131, 299, 75};
    c.pad = 5;
    c.config = config;
    c.b_row = false;
    c.d = DType::bf16;
    all.push_back(c);
  }
  return all;
}

// One Gemm run on one set of inputs, on a second, then on the first again
// (outputs poisoned each time): every run right, the repeat bit-identical.
// With stream-K that checks the workspace's flags are left clear for the next
// launch and that the partial sums are added in a fixed order.
inline void check_runs_on_new_inputs(const runtime::Device& dev, std::int64_t m, std::int64_t n, std::int64_t k,
                                     std::int64_t pad, const GemmConfig& config) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + config.describe());
  std::mt19937 rng(std::random_device{}());
  auto d = make_matrix(dev, DType::f32, {0, m, n, true, pad}, rng, true);
  std::vector<DeviceMatrix> inputs;
  for (int i = 0; i < 2; ++i) {
    inputs.push_back(make_matrix(dev, DType::bf16, {0, m, k, true, pad}, rng));
    inputs.push_back(make_matrix(dev, DType::bf16, {0, k, n, false, pad}, rng));
  }
  Gemm g(inputs[0].view, inputs[1].view, nullptr, d.view, {.kernel = GemmKernel::sm90a, .config = config});
  std::vector<HostTensor> results;
  for (int run : {0, 1, 0}) {
    const DeviceMatrix &a = inputs[2 * run], &b = inputs[2 * run + 1];
    d.buffer.fill(0xFF);  // NaN: an element left unwritten fails
    g.execute(a.view, b.view, nullptr, d.view);
    results.push_back(HostTensor::download(d.view));
    EXPECT_LE(max_relative_error(results.back(), gemm_reference(a.host, b.host, nullptr, 1.0, 0.0), 1.0), 1e-4)
        << "run on inputs " << run;
  }
  EXPECT_EQ(results[0].bytes, results[2].bytes);
}

}  // namespace warpforge::ops::testing
