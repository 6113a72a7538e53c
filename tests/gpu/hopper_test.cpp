// The simulator's Hopper semantics against the hardware: the TMA, multicast,
// wgmma layout, DSL wgmma (FP8, A in registers) and warp-specialized GEMM
// kernels of tests/sim run on the GPU and on
// Device::sim() with the same inputs, and must agree (bit for bit for data
// movement, to f32 rounding for the GEMM). Needs an sm_90 GPU (H100/H200).
#include <cmath>
#include <cstring>
#include <random>

#include "../../src/sim/float_format.hpp"
#include "gpu_fixture.hpp"
#include "sim/hopper_kernels.hpp"
#include "sim/wgmma_dsl_kernel.hpp"
#include "sim/wgmma_kernels.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

namespace kernels = sim::testing;
namespace dsl_kernels = wgmma_dsl_testing;

class HopperGpu : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    const DeviceProperties& p = Device::cuda(0).properties();
    if (p.compute_capability_major != 9 || p.compute_capability_minor != 0)
      GTEST_SKIP() << "needs an sm_90 GPU for sm_90a kernels; device '" << p.name << "' is "
                   << p.compute_capability_major << "." << p.compute_capability_minor;
  }

  std::mt19937 rng{std::random_device{}()};

  std::vector<std::uint16_t> random_bf16(std::size_t n) {
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<std::uint16_t> v(n);
    for (auto& x : v) {
      float f = normal(rng);
      if (std::abs(f) < 0.01f) f = 0.5f;  // never zero
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      x = static_cast<std::uint16_t>(u >> 16);
    }
    return v;
  }
};

// A 100 x 72 bf16 matrix; a 32 x 64 box with 128B swizzle running past both
// edges and one with 64B swizzle at negative coordinates: the raw shared
// memory images must match.
struct TmaBox {
  std::vector<std::uint32_t> box;
  TensorMapSwizzle swizzle;
  std::int32_t c0, c1;
};

class HopperGpuTmaBox : public HopperGpu, public ::testing::WithParamInterface<TmaBox> {};

TEST_P(HopperGpuTmaBox, LoadSwizzleAndBoundsMatchTheSimulator) {
  if (IsSkipped()) return;
  const TmaBox& b = GetParam();
  const auto a = random_bf16(100 * 72);
  const std::uint32_t bytes = b.box[0] * b.box[1] * 2;
  std::vector<std::vector<std::uint16_t>> images;
  for (const Device& device : {Device::cuda(0), Device::sim()}) {
    Buffer g(device, a.size() * 2), out(device, bytes);
    g.upload(a);
    out.upload(std::vector<std::uint16_t>(bytes / 2, 0xDEAD));
    const TensorMap map = make_tensor_map(device, {.dtype = DType::bf16, .address = g.address(), .dims = {72, 100},
                                                   .strides_bytes = {144}, .box = b.box, .swizzle = b.swizzle});
    Module m(device, ptx::parse(kernels::load_kernel(bytes, 2)));
    m.launch("tma_load", {.grid = {1}, .block = {128}}, {Arg::bytes_of(map), out, b.c0, b.c1, std::int32_t{0}});
    images.push_back(out.download<std::uint16_t>(bytes / 2));
  }
  for (std::size_t i = 0; i < images[0].size(); ++i)
    ASSERT_EQ(images[1][i], images[0][i]) << "box " << b.box[0] << "x" << b.box[1] << " element " << i;
}

INSTANTIATE_TEST_SUITE_P(Boxes, HopperGpuTmaBox,
                         // A 16 x 8 box with 32B swizzle at (60, 96) stops an H200 with
                         // CUDA_ERROR_ILLEGAL_INSTRUCTION while the simulator runs it (seen
                         // 2026-11-22, not understood): left out until the rule is found.
                         ::testing::Values(TmaBox{{64, 32}, TensorMapSwizzle::b128, 16, 80},
                                           TmaBox{{32, 16}, TensorMapSwizzle::b64, -8, -3}),
                         [](const auto& info) { return "swizzle" + std::to_string(swizzle_bytes(info.param.swizzle)); });

TEST_F(HopperGpu, TmaMulticastMatchesTheSimulator) {
  std::vector<float> t(16 * 32);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  for (auto& v : t) v = u(rng);
  std::vector<std::vector<float>> results;
  for (const Device& device : {Device::cuda(0), Device::sim()}) {
    Buffer g(device, t.size() * 4), out(device, 2 * 512 * 4);
    g.upload(t);
    out.upload(std::vector<float>(2 * 512, -1.f));
    const TensorMap map = make_tensor_map(
        device, {.dtype = DType::f32, .address = g.address(), .dims = {32, 16}, .strides_bytes = {128}, .box = {32, 16}});
    Module m(device, ptx::parse(kernels::ptx_module(kernels::kMulticastKernel)));
    m.launch("multicast", {.grid = {2}, .block = {128}, .cluster = {2, 1, 1}}, {Arg::bytes_of(map), out});
    results.push_back(out.download<float>(2 * 512));
  }
  EXPECT_EQ(results[0], results[1]);
  for (std::size_t i = 0; i < 512; ++i) ASSERT_EQ(results[0][i], t[i]) << i;
}

// Every shared-memory layout of wgmma_kernels.hpp (K- and MN-major, each
// swizzle, f16/bf16/e4m3, f32 and f16 accumulators): the simulator's reading
// of the descriptors must be the hardware's.
TEST_F(HopperGpu, WgmmaLayoutsMatchTheSimulator) {
  for (const kernels::NamedCase& named : kernels::wgmma_layout_cases()) {
    SCOPED_TRACE(named.name);
    const kernels::Case& c = named.c;
    const bool half = c.atype == ptx::Type::f16 || c.atype == ptx::Type::bf16;
    const int kk = half ? 32 : 64;
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    const auto random = [&](std::size_t n) {
      std::vector<std::uint32_t> bits(n);
      for (auto& x : bits) x = sim::encode_float(u(rng), sim::float_format(c.atype), sim::Rounding::rn, true);
      return bits;
    };
    const kernels::WgmmaImage img = kernels::wgmma_image(c, random(64 * kk), random(static_cast<std::size_t>(c.n) * kk));
    const auto d = kernels::wgmma_descriptors(c, img.b_base);
    const std::size_t words = 128 * static_cast<std::size_t>(c.dtype == ptx::Type::f32 ? c.n / 2 : c.n / 4);
    std::vector<std::vector<std::uint32_t>> results;
    for (const Device& device : {Device::cuda(0), Device::sim()}) {
      Buffer in(device, img.bytes.size()), out(device, words * 4);
      in.upload(img.bytes);
      out.upload(std::vector<std::uint32_t>(words, 0xFFFFFFFFu));
      Module m(device, ptx::parse(kernels::kernel(c, img.bytes.size())));
      m.launch("wg", {.grid = {1}, .block = {128}}, {in, out, d[0], d[1], d[2], d[3]});
      results.push_back(out.download<std::uint32_t>(words));
    }
    for (std::size_t i = 0; i < words; ++i)
      for (int h = 0; h < (c.dtype == ptx::Type::f32 ? 1 : 2); ++h) {
        const auto value = [&](std::uint32_t w) {
          return c.dtype == ptx::Type::f32 ? double{sim::f32_of(w)}
                                            : sim::decode_float((w >> (16 * h)) & 0xFFFF, sim::kF16);
        };
        const double gpu = value(results[0][i]), simulated = value(results[1][i]);
        // FP8 wgmma accumulates its products with fewer bits than f32 (about
        // 14 mantissa bits, DeepSeek-V3 technical report, 3.3.2), so e4m3
        // cases match the simulator's exact sums to 1e-2; f16 accumulators too.
        const bool coarse = c.dtype != ptx::Type::f32 || !half;
        const double tol = (coarse ? 1e-2 : 1e-3) * (1 + std::abs(gpu));
        ASSERT_NEAR(simulated, gpu, tol) << "thread " << i / (words / 128) << " register " << i % (words / 128);
      }
  }
}

// The DSL's wgmma forms (wgmma_dsl_kernel.hpp): e4m3/e5m2 with A in shared
// memory, and A in registers for bf16, f16, e4m3 and mixed FP8, its
// fragments placed by layout::wgmma_a_fragment: the simulator's reading of
// the fragments, and layout/'s, must be the hardware's.
TEST_F(HopperGpu, DslWgmmaFormsMatchTheSimulator) {
  for (const dsl_kernels::DslWgmmaCase& c : dsl_kernels::dsl_wgmma_cases()) {
    SCOPED_TRACE(c.name);
    const dsl_kernels::DslWgmmaInputs in = dsl_kernels::dsl_wgmma_inputs(c, rng);
    const ptx::Module kernel = dsl_kernels::dsl_wgmma_kernel(c, in.image.size());
    const std::size_t words = 128 * static_cast<std::size_t>(c.n / 2);
    const auto& d = in.descriptors;
    std::vector<std::vector<float>> results;
    for (const Device& device : {Device::cuda(0), Device::sim()}) {
      Buffer image(device, in.image.size()), fragments(device, in.fragments.size() * 4), out(device, words * 4);
      image.upload(in.image);
      fragments.upload(in.fragments);
      out.upload(std::vector<float>(words, std::nanf("")));
      Module m(device, kernel);
      m.launch("wg_dsl", {.grid = {1}, .block = {128}}, {image, fragments, out, d[0], d[1], d[2], d[3]});
      results.push_back(out.download<float>(words));
    }
    // FP8 wgmma accumulates with fewer bits than f32 (see WgmmaLayoutsMatchTheSimulator).
    const double tol = ptx::bits(c.a_type) == 8 ? 1e-2 : 1e-3;
    for (std::size_t i = 0; i < words; ++i)
      ASSERT_NEAR(results[1][i], results[0][i], tol * (1 + std::abs(results[0][i])))
          << "thread " << i / (words / 128) << " accumulator " << i % (words / 128);
  }
}

TEST_F(HopperGpu, WarpSpecializedWgmmaGemmMatchesTheSimulator) {
  const std::uint64_t m = 128, n = 128, k = 256;
  const auto a = random_bf16(m * k), b = random_bf16(n * k);
  std::vector<std::vector<float>> results;
  for (const Device& device : {Device::cuda(0), Device::sim()}) {
    Buffer ga(device, a.size() * 2), gb(device, b.size() * 2), d(device, m * n * 4);
    ga.upload(a);
    gb.upload(b);
    d.upload(std::vector<float>(m * n, std::nanf("")));
    const auto map = [&](const Buffer& x, std::uint64_t rows) {
      return make_tensor_map(device, {.dtype = DType::bf16, .address = x.address(), .dims = {k, rows},
                                      .strides_bytes = {k * 2}, .box = {64, 128}, .swizzle = TensorMapSwizzle::b128});
    };
    Module mod(device, ptx::parse(kernels::ws_gemm_kernel()));
    mod.launch("gemm", {.grid = {1}, .block = {384}, .dynamic_shared_bytes = kernels::kWsGemmSharedBytes},
               {Arg::bytes_of(map(ga, m)), Arg::bytes_of(map(gb, n)), d, static_cast<std::uint32_t>(k / 64)});
    results.push_back(d.download<float>(m * n));
  }
  for (std::size_t i = 0; i < m * n; ++i)
    ASSERT_NEAR(results[1][i], results[0][i], 1e-3 * (1 + std::abs(results[0][i]))) << "D[" << i / n << "][" << i % n
                                                                                     << "]";
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
