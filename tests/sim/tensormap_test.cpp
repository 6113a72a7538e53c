// Tensor maps built by a kernel (tensormap.replace, tensormap.cp_fenceproxy;
// PTX ISA 9.7.9.27-28), as Triton's tl.make_tensor_descriptor builds them,
// and mbarrier.inval.
#include "hopper_harness.hpp"
#include "hopper_kernels.hpp"

namespace warpforge::sim::testing {
namespace {

// Thread 0 zeroes 128 bytes of shared memory and writes a 2-D f32 map's
// fields into them ($ELEMTYPE the element type); warp 0 copies the map to
// `maps` in global memory (cp_fenceproxy is .sync.aligned); thread 0
// TMA-loads an 8x4 box at (c0, c1) through it; the tile goes to `out`.
const char* kBuiltMapKernel = R"(
.visible .entry built_map(.param .u64 src, .param .u64 maps, .param .u64 out, .param .s32 c0, .param .s32 c1)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 128 .b8 map[128];
  .shared .align 1024 .b8 tile[128];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r3, tile;
  mov.u32 %r11, map;
  cvt.u64.u32 %rd1, %r11;
  ld.param.u64 %rd6, [maps];
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra BUILT;
  mov.u32 %r12, 0;
ZERO:
  add.u32 %r13, %r11, %r12;
  st.shared.u32 [%r13], 0;
  add.u32 %r12, %r12, 4;
  setp.lt.u32 %p3, %r12, 128;
  @%p3 bra ZERO;
  ld.param.u64 %rd2, [src];
  tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%rd1], %rd2;
  tensormap.replace.tile.rank.shared::cta.b1024.b32 [%rd1], 1;
  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd1], 0, 8;
  tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%rd1], 1, 4;
  tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd1], 0, 24;
  tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%rd1], 1, 10;
  tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%rd1], 0, 96;
  tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd1], 0, 1;
  tensormap.replace.tile.element_stride.shared::cta.b1024.b32 [%rd1], 1, 1;
  tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [%rd1], $ELEMTYPE;
  tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%rd1], 0;
  mbarrier.init.shared::cta.b64 [%r2], 1;
BUILT:
  bar.sync 0;
  setp.ge.u32 %p3, %r1, 32;
  @%p3 bra WAIT;
  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%rd6], [%rd1], 128;
  fence.proxy.tensormap::generic.acquire.gpu [%rd6], 128;
  @%p1 bra WAIT;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 128;
  ld.param.s32 %r4, [c0];
  ld.param.s32 %r5, [c1];
  cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd6, {%r4, %r5}], [%r2];
WAIT:
  bar.sync 0;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra LOOP;
  ld.param.u64 %rd3, [out];
  setp.ge.u32 %p3, %r1, 32;
  @%p3 bra DONE;
  shl.b32 %r8, %r1, 2;
  add.u32 %r9, %r3, %r8;
  ld.shared.u32 %r10, [%r9];
  mul.wide.u32 %rd4, %r1, 4;
  add.u64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r10;
DONE:
  ret;
}
)";

std::string built_map_kernel(const std::string& elemtype = "7") {
  return ptx_module(fill(kBuiltMapKernel, {{"ELEMTYPE", elemtype}}));
}

class TensormapTest : public HopperTest {
 protected:
  // A 10x24 f32 tensor of distinct values.
  std::vector<float> source() {
    std::vector<float> v(240);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + static_cast<float>(i);
    return v;
  }
};

TEST_F(TensormapTest, KernelBuiltMapLoadsTheBoxAndEqualsTheHostEncoding) {
  const auto host = source();
  const runtime::DevicePtr src = upload(host);
  const runtime::DevicePtr maps = upload(std::vector<std::byte>(128, std::byte{0xAB}));
  const runtime::DevicePtr out = upload(std::vector<float>(32, -1.0f));
  // The box at (20, 8) runs past the last column (24) and row (10): zeros there.
  run_ptx(built_map_kernel(), "built_map", {.grid = {1}, .block = {128}},
          {arg_u64(src), arg_u64(maps), arg_u64(out), arg_u32(20), arg_u32(8)});
  const auto tile = download<float>(out, 32);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 8; ++c) {
      const int row = 8 + r, col = 20 + c;
      const float want = row < 10 && col < 24 ? host[static_cast<std::size_t>(row * 24 + col)] : 0.0f;
      EXPECT_EQ(tile[static_cast<std::size_t>(r * 8 + c)], want) << "row " << row << " column " << col;
    }
  // The fields as the ISA encodes them (rank less one, dimensions innermost
  // first, the stride of dimension 1 in bytes) are the map the runtime
  // makes from the same description.
  const runtime::TensorMap expected = sim.encode_tensor_map(
      {.dtype = runtime::DType::f32, .address = src, .dims = {24, 10}, .strides_bytes = {96}, .box = {8, 4}});
  const auto built = download<std::byte>(maps, 128);
  EXPECT_TRUE(std::equal(built.begin(), built.end(), expected.bytes.begin()));
}

TEST_F(TensormapTest, ElementTypesTheSimulatorCannotCopyAreRefused) {
  const runtime::DevicePtr src = upload(source());
  const runtime::DevicePtr maps = zeros<std::byte>(128);
  const runtime::DevicePtr out = zeros<float>(32);
  const std::string msg = ptx_error(built_map_kernel("11"), "built_map", {.grid = {1}, .block = {128}},
                                    {arg_u64(src), arg_u64(maps), arg_u64(out), arg_u32(0), arg_u32(0)});
  EXPECT_NE(msg.find("thread (0,0,0): tensormap.replace .elemtype: element type 11 (f32.ftz, tf32 and the "
                     "sub-byte types) is not simulated"),
            std::string::npos)
      << msg;
}

TEST_F(TensormapTest, ReplacingFieldsOfBytesThatAreNoMapIsRefused) {
  const std::string text = ptx_module(R"(
.visible .entry garbage(.param .u64 maps)
{
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [maps];
  tensormap.replace.tile.rank.global.b1024.b32 [%rd1], 1;
  ret;
}
)");
  const runtime::DevicePtr maps = upload(std::vector<std::byte>(128, std::byte{7}));
  const std::string msg = ptx_error(text, "garbage", {.grid = {1}, .block = {1}}, {arg_u64(maps)});
  EXPECT_NE(msg.find("tensormap.replace .rank: the 128 bytes at the address are neither a simulator tensor map "
                     "nor zeros"),
            std::string::npos)
      << msg;
}

TEST_F(TensormapTest, InvalidatedMbarrierHasNoArrivalsUntilInitializedAgain) {
  const auto kernel = [](const char* between) {
    return ptx_module(std::string(R"(
.visible .entry again(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, bar;
  mbarrier.init.shared::cta.b64 [%r1], 1;
  mbarrier.inval.shared::cta.b64 [%r1];
  )") + between + R"(
  mbarrier.arrive.shared::cta.b64 %rd1, [%r1];
  ld.param.u64 %rd2, [out];
  st.global.u64 [%rd2], %rd1;
  ret;
}
)");
  };
  const runtime::DevicePtr out = zeros<std::uint64_t>(1);
  const std::string msg = ptx_error(kernel(""), "again", {.grid = {1}, .block = {1}}, {arg_u64(out)});
  EXPECT_NE(msg.find("mbarrier arrive of 1 with only 0 arrivals pending"), std::string::npos) << msg;
  run_ptx(kernel("mbarrier.init.shared::cta.b64 [%r1], 1;"), "again", {.grid = {1}, .block = {1}}, {arg_u64(out)});
  EXPECT_EQ(download<std::uint64_t>(out, 1)[0], 0u);  // the state: the phase it arrived in
}

}  // namespace
}  // namespace warpforge::sim::testing
