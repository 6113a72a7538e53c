// The Hopper pipeline handles: the instructions they emit, their refusals,
// and producer/consumer kernels on the simulator that move numbered values
// through a ring of fewer slots than values (so the ring wraps and the
// parity flips many times) and check every value each consumer saw.
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/tile/mbarrier_array.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"
#include "warpforge/tile/named_barrier.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;
using runtime::Buffer;
using runtime::Device;

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The body of the kernel's function: what follows its first '{'.
std::string body_of(Kernel& k) {
  const std::string text = k.module().to_ptx();
  return text.substr(text.find('{'));
}

TEST(NamedBarrier, EmitsBarSyncAndBarArriveWithIdAndCount) {
  Kernel k("named", Target::sm_90a);
  Reg wg = k.sreg(SReg::tid_x) >> 7;
  NamedBarrier(k, 3, 256).sync();
  NamedBarrier(k, wg + 1, 128).arrive();
  const std::string ptx = body_of(k);
  EXPECT_NE(ptx.find("bar.sync 3, 256;"), std::string::npos) << ptx;
  EXPECT_EQ(count(ptx, "bar.arrive %r"), 1) << ptx;
  EXPECT_NE(ptx.find(", 128;"), std::string::npos) << ptx;
}

TEST(NamedBarrier, RefusesAnIdPast15AndCountsThatAreNotWholeWarps) {
  Kernel k("named", Target::sm_90a);
  try {
    NamedBarrier(k, 16, 128);
    FAIL() << "id 16 accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("id 16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0..15"), std::string::npos) << e.what();
  }
  try {
    NamedBarrier(k, 1, 48);
    FAIL() << "48 threads accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("48 threads"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("multiple of the warp size"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(NamedBarrier(k, 1, 0), TileError);
  EXPECT_THROW(NamedBarrier(k, -1, 32), TileError);
  EXPECT_NO_THROW(NamedBarrier(k, 15, 1024));
}

TEST(MbarrierArray, AddressesTheIthBarrierAndInitialisesIt) {
  Kernel k("array", Target::sm_90a);
  Shared smem = k.shared("bars", 64, 8);
  const MbarrierArray bars(k, k.address_of(smem), 16, 4);
  bars.init(0, 1);
  bars.init(3, 256);
  Reg i = k.sreg(SReg::tid_x);
  k.mbarrier_arrive(at(bars.address(i)));
  const std::string ptx = body_of(k);
  EXPECT_EQ(count(ptx, "mbarrier.init.shared.b64"), 2) << ptx;
  EXPECT_NE(ptx.find("+16], 1;"), std::string::npos) << ptx;    // barrier 0 at byte 16
  EXPECT_NE(ptx.find("+40], 256;"), std::string::npos) << ptx;  // barrier 3 at byte 16 + 3 * 8
  EXPECT_NE(ptx.find("shl.b32"), std::string::npos) << ptx;     // 8 bytes per barrier
}

TEST(MbarrierArray, RefusesMisalignedOffsetsEmptyArraysAndIndicesOutside) {
  Kernel k("array", Target::sm_90a);
  Reg base = k.address_of(k.shared("bars", 64, 8));
  try {
    MbarrierArray(k, base, 4, 2);
    FAIL() << "offset 4 accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("offset 4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("multiple of 8"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MbarrierArray(k, base, 0, 0), TileError);
  const MbarrierArray bars(k, base, 0, 2);
  try {
    bars.at(2);
    FAIL() << "index 2 of 2 accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("0..1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(bars.at(-1), TileError);
}

TEST(MbarrierPipeline, RefusesMismatchedArraysAndEmptyRings) {
  Kernel k("pipe", Target::sm_90a);
  Reg base = k.address_of(k.shared("bars", 64, 8));
  try {
    MbarrierPipeline(MbarrierArray(k, base, 0, 3), MbarrierArray(k, base, 24, 2));
    FAIL() << "3 full and 2 empty barriers accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("3 full and 2 empty"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PipelineState(k, 0), TileError);
  const MbarrierPipeline pipe(MbarrierArray(k, base, 0, 2), MbarrierArray(k, base, 16, 2));
  EXPECT_THROW(pipe.release(k.mov(u32, 0), 0), TileError);
}

TEST(MbarrierPipeline, AdvanceWrapsAndFlipsTheParity) {
  Kernel k("state", Target::sm_90a);
  PipelineState s(k, 3);
  const std::string before = body_of(k);
  ++s;
  const std::string after_advance = body_of(k);
  EXPECT_EQ(count(after_advance, "selp.") - count(before, "selp."), 2) << after_advance;
  EXPECT_NE(after_advance.find(", 3;"), std::string::npos)
      << after_advance;  // compared with the stage count
  EXPECT_EQ(count(after_advance, "xor.b32"), 1) << after_advance;
  s.skip(5);
  const std::string after_skip = body_of(k);
  EXPECT_EQ(count(after_skip, "div.u32"), 1) << after_skip;
  EXPECT_EQ(count(after_skip, "rem.u32"), 1) << after_skip;
}

TEST(MbarrierPipeline, ReleaseArrivesOnEveryCtaOfTheCluster) {
  Kernel k("release", Target::sm_90a);
  Reg base = k.address_of(k.shared("bars", 64, 8));
  const MbarrierPipeline pipe(MbarrierArray(k, base, 0, 4), MbarrierArray(k, base, 32, 4));
  Reg stage = k.mov(u32, 1);
  pipe.release(stage);
  EXPECT_EQ(count(body_of(k), "mbarrier.arrive.shared.b64"), 1);
  pipe.release(stage, 2);
  const std::string ptx = body_of(k);
  EXPECT_EQ(count(ptx, "mapa.shared::cluster.u32"), 2) << ptx;
  EXPECT_EQ(count(ptx, "mbarrier.arrive.release.cta.shared::cluster.b64"), 2) << ptx;
}

// Warp 0 produces `items` values per lane into a ring of `stages` slots of
// 32 u32; consumer warps 1..consumers read them. Cooperative: every consumer
// reads every item (the empty barrier counts all their threads). Alternating:
// consumer c reads items c, c + consumers, ... and skips the others' slots.
std::vector<std::uint32_t> run_ring(int stages, int items, int consumers, bool alternating) {
  Kernel k("ring", Target::sm_90a);
  Reg out = k.param_ptr("out", 4);
  Shared ring = k.shared("ring", 32 * 4 * stages, 16);
  Shared bars = k.shared("bars", 16 * stages, 8);
  Reg bar_base = k.address_of(bars);
  const MbarrierPipeline pipe(MbarrierArray(k, bar_base, 0, stages),
                              MbarrierArray(k, bar_base, 8 * stages, stages));
  Reg tid = k.sreg(SReg::tid_x), lane = tid & 31, warp = tid >> 5;
  k.if_then(tid == 0, [&] {
    pipe.init(32, alternating ? 32 : 32 * consumers);
    k.fence_mbarrier_init();
  });
  k.bar_sync(0);
  Reg slot_of_lane = k.address_of(ring) + (lane << 2);
  k.if_else(
      warp == 0,
      [&] {
        PipelineState s(k, stages);
        k.for_range(0, items, 1, [&](Reg i) {
          pipe.acquire(s);
          Reg value = i * 1000 + lane + 7;
          k.st(Space::shared, u32, at(slot_of_lane + (s.stage() << 7)), value);
          pipe.commit(s.stage());
          ++s;
        });
      },
      [&] {
        Reg c = warp - 1;
        PipelineState s(k, stages);
        if (alternating) k.if_then(c != 0, [&] { s.skip(c); });
        const int step = alternating ? consumers : 1;
        Reg first = alternating ? c : k.mov(u32, 0);
        k.for_range(first, items, step, [&](Reg i) {
          pipe.wait(s);
          Reg value = k.reg(u32);
          k.ld(Space::shared, u32, value, at(slot_of_lane + (s.stage() << 7)));
          pipe.release(s.stage());
          // out[c][i][lane]
          Reg index = (c * items + i) * 32 + lane, offset = k.reg(u64);
          k.mul_wide(offset, index, 4);
          k.st(Space::global, u32, at(out + offset), value);
          ++s;
          if (alternating && consumers > 1) s.skip(consumers - 1);
        });
      });
  Device dev = Device::sim();
  runtime::Module m(dev, k.module());
  const std::size_t n = static_cast<std::size_t>(consumers) * items * 32;
  Buffer b(dev, n * 4);
  b.fill(0xFF);
  m.launch("ring", {.grid = {1}, .block = {static_cast<std::uint32_t>(32 * (1 + consumers))}}, {b});
  return b.download<std::uint32_t>(n);
}

TEST(MbarrierPipelineOnSim, CooperativeConsumersSeeEveryItemInOrder) {
  for (int stages : {1, 2, 3}) {
    const int items = 11, consumers = 2;
    const auto out = run_ring(stages, items, consumers, false);
    for (int c = 0; c < consumers; ++c)
      for (int i = 0; i < items; ++i)
        for (int l = 0; l < 32; ++l)
          ASSERT_EQ(out[(c * items + i) * 32 + l], static_cast<std::uint32_t>(i * 1000 + l + 7))
              << "stages " << stages << " consumer " << c << " item " << i << " lane " << l;
  }
}

TEST(MbarrierPipelineOnSim, AlternatingConsumersSkipEachOthersSlots) {
  for (auto [stages, consumers] : {std::pair{2, 2}, std::pair{3, 2}, std::pair{4, 3}}) {
    const int items = 13;
    const auto out = run_ring(stages, items, consumers, true);
    for (int c = 0; c < consumers; ++c)
      for (int i = 0; i < items; ++i)
        for (int l = 0; l < 32; ++l) {
          // Consumer c wrote only its own items; the rest keep the poison.
          const std::uint32_t expected =
              i % consumers == c ? static_cast<std::uint32_t>(i * 1000 + l + 7) : 0xFFFFFFFFu;
          ASSERT_EQ(out[(c * items + i) * 32 + l], expected)
              << "stages " << stages << " consumers " << consumers << " consumer " << c << " item "
              << i << " lane " << l;
        }
  }
}

}  // namespace
}  // namespace warpforge::tile
