// The GEMM correctness matrix, shared by the simulator tests (tests/ops) and
// the GPU tests (tests/gpu): every layout (NN/NT/TN/TT), both input dtypes,
// every D dtype, beta 0 and 1 (and other alpha/beta), M, N, K of 1, primes
// and non-multiples of every tile size, batches (own and shared operands),
// unaligned leading dimensions and bases (the narrower copies), and each
// configuration family. D is poisoned (NaN) before each run, so an element
// left unwritten fails; inputs are fresh N(0,1) values.
#pragma once

#include <gtest/gtest.h>

#include "ops/gemm_operands.hpp"

namespace warpforge::ops::testing {

struct GemmCase {
  std::int64_t m, n, k, l = 0;  // l 0: rank-2 operands
  runtime::DType ab = runtime::DType::bf16, d = runtime::DType::f32;
  bool a_row = true, b_row = true, d_row = true;
  bool with_c = false, c_row = true;
  float alpha = 1.0f, beta = 0.0f;
  std::int64_t pad = 0;
  std::uint64_t offset = 0;  // byte offset of A's and B's first element
  std::optional<GemmConfig> config;
  bool a_shared = false;  // A rank 2 while the others are batched

  std::string describe() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " L" +
           std::to_string(l) + " " + std::string(runtime::name(ab)) + "->" +
           std::string(runtime::name(d)) + " " + (a_row ? "A row " : "A col ") +
           (b_row ? "B row " : "B col ") + (d_row ? "D row" : "D col") +
           (with_c ? (c_row ? " C row" : " C col") : "") + " alpha " + std::to_string(alpha) +
           " beta " + std::to_string(beta) + " pad " + std::to_string(pad) + " offset " +
           std::to_string(offset) + (a_shared ? " A shared" : "") +
           (config ? " config " + config->describe() : "");
  }
};

inline std::vector<GemmCase> gemm_correctness_cases() {
  using runtime::DType;
  std::vector<GemmCase> all;
  // Shapes that are not multiples of any tile, 1s among them.
  const std::int64_t shapes[][3] = {{37, 45, 53}, {1, 9, 17},  {70, 33, 40},
                                    {19, 67, 1},  {65, 1, 33}, {3, 71, 96}};
  int i = 0;
  for (int layout = 0; layout < 4; ++layout)
    for (DType ab : {DType::bf16, DType::f16})
      for (DType d : {DType::f32, DType::bf16, DType::f16}) {
        const auto& s = shapes[i % 6];
        GemmCase c{s[0], s[1], s[2]};
        c.ab = ab;
        c.d = d;
        c.a_row = layout & 1;
        c.b_row = layout & 2;
        c.d_row = i % 3 != 1;
        c.with_c = i % 2 == 1;
        c.c_row = i % 4 != 1;
        c.beta = c.with_c ? 1.0f : 0.0f;
        all.push_back(c);
        ++i;
      }
  for (bool row : {true, false})
    all.push_back({1, 1, 1, 0, DType::bf16, DType::f32, row, !row, row});
  // alpha and beta other than 1 and 0, C in another layout than D.
  GemmCase scaled{29, 41, 35};
  scaled.with_c = true;
  scaled.c_row = false;
  scaled.alpha = 0.5f;
  scaled.beta = -1.5f;
  all.push_back(scaled);
  scaled.d = DType::bf16;
  scaled.d_row = false;
  scaled.c_row = true;
  all.push_back(scaled);
  // K = 777 row-major: lda = 777 is odd, so A moves 2 bytes at a time; pads
  // of 1, 2 and 4 elements give 2-, 4- and 8-byte copies.
  all.push_back({5, 6, 777, 0, DType::bf16, DType::f32, true, false, true});
  for (std::int64_t pad : {1, 2, 4}) {
    GemmCase c{33, 18, 40, 0, DType::f16, DType::bf16, pad % 2 == 0, pad != 2, true};
    c.pad = pad;
    all.push_back(c);
  }
  // Bases 2, 4 and 8 bytes past 16-byte alignment.
  for (std::uint64_t offset : {2u, 4u, 8u}) {
    GemmCase c{24, 40, 48};
    c.offset = offset;
    c.b_row = offset != 4;
    all.push_back(c);
  }
  // Batches, with their own operands and with one A for all of them.
  GemmCase batched{21, 34, 27, 3};
  batched.with_c = true;
  batched.beta = 1.0f;
  batched.c_row = false;
  all.push_back(batched);
  batched.a_shared = true;
  batched.a_row = false;
  batched.d = DType::f16;
  all.push_back(batched);
  // Each configuration family, on primes (and 131) past every tile edge.
  const GemmConfig configs[] = {
      {.tile_m = 32, .tile_n = 32, .tile_k = 32, .stages = 2, .warps_m = 1, .warps_n = 1},
      {.tile_m = 32, .tile_n = 32, .tile_k = 16, .stages = 5, .warps_m = 1, .warps_n = 1},
      {.tile_m = 128, .tile_n = 128, .tile_k = 32, .stages = 4, .warps_m = 2, .warps_n = 2},
      {.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 3, .warps_m = 2, .warps_n = 2},
      {.tile_m = 128, .tile_n = 64, .tile_k = 32, .stages = 3, .warps_m = 4, .warps_n = 2},
  };
  int j = 0;
  for (const GemmConfig& config : configs) {
    GemmCase c{67 + 64 * (j % 2), 71, 73};
    c.config = config;
    c.a_row = j % 2 == 0;
    c.b_row = j % 3 == 0;
    c.d = j % 2 ? DType::bf16 : DType::f32;
    all.push_back(c);
    ++j;
  }
  return all;
}

inline double gemm_tolerance(runtime::DType d) {
  return d == runtime::DType::f32 ? 1e-4 : 1e-2;
}

// Runs the case with `kernel` on `device`; returns D and fills `reference`.
inline HostTensor run_gemm_case(const runtime::Device& dev, GemmKernel kernel, const GemmCase& c,
                                std::mt19937& rng, std::vector<double>* reference = nullptr) {
  auto a = make_matrix(dev, c.ab, {c.a_shared ? 0 : c.l, c.m, c.k, c.a_row, c.pad, c.offset}, rng);
  auto b = make_matrix(dev, c.ab, {c.l, c.k, c.n, c.b_row, c.pad, c.offset}, rng);
  std::optional<DeviceMatrix> cm;
  if (c.with_c) cm.emplace(make_matrix(dev, c.d, {c.l, c.m, c.n, c.c_row, c.pad}, rng));
  auto d = make_matrix(dev, c.d, {c.l, c.m, c.n, c.d_row, c.pad}, rng, true);
  gemm(a.view, b.view, cm ? &cm->view : nullptr, d.view,
       {.alpha = c.alpha, .beta = c.beta, .kernel = kernel, .config = c.config});
  if (reference)
    *reference = gemm_reference(a.host, b.host, cm ? &cm->host : nullptr, c.alpha, c.beta);
  return HostTensor::download(d.view);
}

inline void check_gemm_case(const runtime::Device& dev, GemmKernel kernel, const GemmCase& c) {
  SCOPED_TRACE(c.describe());
  std::mt19937 rng(std::random_device{}());
  std::vector<double> want;
  HostTensor got = run_gemm_case(dev, kernel, c, rng, &want);
  EXPECT_LE(max_relative_error(got, want, 1.0), gemm_tolerance(c.d));
}

}  // namespace warpforge::ops::testing
