// The full emitted PTX of the documented examples and of two small kernels,
// pinned as golden files (tests/dsl/golden/*.ptx); WARPFORGE_UPDATE_GOLDEN=1
// rewrites them after a reviewed change. The examples also assemble with
// ptxas on every target.
#include <gtest/gtest.h>

#include "dsl/dsl_test_support.hpp"
#include "kernels/bf16_gemm.hpp"
#include "kernels/mma_demo.hpp"

namespace warpforge::dsl {
namespace {

using testing_support::assembles;
using testing_support::matches_golden;
using testing_support::ptxas_missing_reason;

// y[i] = a * x[i] + y[i] over a grid-stride loop: parameters, special
// registers, operators, float arithmetic, loads/stores, for_range and if_then.
ptx::Module saxpy_kernel(Target target) {
  Kernel k("saxpy", target);
  Reg x = k.param_ptr("x", 4), y = k.param_ptr("y", 4);
  Reg a = k.param(f32, "a"), n = k.param(u32, "n");
  k.maxntid(256);
  // One special register per statement: C++ leaves the order of operands
  // unspecified, and the golden text must not depend on the compiler.
  Reg ctaid = k.sreg(SReg::ctaid_x), ntid = k.sreg(SReg::ntid_x), tid = k.sreg(SReg::tid_x);
  Reg nctaid = k.sreg(SReg::nctaid_x);
  Reg start = ctaid * ntid + tid;
  Reg stride = nctaid * ntid;
  k.for_range(start, n, stride, [&](Reg i) {
    Reg offset = k.reg(u64);
    k.mul_wide(offset, i, 4);
    Reg px = x + offset, py = y + offset;
    Reg vx = k.reg(f32), vy = k.reg(f32);
    k.ld(Space::global, f32, vx, at(px), {.nc = true});
    k.ld(Space::global, f32, vy, at(py));
    k.fma(vy, a, vx, vy);
    k.if_then(k.setp(Cmp::num, vy, vy), [&] { k.st(Space::global, f32, at(py), vy); });
  });
  return k.module();
}

// A warp reduction staged through shared memory: shfl, barriers, guarded
// stores, if_else, while_loop, named registers and the dynamic shared array.
ptx::Module warp_sum_kernel(Target target) {
  Kernel k("warp_sum", target);
  Reg out = k.param_ptr("out", 4);
  k.reqntid(64);
  Shared partial = k.shared("partial", 8, 4);
  Shared scratch = k.dynamic_shared("scratch");
  Reg lane = k.sreg(SReg::laneid), warp = k.sreg(SReg::tid_x) >> 5;
  Reg sum = k.reg(b32, "sum");
  k.cvt(sum.as(u32), lane);
  for (int offset : {16, 8, 4, 2, 1}) {
    Reg other = k.reg(b32);
    k.shfl_sync(Shfl::bfly, other, sum, offset, 0x1f);
    k.add(sum.as(u32), sum, other);
  }
  Reg base = k.address_of(partial);
  Reg slot = base + (warp << 2);
  k.guarded(lane == 0, [&] { k.st(Space::shared, b32, at(slot), sum); });
  k.bar_sync();
  Reg tries = k.mov(u32, 0);
  k.while_loop([&] { return tries < 2; }, [&] { tries += 1; });
  Reg total = k.reg(u32, "total");
  k.if_else(
      warp == 0,
      [&] {
        Regs both = k.regs(b32, 2, "both");
        k.ld(Space::shared, b32, both, at(partial));
        k.add(total, both[0], both[1]);
      },
      [&] { k.ld(Space::shared, u32, total, at(scratch)); });
  k.st(Space::global, u32, at(out), total);
  return k.module();
}

struct GoldenCase {
  const char* file;
  ptx::Module (*build)(Target);
};

const GoldenCase kCases[] = {
    {"mma_demo_sm_80.ptx", examples::mma_demo_kernel},
    {"bf16_gemm_sm_80.ptx", examples::bf16_gemm_kernel},
    {"saxpy_sm_80.ptx", saxpy_kernel},
    {"warp_sum_sm_80.ptx", warp_sum_kernel},
};

TEST(Golden, EmittedTextMatchesTheGoldenFiles) {
  for (const auto& c : kCases)
    EXPECT_TRUE(matches_golden(c.file, c.build(Target::sm_80).to_ptx())) << c.file;
}

TEST(Golden, BuildingTwiceGivesIdenticalText) {
  for (const auto& c : kCases)
    for (Target t : ptx::all_targets()) {
      std::string first = c.build(t).to_ptx();
      EXPECT_EQ(first, c.build(t).to_ptx()) << c.file << " on " << ptx::name(t);
      EXPECT_EQ(c.build(t), c.build(t)) << c.file;  // the IR as well as the text
    }
}

TEST(Golden, OnlyTheHeaderDependsOnTheTarget) {
  // The examples use nothing target-specific: past the .version/.target lines
  // the text is the same everywhere.
  for (const auto& c : kCases) {
    auto body = [&](Target t) {
      std::string text = c.build(t).to_ptx();
      return text.substr(text.find(".address_size"));
    };
    for (Target t : ptx::all_targets())
      EXPECT_EQ(body(t), body(Target::sm_80)) << c.file << " on " << ptx::name(t);
  }
}

TEST(Golden, KernelsAssembleOnEveryTarget) {
  if (auto reason = ptxas_missing_reason(); !reason.empty()) GTEST_SKIP() << reason;
  for (const auto& c : kCases)
    for (Target t : ptx::all_targets())
      EXPECT_TRUE(assembles(c.build(t))) << c.file << " on " << ptx::name(t);
}

}  // namespace
}  // namespace warpforge::dsl
