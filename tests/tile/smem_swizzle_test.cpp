// tile::swizzled_chunk against layout::Swizzle: for every chunk and row
// phase, the kernel's offset on the simulator is the chunk bits of the
// swizzled byte offset, in each of Hopper's three modes.
#include <gtest/gtest.h>

#include <string>

#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/tile/smem_swizzle.hpp"

namespace warpforge::tile {
namespace {

using namespace dsl;

TEST(SmemSwizzle, EmitsAndXorShiftWithTheSwizzlesMaskAndBase) {
  Kernel k("swizzle", Target::sm_90a);
  Reg tid = k.sreg(SReg::tid_x);
  swizzled_chunk(k, layout::smem_swizzle(layout::SmemSwizzle::b64, 1), tid, tid >> 4);
  const std::string ptx = k.module().to_ptx();
  EXPECT_NE(ptx.find("and.b32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(", 3;"), std::string::npos) << ptx;  // two bits of chunk
  EXPECT_NE(ptx.find("xor.b32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("shl.b32"), std::string::npos) << ptx;
}

TEST(SmemSwizzle, RefusesTheIdentity) {
  Kernel k("swizzle", Target::sm_90a);
  Reg tid = k.sreg(SReg::tid_x);
  try {
    swizzled_chunk(k, layout::Swizzle(), tid, 0);
    FAIL() << "the identity swizzle accepted";
  } catch (const TileError& e) {
    EXPECT_NE(std::string(e.what()).find("Swizzle<0,0,0>"), std::string::npos) << e.what();
  }
}

TEST(SmemSwizzleOnSim, AgreesWithLayoutSwizzleForEveryChunkAndPhase) {
  for (auto mode :
       {layout::SmemSwizzle::b32, layout::SmemSwizzle::b64, layout::SmemSwizzle::b128}) {
    const layout::Swizzle sw = layout::smem_swizzle(mode, 1);
    const int mask = (1 << sw.bits()) - 1;
    // Thread t: chunk t % 16 (chunks past the mask too), phase t / 16 % 2^B.
    Kernel k("swizzle", Target::sm_90a);
    Reg out = k.param_ptr("out", 4);
    Reg tid = k.sreg(SReg::tid_x);
    Reg offset = swizzled_chunk(k, sw, tid & 15, (tid >> 4) & mask);
    Reg at_thread = k.reg(u64);
    k.mul_wide(at_thread, tid, 4);
    k.st(Space::global, u32, at(out + at_thread), offset);
    runtime::Device dev = runtime::Device::sim();
    runtime::Module m(dev, k.module());
    runtime::Buffer b(dev, 128 * 4);
    b.fill(0xFF);
    m.launch("swizzle", {.grid = {1}, .block = {128}}, {b});
    const auto got = b.download<std::uint32_t>(128);
    for (int t = 0; t < 128; ++t) {
      const int chunk = t % 16, phase = (t / 16) & mask;
      const std::int64_t x =
          (std::int64_t{phase} << (sw.base() + sw.shift())) | ((chunk & mask) << sw.base());
      const std::int64_t want = sw(x) & (std::int64_t{mask} << sw.base());
      EXPECT_EQ(got[static_cast<std::size_t>(t)], want)
          << layout::to_string(sw) << " chunk " << chunk << " phase " << phase;
    }
  }
}

}  // namespace
}  // namespace warpforge::tile
