// What the sm90a GemmAmax path refuses, each with the value, the rule and
// what it accepts. (GemmAmax then runs the problem on sm80: the sm80 kernel
// tests' problems are such, e.g. m-major operands or 32 x 32 tiles.)
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "../../src/ops/gemm_amax/gemm_amax_path.hpp"
#include "runtime/fake_backend.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// An accepted problem: 300 x 200 x 256, L 2, e4m3 x e8m0/32 -> bf16, all k-major.
GemmAmaxProblem accepted() {
  GemmAmaxProblem p;
  p.m = 300, p.n = 200, p.k = 256, p.l = 2;
  p.ab_dtype = DType::e4m3, p.sf_dtype = DType::e8m0, p.c_dtype = DType::bf16, p.vec = 32;
  p.a = {256, 1, 300 * 256}, p.b = {256, 1, 200 * 256}, p.c = {200, 1, 300 * 200};
  return p;
}

std::vector<std::string> refusals(const GemmAmaxProblem& p, const runtime::Device& device = runtime::Device::sim()) {
  return sm90a_gemm_amax_path().refusals(p, device);
}

// The one refusal of `p`, which must contain every fragment.
void expect_one(const GemmAmaxProblem& p, std::initializer_list<const char*> fragments,
                const runtime::Device& device = runtime::Device::sim()) {
  const auto why = refusals(p, device);
  ASSERT_EQ(why.size(), 1u) << p.describe() << (why.empty() ? "" : ": " + why.front());
  for (const char* f : fragments) EXPECT_NE(why[0].find(f), std::string::npos) << why[0] << "\n  lacks: " << f;
}

TEST(GemmAmaxSm90aRefusals, AcceptsKMajorMxfp8IntoWideC) {
  for (DType ab : {DType::e4m3, DType::e5m2})
    for (DType c : {DType::f32, DType::bf16, DType::f16}) {
      GemmAmaxProblem p = accepted();
      p.ab_dtype = ab, p.c_dtype = c;
      EXPECT_TRUE(refusals(p).empty()) << p.describe();
    }
  // Narrower tiles of FP8 data run FP8 wgmma: precision fast only.
  GemmAmaxProblem p = accepted();
  p.tile = GemmAmaxTile{128, 128};
  expect_one(p, {"mma tile 128x128 with FP8 data", "converts FP8 exactly only in 128x256 tiles",
                 "precision fast runs 128x128 and 128x64"});
  p.precision = GemmAmaxPrecision::fast;
  EXPECT_TRUE(refusals(p).empty());
  EXPECT_TRUE(refusals(p, runtime::Device(std::make_shared<runtime::testing::FakeBackend>())).empty());
}

TEST(GemmAmaxSm90aRefusals, DevicesOtherThanSm90a) {
  auto backend = std::make_shared<runtime::testing::FakeBackend>();
  backend->fake_target = ptx::Target::sm_80;
  backend->props.name = "Fake A100";
  expect_one(accepted(), {"device 'Fake A100'", "sm_80", "needs sm_90a"}, runtime::Device(backend));
}

TEST(GemmAmaxSm90aRefusals, AcceptsFp4WithEveryScaleFormat) {
  struct Scales {
    DType sf;
    int vec;
  };
  for (Scales sc : {Scales{DType::e8m0, 32}, Scales{DType::e4m3, 16}, Scales{DType::e8m0, 16}}) {
    GemmAmaxProblem p = accepted();  // strides in codes: 256 FP4 codes are 128 bytes
    p.ab_dtype = DType::e2m1, p.sf_dtype = sc.sf, p.vec = sc.vec;
    EXPECT_TRUE(refusals(p).empty()) << p.describe();
  }
  // 288 codes are 144 bytes: a multiple of 16 for FP4, where 288 FP8 bytes are too.
  GemmAmaxProblem p = accepted();
  p.ab_dtype = DType::e2m1, p.k = 264, p.a = {288, 1, 300 * 288}, p.b = {288, 1, 200 * 288};
  EXPECT_TRUE(refusals(p).empty());
  p.a = {272, 1, 300 * 272};  // 136 bytes
  expect_one(p, {"A's row stride is 136 bytes"});
}

TEST(GemmAmaxSm90aRefusals, DataAndCDtypes) {
  GemmAmaxProblem p = accepted();
  p.ab_dtype = DType::bf16;
  expect_one(p, {"A and B are bf16; the sm90a kernel takes FP8 (e4m3, e5m2) or FP4 (e2m1) data"});
  for (DType c : {DType::e4m3, DType::e5m2, DType::e2m1}) {
    p = accepted();
    p.c_dtype = c;
    expect_one(p, {"C is ", runtime::name(c).data(), "writes f32, bf16 or f16 C"});
  }
}

TEST(GemmAmaxSm90aRefusals, OperandsThatAreNotKMajorOrTmaAligned) {
  GemmAmaxProblem p = accepted();
  p.a = {1, 300, 300 * 256};
  expect_one(p, {"A is not K-major (K stride 300)", "reads K-major A and B", "sm80 kernel takes the others"});
  p = accepted();
  p.b = {1, 200, 200 * 256};
  expect_one(p, {"B is not K-major (K stride 200)"});
  p = accepted();
  p.k = 264, p.a = {264, 1, 300 * 264}, p.b = {264, 1, 200 * 264};
  auto why = refusals(p);
  ASSERT_EQ(why.size(), 2u);
  EXPECT_NE(why[0].find("A's row stride is 264 bytes; the sm90a kernel's TMA loads need a multiple of 16"),
            std::string::npos)
      << why[0];
  p = accepted();
  p.b.batch = 200 * 256 + 8;
  expect_one(p, {"B's batch stride is 51208 bytes", "nonzero multiple of 16"});
  p.l = 1;  // one batch: its stride is never used
  EXPECT_TRUE(refusals(p).empty());
}

TEST(GemmAmaxSm90aRefusals, TilesClustersAndSizes) {
  GemmAmaxProblem p = accepted();
  p.tile = GemmAmaxTile{64, 64};
  expect_one(p, {"mma tile 64x64", "CTA tile is 128x256, 128x128 or 128x64"});
  // 2x1 clusters only with 128 x 256 tiles (which a 2-SM device takes here).
  const runtime::Device two_sms(sim::make_backend({.sm_count = 2}));
  p = accepted();
  p.cluster = GemmAmaxTile{2, 1};
  EXPECT_TRUE(refusals(p, two_sms).empty());
  p.tile = GemmAmaxTile{128, 128}, p.precision = GemmAmaxPrecision::fast;
  expect_one(p, {"cluster shape 2x1 with 128x128 tiles", "runs 1x1, or 2x1 with 128x256 tiles"}, two_sms);
  p = accepted();
  p.cluster = GemmAmaxTile{1, 2};
  expect_one(p, {"cluster shape 1x2:", "runs 1x1, or 2x1 with 128x256 tiles"}, two_sms);
  p = accepted();
  p.m = std::int64_t{1} << 31, p.a = {256, 1, p.m * 256};
  expect_one(p, {"2147483648x200x256", "M, N, K, output tiles and scale bytes up to 2^31 - 1"});
  auto small = std::make_shared<runtime::testing::FakeBackend>();
  small->props.shared_bytes_per_block_optin = 100 * 1024;
  expect_one(accepted(), {"bytes of shared memory; device 'Fake H100' allows 102400 per block"},
             runtime::Device(small));
}

// The kernel builder refuses tilings it cannot run (sm90a_gemm_amax_tiling
// never makes them), naming the value and what it takes.
TEST(GemmAmaxSm90aRefusals, KernelBuilderRefusesTilingsItCannotRun) {
  GemmAmaxProblem fp8 = accepted(), fp4 = accepted();
  fp4.ab_dtype = DType::e2m1, fp4.sf_dtype = DType::e4m3, fp4.vec = 16;
  struct Case {
    const GemmAmaxProblem& p;
    Sm90aGemmAmaxTiling t;
    const char* says;
  };
  for (const Case& c : {Case{fp4, {.tile_n = 96}, "tile_n 96; it takes 64, 128 or 256"},
                        Case{fp4, {.tile_n = 128}, "they take tile_n 256, 3 stages and no split"},
                        Case{fp4, {.tile_n = 256, .splits = 2}, "2 K splits with converting warpgroups"},
                        Case{fp4, {.tile_n = 256, .stages = 4}, "4 stages"},
                        Case{fp4, {.tile_n = 256, .stages = 6, .dequant_warpgroups = 1},
                             "tile_n 256 takes converting warpgroups"},
                        Case{fp4, {.tile_n = 128, .raw_stages = 5, .fp8_mma = true}, "e2m1 data with fp8_mma"},
                        Case{fp8, {.tile_n = 128, .stages = 6, .dequant_warpgroups = 1},
                             "e4m3 data with dequantizer warpgroups; FP8 takes fp8_mma or converting warpgroups"},
                        Case{fp8, {.tile_n = 128, .raw_stages = 5, .fp8_mma = true, .splits = 3},
                             "3 K splits of 2 K blocks; every split needs at least one"},
                        Case{fp8, {.tile_n = 128, .raw_stages = 5, .fp8_mma = true, .cluster_m = 2},
                             "cluster_m 2; it takes 1, or 2 with converting warpgroups"},
                        Case{fp4, {.tile_n = 256, .cluster_m = 4}, "cluster_m 4; it takes 1, or 2 with converting"}}) {
    try {
      build_sm90a_gemm_amax(c.p, c.t);
      ADD_FAILURE() << "built " << sm90a_gemm_amax_name(c.p, c.t);
    } catch (const OpsError& e) {
      EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what() << "\n  lacks: " << c.says;
    }
  }
}

}  // namespace
}  // namespace warpforge::ops
