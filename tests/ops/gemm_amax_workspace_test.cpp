// GemmAmax's workspace brought by the caller (GemmAmaxOptions::
// caller_workspace), on the simulator: a split-K problem runs on the
// caller's zero-filled buffer (its partial sums land there), gives the
// reference's result twice, and leaves the buffer ready for another op of
// the same shape; execute() refuses a missing, short, misaligned, gapped or
// foreign workspace, naming it, before any launch. A kernel that needs no
// workspace runs without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

#include "gemm_amax_test_support.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;

// The skinny kernel's split-K shape (sixteen SMs: K split three ways).
GemmAmaxCase split_case() {
  GemmAmaxCase c;
  c.ab = DType::e4m3, c.sf = DType::e8m0, c.vec = 32, c.c = DType::bf16;
  c.m = 16, c.n = 200, c.k = 128 * 24, c.tile = std::nullopt;
  c.kernel = GemmAmaxKernel::skinny;  // its splits always add through the workspace
  return c;
}

// An op on s's tensors that brings no workspace of its own.
GemmAmax without_own_workspace(const GemmAmaxSetup& s) {
  GemmAmaxOptions options = s.options();
  options.caller_workspace = true;
  return GemmAmax(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, options);
}

std::string refusal_of(GemmAmax& op, GemmAmaxSetup& s, const runtime::TensorView* workspace) {
  try {
    op.execute(*s.a.view, *s.b.view, *s.sfa.view, *s.sfb.view, *s.out.view, *s.amax.view, nullptr, workspace);
  } catch (const OpsError& e) {
    return e.what();
  }
  return "(no refusal)";
}

TEST(GemmAmaxWorkspace, SplitKRunsOnTheCallersWorkspaceAndLeavesItReady) {
  const runtime::Device device(sim::make_backend({.sm_count = 16}));
  std::mt19937 rng(2400);
  auto s = make_gemm_amax(device, split_case(), rng);
  GemmAmax op = without_own_workspace(s);
  ASSERT_EQ(op.kernel_name(), "skinny") << op.describe();
  const std::size_t bytes = op.workspace_bytes();
  ASSERT_GT(bytes, 0u);

  runtime::Buffer workspace(device, bytes + 64);
  workspace.fill(0);
  const runtime::TensorView view(workspace, DType::u8, {static_cast<std::int64_t>(bytes)}, {1});
  for (int run = 0; run < 2; ++run) {
    const auto bad = run_gemm_amax_and_check(s, 0.0f, &op, &view);
    EXPECT_TRUE(bad.empty()) << "run " << run << ": " << (bad.empty() ? "" : bad.front());
  }
  const std::vector<std::uint8_t> after = workspace.download<std::uint8_t>(bytes + 64);
  EXPECT_TRUE(std::any_of(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(bytes),
                          [](std::uint8_t b) { return b != 0; }))
      << "the partial sums did not go to the caller's workspace";
  EXPECT_TRUE(std::all_of(after.begin() + static_cast<std::ptrdiff_t>(bytes), after.end(),
                          [](std::uint8_t b) { return b == 0; }))
      << "the kernel wrote past workspace_bytes()";

  // Another op of the same shape, on other data, shares the workspace.
  std::mt19937 other_rng(2403);
  auto t = make_gemm_amax(device, split_case(), other_rng);
  GemmAmax second = without_own_workspace(t);
  const auto bad = run_gemm_amax_and_check(t, 0.0f, &second, &view);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
}

TEST(GemmAmaxWorkspace, ExecuteRefusesAWorkspaceItCannotUse) {
  const runtime::Device device(sim::make_backend({.sm_count = 16}));
  std::mt19937 rng(2401);
  auto s = make_gemm_amax(device, split_case(), rng);
  GemmAmax op = without_own_workspace(s);
  const std::size_t bytes = op.workspace_bytes();
  const std::string needed = std::to_string(bytes) + " bytes";

  EXPECT_NE(refusal_of(op, s, nullptr).find("no workspace given"), std::string::npos);
  EXPECT_NE(refusal_of(op, s, nullptr).find(needed), std::string::npos);

  runtime::Buffer short_buffer(device, bytes);
  const runtime::TensorView too_short(short_buffer, DType::u8, {static_cast<std::int64_t>(bytes) - 16}, {1});
  const std::string short_refusal = refusal_of(op, s, &too_short);
  EXPECT_NE(short_refusal.find(needed + " or more"), std::string::npos) << short_refusal;

  runtime::Buffer big(device, bytes + 64);
  const runtime::TensorView misaligned(device, big.address() + 4, DType::u8, {static_cast<std::int64_t>(bytes)}, {1});
  EXPECT_NE(refusal_of(op, s, &misaligned).find("not 16-byte aligned"), std::string::npos);

  const runtime::TensorView gapped(big, DType::u8, {static_cast<std::int64_t>(bytes) / 2, 1}, {2, 1});
  EXPECT_NE(refusal_of(op, s, &gapped).find("must be contiguous"), std::string::npos);

  const runtime::Device other(sim::make_backend({.sm_count = 16}));
  runtime::Buffer elsewhere(other, bytes);
  const runtime::TensorView foreign(elsewhere, DType::u8, {static_cast<std::int64_t>(bytes)}, {1});
  EXPECT_NE(refusal_of(op, s, &foreign).find("the workspace is on"), std::string::npos);
}

TEST(GemmAmaxWorkspace, AKernelWithoutWorkspaceNeedsNone) {
  const runtime::Device device(sim::make_backend({.sm_count = 16}));
  GemmAmaxCase c;  // the sm80 kernel's default case: no split, no workspace
  std::mt19937 rng(2402);
  auto s = make_gemm_amax(device, c, rng);
  GemmAmax op = without_own_workspace(s);
  ASSERT_EQ(op.workspace_bytes(), 0u) << op.describe();
  const auto bad = run_gemm_amax_and_check(s, 0.0f, &op);
  EXPECT_TRUE(bad.empty()) << (bad.empty() ? "" : bad.front());
}

}  // namespace
}  // namespace warpforge::ops::testing
