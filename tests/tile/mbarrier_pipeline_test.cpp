// The Hopper pipeline handles: the instructions they emit, their refusals,
// and producer/consumer kernels on the simulator that move numbered values
// through a ring of fewer slots than values (so the ring wraps and the
// parity flips many times) and check every value each consumer saw.
#include <gtest/gtest.h>

#include <string>

#include "tile/scaffold_kernels.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/tile/mbarrier_array.hpp"
#include "warpforge/tile/mbarrier_pipeline.hpp"
#include "warpforge/tile/named_barrier.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;
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

TEST(MbarrierPipelineOnSim, CooperativeConsumersSeeEveryItemInOrder) {
  for (int stages : {1, 2, 3}) {
    const testing::Ring ring{.stages = stages, .items = 11, .consumers = 2, .alternating = false};
    EXPECT_EQ(testing::ring_mismatch(ring, testing::run_ring(Device::sim(), ring)), "");
  }
}

TEST(MbarrierPipelineOnSim, AlternatingConsumersSkipEachOthersSlots) {
  for (auto [stages, consumers] : {std::pair{2, 2}, std::pair{3, 2}, std::pair{4, 3}}) {
    const testing::Ring ring{
        .stages = stages, .items = 13, .consumers = consumers, .alternating = true};
    EXPECT_EQ(testing::ring_mismatch(ring, testing::run_ring(Device::sim(), ring)), "");
  }
}

}  // namespace
}  // namespace warpforge::tile
