// Kernels written with the DSL, run on the simulator: a block reduction
// (shfl.sync butterflies, shared memory, bar.sync, redux.sync on a divergent
// subset) and per-thread while loops of data-dependent length.
#include "sim_harness.hpp"
#include "warpforge/dsl.hpp"

// Outside warpforge::sim, whose Kernel and SReg are the decoded forms.
namespace warpforge::dsl_on_sim {
namespace {

using namespace dsl;
using sim::testing::arg_u64;
using sim::testing::SimTest;

TEST_F(SimTest, DslBlockReduction) {
  Kernel k("block_sum", Target::sm_80);
  Reg in = k.param_ptr("in", 4), out = k.param_ptr("out", 4);
  Shared partial = k.shared("partial", 8 * 4, 4);
  Reg tid = k.sreg(SReg::tid_x);
  Reg gid = (k.sreg(SReg::ctaid_x) << 8) + tid;
  Reg offset = k.reg(u64);
  k.mul_wide(offset, gid, 4);
  Reg v = k.reg(u32);
  k.ld(Space::global, u32, v, at(in + offset));
  for (int delta = 16; delta >= 1; delta /= 2) {
    Reg other = k.reg(u32);
    k.shfl_sync(Shfl::bfly, other, v, delta, 31);
    k.add(v, v, other);
  }
  Reg lane = k.sreg(SReg::laneid), warp = tid >> 5;
  Reg slot = k.address_of(partial) + (warp << 2);
  k.if_then(lane == 0, [&] { k.st(Space::shared, u32, at(slot), v); });
  k.bar_sync();
  k.if_then(tid < 8, [&] {
    Reg mine = k.reg(u32), total = k.reg(u32);
    k.ld(Space::shared, u32, mine, at(k.address_of(partial) + (tid << 2)));
    k.redux_sync(Redux::add, total, mine, 0xff);
    k.if_then(tid == 0, [&] {
      Reg o = k.reg(u64);
      k.mul_wide(o, k.sreg(SReg::ctaid_x), 4);
      k.st(Space::global, u32, at(out + o), total);
    });
  });

  std::vector<std::uint32_t> data(4 * 256);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint32_t>(i * 3 % 1001);
  auto din = upload(data);
  auto dout = zeros<std::uint32_t>(4);
  auto loaded = sim.load(k.module());
  sim.launch(*loaded, "block_sum", {.grid = {4, 1, 1}, .block = {256, 1, 1}},
             {arg_u64(din), arg_u64(dout)}, nullptr);
  auto h = download<std::uint32_t>(dout, 4);
  for (std::size_t b = 0; b < 4; ++b) {
    std::uint32_t want = 0;
    for (std::size_t i = 0; i < 256; ++i) want += data[b * 256 + i];
    EXPECT_EQ(h[b], want) << b;
  }
}

TEST_F(SimTest, DslCollatzStepsPerThread) {
  Kernel k("collatz", Target::sm_80);
  Reg out = k.param_ptr("out", 4);
  Reg tid = k.sreg(SReg::tid_x);
  Reg x = k.mov(u32, tid + 1);
  Reg steps = k.mov(u32, 0);
  k.while_loop([&] { return x != 1; },
               [&] {
                 k.if_else((x & 1) == 0, [&] { k.shr(x, x, 1); }, [&] { k.mad(x, x, 3, 1); });
                 k.add(steps, steps, 1);
               });
  Reg o = k.reg(u64);
  k.mul_wide(o, tid, 4);
  k.st(Space::global, u32, at(out + o), steps);

  auto dout = zeros<std::uint32_t>(64);
  auto loaded = sim.load(k.module());
  sim.launch(*loaded, "collatz", {.grid = {1, 1, 1}, .block = {64, 1, 1}}, {arg_u64(dout)},
             nullptr);
  auto h = download<std::uint32_t>(dout, 64);
  for (std::uint32_t t = 0; t < 64; ++t) {
    std::uint32_t x = t + 1, steps = 0;
    while (x != 1) {
      x = x % 2 == 0 ? x / 2 : 3 * x + 1;
      ++steps;
    }
    EXPECT_EQ(h[t], steps) << t;
  }
}

// k.scope: each scope declares its own %tmp, %more and label `again`, hiding
// the function's %tmp inside it; the function's %tmp keeps its value.
TEST_F(SimTest, DslScopesShadowAndReuseNames) {
  Kernel k("scoped", Target::sm_80);
  Reg out = k.param_ptr("out", 4);
  Reg tid = k.sreg(SReg::tid_x);
  Reg outer = k.reg(u32, "tmp");
  k.mov(outer, 1000);
  Reg sum = k.mov(u32, 0);
  for (int step : {1, 3}) {
    k.scope([&] {
      Reg tmp = k.reg(u32, "tmp");
      Pred more = k.pred("more");
      Label again = k.label_named("again");
      k.mov(tmp, 0);
      k.place(again);
      k.add(tmp, tmp, step);
      k.setp(more, Cmp::lt, tmp, tid);
      k.bra_if(more, again);
      k.add(sum, sum, tmp);
    });
  }
  k.add(sum, sum, outer);
  Reg o = k.reg(u64);
  k.mul_wide(o, tid, 4);
  k.st(Space::global, u32, at(out + o), sum);

  auto dout = upload(std::vector<std::uint32_t>(64, 0xDEADBEEFu));  // poisoned
  auto loaded = sim.load(k.module());
  sim.launch(*loaded, "scoped", {.grid = {1, 1, 1}, .block = {64, 1, 1}}, {arg_u64(dout)}, nullptr);
  auto h = download<std::uint32_t>(dout, 64);
  // A scope with step s counts s, 2s, ... up to the first multiple >= tid.
  auto count = [](std::uint32_t s, std::uint32_t t) { return t <= s ? s : (t + s - 1) / s * s; };
  for (std::uint32_t t = 0; t < 64; ++t) EXPECT_EQ(h[t], 1000 + count(1, t) + count(3, t)) << t;
}

}  // namespace
}  // namespace warpforge::dsl_on_sim
