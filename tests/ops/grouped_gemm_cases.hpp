// Grouped GEMM test problems and runs (header-only: tests/ops and tests/gpu
// share it): operands in device memory from fresh random values (gemm_operands.hpp:
// N(0,1) rounded, padding poisoned), block-scaled weights quantized
// (ops::quantize) and packed, D poisoned with NaN, and the check of D
// against the fp64 reference within the bound of f32 accumulation of exact
// products plus D's own rounding.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ops/gemm_operands.hpp"
#include "warpforge/ops/grouped_gemm.hpp"
#include "warpforge/ops/grouped_gemm_reference.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/quantize.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::ops::testing {

// Offsets (cumulative ends) from group sizes.
inline std::vector<std::int32_t> ends_of(const std::vector<std::int32_t>& sizes) {
  std::vector<std::int32_t> ends(sizes.size());
  std::partial_sum(sizes.begin(), sizes.end(), ends.begin());
  return ends;
}

// A skewed routing: `m` rows over `groups` groups drawn with weights
// 1/(g+1)^skew (Zipf-like), sorted by group: the sizes.
inline std::vector<std::int32_t> skewed_sizes(std::int64_t m, std::int64_t groups, double skew, std::mt19937& rng) {
  std::vector<double> weights;
  for (std::int64_t g = 0; g < groups; ++g) weights.push_back(1.0 / std::pow(static_cast<double>(g + 1), skew));
  std::shuffle(weights.begin(), weights.end(), rng);
  std::discrete_distribution<std::int64_t> pick(weights.begin(), weights.end());
  std::vector<std::int32_t> sizes(static_cast<std::size_t>(groups), 0);
  for (std::int64_t r = 0; r < m; ++r) ++sizes[static_cast<std::size_t>(pick(rng))];
  return sizes;
}

struct DeviceOffsets {
  runtime::Buffer buffer;
  runtime::TensorView view;
  std::vector<std::int32_t> host;
};
inline DeviceOffsets make_offsets(const runtime::Device& device, const std::vector<std::int32_t>& ends) {
  runtime::Buffer buffer(device, ends.size() * 4);
  buffer.copy_from_host(ends.data(), ends.size() * 4);
  runtime::TensorView view(buffer, runtime::DType::i32, {static_cast<std::int64_t>(ends.size())});
  return {std::move(buffer), view, ends};
}

// A quantized matrix as the reference reads it: k-major (rows, K, batches).
inline BlockScaledOperand host_operand(const QuantizedMatrix& q) {
  BlockScaledOperand o;
  o.dtype = q.format.data;
  o.rows = q.rows, o.k = q.k, o.batches = q.batches;
  o.stride_row = q.k, o.stride_k = 1, o.stride_batch = q.rows * q.k;
  o.data = q.data;
  o.scale_dtype = q.format.scale;
  o.vec = q.format.vec;
  o.scales = q.scales;
  return o;
}

// Packed block-scaled weights on a device, with the unpacked host operand
// the reference reads (rows = N, batches = G).
struct DeviceWeights {
  QuantizedMatrix quantized;
  PackedWeights packed;
  runtime::Buffer codes, scales;
  runtime::TensorView codes_view, scales_view;
  BlockScaledOperand host() const { return host_operand(quantized); }
};

inline runtime::DType code_view_dtype(runtime::DType data) {
  return data == runtime::DType::e2m1 ? runtime::DType::u8 : data;
}

// G experts' weights B[g] (K x N), values N(0, 1)·scale quantized to `f`
// (a larger `scale` gives scales that do not fold with the codes' bias:
// the kernels' exact slow conversions). With `one_large_scale`, the scale
// of group 0, row 3, block 1 alone becomes 2^73 (e8m0) or 128 (e4m3): one
// lane of a warp cannot fold while the others can.
inline DeviceWeights make_weights(const runtime::Device& device, BlockScaledFormat f, std::int64_t groups,
                                  std::int64_t n, std::int64_t k, std::mt19937& rng, double scale = 1.0,
                                  bool one_large_scale = false) {
  std::normal_distribution<double> normal(0.0, scale);
  std::vector<float> x(static_cast<std::size_t>(groups * n * k));
  for (float& v : x) v = static_cast<float>(normal(rng));
  QuantizedMatrix q = quantize(x, n, k, groups, f);
  if (one_large_scale)
    q.scales[static_cast<std::size_t>(q.scale_layout().offset(3, 1, 0))] = f.scale == runtime::DType::e8m0 ? 0xC8 : 0x70;
  PackedWeights packed = prepack_weights({f.data, f.scale, f.vec, groups, k, n}, q.data, q.scales);
  runtime::Buffer codes(device, packed.codes.size()), scales(device, packed.scales.size());
  codes.copy_from_host(packed.codes.data(), packed.codes.size());
  scales.copy_from_host(packed.scales.data(), packed.scales.size());
  const runtime::DType code_dtype = code_view_dtype(f.data);
  runtime::TensorView cv(codes, code_dtype, {static_cast<std::int64_t>(packed.codes.size())});
  runtime::TensorView sv(scales, f.scale, {static_cast<std::int64_t>(packed.scales.size())});
  return {std::move(q), std::move(packed), std::move(codes), std::move(scales), cv, sv};
}

// A block-scaled A (M, K) in device memory: codes k-major (FP4 as u8 (M,
// K/2)) and scales in the 128x4 layout.
struct DeviceScaledA {
  QuantizedMatrix quantized;
  runtime::Buffer codes, scales;
  runtime::TensorView codes_view, scales_view;
  BlockScaledOperand host() const { return host_operand(quantized); }
};
inline DeviceScaledA make_scaled_a(const runtime::Device& device, BlockScaledFormat f, std::int64_t m, std::int64_t k,
                                   std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> x(static_cast<std::size_t>(m * k));
  for (float& v : x) v = uniform(rng);
  QuantizedMatrix q = quantize(x, m, k, 1, f);
  runtime::Buffer codes(device, q.data.size()), scales(device, q.scales.size());
  codes.copy_from_host(q.data.data(), q.data.size());
  scales.copy_from_host(q.scales.data(), q.scales.size());
  const bool fp4 = f.data == runtime::DType::e2m1;
  runtime::TensorView cv(codes, code_view_dtype(f.data), {m, fp4 ? k / 2 : k});
  runtime::TensorView sv(scales, f.scale, {static_cast<std::int64_t>(q.scales.size())});
  return {std::move(q), std::move(codes), std::move(scales), cv, sv};
}

// Every element of D outside |D - exact| <= K·2^-23·Σ|products| + D's
// rounding (half an ulp of bf16 or f16) of |exact|, or (rows past the last
// group, empty groups) not exactly zero; at most `limit` of them, then a count.
inline std::vector<std::string> grouped_mismatches(const HostTensor& d, const GroupedReference& want, std::int64_t k,
                                                   std::size_t limit = 8) {
  const double rounding = d.dtype == runtime::DType::f32 ? std::ldexp(1.0, -24)
                          : d.dtype == runtime::DType::bf16 ? std::ldexp(1.0, -8)
                                                            : std::ldexp(1.0, -11);
  std::vector<std::string> bad;
  std::size_t count = 0;
  for (std::int64_t g = 0; g < (want.ragged_k ? want.groups : 1); ++g)
    for (std::int64_t r = 0; r < want.rows; ++r)
      for (std::int64_t c = 0; c < want.n; ++c) {
        const auto i = static_cast<std::size_t>((g * want.rows + r) * want.n + c);
        const double got = want.ragged_k ? d.get({g, r, c}) : d.get({r, c});
        const double exact = want.value[i];
        // f16 D can overflow where the sum does not: that is its rounding, not the kernel's.
        const double bound = static_cast<double>(k) * std::ldexp(1.0, -23) * want.magnitude[i] +
                             rounding * std::fabs(exact) + (want.magnitude[i] == 0 ? 0.0 : 1e-30);
        if (std::fabs(got - exact) <= bound || (std::isinf(got) && d.dtype == runtime::DType::f16)) continue;
        if (count++ < limit)
          bad.push_back("D" + (want.ragged_k ? "[" + std::to_string(g) + "]" : std::string()) + "[" +
                        std::to_string(r) + "][" + std::to_string(c) + "] = " + std::to_string(got) + ", want " +
                        std::to_string(exact) + " (bound " + std::to_string(bound) + ")");
      }
  if (count > limit) bad.push_back("... " + std::to_string(count) + " mismatches in all");
  return bad;
}

// A failure naming the op and every mismatch, where there are any.
inline void expect_no_mismatches(const std::vector<std::string>& bad, const std::string& describe) {
  std::string all;
  for (const auto& s : bad) all += "\n  " + s;
  EXPECT_TRUE(bad.empty()) << describe << all;
}

// The largest |exact D| (what amax must be, up to the f32 accumulation).
inline double reference_amax(const GroupedReference& want) {
  double most = 0;
  for (double v : want.value) most = std::max(most, std::fabs(v));
  return most;
}

using runtime::DType;

struct RaggedMCase {
  std::vector<std::int32_t> ends;
  std::int64_t m = 0, n = 0, k = 0;
  DType ab = DType::bf16, d = DType::f32;
  bool b_k_major = false;
  const char* kernel = "sm80";  // the kernel that must run it
  GroupedGemmKernel named = GroupedGemmKernel::automatic;
  std::int64_t d_pad = 0;  // D's leading dimension N + d_pad
};

// Runs a bf16/f16 ragged-M case (D poisoned first), asserting the kernel
// chosen, checks D and returns it.
inline HostTensor run_ragged_m(const runtime::Device& device, const RaggedMCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto g = static_cast<std::int64_t>(c.ends.size());
  auto a = make_matrix(device, c.ab, {0, c.m, c.k, true}, rng);
  auto b = make_matrix(device, c.ab, {g, c.k, c.n, !c.b_k_major}, rng);
  auto d = make_matrix(device, c.d, {0, c.m, c.n, true, c.d_pad}, rng, true);
  auto offsets = make_offsets(device, c.ends);
  const GroupedGemmTensors t{a.view, b.view, &offsets.view, d.view};
  GroupedGemm op(t, {.out_dtype = c.d, .kernel = c.named});
  EXPECT_EQ(op.kernel_name(), std::string_view(c.kernel)) << op.describe();
  if (!op.check_support().empty()) {  // nothing to run: the case fails, the test goes on
    ADD_FAILURE() << op.describe();
    return HostTensor::download(d.view);
  }
  op.execute(t);
  HostTensor got = HostTensor::download(d.view);
  const auto bad = grouped_mismatches(got, grouped_gemm_reference(a.host, b.host, offsets.host), c.k);
  expect_no_mismatches(bad, op.describe());
  return got;
}

// The weights' gradient (ragged K): D[g] = Xᵀ·dY over the K rows (tokens)
// of group g, X (K, M) and dY (K, N) row-major as a layer holds them, so A
// = Xᵀ is M-major and B = dY N-major; D (G, M, N).
struct RaggedKCase {
  std::vector<std::int32_t> ends;  // over the K rows
  std::int64_t m = 0, n = 0, k = 0;
  DType d = DType::f32;
  const char* kernel = "sm90a";  // the kernel that must run it
  GroupedGemmKernel named = GroupedGemmKernel::automatic;
  std::int64_t d_pad = 0;  // D's leading dimension N + d_pad
};

// Runs a ragged-K case (D poisoned first), asserting the kernel chosen, and checks D.
inline void run_ragged_k(const runtime::Device& device, const RaggedKCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto g = static_cast<std::int64_t>(c.ends.size());
  auto xt = make_matrix(device, DType::bf16, {0, c.m, c.k, false}, rng);
  auto dy = make_matrix(device, DType::bf16, {0, c.k, c.n, true}, rng);
  auto d = make_matrix(device, c.d, {g, c.m, c.n, true, c.d_pad}, rng, true);
  auto offsets = make_offsets(device, c.ends);
  const GroupedGemmTensors t{xt.view, dy.view, &offsets.view, d.view};
  GroupedGemm op(t, {.out_dtype = c.d, .kernel = c.named});
  EXPECT_EQ(op.kernel_name(), std::string_view(c.kernel)) << op.describe();
  if (!op.check_support().empty()) {  // nothing to run: the case fails, the test goes on
    ADD_FAILURE() << op.describe();
    return;
  }
  op.execute(t);
  const auto bad =
      grouped_mismatches(HostTensor::download(d.view), grouped_gemm_reference(xt.host, dy.host, offsets.host), c.k);
  expect_no_mismatches(bad, op.describe());
}

inline constexpr BlockScaledFormat kGroupedFormats[] = {kMxfp4, kNvfp4, kMxfp8E4m3, kMxfp8E5m2, {DType::e2m1, DType::e8m0, 16}};

struct StreamCase {
  BlockScaledFormat format = kMxfp4;
  std::vector<std::int32_t> ends;
  std::int64_t m = 0, n = 0, k = 0;
  DType d = DType::f32;
  double weight_scale = 1.0;  // large: scales that do not fold
  bool scaled_a = false;      // A quantized like B, with amax
  bool offsets = true;
  bool one_large_scale = false;  // one lane of a warp cannot fold
  const char* kernel = "stream";  // the kernel that must run it
  GroupedGemmKernel named = GroupedGemmKernel::automatic;
};

struct StreamRun {
  HostTensor d;
  float amax = 0;
  std::string describe;
};

// Runs a block-scaled case on its kernel (D poisoned, amax zeroed),
// checks D (and amax) and returns them with the op's describe().
inline StreamRun run_stream(const runtime::Device& device, const StreamCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const auto g = static_cast<std::int64_t>(c.ends.size());
  DeviceWeights w = make_weights(device, c.format, g, c.n, c.k, rng, c.weight_scale, c.one_large_scale);
  auto a = make_matrix(device, DType::bf16, {0, c.m, c.k, true}, rng);
  std::optional<DeviceScaledA> qa;
  if (c.scaled_a) qa.emplace(make_scaled_a(device, c.format, c.m, c.k, rng));
  auto d = make_matrix(device, c.d, {0, c.m, c.n, true}, rng, true);
  auto offsets = make_offsets(device, c.ends);
  runtime::Tensor amax = runtime::Tensor::empty(device, DType::f32, {1});
  const float zero = 0;
  amax.copy_from_host(&zero, 4);
  const GroupedGemmTensors t{qa ? qa->codes_view : a.view, w.codes_view, c.offsets ? &offsets.view : nullptr, d.view,
                             qa ? &qa->scales_view : nullptr, &w.scales_view, qa ? &amax : nullptr};
  GroupedGemm op(t, {.out_dtype = c.d, .sf_vec_size = c.format.vec, .kernel = c.named});
  EXPECT_EQ(op.kernel_name(), std::string_view(c.kernel)) << op.describe();
  if (!op.check_support().empty()) {  // nothing to run: the case fails, the test goes on
    ADD_FAILURE() << op.describe();
    return {HostTensor::download(d.view), 0, op.describe()};
  }
  op.execute(t);
  StreamRun run{HostTensor::download(d.view), 0, op.describe()};
  const GroupedReference want = qa ? grouped_gemm_reference(qa->host(), w.host(), offsets.host)
                                   : grouped_gemm_reference(a.host, w.host(), offsets.host);
  const auto bad = grouped_mismatches(run.d, want, c.k);
  expect_no_mismatches(bad, run.describe);
  if (qa) {
    amax.copy_to_host(&run.amax, 4);
    const double most = reference_amax(want);
    EXPECT_NEAR(run.amax, most, static_cast<double>(c.k) * std::ldexp(1.0, -23) * most + 1e-30) << run.describe;
  }
  return run;
}

}  // namespace warpforge::ops::testing
