// Every refusal of the Hopper instructions, at decode (the kernel's first
// launch: forms the simulator does not run, malformed operands) and at run
// time (TMA addresses), each with its message.
#include "hopper_harness.hpp"

namespace warpforge::sim::testing {
namespace {

// The SimError of a one-instruction kernel of 128 threads.
class HopperRefusal : public HopperTest {
 protected:
  std::string refusal(const std::string& line) {
    return ptx_error(ptx_module(".visible .entry k(.param .u64 p)\n{\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"
                                "  .reg .pred %p<2>;\n  " +
                                line + "\n  ret;\n}\n"),
                     "k", {.grid = {1}, .block = {128}}, {arg_u64(0)});
  }
};

TEST_F(HopperRefusal, MalformedHopperInstructionsAreRefusedAtDecode) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.bf16.bf16 {%r0, %r1, %r2, %r3}, %rd1, %rd2, %rd3, %r4, 0, 1, "
       "1, 0, 0;",
       "sparse wgmma (.sp) is not simulated"},
      {"wgmma.arrive.sync.aligned;", "wgmma takes .fence, .commit_group, .wait_group or .mma_async"},
      {"wgmma.wait_group.sync.aligned %r1;", "wgmma.wait_group's count must be an immediate"},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16 {%r0, %r1, %r2, %r3}, %rd1, %rd2, 1, 1, 1, 0, 0;",
       "wgmma.mma_async needs .dtype.atype.btype"},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r0, %r1, %r2, %r3}, %rd1, %rd2, 1, 1, 1, 0, 2;",
       "imm-trans-a/b must be the immediate 0 or 1"},
      {"wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r0, %r1, %r2, %r3}, %rd1, %rd2, 1, 1, 1, 0;",
       "expects 8 operands, has 7"},
      {"barrier.cluster.sync;", "barrier.cluster takes .arrive or .wait"},
      {"cp.async.bulk.tensor.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];",
       "cp.async.bulk.tensor needs a dimension .1d to .5d"},
      {"cp.async.bulk.tensor.1d.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];",
       "cp.async.bulk.tensor copies between .global and .shared::cluster/.shared::cta"},
      {"cp.async.bulk.tensor.1d.global.shared::cta.tile [%rd1, {%r2}], [%r3];",
       "a TMA store completes through a bulk async-group: .bulk_group is required"},
      {"cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%rd1, {%r2}], [%r3], [%r4];",
       "a TMA store takes [tensorMap, {coordinates}], [srcMem]"},
      {"cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r1], "
       "[%rd1, {%r2}], [%r3];",
       "a TMA load takes [dstMem], [tensorMap, {coordinates}], [mbar], ctaMask"},
      {"cp.async.bulk.tensor.1d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], "
       "[%r3];",
       "modifier .im2col is not simulated"},
      {"cp.async.bulk.wait_group %r1;", "cp.async.bulk.wait_group's count must be an immediate"},
  };
  for (const auto& [line, message] : cases) {
    const std::string msg = refusal(line);
    EXPECT_NE(msg.find("kernel 'k', PTX line "), std::string::npos) << line << "\n" << msg;
    EXPECT_NE(msg.find(message), std::string::npos) << line << "\n" << msg;
  }
}

TEST_F(HopperRefusal, CacheHintedTensorCopiesTakeTheirPolicyOperand) {
  // .L2::cache_hint adds a 64-bit policy after the other operands.
  const std::string msg = refusal(
      "cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group.L2::cache_hint [%rd1, {%r2}], [%r3], %rd2;");
  // accepted at decode: it runs, and refuses to read a tensor map past the parameters
  EXPECT_NE(msg.find("load of 128 bytes at param address 0x0 is out of bounds: the kernel parameters"),
            std::string::npos)
      << msg;
}

// A 1-D f32 TMA load of 256 bytes into `tile` completing on `bar`, with the
// destination and barrier operands given.
std::string load_into(const std::string& dst, const std::string& bar, const std::string& before = "") {
  return ptx_module(fill(R"(
.visible .entry k(.param .align 64 .b8 tmap[128])
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 1024 .b8 tile[512];
  .shared .align 8 .b64 bar[2];
  mov.u32 %r1, tile;
  mov.u32 %r2, bar;
  mov.u32 %r3, 0;
  mov.u64 %rd1, tmap;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  $BEFORE
  cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$DST], [%rd1, {%r3}], [$BAR];
  ret;
}
)",
                         {{"DST", dst}, {"BAR", bar}, {"BEFORE", before}}));
}

TEST_F(HopperRefusal, TmaLoadsCheckTheirAddresses) {
  const auto small = upload(std::vector<float>(32, 1.f));  // 128 bytes; the map claims 1024
  const runtime::KernelArg map = tensor_map_arg(
      {.dtype = runtime::DType::f32, .address = small, .dims = {256}, .strides_bytes = {}, .box = {64}});
  const runtime::KernelArg fits = tensor_map_arg(
      {.dtype = runtime::DType::f32, .address = small, .dims = {32}, .strides_bytes = {}, .box = {64}});
  const runtime::LaunchConfig one{.grid = {1}, .block = {32}};
  EXPECT_NE(ptx_error(load_into("%r1", "%r2"), "k", one, {map})
                .find("thread (0,0,0): TMA load of 256 bytes at global address " + hex(small) +
                      " (a row of the tensor map's box) is outside every allocation; nearest: "),
            std::string::npos);
  EXPECT_NE(ptx_error(load_into("%r1+16", "%r2"), "k", one, {fits})
                .find("TMA load destination shared address 0x10 is not 128-byte aligned"),
            std::string::npos);
  EXPECT_NE(ptx_error(load_into("%r1", "%r2+4"), "k", one, {fits})
                .find("TMA load's mbarrier at shared address 0x204 is not an aligned 8-byte object inside the "
                      "shared memory of CTA rank 0"),
            std::string::npos);
  // the box into CTA rank 1 of a cluster, the barrier in rank 0
  const std::string remote = ptx_error(
      load_into("%r4", "%r2", "mapa.shared::cluster.u32 %r4, %r1, 1;"), "k",
      {.grid = {2}, .block = {32}, .cluster = {2, 1, 1}}, {fits});
  EXPECT_NE(remote.find("TMA load into CTA rank 1 signals an mbarrier in another CTA; the ISA requires the same CTA"),
            std::string::npos)
      << remote;
}

TEST_F(HopperRefusal, WgmmaOperandsOutsideSharedMemoryAreReportedWhenTheGroupRetires) {
  const std::string text = ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %d<4>;
  .reg .b64 %rd<2>;
  .shared .align 128 .b8 s[256];
  mov.u64 %rd1, 0x1000;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd1, %rd1, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ret;
}
)");
  const ptx::Module m = ptx::parse(text);
  const std::string msg = ptx_error(text, "k", {.grid = {1}, .block = {128}}, {});
  EXPECT_NE(msg.find("(wgmma.wait_group.sync.aligned 0): block (0,0,0): retiring the wgmma.mma_async at PTX line " +
                     std::to_string(line_of(m, "wgmma.mma_async")) +
                     ": wgmma operand A element (0, 0) is at shared address 0x10000, outside the CTA's 256 bytes "
                     "of shared memory (descriptor 0x1000)"),
            std::string::npos)
      << msg;
}

TEST_F(HopperRefusal, TmaStoresOutsideGlobalMemoryAreReportedWhenTheGroupRetires) {
  const auto small = upload(std::vector<float>(32, 1.f));  // 128 bytes; the map claims 1024
  const std::string text = ptx_module(R"(
.visible .entry k(.param .align 64 .b8 tmap[128])
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  .shared .align 1024 .b8 tile[256];
  mov.u32 %r1, tile;
  mov.u32 %r2, 0;
  mov.u64 %rd1, tmap;
  cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [%rd1, {%r2}], [%r1];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
  ret;
}
)");
  const ptx::Module m = ptx::parse(text);
  const std::string msg = ptx_error(
      text, "k", {.grid = {1}, .block = {1}},
      {tensor_map_arg({.dtype = runtime::DType::f32, .address = small, .dims = {256}, .strides_bytes = {}, .box = {64}})});
  EXPECT_NE(msg.find("(cp.async.bulk.wait_group 0): block (0,0,0) thread (0,0,0): retiring the TMA store at PTX line " +
                     std::to_string(line_of(m, "cp.async.bulk.tensor")) + ": TMA store of 256 bytes at global address " +
                     hex(small)),
            std::string::npos)
      << msg;
}

TEST_F(HopperRefusal, MapaOfAGenericAddressOutsideSharedMemoryIsRefused) {
  const std::string msg = refusal("mov.u64 %rd1, 4096;\n  mov.u32 %r1, 0;\n  mapa.u64 %rd2, %rd1, %r1;");
  EXPECT_NE(msg.find("thread (0,0,0): mapa of generic address 0x1000, which is not in shared memory"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace warpforge::sim::testing
