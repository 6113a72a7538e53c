// tile::warp::allreduce and tile::GroupReduction on the simulator: every
// thread of a group ends with the group's sum (bit for bit the same in every
// thread, though f32 addition is not associative), for groups of lanes, of
// warps (several groups a CTA, each at its own named barrier) and of a
// cluster's CTAs; a combine of several values (tile::concat); reductions in
// a loop reusing their buffers; redux; the refusals.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/tile/reduction.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;

// Each thread loads in[i] (i its global index), reduces {value, value·2}
// (add) and {value} (max) in each of `rounds` rounds (the buffers used in
// turn), and stores the last round's results at out[3i..3i+2].
struct Launched {
  std::vector<float> in, out;
};

// split: each round in GroupReduction's two steps (allreduce_in_cta, then
// allreduce_across_ctas), a whole allreduce of another register between them
// (the steps' buffers alternate on their own).
Launched run(GroupShape shape, int lanes_per_group, int blocks, int rounds, std::uint32_t seed, bool split = false) {
  const int block = 32 * shape.warps * shape.groups;
  Kernel k("reduce", Target::sm_90a);
  Reg in = k.param_ptr("in"), out = k.param_ptr("out");
  GroupReduction r(k, shape, 3, "sums");
  Reg index = k.sreg(SReg::ctaid_x) * static_cast<std::uint32_t>(block) + k.sreg(SReg::tid_x);
  Reg offset = k.reg(u64);
  k.mul_wide(offset, index, 4);
  Reg v = k.reg(f32);
  k.ld(Space::global, f32, v, at(in + offset));
  Reg a = k.reg(f32), b = k.reg(f32), m = k.reg(f32);
  k.for_range(0, rounds, 1, [&](const Reg&) {
    k.mov(a, v);
    k.add(b, v, v, {Round::rn});
    k.mov(m, v);
    if (lanes_per_group < 32) {
      warp::allreduce(k, {a, b}, add(), lanes_per_group);
      warp::allreduce(k, {m}, max(), lanes_per_group);
    } else if (split) {
      r.allreduce_in_cta({a, b, m}, concat({{2, add()}, {1, max()}}));
      Reg other = k.mov(f32, v);
      r.allreduce({other}, add());
      r.allreduce_across_ctas({a, b, m}, concat({{2, add()}, {1, max()}}));
    } else {
      r.allreduce({a, b, m}, concat({{2, add()}, {1, max()}}));
    }
  });
  Reg o = k.reg(u64);
  k.mul_wide(o, index, 12);
  k.st(Space::global, f32, at(out + o), a);
  k.st(Space::global, f32, at(out + o, 4), b);
  k.st(Space::global, f32, at(out + o, 8), m);

  runtime::Device device = runtime::Device::sim();
  const std::size_t threads = static_cast<std::size_t>(block) * blocks;
  Launched l;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (std::size_t i = 0; i < threads; ++i) l.in.push_back(u(rng));
  runtime::Buffer bin(device, threads * 4), bout(device, threads * 12);
  bin.upload(l.in);
  runtime::Module mod(device, k.module());
  runtime::LaunchConfig c{.grid = {static_cast<std::uint32_t>(blocks)}, .block = {static_cast<std::uint32_t>(block)}};
  if (shape.ctas > 1) c.cluster = {static_cast<std::uint32_t>(shape.ctas)};
  mod.launch("reduce", c, {bin, bout});
  l.out = bout.download<float>(threads * 3);
  return l;
}

// Checks every thread of each group (indices into in): the same bits in
// every thread, the sums within f32 rounding of fp64's, the exact max.
void expect_group_results(const Launched& l, const std::vector<std::vector<std::size_t>>& groups) {
  for (const auto& members : groups) {
    double sum = 0, magnitude = 0, big = -1e30;
    for (std::size_t i : members) sum += l.in[i], magnitude += std::fabs(l.in[i]), big = std::max<double>(big, l.in[i]);
    const std::size_t first = members[0];
    for (std::size_t i : members)
      for (int v = 0; v < 3; ++v)
        ASSERT_EQ(std::bit_cast<std::uint32_t>(l.out[3 * i + v]), std::bit_cast<std::uint32_t>(l.out[3 * first + v]))
            << "thread " << i << " value " << v << " differs from thread " << first;
    EXPECT_NEAR(l.out[3 * first], sum, 1e-6 * magnitude);
    EXPECT_NEAR(l.out[3 * first + 1], 2 * sum, 2e-6 * magnitude);
    EXPECT_EQ(l.out[3 * first + 2], static_cast<float>(big));
  }
}

std::vector<std::vector<std::size_t>> consecutive(std::size_t threads, std::size_t size) {
  std::vector<std::vector<std::size_t>> g;
  for (std::size_t first = 0; first < threads; first += size) {
    g.emplace_back();
    for (std::size_t i = first; i < first + size; ++i) g.back().push_back(i);
  }
  return g;
}

TEST(Reduction, LaneGroupsOfAWarp) {
  for (int lanes : {2, 8, 32}) {
    Launched l = run({.warps = 1, .groups = 2}, lanes, 2, 1, 10 + lanes);
    expect_group_results(l, consecutive(l.in.size(), static_cast<std::size_t>(lanes)));
  }
}

TEST(Reduction, WarpsOfACtaInSeveralGroups) {
  // Two groups of four warps in each of three CTAs, each group at its own barrier.
  Launched l = run({.warps = 4, .groups = 2}, 32, 3, 1, 20);
  expect_group_results(l, consecutive(l.in.size(), 128));
  // A whole CTA of 32 warps.
  Launched w = run({.warps = 32}, 32, 1, 1, 21);
  expect_group_results(w, consecutive(w.in.size(), 1024));
}

TEST(Reduction, CtasOfAClusterInALoop) {
  // Clusters of 2 and 4 CTAs of 2 warps; five rounds reuse the two buffers.
  for (int ctas : {2, 4}) {
    Launched l = run({.warps = 2, .ctas = ctas}, 32, 2 * ctas, 5, 30 + ctas);
    expect_group_results(l, consecutive(l.in.size(), static_cast<std::size_t>(64 * ctas)));
  }
}

// A combine that is not commutative gets its operands in lane order, the
// lower lane's first: "keep the second" leaves every lane of a group with the
// group's last lane's value. A commutative one (add, max) skips the ordering:
// its butterflies emit no selp.
TEST(Reduction, OnlyAnOrderedCombineHasItsOperandsOrdered) {
  const Combine keep_second([](Kernel& k, const Regs& into, const Regs& other) { k.mov(into[0], other[0]); });
  ASSERT_FALSE(keep_second.commutative);
  EXPECT_TRUE(add().commutative && max().commutative && concat({{1, add()}, {1, max()}}).commutative);
  EXPECT_FALSE(concat({{1, add()}, {1, keep_second}}).commutative);
  for (int lanes : {4, 32}) {
    Kernel k("last", Target::sm_90a);
    Reg out = k.param_ptr("out");
    Reg lane = k.sreg(SReg::tid_x);
    Reg v = k.reg(u32);
    k.mov(v, lane);
    warp::allreduce(k, {v}, keep_second, lanes);
    Reg o = k.reg(u64);
    k.mul_wide(o, lane, 4);
    k.st(Space::global, u32, at(out + o), v);
    runtime::Device device = runtime::Device::sim();
    runtime::Buffer bout(device, 32 * 4);
    runtime::Module mod(device, k.module());
    mod.launch("last", {.grid = {1}, .block = {32}}, {bout});
    const auto got = bout.download<std::uint32_t>(32);
    for (std::uint32_t i = 0; i < 32; ++i)
      EXPECT_EQ(got[i], (i / static_cast<std::uint32_t>(lanes) + 1) * static_cast<std::uint32_t>(lanes) - 1) << "lane " << i << ", groups of " << lanes;
  }
  Kernel k("sum", Target::sm_90a);
  Reg v = k.mov(f32, imm_f32(1.0f));
  warp::allreduce(k, {v}, add());
  EXPECT_EQ(k.ptx().find("selp"), std::string::npos) << k.ptx();
}

TEST(Reduction, CtasOfAClusterInTwoStepsInALoop) {
  for (int ctas : {2, 4}) {
    Launched l = run({.warps = 2, .ctas = ctas}, 32, 2 * ctas, 5, 40 + ctas, true);
    expect_group_results(l, consecutive(l.in.size(), static_cast<std::size_t>(64 * ctas)));
  }
}

TEST(Reduction, ReduxForIntegers) {
  Kernel k("redux", Target::sm_90a);
  Reg out = k.param_ptr("out");
  Reg lane = k.sreg(SReg::laneid);
  Reg total = warp::redux(k, Redux::add, lane), top = warp::redux(k, Redux::max, lane * 3u);
  k.guarded(lane == 0u, [&] {
    k.st(Space::global, u32, at(out), total);
    k.st(Space::global, u32, at(out, 4), top);
  });
  runtime::Device device = runtime::Device::sim();
  runtime::Buffer b(device, 8);
  runtime::Module(device, k.module()).launch("redux", {.grid = {1}, .block = {32}}, {b});
  EXPECT_EQ(b.download<std::uint32_t>(2), (std::vector<std::uint32_t>{496, 93}));
}

TEST(Reduction, RefusalsNameTheRule) {
  auto refusal = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const TileError& e) {
      return e.what();
    }
    return "no refusal";
  };
  Kernel k("refuse", Target::sm_90a);
  EXPECT_NE(refusal([&] { GroupReduction(k, {.warps = 3}, 1, "a"); }).find("warps 3 (a power of two, 1..32)"),
            std::string::npos);
  EXPECT_NE(refusal([&] { GroupReduction(k, {.warps = 2, .ctas = 2, .groups = 2}, 1, "b"); })
                .find("a group spanning CTAs fills each"),
            std::string::npos);
  EXPECT_NE(refusal([&] { GroupReduction(k, {.ctas = 16}, 1, "c"); }).find("ctas 16 (a power of two, 1..8)"),
            std::string::npos);
  EXPECT_NE(refusal([&] { warp::allreduce(k, {k.reg(f32)}, add(), 6); }).find("over 6 lanes"), std::string::npos);
  GroupReduction r(k, {.warps = 2}, 1, "d");
  EXPECT_NE(refusal([&] { r.allreduce({k.reg(f32), k.reg(f32)}, add()); }).find("declared for up to 1"),
            std::string::npos);
}

}  // namespace
}  // namespace warpforge::tile
