// GemmAmax on a GPU against the CPU reference (the sm80 kernel; on an sm_90a
// GPU the sm90a kernel takes the MXFP8 cases into wide C): MXFP8, MXFP4 and
// NVFP4 inputs quantized with ops::quantize, several CTAs, L = 2, and the
// NaN rule of amax through the global atomic.
#include <cmath>
#include <random>

#include "gemm_amax_gpu_support.hpp"
#include "gpu_fixture.hpp"
#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/gemm_amax_reference.hpp"
#include "warpforge/ops/half.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/quantize.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

using GemmAmaxGpu = GpuTest;

void check(ops::BlockScaledFormat f, DType c_dtype, bool nan_scale) {
  const Device dev = Device::cuda(0);
  std::mt19937 rng(42);
  const std::int64_t m = 300, n = 224, k = 256, l = 2;
  Operand a = upload(dev, m, k, l, f, rng), b = upload(dev, n, k, l, f, rng);
  if (nan_scale) {
    a.q.scales[static_cast<std::size_t>(a.q.scale_layout().offset(131, 2, 1))] = 0xFF;  // e8m0 NaN
    a.scales.copy_from_host(a.q.scales.data(), a.q.scales.size());
  }
  ops::GemmAmaxOptions o;
  o.c_dtype = c_dtype;
  o.sf_vec_size = f.vec;
  auto r = ops::gemm_amax(a.data, b.data, a.scales, b.scales, o);
  std::vector<std::uint8_t> c(r.c.extent_bytes());
  TensorView(dev, r.c.address(), DType::u8, {static_cast<std::int64_t>(c.size())}).copy_to_host(c.data(), c.size());
  float amax;
  r.amax.copy_to_host(&amax, 4);

  auto host = [&](const Operand& o, std::int64_t rows) {
    return ops::BlockScaledOperand{f.data, rows, k, l, k, 1, rows * k, o.q.data, f.scale, f.vec, o.q.scales};
  };
  const auto ref = ops::gemm_amax_reference(host(a, m), host(b, n));
  const float tol = c_dtype == DType::f32 || c_dtype == DType::bf16 || c_dtype == DType::f16 ? 0.01f : 0.1f;
  int bad = 0;
  for (std::int64_t b_ = 0; b_ < l; ++b_)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const float want = ops::round_to(c_dtype, ref.at(i, j, b_));
        const float got = element(c, c_dtype, (b_ * m + i) * n + j);
        const bool ok = std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= tol + tol * std::fabs(want);
        if (!ok && ++bad <= 5) ADD_FAILURE() << "C[" << i << "," << j << "," << b_ << "] = " << got << ", want " << want;
      }
  EXPECT_EQ(bad, 0);
  if (nan_scale) {
    EXPECT_TRUE(std::isnan(amax)) << amax;
  } else {
    EXPECT_NEAR(amax, ref.amax, 0.1f);
  }
}

TEST_F(GemmAmaxGpu, Mxfp8E4m3ToBf16) { check(ops::kMxfp8E4m3, DType::bf16, false); }
TEST_F(GemmAmaxGpu, Mxfp8E5m2ToF32) { check(ops::kMxfp8E5m2, DType::f32, false); }
TEST_F(GemmAmaxGpu, Mxfp4ToE4m3) { check(ops::kMxfp4, DType::e4m3, false); }
TEST_F(GemmAmaxGpu, Nvfp4ToFp4) { check(ops::kNvfp4, DType::e2m1, false); }
TEST_F(GemmAmaxGpu, NaNScaleMakesAmaxNaN) { check(ops::kMxfp8E4m3, DType::f16, true); }

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
