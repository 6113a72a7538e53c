// The warp-specialized kernel template: its shared-memory carve-up, the
// barrier ids it hands out, the configurations it refuses, what it emits
// around a design, and a small design run on the simulator: block sums over
// a work source of its own whose items cover different numbers of k-blocks
// (as causal attention's do), loaded by TMA into a ring of fewer slots than
// an item has blocks, in both schedules, on several CTAs. (The GEMM designs
// on it are tested with their ops: tests/ops.)
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"
#include "warpforge/tile/warp_specialized.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;

TEST(SharedLayout, TakesRegionsInOrderAtTheirAlignment) {
  SharedLayout l;
  EXPECT_EQ(l.ring(3000, 2), 0u);     // 6000 bytes
  EXPECT_EQ(l.buffer(100), 6000u);    // 16-aligned already
  EXPECT_EQ(l.ring(4096, 3), 6144u);  // up to the next 1024
  EXPECT_EQ(l.buffer(4, 4), 18432u);
  EXPECT_EQ(l.mbarriers(3), 18440u);  // up to 8
  EXPECT_EQ(l.used(), 18464u);
  EXPECT_EQ(l.launch_bytes(), 18464u + 1024u);
  EXPECT_THROW(l.ring(16, 0), TileError);
}

TEST(NamedBarrierSet, NamesOneBarrierPerMemberAndRefusesIdsOutside) {
  Kernel k("set", Target::sm_90a);
  Reg wg = k.sreg(SReg::tid_x) >> 7;
  const NamedBarrierSet set(k, 3, 2, 128);
  set.of(wg).sync();
  const std::string ptx = k.module().to_ptx();
  EXPECT_NE(ptx.find("add.u32 %r2, %r1, 3;"), std::string::npos) << ptx;  // wg + 3
  EXPECT_NE(ptx.find("bar.sync %r2, 128;"), std::string::npos) << ptx;
  EXPECT_THROW(NamedBarrierSet(k, 0, 2, 128), TileError);   // 0 is the CTA's
  EXPECT_THROW(NamedBarrierSet(k, 15, 2, 128), TileError);  // past 15
  EXPECT_THROW(NamedBarrierSet(k, 1, 2, 100), TileError);   // not whole warps
}

// --- a small design: block sums --------------------------------------------

// The input is blocks of 128 u32; item i of `items` covers blocks
// [3i, 3i + i % 3 + 1): one to three blocks, so neighbouring items differ.
constexpr int kBlock = 128;
int item_blocks(int item) {
  return item % 3 + 1;
}

// Items c, c + #CTAs, ... of CTA c, each with its own k-block count.
class BlockItems final : public WorkSource {
 public:
  BlockItems(Kernel& k, int items) : k_(&k), items_(items) {
    first_ = k.sreg(SReg::ctaid_x);
    step_ = k.sreg(SReg::nctaid_x);
  }
  void for_each(const std::function<void(const WorkItem&)>& body, const Reg* offset,
                int stride) const override {
    Kernel& k = *k_;
    Reg item = offset ? first_ + step_ * *offset : k.mov(u32, first_);
    Reg step = stride == 1 ? step_ : step_ * stride;
    k.while_loop([&] { return item < items_; },
                 [&] {
                   Reg kb0 = item * 3;
                   Reg zero = k.mov(u32, 0);
                   body({{zero, zero, zero, item}, kb0, kb0 + blocks(item)});
                   k.add(item, item, step);
                 });
  }
  Pred has_successor(const WorkItem& w) const override { return w.tile.unit + step_ < items_; }
  Src pingpong_skip(const WorkItem* after) const override {
    return blocks(after ? after->tile.unit + step_ : first_);
  }

 private:
  Reg blocks(const Reg& item) const {
    Reg r = k_->reg(u32);
    k_->rem(r, item, 3);
    return r + 1;
  }
  Kernel* k_;
  int items_;
  Reg first_, step_;
};

struct SumsCase {
  int consumers;
  ConsumerSchedule schedule;
  int stages, items;
  std::uint32_t ctas;
};

// Each consumer thread t of warpgroup w adds value t % 128 of every block of
// its items and writes the sum to out[item][w][t % 128] (ping-pong: only the
// warpgroup that took the item writes, into slot 0).
class BlockSums final : public WarpSpecializedDesign {
 public:
  explicit BlockSums(const SumsCase& c) : c_(c), k_("block_sums", Target::sm_90a) {
    SharedLayout l;
    ring_ = l.ring(kBlock * 4, c.stages);
    full_ = l.mbarriers(c.stages);
    empty_ = l.mbarriers(c.stages);
  }
  Kernel& kernel() override { return k_; }
  WarpSpecializedConfig config() const override {
    WarpSpecializedConfig w;
    w.consumers = c_.consumers;
    w.schedule = c_.schedule;
    w.stages = c_.stages;
    w.full_barriers = full_;
    w.empty_barriers = empty_;
    w.stage_bytes = kBlock * 4;
    w.dependent_launch = false;
    return w;
  }
  void params(WarpSpecialized&) override {
    map_p_ = k_.param_bytes("map", 128, 64);
    out_ = k_.param_ptr("out", 4);
  }
  void prologue(WarpSpecialized& ws) override {
    ws_ = &ws;
    map_ = k_.param_generic_address(map_p_);
  }
  std::unique_ptr<WorkSource> work_source(WarpSpecialized&) override {
    return std::make_unique<BlockItems>(k_, c_.items);
  }
  void load(const LoadStep& s) override {
    k_.tma_load(at(ws_->smem_base() + ring_ + s.state.stage() * (kBlock * 4)), map_,
                {s.kb * kBlock}, at(s.full));
  }
  void consumer_setup(WarpSpecialized& ws) override {
    lane_ = ws.tid() & 127;
    sum_ = k_.reg(u32);
  }
  int compute(const ComputeStep& s) override {
    Reg value = k_.reg(u32);
    k_.ld(Space::shared, u32, value,
          at(ws_->smem_base() + ring_ + s.state.stage() * (kBlock * 4) + (lane_ << 2)));
    k_.selp(sum_, sum_ + value, value, s.accumulate());
    return 0;
  }
  void finish(const WorkItem& w) override {
    Reg slot = c_.schedule == ConsumerSchedule::pingpong ? k_.mov(u32, 0) : ws_->warpgroup();
    Reg index = (w.tile.unit * c_.consumers + slot) * kBlock + lane_, offset = k_.reg(u64);
    k_.mul_wide(offset, index, 4);
    k_.st(Space::global, u32, at(out_ + offset), sum_);
  }

 private:
  SumsCase c_;
  Kernel k_;
  std::uint32_t ring_ = 0, full_ = 0, empty_ = 0;
  WarpSpecialized* ws_ = nullptr;
  ParamRef map_p_;
  Reg map_, out_, lane_, sum_;
};

std::string run_sums(const SumsCase& c) {
  const runtime::Device dev = runtime::Device::sim();
  BlockSums design(c);
  runtime::Module m(dev, build_warp_specialized(design));
  const int blocks = 3 * c.items;
  std::mt19937 rng(std::random_device{}());
  std::vector<std::uint32_t> in(static_cast<std::size_t>(blocks) * kBlock);
  for (auto& v : in) v = rng() % 100000;
  runtime::Buffer input(dev, in.size() * 4),
      out(dev, static_cast<std::size_t>(c.items) * c.consumers * kBlock * 4);
  input.upload(in);
  out.fill(0xFF);
  const runtime::TensorMap map = runtime::make_tensor_map(dev, {.dtype = runtime::DType::u32,
                                                                .address = input.address(),
                                                                .dims = {in.size()},
                                                                .box = {kBlock}});
  SharedLayout l;
  l.ring(kBlock * 4, c.stages);
  l.mbarriers(2 * c.stages);
  m.launch("block_sums",
           {.grid = {c.ctas},
            .block = {static_cast<std::uint32_t>(128 * (c.consumers + 1))},
            .dynamic_shared_bytes = l.launch_bytes()},
           {runtime::Arg::bytes_of(map), out});
  const auto got =
      out.download<std::uint32_t>(static_cast<std::size_t>(c.items) * c.consumers * kBlock);
  const bool pingpong = c.schedule == ConsumerSchedule::pingpong;
  for (int item = 0; item < c.items; ++item)
    for (int w = 0; w < c.consumers; ++w)
      for (int t = 0; t < kBlock; ++t) {
        std::uint32_t want = 0;
        for (int b = 3 * item; b < 3 * item + item_blocks(item); ++b)
          want += in[static_cast<std::size_t>(b) * kBlock + t];
        if (pingpong && w == 1) want = 0xFFFFFFFFu;  // the item's one warpgroup writes slot 0
        const std::uint32_t have =
            got[(static_cast<std::size_t>(item) * c.consumers + w) * kBlock + t];
        if (have != want)
          return "item " + std::to_string(item) + " warpgroup " + std::to_string(w) + " thread " +
                 std::to_string(t) + ": " + std::to_string(have) + ", expected " +
                 std::to_string(want);
      }
  return "";
}

TEST(WarpSpecializedOnSim, CooperativeConsumersSumEveryBlockOfEveryItem) {
  for (const SumsCase& c : {SumsCase{1, ConsumerSchedule::cooperative, 2, 7, 2},
                            SumsCase{2, ConsumerSchedule::cooperative, 2, 11, 3}})
    EXPECT_EQ(run_sums(c), "") << c.consumers << " consumers, " << c.stages << " stages";
}

// Items of 1-3 blocks alternate between the warpgroups: each skips the
// other's item in the ring by the source's count for it, and the ordering
// barriers keep either from waiting a whole ring ahead.
TEST(WarpSpecializedOnSim, PingPongConsumersTakeAlternateItemsOfDifferentLengths) {
  for (const SumsCase& c : {SumsCase{2, ConsumerSchedule::pingpong, 2, 9, 1},
                            SumsCase{2, ConsumerSchedule::pingpong, 3, 14, 2}})
    EXPECT_EQ(run_sums(c), "") << c.stages << " stages, " << c.ctas << " CTAs";
}

TEST(WarpSpecialized, EmitsTheRolesRegisterSplitAndClusterBarriers) {
  SumsCase c{2, ConsumerSchedule::cooperative, 2, 4, 1};
  BlockSums design(c);
  const std::string ptx = build_warp_specialized(design).to_ptx();
  EXPECT_NE(ptx.find(".maxntid 384, 1, 1"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("setmaxnreg.dec.sync.aligned.u32 40;"), std::string::npos);
  EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 232;"), std::string::npos);
  EXPECT_NE(ptx.find("mbarrier.arrive.expect_tx"), std::string::npos);
  EXPECT_EQ(ptx.find("griddepcontrol"), std::string::npos);   // dependent_launch off
  EXPECT_EQ(ptx.find("barrier.cluster"), std::string::npos);  // no cluster
  EXPECT_NE(ptx.find(".minnctapersm 1"), std::string::npos) << ptx;
}

// A configuration the template cannot run is refused with its rule.
class Configured final : public WarpSpecializedDesign {
 public:
  explicit Configured(WarpSpecializedConfig c) : c_(c), k_("configured", Target::sm_90a) {}
  Kernel& kernel() override { return k_; }
  WarpSpecializedConfig config() const override { return c_; }
  void params(WarpSpecialized&) override {}
  std::unique_ptr<WorkSource> work_source(WarpSpecialized&) override {
    return std::make_unique<BlockItems>(k_, 1);
  }
  void load(const LoadStep&) override {}
  int compute(const ComputeStep&) override { return 0; }
  void finish(const WorkItem&) override {}

 private:
  WarpSpecializedConfig c_;
  Kernel k_;
};

void expect_refused(WarpSpecializedConfig c, const std::string& rule) {
  c.stages = c.stages ? c.stages : 2;
  c.empty_barriers = 16;
  Configured design(c);
  try {
    build_warp_specialized(design);
    ADD_FAILURE() << "accepted; expected a refusal saying " << rule;
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
  }
}

TEST(WarpSpecialized, RefusesConfigurationsItCannotRun) {
  expect_refused({.consumers = 0}, "at least one consumer");
  expect_refused({.consumers = 6, .helpers = 2}, "at most 8 warpgroups");
  expect_refused({.consumers = 1, .schedule = ConsumerSchedule::pingpong}, "ping-pong takes 2");
  expect_refused({.stages = -1}, "at least 1");
  expect_refused({.cluster_m = 4, .cluster_n = 8}, "16 CTAs at most");
  expect_refused({.producer_registers = 20}, "a multiple of 8 in 24..256");
  expect_refused({.consumer_registers = 236}, "a multiple of 8 in 24..256");
  expect_refused({.ctas_per_sm = 0}, "1 to 32 (.minnctapersm)");
  // Two CTAs of 384 threads: 80 registers a thread at entry, 30,720 a CTA.
  expect_refused({.ctas_per_sm = 2}, "setmaxnreg targets of 64512 registers a CTA at 2 CTAs an SM; at most 80 x 384");
  // One CTA of 384 threads: 168 at entry, 64,512 a CTA; 32 + 2 x 240 asks for 65,536.
  expect_refused({.producer_registers = 32, .consumer_registers = 240},
                 "setmaxnreg targets of 65536 registers a CTA at 1 CTA an SM; at most 168 x 384");
  expect_refused({.schedule = ConsumerSchedule::pingpong,
                  .stream_k = WarpSpecializedConfig::StreamK{1024, 0, 2048}},
                 "stream-K takes the cooperative schedule");
  // A source without cluster ranks cannot place a cluster's CTAs, nor stream-K's pieces.
  expect_refused({.cluster_m = 2}, "without cluster ranks");
  expect_refused({.stream_k = WarpSpecializedConfig::StreamK{1024, 0, 2048}}, "no TileScheduler");
}

// Two CTAs an SM: .minnctapersm 2, the targets within the entry cap of 80.
TEST(WarpSpecialized, TwoCtasAnSmKeepTheRegisterSplitWithinTheEntryCap) {
  EXPECT_EQ(WarpSpecialized::entry_registers(384, 1), 168);
  EXPECT_EQ(WarpSpecialized::entry_registers(384, 2), 80);
  EXPECT_EQ(WarpSpecialized::entry_registers(128, 1), 255);
  Configured design({.stages = 2, .empty_barriers = 16, .producer_registers = 24, .consumer_registers = 104,
                     .ctas_per_sm = 2});
  const std::string ptx = build_warp_specialized(design).to_ptx();
  EXPECT_NE(ptx.find(".minnctapersm 2"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("setmaxnreg.inc.sync.aligned.u32 104;"), std::string::npos) << ptx;
}

TEST(WarpSpecialized, HandsOutNamedBarriersUntilTheIdsRunOut) {
  Configured design({.stages = 2, .empty_barriers = 16});
  WarpSpecialized ws(design);
  const NamedBarrierSet epilogue = ws.warpgroup_barriers(128);  // one per consumer: 1, 2
  EXPECT_EQ(epilogue.first(), 1);
  EXPECT_EQ(epilogue.count(), 2);
  EXPECT_EQ(ws.named_barrier(256).id().imm().int_value(), 3);
  for (int id = 4; id <= 15; ++id) ws.named_barrier(32);
  EXPECT_THROW(ws.named_barrier(32), TileError);
}

}  // namespace
}  // namespace warpforge::tile
