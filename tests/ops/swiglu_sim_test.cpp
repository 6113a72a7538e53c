// SwiGLU forward and backward on the simulator (swiglu_checks.hpp): every
// dtype, gate and up as the halves of one tensor or interleaved in it, rows
// longer than a CTA holds (passes), special values; refusals.
#include <gtest/gtest.h>

#include "swiglu_checks.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/swiglu.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

TEST(SwigluSim, EveryDtypeHalvesAndInterleaved) {
  std::uint32_t seed = 10;
  for (DType in : {DType::bf16, DType::f16, DType::f32})
    for (bool interleaved : {false, true}) check_swiglu(sim(), {.in = in, .out = in, .interleaved = interleaved}, seed++);
  check_swiglu(sim(), {.in = DType::bf16, .out = DType::f32}, seed++);
}

TEST(SwigluSim, RaggedRowsAndPasses) {
  check_swiglu(sim(), {.rows = 7, .n = 13}, 20, "warp");
  check_swiglu(sim(), {.interleaved = true, .rows = 3, .n = 1001}, 21);
  // 2 values held an element: 2 vectors of 8 a thread, 16384 elements a CTA.
  check_swiglu(sim(), {.rows = 2, .n = 40000}, 22, "cta");
}

TEST(SwigluSim, SpecialValuesAsPyTorch) {
  check_swiglu_special_values(sim());
}

TEST(SwigluSim, Refusals) {
  runtime::Device device = sim();
  std::mt19937 rng(30);
  auto g = upload(device, random_rows(rng, DType::bf16, 4, 64)), odd = upload(device, random_rows(rng, DType::bf16, 4, 63));
  auto out = poisoned(device, DType::bf16, 4, 64);
  auto said = [](const Swiglu& op, const char* what) {
    EXPECT_NE(op.describe().find(what), std::string::npos) << op.describe();
  };
  said(Swiglu({.gate = g.view(), .out = out.view()}), "gate and up (or an interleaved x) are needed");
  said(Swiglu({.gate = g.view(), .up = g.view(), .x = g.view(), .out = out.view()}), "both x and gate/up given");
  said(Swiglu({.x = odd.view(), .out = out.view()}), "interleaved gate and up need an even count");
  said(Swiglu({.gate = g.view(), .up = odd.view(), .out = out.view()}), "up holds 4 rows of 63 elements");
  EXPECT_THROW(Swiglu({.gate = g.view(), .out = out.view()}).compile(), OpsError);
}

}  // namespace
}  // namespace warpforge::ops::testing
