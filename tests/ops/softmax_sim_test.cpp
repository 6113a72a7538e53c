// Softmax forward and backward on the simulator (softmax_checks.hpp): every
// dtype pair, rows a warp, a CTA and a cluster spans, ragged and strided
// rows, special rows; refusals and describe().
#include <gtest/gtest.h>

#include "softmax_checks.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/softmax.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

TEST(SoftmaxSim, EveryDtype) {
  std::uint32_t seed = 10;
  for (DType x : {DType::bf16, DType::f16, DType::f32})
    for (DType y : {DType::bf16, DType::f32}) check_softmax(sim(), {.x = x, .y = y}, seed++);
}

TEST(SoftmaxSim, RowsSpanAWarpACtaAndACluster) {
  check_softmax(sim(), {.rows = 9, .n = 256}, 20, "warp");
  check_softmax(sim(), {.rows = 3, .n = 5000}, 21, "cta");
  // One value held an element: 4 vectors of 8 a thread, a CTA holds 32768.
  check_softmax(sim(), {.rows = 2, .n = 70000}, 22, "cluster");
}

TEST(SoftmaxSim, LongerRowsThanACtaHoldsWithoutClustersGoInPasses) {
  // A simulator standing for an sm_80 GPU has no clusters: 70000 elements
  // take 3 passes forward (32768 a CTA) and 5 backward (16384: y and dy held).
  const runtime::Device ampere(sim::make_backend({.target = ptx::Target::sm_80}));
  check_softmax(ampere, {.rows = 2, .n = 70000}, 23, "cta");
  check_softmax(ampere, {.x = DType::f32, .y = DType::f32, .rows = 2, .n = 20000}, 24, "cta");
  std::mt19937 rng(25);
  auto x = upload(ampere, random_rows(rng, DType::bf16, 1, 70000));
  auto y = poisoned(ampere, DType::bf16, 1, 70000);
  const std::string d = Softmax(x.view(), y.view()).describe();
  EXPECT_NE(d.find("in 3 passes over the row"), std::string::npos) << d;
}

TEST(SoftmaxSim, RaggedAndStridedRows) {
  check_softmax(sim(), {.rows = 5, .n = 13}, 30);
  check_softmax(sim(), {.x = DType::f32, .y = DType::f32, .rows = 4, .n = 1000, .stride = 1024}, 31);
  check_softmax(sim(), {.rows = 4, .n = 510, .stride = 514}, 32);
}

TEST(SoftmaxSim, SpecialRowsAsPyTorch) {
  check_softmax_special_rows(sim());
}

TEST(SoftmaxSim, RefusalsAndDescribe) {
  runtime::Device device = sim();
  std::mt19937 rng(40);
  auto x = upload(device, random_rows(rng, DType::bf16, 4, 64));
  auto y = poisoned(device, DType::bf16, 4, 32);
  Softmax bad(x.view(), y.view());
  EXPECT_NE(bad.describe().find("y holds 4 rows of 32 elements; x has 4 of 64"), std::string::npos)
      << bad.describe();
  EXPECT_THROW(bad.compile(), OpsError);
  auto good_y = poisoned(device, DType::bf16, 4, 64);
  Softmax op(x.view(), good_y.view());
  EXPECT_NE(op.describe().find("Softmax 4 x 64 bf16 -> bf16: kernel warp (a row per warp"), std::string::npos)
      << op.describe();
  EXPECT_THROW(op.execute(x.view(), y.view()), OpsError);
}

}  // namespace
}  // namespace warpforge::ops::testing
