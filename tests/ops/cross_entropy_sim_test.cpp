// Cross-entropy (the loss and its gradient in one pass, and the backward's
// scaling) on the simulator (cross_entropy_checks.hpp): every dtype, label
// dtype and reduction, label smoothing, ignored rows, the gradient in place,
// rows a warp, a CTA, a cluster spans and rows in passes; special rows; the
// workspace of a 32768 x 128k problem; refusals.
#include <gtest/gtest.h>

#include "cross_entropy_checks.hpp"
#include "warpforge/error.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

TEST(CrossEntropySim, EveryDtypeReductionAndSmoothing) {
  std::uint32_t seed = 10;
  for (DType logits : {DType::bf16, DType::f16, DType::f32})
    for (LossReduction r : {LossReduction::none, LossReduction::mean, LossReduction::sum})
      check_cross_entropy(sim(), {.logits = logits, .labels = seed % 2 ? DType::i32 : DType::i64, .reduction = r,
                                  .label_smoothing = seed % 3 == 0 ? 0.1f : 0.0f},
                          seed++);
}

TEST(CrossEntropySim, GradientInPlaceAndOtherIgnoreIndex) {
  check_cross_entropy(sim(), {.in_place = true}, 20);
  check_cross_entropy(sim(), {.logits = DType::f32, .reduction = LossReduction::sum, .label_smoothing = 0.2f,
                              .ignore_index = 7, .in_place = true},
                      21, nullptr, [](HostRows&, std::vector<std::int64_t>& labels) { labels[0] = labels[2] = 7; });
}

TEST(CrossEntropySim, RowsSpanAWarpACtaAClusterOrPasses) {
  check_cross_entropy(sim(), {.rows = 9, .v = 256}, 30, "warp");
  check_cross_entropy(sim(), {.rows = 3, .v = 5000, .label_smoothing = 0.1f}, 31, "cta");
  // A CTA holds 32768 bf16 (its exponentials, 4 vectors of 8 a thread).
  check_cross_entropy(sim(), {.rows = 2, .v = 40000, .label_smoothing = 0.1f, .in_place = true}, 32, "cluster");
  // 16 SMs: 4 groups of clusters of 8 CTAs of 512 would fill them, but the
  // device keeps 2 such clusters resident (max_active_clusters): 2 groups
  // are launched, and the mean adds their 2 sums only (the other 2 entries
  // of a poisoned workspace are never read).
  const runtime::Device sixteen_sms(sim::make_backend({.sm_count = 16}));
  check_cross_entropy(sixteen_sms, {.rows = 10, .v = 40000, .label_smoothing = 0.1f, .caller_workspace = true}, 34,
                      "cluster");
  // 16-bit rows without smoothing: each group's next row loaded while this
  // one reduces, the exponentials in shared memory; in place.
  check_cross_entropy(sixteen_sms, {.rows = 10, .v = 40000, .in_place = true}, 35, "cluster");
  // An sm_89 CTA's shared memory (99 KB) does not hold a CTA of 1024's
  // staged exponentials (128 KB): held in registers, not prefetched.
  const runtime::Device ada(sim::make_backend({.target = ptx::Target::sm_89}));
  check_cross_entropy(ada, {.rows = 3, .v = 30000, .in_place = true}, 36, "cta");
  const runtime::Device ampere(sim::make_backend({.target = ptx::Target::sm_80}));
  check_cross_entropy(ampere, {.rows = 2, .v = 70000, .label_smoothing = 0.1f, .in_place = true}, 33, "cta");
}

TEST(CrossEntropySim, SpecialRowsAsPyTorch) {
  check_cross_entropy_special_rows(sim());
}

TEST(CrossEntropySim, TheWorkspaceIsAFewBytesARowGroupAtAnyVocabulary) {
  // 32768 rows x 128k bf16 logits (8 GiB) and their gradient, described only:
  // the op's own memory is its workspace, a few kilobytes.
  const runtime::Device device = sim();
  runtime::Buffer scratch(device, 64);
  const std::int64_t rows = 32768, v = 131072;
  const runtime::TensorView logits(device, scratch.address(), DType::bf16, {rows, v}),
      labels(device, scratch.address(), DType::i64, {rows}), loss(device, scratch.address(), DType::f32, {1});
  CrossEntropy op({.logits = logits, .labels = labels, .loss = loss, .dlogits = logits});
  ASSERT_TRUE(op.check_support().empty()) << op.describe();
  EXPECT_GT(op.workspace_bytes(), 0u);
  EXPECT_LE(op.workspace_bytes(), 64u * 1024) << op.describe();
  EXPECT_NE(op.describe().find("kernel cluster"), std::string::npos) << op.describe();
}

TEST(CrossEntropySim, Refusals) {
  const runtime::Device device = sim();
  runtime::Buffer scratch(device, 1 << 16);
  const runtime::TensorView logits(device, scratch.address(), DType::bf16, {4, 64}),
      labels(device, scratch.address(), DType::i64, {4}), f_labels(device, scratch.address(), DType::f32, {4}),
      loss(device, scratch.address(), DType::f32, {1}), rows_loss(device, scratch.address(), DType::f32, {4});
  auto said = [](const CrossEntropy& op, const char* what) {
    EXPECT_NE(op.describe().find(what), std::string::npos) << op.describe();
  };
  said(CrossEntropy({.logits = logits, .labels = f_labels, .loss = loss}), "labels are f32: accepted i64, i32");
  said(CrossEntropy({.logits = logits, .labels = labels, .loss = loss}, {.reduction = LossReduction::none}),
       "one loss a row (reduction none)");
  said(CrossEntropy({.logits = logits, .labels = labels, .loss = rows_loss}), "one element (reduction mean)");
  said(CrossEntropy({.logits = logits, .labels = labels, .loss = loss}, {.label_smoothing = 1.5f}),
       "label_smoothing 1.5: accepted 0 to 1");
  EXPECT_THROW(CrossEntropy({.logits = logits, .labels = f_labels, .loss = loss}).compile(), OpsError);
}

}  // namespace
}  // namespace warpforge::ops::testing
