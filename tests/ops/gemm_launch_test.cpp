// What ops::Gemm asks of a GPU, seen on a recording stand-in of an H100
// (tests/runtime/fake_backend.hpp): the configuration the heuristic picks
// for large and small problems and for the shared memory the device allows,
// the launch it makes (grid, block, dynamic shared memory, arguments), that
// the sm_80 module loads on an sm_90a device, and the refusals that need a
// second device.
#include <gtest/gtest.h>

#include <cstring>

#include "ops/gemm_operands.hpp"
#include "runtime/fake_backend.hpp"
#include "warpforge/error.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::testing::FakeBackend;

class GemmOnFakeH100 : public ::testing::Test {
 protected:
  std::shared_ptr<FakeBackend> backend = std::make_shared<FakeBackend>();
  runtime::Device gpu{backend};
  std::mt19937 rng{1};

  // Operands without data (the fake runs nothing).
  runtime::Buffer buffer(std::size_t bytes) { return runtime::Buffer(gpu, bytes); }

  std::uint32_t u32_arg(std::size_t i) const {
    std::uint32_t v;
    std::memcpy(&v, backend->launches.back().args[i].bytes.data(), 4);
    return v;
  }
};

TEST_F(GemmOnFakeH100, LargeProblemTakes128x128TilesInFourStages) {
  const std::int64_t m = 4096, n = 2048, k = 1024;
  auto a = buffer(m * k * 2), b = buffer(k * n * 2), d = buffer(m * n * 2);
  runtime::TensorView va(a, DType::bf16, {m, k}), vb(b, DType::bf16, {k, n}),
      vd(d, DType::bf16, {m, n});
  Gemm g(va, vb, nullptr, vd, {.kernel = GemmKernel::sm80});
  g.compile();  // an sm_80 module on an sm_90a device: runtime::Module accepts it
  EXPECT_EQ(g.config().describe(), "128x128x32 s4 w2x2 c1x1");
  g.execute(va, vb, nullptr, vd);
  ASSERT_EQ(backend->launches.size(), 1u);
  const auto& launch = backend->launches.back();
  EXPECT_EQ(launch.kernel, "warpforge_gemm_sm80_bf16_bf16_rrxr_v88sp_128x128x32s4w2x2");
  EXPECT_EQ(launch.config.grid.x, 32u * 16u);
  EXPECT_EQ(launch.config.grid.y, 1u);
  EXPECT_EQ(launch.config.block.x, 128u);
  EXPECT_EQ(launch.config.dynamic_shared_bytes, 4u * (128 + 128) * 32 * 2);
  ASSERT_EQ(launch.args.size(), 17u);
  EXPECT_EQ(u32_arg(4), m);
  EXPECT_EQ(u32_arg(5), n);
  EXPECT_EQ(u32_arg(6), k);
  EXPECT_EQ(u32_arg(7), k);  // lda
  EXPECT_EQ(u32_arg(8), n);  // ldb
}

// The sm90a heuristic over the shapes of a decoder (docs/PERFORMANCE.md,
// bf16 GEMM over decoder shapes): the N tile of the least waves x (rows +
// 2 tile_n), 64 rows and eight stages for decode (M <= 64), else 128 rows;
// widths that are odd multiples of 32 with K-major B only.
TEST_F(GemmOnFakeH100, Sm90aHeuristicFollowsTheShape) {
  struct Case {
    std::int64_t m, n, k;
    const char* config;
  } cases[] = {
      {16, 4096, 4096, "64x64x64 s8 w1x1 c1x1"},  // decode: one wave of 192, not of 320
      {1, 8192, 1024, "64x64x64 s8 w1x1 c1x1"},
      {64, 10240, 8192, "64x128x64 s8 w1x1 c1x1"},     // one wave of 320, not two of 192
      {128, 4096, 4096, "128x64x64 s8 w2x1 c1x1"},     // 64 tiles: one wave of 192, not of 384
      {256, 8192, 8192, "128x128x64 s6 w2x1 c1x1"},    // 128 tiles: one wave of 384, not two of 192
      {256, 10240, 8192, "128x160x64 s5 w2x1 c1x1"},   // 128 tiles: one wave of 448, not of 512
      {512, 10240, 8192, "128x160x64 s5 w2x1 c1x1"},   // 2 waves of 448, not of 512 or 3 of 384
      {1024, 10240, 8192, "128x224x64 s4 w2x1 c1x1"},  // 3 waves of 576, not 4 of 448 or 3 of 640
      {256, 28672, 4096, "128x224x64 s4 w2x1 c1x1"},   // 2 waves of 576, not 2 of 640
      {256, 6144, 4096, "128x96x64 s7 w2x1 c1x1"},     // 128 tiles: one wave of 320, not of 384
      {4096, 4096, 4096, "128x256x64 s3 w2x1 c1x1"},   // 4 waves of 640, not 8 of 384
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k));
    auto a = buffer(c.m * c.k * 2), b = buffer(c.k * c.n * 2), d = buffer(c.m * c.n * 2);
    runtime::TensorView va(a, DType::bf16, {c.m, c.k}), vb(b, DType::bf16, {c.k, c.n}, {1, c.k}),
        vd(d, DType::bf16, {c.m, c.n});
    Gemm g(va, vb, nullptr, vd, {.kernel = GemmKernel::sm90a});
    g.compile();
    EXPECT_EQ(g.config().describe(), c.config);
  }
  // N-major B keeps to multiples of 64 (its odd widths, in the 64-byte
  // swizzle, ran slower on an H100): 512 x 10240 takes 192, not 160.
  const std::int64_t m = 512, n = 10240, k = 8192;
  auto a = buffer(m * k * 2), b = buffer(k * n * 2), d = buffer(m * n * 2);
  runtime::TensorView va(a, DType::bf16, {m, k}), vb(b, DType::bf16, {k, n}), vd(d, DType::bf16, {m, n});
  Gemm g(va, vb, nullptr, vd, {.kernel = GemmKernel::sm90a});
  g.compile();
  EXPECT_EQ(g.config().describe(), "128x192x64 s4 w2x1 c1x1");
}

TEST_F(GemmOnFakeH100, SmallProblemTakesSmallerTilesForMoreCtas) {
  auto a = buffer(256 * 64 * 2), b = buffer(64 * 256 * 2), d = buffer(256 * 256 * 4);
  runtime::TensorView va(a, DType::f16, {256, 64}), vb(b, DType::f16, {64, 256}, {1, 64}),
      vd(d, DType::f32, {256, 256});
  Gemm g(va, vb, nullptr, vd, {.kernel = GemmKernel::sm80});
  g.compile();
  EXPECT_EQ(g.config().describe(), "64x64x32 s3 w2x2 c1x1");
}

TEST_F(GemmOnFakeH100, SharedMemoryLimitShapesTheChoiceAndRefusesForcedConfigurations) {
  backend->props.shared_bytes_per_block_optin = 48 * 1024;
  const std::int64_t m = 4096, n = 4096, k = 256;
  auto a = buffer(m * k * 2), b = buffer(k * n * 2), d = buffer(m * n * 4);
  runtime::TensorView va(a, DType::bf16, {m, k}), vb(b, DType::bf16, {k, n}),
      vd(d, DType::f32, {m, n});
  Gemm g(va, vb, nullptr, vd, {.kernel = GemmKernel::sm80});
  g.compile();
  EXPECT_EQ(g.config().describe(), "128x128x32 s3 w2x2 c1x1");
  GemmConfig four{.tile_m = 128, .tile_n = 128, .tile_k = 32, .stages = 4};
  Gemm forced(va, vb, nullptr, vd, {.kernel = GemmKernel::sm80, .config = four});
  auto why = forced.check_support();
  ASSERT_EQ(why.size(), 1u);
  EXPECT_EQ(why[0],
            "configuration 128x128x32 s4 w2x2 c1x1 for kernel sm80: 4 stages of 128x32 A and "
            "32x128 B tiles "
            "take 65536 bytes of shared memory; device 'Fake H100' allows 49152 per block");
}

TEST_F(GemmOnFakeH100, MoreBatchesThanGridRowsAreRefused) {
  const std::int64_t l = 65536;
  auto a = buffer(l * 2), b = buffer(l * 2), d = buffer(l * 4);
  runtime::TensorView va(a, DType::bf16, {l, 1, 1}), vb(b, DType::bf16, {l, 1, 1}),
      vd(d, DType::f32, {l, 1, 1});
  Gemm g(va, vb, nullptr, vd, {.kernel = GemmKernel::sm80});
  auto why = g.check_support();
  ASSERT_EQ(why.size(), 1u);
  EXPECT_EQ(why[0],
            "kernel sm80 refuses: L = 65536 batches; the sm80 kernel runs at most 65535 (one grid "
            "row each)");
}

TEST_F(GemmOnFakeH100, OperandsOnDifferentDevicesAreRefused) {
  const runtime::Device sim = runtime::Device::sim();
  auto a = make_matrix(sim, DType::bf16, {0, 8, 8}, rng);
  auto b = make_matrix(gpu, DType::bf16, {0, 8, 8}, rng);
  auto d = make_matrix(sim, DType::f32, {0, 8, 8}, rng, true);
  Gemm g(a.view, b.view, nullptr, d.view);
  auto why = g.check_support();
  ASSERT_EQ(why.size(), 1u);
  EXPECT_EQ(why[0], "B is on GPU 0 'Fake H100' but A is on " + sim.describe() +
                        "; all operands must be on one device");
  EXPECT_THROW(g.compile(), OpsError);
  // Each Device::sim() is a simulator of its own, named by its number.
  const runtime::Device other = runtime::Device::sim();
  EXPECT_NE(other.describe(), sim.describe());
  auto c = make_matrix(other, DType::f32, {0, 8, 8}, rng);
  Gemm two_sims(a.view, a.view, &c.view, d.view, {.beta = 1.0f});
  EXPECT_EQ(two_sims.check_support(),
            std::vector<std::string>{"C is on " + other.describe() + " but A is on " + sim.describe() +
                                     "; all operands must be on one device"});
}

TEST_F(GemmOnFakeH100, ExtentsAndGridsBeyond32BitsAreRefused) {
  // Views of memory that is never touched: only the description matters.
  const std::int64_t huge = std::int64_t{1} << 31;
  runtime::TensorView a(gpu, 0x10000, DType::bf16, {huge, 1}), b(gpu, 0x10000, DType::bf16, {1, 8}),
      d(gpu, 0x10000, DType::f32, {huge, 8});
  Gemm tall(a, b, nullptr, d);
  EXPECT_EQ(
      tall.check_support(),
      std::vector<std::string>{"M = 2147483648 exceeds 2^31 - 1, the largest extent supported"});
  // 2^30 x 2^30 in 16x16 tiles is 2^52 CTAs.
  const std::int64_t side = std::int64_t{1} << 30;
  runtime::TensorView a2(gpu, 0x10000, DType::bf16, {side, 1}),
      b2(gpu, 0x10000, DType::bf16, {1, side}), d2(gpu, 0x10000, DType::f32, {side, side});
  GemmConfig tiny{
      .tile_m = 16, .tile_n = 16, .tile_k = 16, .stages = 2, .warps_m = 1, .warps_n = 1};
  Gemm wide(a2, b2, nullptr, d2, {.kernel = GemmKernel::sm80, .config = tiny});
  EXPECT_EQ(wide.check_support(),
            std::vector<std::string>{
                "configuration 16x16x16 s2 w1x1 c1x1 for kernel sm80: 4503599627370496 CTAs per "
                "batch; the sm80 kernel launches at most 2^31 - 1 (grid.x)"});
}

TEST_F(GemmOnFakeH100, ADeviceWithTooLittleSharedMemoryForAnyConfigurationIsRefused) {
  backend->props.shared_bytes_per_block_optin = 1024;
  auto a = buffer(64 * 64 * 2), b = buffer(64 * 64 * 2), d = buffer(64 * 64 * 4);
  runtime::TensorView va(a, DType::bf16, {64, 64}), vb(b, DType::bf16, {64, 64}),
      vd(d, DType::f32, {64, 64});
  Gemm g(va, vb, nullptr, vd, {.kernel = GemmKernel::sm80});
  try {
    g.compile();
    ADD_FAILURE() << "compiled a configuration the device cannot hold";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "ops::Gemm: kernel sm80 has no configuration for 64x64x64 L1 bf16->f32 A row "
                  "B row D row on device 'Fake H100'; 64x64x32 s3 w2x2 c1x1 is refused:\n  - 3 "
                  "stages of 64x32 A and 32x64 B tiles take 24576 bytes of shared memory; "
                  "device 'Fake H100' allows 1024 per block"),
              std::string::npos)
        << e.what();
  }
  Gemm tuned(va, vb, nullptr, vd, {.kernel = GemmKernel::sm80, .autotune = true});
  try {
    tuned.compile();
    ADD_FAILURE() << "autotuned without candidates";
  } catch (const OpsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ops::Gemm autotune: no candidate configuration for 64x64x64 L1 bf16->f32 A row "
              "B row D row");
  }
}

TEST_F(GemmOnFakeH100, LeadingDimensionsAndBatchStridesThatDoNotFitAreRefused) {
  runtime::TensorView a(gpu, 0x10000, DType::bf16, {2, 8}, {std::int64_t{1} << 31, 1}),
      b(gpu, 0x10000, DType::bf16, {8, 8}), d(gpu, 0x10000, DType::f32, {2, 8});
  Gemm g(a, b, nullptr, d);
  EXPECT_EQ(g.check_support(),
            std::vector<std::string>{
                "A's leading dimension 2147483648 exceeds 2^31 - 1, the largest supported"});
  runtime::TensorView a3(gpu, 0x10000, DType::bf16, {2, 8, 8}),
      b3(gpu, 0x10000, DType::bf16, {2, 8, 8}), d3(gpu, 0x10000, DType::f32, {2, 8, 8}, {0, 8, 1});
  Gemm shared_d(a3, b3, nullptr, d3);
  EXPECT_EQ(shared_d.check_support(),
            std::vector<std::string>{
                "D f32[2, 8, 8] strides [0, 8, 1] has batch stride 0, so its batches overlap; "
                "give each batch its own memory"});
}

}  // namespace
}  // namespace warpforge::ops::testing
