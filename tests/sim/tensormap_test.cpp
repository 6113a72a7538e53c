// Tensor maps built by a kernel (tensormap.replace, tensormap.cp_fenceproxy;
// PTX ISA 9.7.9.27-28), as Triton's tl.make_tensor_descriptor builds them,
// and mbarrier.inval.
#include "hopper_harness.hpp"
#include "hopper_kernels.hpp"

namespace warpforge::sim::testing {
namespace {

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
