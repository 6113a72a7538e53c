// tile::warpgroup: the descriptor's fixed fields and the K block's
// instruction sequence (fence, k_steps wgmma stepping the descriptors,
// commit) for 16-bit and FP8 operands, read back from the emitted PTX.
#include <gtest/gtest.h>

#include <string>

#include "warpforge/error.hpp"
#include "warpforge/layout/wgmma_descriptor.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/tile/warpgroup_mma.hpp"

namespace warpforge::tile::warpgroup {
namespace {

using namespace dsl;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(WarpgroupMma, DescriptorOrsTheFixedFieldsIntoTheShiftedAddress) {
  Kernel k("desc", Target::sm_90a);
  Reg address = k.mov(u32, 0x400);
  smem_descriptor(k, address, 16, 1024);
  const std::string ptx = k.ptx();
  const std::uint64_t fixed = layout::WgmmaDescriptor{0, 16, 1024, layout::SmemSwizzle::b128}.encode();
  EXPECT_NE(ptx.find("shr.u32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("cvt.u64.u32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(std::to_string(fixed)), std::string::npos) << "fixed fields " << fixed << " in\n" << ptx;
}

// Run on the simulator: the address is masked to the 14-bit start field, so
// bits above 2^18 (a cluster CTA's shared addresses carry some on the GPU)
// cannot spill into the leading byte offset beside it.
TEST(WarpgroupMma, DescriptorKeepsOnlyTheStartAddressField) {
  Kernel k("desc_of", Target::sm_90a);
  Reg address = k.param(u32, "address");
  Reg out = k.param_ptr("out", 8);
  k.st(Space::global, u64, at(out), smem_descriptor(k, address, 8192, 1024));
  runtime::Device dev = runtime::Device::sim();
  runtime::Module m(dev, k.module());
  runtime::Buffer result(dev, 8);
  for (std::uint32_t a : {0x400u, 0x38C00u, 0x01000400u, 0xFFFFFC00u}) {
    result.fill(0xFF);
    m.launch("desc_of", {.grid = {1}, .block = {1}}, {a, result});
    EXPECT_EQ(result.download<std::uint64_t>(1)[0],
              (layout::WgmmaDescriptor{a & 0x3FFFFu, 8192, 1024, layout::SmemSwizzle::b128}.encode()))
        << std::hex << a;
  }
}

TEST(WarpgroupMma, KBlockIsFenceStepsCommit) {
  Kernel k("block", Target::sm_90a);
  Regs acc = k.regs(f32, 64, "acc");
  Reg da = k.mov(b64, 0), db = k.mov(b64, 0);
  Pred first = k.setp(Cmp::ne, k.mov(u32, SReg::tid_x), 0);
  mma_k_block(k, {.ab = f16, .b_major = WgmmaMajor::mn, .k_steps = 4, .a_step = 32, .b_step = 2048}, acc, da, db,
              first);
  const std::string ptx = k.ptx();
  EXPECT_EQ(count(ptx, "wgmma.fence.sync.aligned"), 1u);
  EXPECT_EQ(count(ptx, "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"), 4u) << ptx;
  EXPECT_EQ(count(ptx, "wgmma.commit_group.sync.aligned"), 1u);
  EXPECT_LT(ptx.find("wgmma.fence"), ptx.find("wgmma.mma_async"));
  EXPECT_LT(ptx.rfind("wgmma.mma_async"), ptx.find("wgmma.commit_group"));
  // The steps move A by 32 / 16 = 2 and B by 2048 / 16 = 128 descriptor units;
  // only the first adds to the accumulator under the predicate, B transposed.
  for (int step : {1, 2, 3}) {
    EXPECT_NE(ptx.find(", " + std::to_string(2 * step) + ";"), std::string::npos) << "A step " << step;
    EXPECT_NE(ptx.find(", " + std::to_string(128 * step) + ";"), std::string::npos) << "B step " << step;
  }
  EXPECT_EQ(count(ptx, ", 1, 1, 0, 1;"), 4u) << "scale-a, scale-b, tnsp-a = 0, tnsp-b = 1 on every step";
  EXPECT_EQ(count(ptx, ", 1, 1, 1, 0, 1;"), 3u) << "scale-d = 1 on steps 1..3";
}

// One wgmma takes 32 bytes of K for either element width: an e4m3 block
// steps the same 32-byte descriptors with m64nNk32, without imm-trans
// operands (the 8-bit forms have none).
TEST(WarpgroupMma, Fp8KBlockStepsThirtyTwoBytesOfK32) {
  Kernel k("fp8_block", Target::sm_90a);
  Regs acc = k.regs(f32, 32, "acc");
  Reg da = k.mov(b64, 0), db = k.mov(b64, 0);
  Pred first = k.setp(Cmp::ne, k.mov(u32, SReg::tid_x), 0);
  mma_k_block(k, {.ab = e4m3, .k_steps = 4}, acc, da, db, first);
  const std::string ptx = k.ptx();
  EXPECT_EQ(count(ptx, "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"), 4u) << ptx;
  for (int step : {1, 2, 3}) EXPECT_NE(ptx.find(", " + std::to_string(2 * step) + ";"), std::string::npos) << step;
  EXPECT_EQ(count(ptx, ", 1, 1;"), 4u) << "scale-a, scale-b and no tnsp operands on every step";
}

TEST(WarpgroupMma, Fp8KBlockRefusesAnMnMajorOperand) {
  Kernel k("fp8_mn", Target::sm_90a);
  Regs acc = k.regs(f32, 32);
  Reg da = k.mov(b64, 0), db = k.mov(b64, 0);
  Pred first = k.setp(Cmp::ne, k.mov(u32, SReg::tid_x), 0);
  try {
    mma_k_block(k, {.ab = e5m2, .b_major = WgmmaMajor::mn}, acc, da, db, first);
    ADD_FAILURE() << "an MN-major e5m2 B was accepted";
  } catch (const DslError& e) {
    EXPECT_NE(std::string(e.what()).find("B is MN-major with e5m2 elements"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace warpforge::tile::warpgroup
