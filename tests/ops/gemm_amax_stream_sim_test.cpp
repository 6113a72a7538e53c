// GemmAmax's stream path (decode on the grouped GEMM's stream kernel: B's
// codes and scales read as GemmAmax takes them, A to bf16 by the pre-pass)
// on the simulator against the CPU reference: every data and scale format
// into every C dtype it writes, M from 1 to 64 (token tiles of 8 to 64), N
// not a multiple of 16 (rows past N in a tile), K past a 256-code chunk, K
// split over CTAs (deterministic: two runs give the same bits), scales that
// do not fold (the exact slow conversion), a NaN code (amax NaN), and what
// it refuses. Each run asserts that the stream kernel takes it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gemm_amax_test_support.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

GemmAmaxCase stream_case(ScaledFormat f, std::int64_t m, std::int64_t n, std::int64_t k, DType c_dtype) {
  GemmAmaxCase c;
  c.ab = f.ab, c.sf = f.sf, c.vec = f.vec, c.c = c_dtype, c.m = m, c.n = n, c.k = k, c.tile = std::nullopt;
  c.kernel = GemmAmaxKernel::stream;
  return c;
}

// Runs `c` twice on one op; both runs match the reference and each other.
// Returns the op's describe().
std::string expect_stream_pass(const runtime::Device& device, const GemmAmaxCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto s = make_gemm_amax(device, c, rng);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  EXPECT_EQ(op.kernel_name(), "stream") << c.describe() << "\n" << op.describe();
  if (!op.check_support().empty()) {
    ADD_FAILURE() << c.describe() << "\n" << op.describe();
    return op.describe();
  }
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
    std::string all;
    for (std::size_t i = 0; i < bad.size() && i < 8; ++i) all += "\n  " + bad[i];
    EXPECT_TRUE(bad.empty()) << c.describe() << ", run " << run << ": " << bad.size() << " mismatches" << all;
    const std::vector<float> values = s.c_values();
    if (run == 0)
      first = values;
    else
      EXPECT_EQ(std::memcmp(first.data(), values.data(), first.size() * sizeof(float)), 0)
          << c.describe() << ": the second run's C differs";
  }
  return op.describe();
}

TEST(GemmAmaxStreamSim, EveryFormatIntoEveryCDtype) {
  const runtime::Device device = runtime::Device::sim();
  int i = 0;
  for (ScaledFormat f : kScaledFormats)
    for (DType c_dtype : {DType::f32, DType::bf16, DType::f16}) {
      const std::int64_t m = i % 3 == 0 ? 1 : i % 3 == 1 ? 13 : 24;
      expect_stream_pass(device, stream_case(f, m, i % 2 ? 40 : 24, i % 2 ? 320 : 256, c_dtype),
                  2100 + static_cast<std::uint32_t>(i));
      ++i;
    }
}

// 33 to 64 tokens: a token tile of 64.
TEST(GemmAmaxStreamSim, UpToSixtyFourTokens) {
  const runtime::Device device = runtime::Device::sim();
  expect_stream_pass(device, stream_case(kScaledFormats[0], 64, 24, 256, DType::bf16), 2200);
  expect_stream_pass(device, stream_case(kScaledFormats[3], 41, 40, 192, DType::f32), 2201);
}

// Few output units on a 16-SM simulator: K split over CTAs, their sums
// added in split order.
TEST(GemmAmaxStreamSim, SplitKIsDeterministic) {
  const runtime::Device device(sim::make_backend({.sm_count = 16}));
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[2]}) {
    const std::string d = expect_stream_pass(device, stream_case(f, 3, 16, 256 * 12, DType::f32), 2300);
    EXPECT_EQ(d.find("K split 1 ways"), std::string::npos) << d;
  }
}

// Scales that do not fold into one bf16 factor take the exact slow conversion.
TEST(GemmAmaxStreamSim, ScalesThatDoNotFoldConvertExactly) {
  const runtime::Device device = runtime::Device::sim();
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[3]}) {
    GemmAmaxCase c = stream_case(f, 9, 40, 256, DType::f32);
    std::mt19937 rng(2400);
    auto s = make_gemm_amax(device, c, rng);
    make_unfoldable_scales(s);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    ASSERT_EQ(op.kernel_name(), "stream");
    const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
    EXPECT_TRUE(bad.empty()) << c.describe() << ": " << bad.size() << " mismatches; " << (bad.empty() ? "" : bad[0]);
  }
}

TEST(GemmAmaxStreamSim, NaNCodeMakesAmaxNaN) {
  const runtime::Device device = runtime::Device::sim();
  GemmAmaxCase c = stream_case(kScaledFormats[0], 5, 24, 128, DType::bf16);
  std::mt19937 rng(2500);
  auto s = make_gemm_amax(device, c, rng);
  s.b.bytes[3] = 0x7F;  // e4m3 NaN in B (the streamed operand)
  s.upload(s.b);
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
  ASSERT_EQ(op.kernel_name(), "stream");
  const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad[0]);
  EXPECT_TRUE(std::isnan(s.amax_value()));
}

TEST(GemmAmaxStreamSim, RefusesWhatItCannotRun) {
  const runtime::Device device = runtime::Device::sim();
  auto refusals = [&](GemmAmaxCase c) {
    std::mt19937 rng(2600);
    auto s = make_gemm_amax(device, c, rng);
    GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, s.options());
    std::string all;
    for (const std::string& why : op.check_support()) all += why + "\n";
    return all;
  };
  GemmAmaxCase c = stream_case(kScaledFormats[0], 4, 24, 96, DType::f32);
  EXPECT_NE(refusals(c).find("K 96: the stream kernel takes K a multiple of 64"), std::string::npos) << refusals(c);
  c.k = 128, c.l = 2;
  EXPECT_NE(refusals(c).find("L 2: the stream kernel runs one batch"), std::string::npos) << refusals(c);
  c.l = 1, c.c_major = CMajor::m;
  EXPECT_NE(refusals(c).find("C is m-major: the stream kernel writes n-major C"), std::string::npos) << refusals(c);
  c.c_major = CMajor::n, c.c = DType::e4m3;
  EXPECT_NE(refusals(c).find("C is e4m3; the stream kernel writes f32, bf16 or f16 C"), std::string::npos)
      << refusals(c);
}

}  // namespace
}  // namespace warpforge::ops::testing
