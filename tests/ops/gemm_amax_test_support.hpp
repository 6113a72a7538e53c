// Building block-scaled GEMM + amax problems on a device from random host
// data (REFERENCE.md's test: data U(-2, 2) cast to its dtype, scales in
// {1, 2}), running them, and comparing against ops::gemm_amax_reference.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/gemm_amax_reference.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops::testing {

// A data format with its scales: MXFP8 (e4m3, e5m2 with e8m0 per 32),
// MXFP4 (e2m1, e8m0 per 32), NVFP4 (e2m1, e4m3 per 16), and e2m1 with e8m0
// per 16.
struct ScaledFormat {
  runtime::DType ab, sf;
  int vec;
};
inline constexpr ScaledFormat kScaledFormats[] = {{runtime::DType::e4m3, runtime::DType::e8m0, 32},
                                                  {runtime::DType::e5m2, runtime::DType::e8m0, 32},
                                                  {runtime::DType::e2m1, runtime::DType::e8m0, 32},
                                                  {runtime::DType::e2m1, runtime::DType::e4m3, 16},
                                                  {runtime::DType::e2m1, runtime::DType::e8m0, 16}};

struct GemmAmaxCase {
  runtime::DType ab = runtime::DType::e4m3;
  runtime::DType sf = runtime::DType::e8m0;
  int vec = 32;
  runtime::DType c = runtime::DType::f32;
  bool a_k_major = true, b_k_major = true;
  CMajor c_major = CMajor::n;
  std::int64_t m = 40, n = 24, k = 96, l = 1;
  std::optional<GemmAmaxTile> tile = GemmAmaxTile{32, 32};
  std::optional<GemmAmaxTile> cluster;  // GemmAmaxOptions::cluster (absent: the kernel's choice)
  GemmAmaxPrecision precision = GemmAmaxPrecision::exact;
  GemmAmaxKernel kernel = GemmAmaxKernel::automatic;
  std::string describe() const;
};

// One operand's host bytes and device tensor. FP4 tensors are u8 views of
// (rows, cols/2, L) bytes: runtime::TensorView keeps e2m1 views' last
// dimension contiguous, which (rows, K, L) with L last is not.
struct GemmAmaxTensor {
  std::vector<std::uint8_t> bytes;
  std::shared_ptr<runtime::Buffer> buffer;
  std::optional<runtime::TensorView> view;
  std::int64_t stride_row = 0, stride_col = 0, stride_batch = 0;  // elements (nibbles for FP4)
};

struct GemmAmaxSetup {
  GemmAmaxCase c;
  GemmAmaxTensor a, b, sfa, sfb, out, amax;
  GemmAmaxOptions options() const;
  BlockScaledOperand host_a() const;
  BlockScaledOperand host_b() const;
  void upload(GemmAmaxTensor& t) const;
  std::vector<float> c_values() const;  // C downloaded and decoded, (l, m, n) order
  float amax_value() const;
};

GemmAmaxSetup make_gemm_amax(const runtime::Device& device, const GemmAmaxCase& c,
                             std::mt19937& rng);

// Poisons C, sets amax to `initial_amax`, runs, and returns every mismatch
// against the reference (empty: pass).
// With `op`, runs that operation (built on views of the same description)
// on s's tensors instead of one built on them; with `workspace`, on it.
std::vector<std::string> run_gemm_amax_and_check(GemmAmaxSetup& s, float initial_amax = 0.0f,
                                                 GemmAmax* op = nullptr,
                                                 const runtime::TensorView* workspace = nullptr);

// Rewrites s's data and scales (on the host and the device) so that C
// cancels: in every scale block codes 0 and 1 are large (128 for FP8, 6 for
// E2M1) with products +L and -L, the others small and positive (products
// about 2^-14 L for FP8), scales 2^e with e drawn per block from [-20, 20]
// (e8m0; e4m3 within its normal range). C is the sum of the small
// products. An exact kernel (products exact, f32 accumulation) passes
// run_gemm_amax_and_check_exact; one that adds a block's products aligned
// to the largest at 14 bits (Hopper's FP8 wgmma) drops the small products
// and fails it where K is small (the bound grows with K).
void make_cancelling(GemmAmaxSetup& s, std::mt19937& rng);

// Rewrites the scales of K blocks 0, 4, ... (byte 0 of each layout word) so
// that none folds into one bf16 factor and C stays finite: B's large (e8m0
// 2^100, e4m3 448), A's small (e8m0 2^-100, the e4m3 subnormal 3 x 2^-9);
// on the host and the device. The kernels must take their exact slow way.
void make_unfoldable_scales(GemmAmaxSetup& s);

// Puts an e5m2 +inf at A's row 7, column 9 (the case must be e5m2, M > 7,
// K > 9), runs gemm_amax() on s's tensors and returns its amax: +inf when
// only C's elements count (past N, inf x B's zero fill is NaN).
float amax_with_infinity_in_a(GemmAmaxSetup& s);

// Runs s (C must be f32) and returns every element of C outside the bound of
// f32 accumulation of exact products, |C - C_exact| <= K·2^-23·Σ_k |a_k·b_k|
// (plus C_exact's own rounding to f32), against the double reference; and
// amax outside the largest such bound.
std::vector<std::string> run_gemm_amax_and_check_exact(GemmAmaxSetup& s, GemmAmax* op = nullptr);

}  // namespace warpforge::ops::testing
