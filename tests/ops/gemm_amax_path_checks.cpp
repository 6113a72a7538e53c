#include "gemm_amax_path_checks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/buffer.hpp"

namespace warpforge::ops::testing {

using runtime::DType;

void expect_pass(GemmAmaxSetup& s, float initial_amax) {
  const auto bad = run_gemm_amax_and_check(s, initial_amax);
  std::string all;
  for (std::size_t i = 0; i < bad.size() && i < 10; ++i) all += "\n  " + bad[i];
  EXPECT_TRUE(bad.empty()) << s.c.describe() << ": " << bad.size() << " mismatches" << all;
}

void check_amax_rules(const PathCase& make_case, const PathSetup& make, std::uint32_t seed) {
  {
    auto s = make(make_case(kScaledFormats[0], DType::f32, 40, 24, 64, 1), seed);
    expect_pass(s, 1e6f);
    EXPECT_EQ(s.amax_value(), 1e6f);
  }
  {
    GemmAmaxCase c = make_case(kScaledFormats[0], DType::bf16, 40, 24, 64, 2);
    auto s = make(c, seed + 1);
    s.a.bytes[static_cast<std::size_t>(5 * s.a.stride_row + 3 + s.a.stride_batch)] = 0x7F;  // e4m3 NaN
    s.upload(s.a);
    expect_pass(s);
    EXPECT_TRUE(std::isnan(s.amax_value()));
    int nans = 0;
    for (float v : s.c_values()) nans += std::isnan(v);
    EXPECT_EQ(nans, c.n);  // row 5 of batch 1
  }
  {
    auto s = make(make_case(kScaledFormats[1], DType::f32, 20, 12, 64, 1), seed + 2);
    EXPECT_EQ(amax_with_infinity_in_a(s), INFINITY);
  }
}

void check_nan_scale_padding(const PathCase& make_case, const PathSetup& make, std::int64_t m, std::int64_t n,
                             std::int64_t k, std::uint32_t seed) {
  for (ScaledFormat f : {kScaledFormats[0], kScaledFormats[2], kScaledFormats[3]}) {
    auto s = make(make_case(f, DType::f32, m, n, k, 1), seed++);
    for (auto [t, rows] : {std::pair{&s.sfa, s.c.m}, std::pair{&s.sfb, s.c.n}}) {
      const ScaleFactorLayout layout{rows, s.c.k, s.c.l, s.c.vec};
      for (std::int64_t o = 0; o < layout.bytes(); ++o)
        if (layout.coordinate(o).padding) t->bytes[static_cast<std::size_t>(o)] = f.sf == DType::e8m0 ? 0xFF : 0x7F;
      s.upload(*t);
    }
    expect_pass(s);
    EXPECT_FALSE(std::isnan(s.amax_value())) << s.c.describe();
  }
}

void check_callers_workspace(const GemmAmaxCase& c, const PathSetup& make, std::uint32_t seed, std::uint8_t fill,
                             std::size_t at_least) {
  auto s = make(c, seed);
  GemmAmaxOptions options = s.options();
  options.caller_workspace = true;
  GemmAmax op(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, options);
  const std::size_t bytes = op.workspace_bytes();
  EXPECT_GE(bytes, at_least);
  try {
    op.execute(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view);
    ADD_FAILURE() << "ran without a workspace";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(bytes) + " bytes"), std::string::npos) << e.what();
  }
  runtime::Buffer workspace(s.a.view->device(), bytes);
  workspace.fill(fill);
  const runtime::TensorView ws(workspace, DType::u8, {static_cast<std::int64_t>(bytes)});
  const auto bad = run_gemm_amax_and_check(s, 0.0f, &op, &ws);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
  const std::vector<float> first = s.c_values();
  const auto again = run_gemm_amax_and_check(s, 0.0f, &op, &ws);
  EXPECT_TRUE(again.empty());
  const std::vector<float> second = s.c_values();
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(0, std::memcmp(first.data(), second.data(), first.size() * sizeof(float)));
}

}  // namespace warpforge::ops::testing
