// RMSNorm and LayerNorm (ops::Norm, ops::NormBackward) on the simulator
// against fp64 references (bounds: row_ops_support.hpp): every input dtype,
// rows spanning a warp, a CTA and a cluster, ragged and strided rows, the
// fused residual, one-element rows, all-equal rows, values near each
// dtype's largest, NaN and infinity as PyTorch propagates them, the
// backward's dx, dweight, dbias; refusals and execute()'s checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "norm_checks.hpp"
#include "row_ops_support.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/norm.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::TensorView;

TEST(NormSim, EveryDtypeBothKinds) {
  std::uint32_t seed = 100;
  for (NormKind kind : {NormKind::rms, NormKind::layer})
    for (DType dt : {DType::bf16, DType::f16, DType::f32}) {
      NormCase c{.kind = kind, .x = dt, .y = dt, .weight = dt};
      if (kind == NormKind::layer) c.bias = dt;
      SCOPED_TRACE(std::string(name(kind)) + " " + std::string(runtime::name(dt)));
      check_norm(sim(), c, seed++);
    }
}

TEST(NormSim, RowsSpanAWarpACtaAndACluster) {
  // 200 bf16 elements: a warp holds them; 4000: a CTA; 40000: more than a
  // CTA of 1024 threads holds at 4 vectors of 8 (32768), so a cluster (of 4
  // CTAs of 512 threads, two an SM).
  check_norm(sim(), {.n = 200}, 200, "warp");
  check_norm(sim(), {.rows = 3, .n = 4000}, 201, "cta");
  check_norm(sim(), {.kind = NormKind::layer, .bias = DType::bf16, .rows = 2, .n = 40000}, 202, "cluster");
  check_norm(sim(), {.kind = NormKind::rms, .x = DType::f32, .y = DType::f32, .weight = DType::f32, .rows = 2, .n = 36000}, 203,
        "cluster");
}

TEST(NormSim, GroupsOfSeveralRowsLoadTheNextRowAhead) {
  // Two SMs: 8 row groups of 256 threads (CTAs) for 40 rows, each group
  // looping over 5, the next row's x and residual loaded before the row's
  // reductions; and a cluster's single group over 3 rows.
  const runtime::Device two_sms(sim::make_backend({.sm_count = 2}));
  check_norm(two_sms, {.residual = DType::bf16, .rows = 40, .n = 4096}, 205, "cta");
  check_norm(two_sms, {.kind = NormKind::layer, .bias = DType::bf16, .rows = 3, .n = 20000}, 206, "cluster");
  // The backward: 4 groups of 512 threads over 40 rows, their dweight and
  // dbias sums running in shared memory across 10 rows each.
  check_norm_backward(two_sms, {.kind = NormKind::layer, .dbias = true, .dresidual = true, .rows = 40, .n = 4096},
                      207, "cta");
}

TEST(NormSim, RaggedAndStridedRowsAndMixedDtypes) {
  // n odd: one element a vector; n = 1000: vectors of 8, the last vectors
  // of a thread partly outside the row; rows inside wider rows.
  check_norm(sim(), {.kind = NormKind::layer, .bias = DType::bf16, .rows = 9, .n = 7}, 300);
  check_norm(sim(), {.kind = NormKind::layer, .x = DType::f16, .y = DType::f32, .weight = DType::f32, .bias = DType::f16,
         .rows = 6, .n = 1000, .stride = 1040},
        301);
  check_norm(sim(), {.x = DType::bf16, .y = DType::f32, .weight = DType::f32, .rows = 4, .n = 300, .stride = 304}, 302);
  // A stride that leaves only 4-byte alignment: vectors of 2.
  check_norm(sim(), {.x = DType::bf16, .y = DType::bf16, .rows = 4, .n = 96, .stride = 98}, 303);
}

TEST(NormSim, FusedResidual) {
  check_norm(sim(), {.residual = DType::bf16, .rows = 5, .n = 512}, 400);
  check_norm(sim(), {.kind = NormKind::layer, .x = DType::bf16, .y = DType::bf16, .bias = DType::f32, .residual = DType::f32,
         .rows = 3, .n = 264, .stride = 272},
        401);
  check_norm(sim(), {.weight = std::nullopt, .residual = DType::f16, .rows = 3, .n = 2000}, 402);
}

TEST(NormSim, OneElementRows) {
  check_norm_one_element_rows(runtime::Device::sim());
}

TEST(NormSim, AllEqualRowsGiveExactlyTheBias) {
  check_norm_all_equal_rows(runtime::Device::sim());
}

TEST(NormSim, ValuesNearTheLargestDoNotOverflow) {
  check_norm_values_near_the_largest(runtime::Device::sim());
}

TEST(NormSim, NanAndInfinityPropagateAsPyTorch) {
  check_norm_nan_and_infinity(runtime::Device::sim());
}

TEST(NormBackwardSim, RmsAndLayerWithWeightGradients) {
  check_norm_backward(sim(), {}, 900, "warp");
  check_norm_backward(sim(), {.kind = NormKind::layer, .dbias = true}, 901);
  check_norm_backward(sim(), {.kind = NormKind::layer, .x = DType::f32, .dy = DType::f32, .dx = DType::f32,
                  .weight = DType::f32, .dbias = true, .rows = 5, .n = 33},
                 902);
  check_norm_backward(sim(), {.x = DType::f16, .dy = DType::f16, .dx = DType::f16, .weight = DType::f32, .rows = 4, .n = 3000},
                 903, "cta");
}

TEST(NormBackwardSim, ResidualGradientAndNoWeight) {
  check_norm_backward(sim(), {.weight = std::nullopt, .dweight = false, .dresidual = true, .rows = 9, .n = 128}, 910);
  check_norm_backward(sim(), {.kind = NormKind::layer, .dresidual = true, .rows = 3, .n = 520}, 911);
  // dbias alone: the column sums' one block is dbias's.
  check_norm_backward(sim(), {.kind = NormKind::layer, .dweight = false, .dbias = true, .rows = 7, .n = 96}, 912);
}

TEST(NormBackwardSim, ARowPerCluster) {
  // 10 bytes held an element (dy, x, weight, the dweight sum): one vector of
  // 8 a thread, so a CTA holds 8192 elements and 12000 take a cluster of 2.
  check_norm_backward(sim(), {.rows = 3, .n = 12000}, 920, "cluster");
  // LayerNorm's backward, where one vector a thread would take a cluster of 2: a
  // CTA at two vectors a thread, 512 threads resident an SM (128 registers).
  check_norm_backward(sim(), {.kind = NormKind::layer, .dbias = true, .rows = 3, .n = 6000}, 921, "cta");
}

TEST(NormBackwardSim, ColumnSumsOfManyGroups) {
  // 64 SMs: a row group a row for 300 rows, so that the column sums add 300
  // groups' sums, each thread's loads in batches of 16 groups (the second
  // batch partly past the end).
  const runtime::Device many_sms(sim::make_backend({.sm_count = 64}));
  check_norm_backward(many_sms, {.kind = NormKind::layer, .dbias = true, .rows = 300, .n = 40, .groups = 300}, 930,
                      "warp");
}

// ---- refusals ------------------------------------------------------------------

TEST(NormSim, RefusalsNameTheRule) {
  runtime::Device device = runtime::Device::sim();
  std::mt19937 rng(1000);
  HostRows x = random_rows(rng, DType::bf16, 4, 64);
  auto ux = upload(device, x);
  auto y = poisoned(device, DType::bf16, 4, 64), wide = poisoned(device, DType::bf16, 4, 65);
  auto ints = poisoned(device, DType::f32, 4, 64);
  runtime::TensorView as_int(ints.tensor.device(), ints.tensor.address(), DType::i32, {4, 64});
  auto w = poisoned_vector(device, DType::bf16, 64);
  runtime::TensorView column(ux.tensor.device(), ux.tensor.address(), DType::bf16, {64, 4}, {1, 64});
  struct Refused {
    NormTensors t;
    NormOptions o;
    const char* says;
  };
  const Refused cases[] = {
      {{.x = ux.view(), .y = wide.view()}, {}, "y holds 4 rows of 65 elements; x has 4 of 64"},
      {{.x = as_int, .y = y.view()}, {}, "x is i32: accepted f32, f16, bf16"},
      {{.x = column, .y = y.view()}, {}, "its last dimension must be contiguous (stride 1)"},
      {{.x = ux.view(), .bias = w.view(), .y = y.view()}, {}, "a bias with rms norm"},
      {{.x = ux.view(), .residual = ux.view(), .y = y.view()}, {}, "a residual without residual_out"},
      {{.x = ux.view(), .y = y.view()}, {.eps = -1.0f}, "eps -1: a finite value >= 0 is accepted"},
      {{.x = ux.view(), .y = y.view(), .mean = w.view()}, {.kind = NormKind::layer}, "mean is bf16[64]"},
  };
  for (const Refused& r : cases) {
    Norm op(r.t, r.o);
    const std::string all = op.describe();
    EXPECT_NE(all.find(r.says), std::string::npos) << all;
    EXPECT_THROW(op.compile(), OpsError);
  }
}

TEST(NormSim, ExecuteRefusesOtherViews) {
  runtime::Device device = runtime::Device::sim();
  std::mt19937 rng(1100);
  HostRows x = random_rows(rng, DType::bf16, 4, 64);
  auto ux = upload(device, x);
  auto y = poisoned(device, DType::bf16, 4, 64), y_wide = poisoned(device, DType::bf16, 4, 64, 72);
  Norm op({.x = ux.view(), .y = y.view()});
  op.compile();
  try {
    op.execute({.x = ux.view(), .y = y_wide.view()});
    ADD_FAILURE() << "no refusal";
  } catch (const OpsError& e) {
    EXPECT_NE(std::string(e.what()).find("y is bf16[4, 64] strides [72, 1]"), std::string::npos) << e.what();
  }
  // A rstd the op was built without.
  auto rstd = poisoned_vector(device, DType::f32, 4);
  EXPECT_THROW(op.execute({.x = ux.view(), .y = y.view(), .rstd = rstd.view()}), OpsError);
}

TEST(NormSim, DescribeNamesTheKernelAndWhyNotTheOthers) {
  runtime::Device device = runtime::Device::sim();
  std::mt19937 rng(1200);
  // Without a weight a thread holds 4 vectors of 8 bf16: a CTA 32768 elements.
  auto x = upload(device, random_rows(rng, DType::bf16, 1, 40000));
  auto y = poisoned(device, DType::bf16, 1, 40000);
  Norm op({.x = x.view(), .y = y.view()});
  const std::string d = op.describe();
  EXPECT_NE(d.find("kernel cluster (a row per cluster of 4 CTAs of 512 threads"), std::string::npos) << d;
  EXPECT_NE(d.find("not warp: a row of 40000 elements is more than a warp holds"), std::string::npos) << d;
  EXPECT_NE(d.find("not cta: a row of 40000 elements is more than a CTA holds (32768)"), std::string::npos) << d;
  // A row a CTA of 1024 threads would hold goes to a cluster of two CTAs of 512 (two rows an SM).
  auto x2 = upload(device, random_rows(rng, DType::bf16, 1, 20000));
  auto y2 = poisoned(device, DType::bf16, 1, 20000);
  const std::string d2 = Norm({.x = x2.view(), .y = y2.view()}).describe();
  EXPECT_NE(d2.find("kernel cluster (a row per cluster of 2 CTAs of 512 threads"), std::string::npos) << d2;
  EXPECT_NE(d2.find("not cta: a row of 20000 elements would take a CTA of 1024 threads, alone on its SM"),
            std::string::npos)
      << d2;
}

TEST(NormSim, OneShotFunctionsGiveTheClassesBits) {
  runtime::Device device = runtime::Device::sim();
  std::mt19937 rng(1300);
  HostRows x = random_rows(rng, DType::f32, 3, 50), w = random_rows(rng, DType::f32, 1, 50, 0.5f, 1.0f);
  auto ux = upload(device, x), uw = upload_vector(device, w);
  for (NormKind kind : {NormKind::rms, NormKind::layer}) {
    NormResult r = kind == NormKind::rms ? rms_norm(ux.view(), &uw.view(), 1e-6f)
                                         : layer_norm(ux.view(), &uw.view(), nullptr, 1e-6f);
    EXPECT_EQ(r.y.shape(), (std::vector<std::int64_t>{3, 50}));
    EXPECT_EQ(r.mean.has_value(), kind == NormKind::layer);
    auto y = poisoned(device, DType::f32, 3, 50), rstd = poisoned_vector(device, DType::f32, 3);
    std::optional<DeviceRows> mean;
    if (kind == NormKind::layer) mean = poisoned_vector(device, DType::f32, 3);
    const NormTensors t{.x = ux.view(), .weight = uw.view(), .y = y.view(),
                        .mean = mean ? std::optional<TensorView>(mean->view()) : std::nullopt, .rstd = rstd.view()};
    Norm(t, {.kind = kind, .eps = 1e-6f}).execute(t);
    EXPECT_EQ(download(r.y).values, download(y.view()).values);
    EXPECT_EQ(download(r.rstd).values, download(rstd.view()).values);
  }
}

}  // namespace
}  // namespace warpforge::ops::testing
