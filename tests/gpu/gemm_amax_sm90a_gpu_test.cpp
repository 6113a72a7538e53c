// The sm90a GemmAmax kernel (TMA + dequantizer warpgroups + wgmma) on an
// sm_90a GPU: MXFP8, NVFP4 and MXFP4 against the CPU reference with ragged
// tiles and L = 2, the NaN rule through the global atomic, and a problem of
// more tiles than SMs against the sm80 kernel on the same GPU. Skips elsewhere.
#include <cmath>
#include <optional>
#include <random>

#include "../../src/ops/gemm_amax/gemm_amax_path.hpp"
#include "gemm_amax_gpu_support.hpp"
#include "gpu_fixture.hpp"
#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/gemm_amax_reference.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

class GemmAmaxSm90aGpu : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (Device::cuda(0).target() != ptx::Target::sm_90a)
      GTEST_SKIP() << "the sm90a kernel needs an sm_90a GPU; this one is " << ptx::name(Device::cuda(0).target());
  }
};

struct Outputs {
  std::vector<std::uint8_t> c;
  float amax = 0.0f;
};

// gemm_amax with `options`, asserting which path GemmAmax takes for it.
Outputs run(const Operand& a, const Operand& b, ops::GemmAmaxOptions options, bool sm90a) {
  auto r = ops::gemm_amax(a.data, b.data, a.scales, b.scales, options);
  std::vector<std::string> refused;
  const auto p = ops::describe_gemm_amax(a.data, b.data, a.scales, b.scales, r.c, r.amax, options, refused);
  EXPECT_TRUE(refused.empty());
  EXPECT_EQ(ops::sm90a_gemm_amax_path().refusals(p, a.data.device()).empty(), sm90a) << p.describe();
  Outputs out;
  out.c.resize(r.c.extent_bytes());
  TensorView(r.c.device(), r.c.address(), DType::u8, {static_cast<std::int64_t>(out.c.size())})
      .copy_to_host(out.c.data(), out.c.size());
  r.amax.copy_to_host(&out.amax, 4);
  return out;
}

bool close(float got, float want) {
  return std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= 0.01f + 0.01f * std::fabs(want);
}

struct Shape {
  std::int64_t m = 520, n = 392, k = 512, l = 2;
  std::optional<ops::GemmAmaxTile> tile;  // the kernel's default when absent
  std::optional<ops::GemmAmaxTile> cluster;  // the kernel's choice when absent
  ops::GemmAmaxPrecision precision = ops::GemmAmaxPrecision::exact;
};

void against_reference(ops::BlockScaledFormat f, DType c_dtype, bool nan_scale, Shape s = {}) {
  const Device dev = Device::cuda(0);
  std::mt19937 rng(91);
  const std::int64_t m = s.m, n = s.n, k = s.k, l = s.l;
  Operand a = upload(dev, m, k, l, f, rng), b = upload(dev, n, k, l, f, rng);
  if (nan_scale) {
    a.q.scales[static_cast<std::size_t>(a.q.scale_layout().offset(131, 2, 1))] = 0xFF;  // e8m0 NaN
    a.scales.copy_from_host(a.q.scales.data(), a.q.scales.size());
  }
  const Outputs r =
      run(a, b,
          {.c_dtype = c_dtype, .sf_vec_size = f.vec, .mma_tile = s.tile, .cluster = s.cluster,
           .precision = s.precision},
          true);
  auto host = [&](const Operand& o, std::int64_t rows) {
    return ops::BlockScaledOperand{f.data, rows, k, l, k, 1, rows * k, o.q.data, f.scale, f.vec, o.q.scales};
  };
  const auto ref = ops::gemm_amax_reference(host(a, m), host(b, n));
  int bad = 0;
  for (std::int64_t z = 0; z < l; ++z)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const float want = ops::round_to(c_dtype, ref.at(i, j, z));
        const float got = element(r.c, c_dtype, (z * m + i) * n + j);
        if (!close(got, want) && ++bad <= 5)
          ADD_FAILURE() << "C[" << i << "," << j << "," << z << "] = " << got << ", want " << want;
      }
  EXPECT_EQ(bad, 0);
  if (nan_scale)
    EXPECT_TRUE(std::isnan(r.amax)) << r.amax;
  else
    EXPECT_NEAR(r.amax, ref.amax, 0.1f);
}

TEST_F(GemmAmaxSm90aGpu, E4m3ToBf16) { against_reference(ops::kMxfp8E4m3, DType::bf16, false); }
TEST_F(GemmAmaxSm90aGpu, E5m2ToF32) { against_reference(ops::kMxfp8E5m2, DType::f32, false); }
TEST_F(GemmAmaxSm90aGpu, NaNScaleMakesAmaxNaN) { against_reference(ops::kMxfp8E4m3, DType::f16, true); }
TEST_F(GemmAmaxSm90aGpu, Nvfp4ToBf16) { against_reference(ops::kNvfp4, DType::bf16, false); }
TEST_F(GemmAmaxSm90aGpu, Mxfp4ToF16) { against_reference(ops::kMxfp4, DType::f16, false); }

// 128 x 256 tiles (the converting warpgroups, without clusters) on the
// default shape, ragged against them: every format.
TEST_F(GemmAmaxSm90aGpu, WideTilesInEveryFormat) {
  const Shape wide{.tile = ops::GemmAmaxTile{128, 256}, .cluster = ops::GemmAmaxTile{1, 1}};  // (FP8's default is 2x1)
  against_reference(ops::kMxfp8E4m3, DType::bf16, false, wide);
  against_reference(ops::kMxfp8E5m2, DType::f32, false, wide);
  against_reference(ops::kNvfp4, DType::f16, false, wide);
  against_reference(ops::kMxfp4, DType::bf16, false, wide);
  against_reference(ops::kMxfp8E4m3, DType::f16, true, wide);
}

// The same in 2-CTA clusters sharing the conversion of B; M = 520 is five
// 128-row tiles, so the last cluster's rank 1 has none of its own. Many
// units per cluster too (2048 x 2064, K of 40 blocks).
TEST_F(GemmAmaxSm90aGpu, ClusterPairsInEveryFormat) {
  const Shape pair{.tile = ops::GemmAmaxTile{128, 256}, .cluster = ops::GemmAmaxTile{2, 1}};
  against_reference(ops::kMxfp8E4m3, DType::bf16, false, pair);
  against_reference(ops::kMxfp8E5m2, DType::f32, false, pair);
  against_reference(ops::kNvfp4, DType::f16, false, pair);
  against_reference(ops::kMxfp4, DType::bf16, false, pair);
  against_reference(ops::kMxfp8E4m3, DType::f16, true, pair);
  const Shape many{.m = 2048, .n = 2064, .k = 2560, .l = 1, .tile = ops::GemmAmaxTile{128, 256}, .cluster = ops::GemmAmaxTile{2, 1}};
  against_reference(ops::kNvfp4, DType::bf16, false, many);
  against_reference(ops::kMxfp8E4m3, DType::f32, false, many);
}

// A decode-like shape (M = 128, few tiles) splits each tile's K over two or
// four CTAs whose sums meet in the workspace (17 FP4 K blocks in four
// uneven ranges, 9 FP8 ones in two: FP8 wgmma, precision fast, whose error
// the inputs here stay within); run twice, so the second launch finds the
// flags the first left clear.
TEST_F(GemmAmaxSm90aGpu, DecodeShapeSplitsK) {
  Shape decode{.m = 128, .n = 2064, .k = 1088, .l = 1};
  for (ops::BlockScaledFormat f : {ops::kMxfp8E4m3, ops::kNvfp4, ops::kMxfp4}) {
    decode.precision = f.data == DType::e2m1 ? ops::GemmAmaxPrecision::exact : ops::GemmAmaxPrecision::fast;
    ops::GemmAmaxProblem p;
    p.m = decode.m, p.n = decode.n, p.k = decode.k, p.l = 1, p.ab_dtype = f.data, p.vec = f.vec;
    p.precision = decode.precision;
    EXPECT_GE(ops::sm90a_gemm_amax_tiling(p, Device::cuda(0)).splits, 2) << p.describe();
    for (int run = 0; run < 2; ++run) against_reference(f, DType::bf16, false, decode);
  }
}

// 2048 x 2064 x 2048: 16 x 17 tiles, more than the SMs, so each CTA walks
// several; the sm80 kernel (chosen by a 64 x 64 tile) computes the same sums.
TEST_F(GemmAmaxSm90aGpu, ManyTilesMatchTheSm80Kernel) {
  const Device dev = Device::cuda(0);
  std::mt19937 rng(92);
  const std::int64_t m = 2048, n = 2064, k = 2048;
  Operand a = upload(dev, m, k, 1, ops::kMxfp8E4m3, rng), b = upload(dev, n, k, 1, ops::kMxfp8E4m3, rng);
  const Outputs fast = run(a, b, {.c_dtype = DType::f32}, true);
  const Outputs slow = run(a, b, {.c_dtype = DType::f32, .mma_tile = ops::GemmAmaxTile{64, 64}}, false);
  int bad = 0;
  for (std::int64_t e = 0; e < m * n; ++e) {
    const float got = element(fast.c, DType::f32, e), want = element(slow.c, DType::f32, e);
    if (!close(got, want) && ++bad <= 5) ADD_FAILURE() << "C element " << e << " = " << got << ", sm80 " << want;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_NEAR(fast.amax, slow.amax, 0.1f);
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
