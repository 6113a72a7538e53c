// TMA on the simulator: cp.async.bulk.tensor loads (swizzle, out-of-bounds
// fill, multicast into a cluster) completing on mbarriers, stores, the
// tensor-map operand's forms, bulk copies into a partner CTA's shared
// memory, bulk reduce-adds into global memory, and the refusals. Expected shared-memory images
// are written from the ISA's description of the swizzle modes ("the 16-byte
// chunk index XOR the row index modulo 8" for 128-byte rows), not from the
// simulator's code.
#include "hopper_harness.hpp"
#include "hopper_kernels.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::sim::testing {
namespace {

using runtime::DType;
using runtime::TensorMapDesc;
using runtime::TensorMapSwizzle;


std::vector<runtime::KernelArg> load_args(runtime::KernelArg map, runtime::DevicePtr out, std::int32_t c0,
                                          std::int32_t c1, std::int32_t c2 = 0) {
  return {std::move(map), arg_u64(out), arg_u32(static_cast<std::uint32_t>(c0)),
          arg_u32(static_cast<std::uint32_t>(c1)), arg_u32(static_cast<std::uint32_t>(c2))};
}

TEST_F(HopperTest, TmaLoadSwizzles128BAndZeroFillsOutOfBounds) {
  // A 100 x 72 bf16 row-major matrix; the 32 x 64 box at column 16, row 80
  // runs past both edges (columns 72.., rows 100..).
  const std::uint64_t rows = 100, cols = 72;
  const auto a = random_bf16(rows * cols);
  const auto g = upload(a);
  const TensorMapDesc desc{.dtype = DType::bf16,
                           .address = g,
                           .dims = {cols, rows},
                           .strides_bytes = {cols * 2},
                           .box = {64, 32},
                           .swizzle = TensorMapSwizzle::b128};
  const std::uint32_t bytes = 64 * 32 * 2;
  auto out = upload(std::vector<std::uint16_t>(bytes / 2, 0xDEAD));
  run_ptx(load_kernel(bytes, 2), "tma_load", {.grid = {1}, .block = {128}}, load_args(tensor_map_arg(desc), out, 16, 80));
  const auto got = download<std::uint16_t>(out, bytes / 2);
  for (std::uint64_t r = 0; r < 32; ++r)
    for (std::uint64_t c = 0; c < 64; ++c) {
      const std::uint64_t gr = 80 + r, gc = 16 + c;
      const std::uint16_t want = gr < rows && gc < cols ? a[gr * cols + gc] : 0;
      // row r is 128 bytes; its 16-byte chunk c/8 sits at chunk (c/8) ^ (r % 8)
      const std::uint64_t at = r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8;
      ASSERT_EQ(got[at], want) << "box row " << r << " column " << c;
    }
}

TEST_F(HopperTest, TmaLoad3DWith64BSwizzleNegativeCoordinatesAndElementStrides) {
  // f32 tensor 24 x 5 x 4 (x fastest, rows padded to 32 elements); box
  // 16 x 4 x 2 from (-8, 3, 3), every second row (element stride 2 in y): the
  // box's y index j reads row 3 + 2j, so only j = 0 is inside.
  const std::uint64_t nx = 24, pitch = 32, ny = 5, nz = 4;
  std::vector<float> t(pitch * ny * nz);
  std::uniform_real_distribution<float> u(1.f, 2.f);
  for (auto& v : t) v = u(rng);
  const auto g = upload(t);
  const TensorMapDesc desc{.dtype = DType::f32,
                           .address = g,
                           .dims = {nx, ny, nz},
                           .strides_bytes = {pitch * 4, pitch * ny * 4},
                           .box = {16, 4, 2},
                           .element_strides = {1, 2, 1},
                           .swizzle = TensorMapSwizzle::b64};
  // 16 x 2 x 2 elements land (4 / 2 rows in y)
  const std::uint32_t bytes = 16 * 2 * 2 * 4;
  auto out = upload(std::vector<float>(bytes / 4, -1.f));
  run_ptx(load_kernel(bytes, 3), "tma_load", {.grid = {1}, .block = {128}},
          load_args(tensor_map_arg(desc), out, -8, 3, 3));
  const auto got = download<float>(out, bytes / 4);
  for (std::uint64_t z = 0; z < 2; ++z)
    for (std::uint64_t j = 0; j < 2; ++j)
      for (std::uint64_t i = 0; i < 16; ++i) {
        const std::int64_t x = -8 + static_cast<std::int64_t>(i), y = 3 + 2 * static_cast<std::int64_t>(j),
                           zz = 3 + static_cast<std::int64_t>(z);
        const bool inside = x >= 0 && x < static_cast<std::int64_t>(nx) && y < static_cast<std::int64_t>(ny) &&
                            zz < static_cast<std::int64_t>(nz);
        const float want = inside ? t[(static_cast<std::uint64_t>(zz) * ny + static_cast<std::uint64_t>(y)) * pitch +
                                      static_cast<std::uint64_t>(x)]
                                  : 0.f;
        // 64-byte rows; the 64B swizzle XORs chunk bits [4,6) with address bits [7,9)
        const std::uint64_t linear = ((z * 2 + j) * 16 + i) * 4;
        const std::uint64_t at = linear ^ (((linear >> 7) & 3) << 4);
        ASSERT_EQ(got[at / 4], want) << "box (" << i << "," << j << "," << z << ")";
      }
}

TEST_F(HopperTest, TmaLoadTakesTheMapFromAParamAddressOrGlobalMemory) {
  const auto a = random_bf16(64 * 8);
  const TensorMapDesc desc{.dtype = DType::bf16, .address = upload(a), .dims = {64, 8}, .strides_bytes = {128},
                           .box = {64, 8}};
  const std::uint32_t bytes = 64 * 8 * 2;
  // `mov.u64 %rd1, tmap` alone: the .param-space address
  auto out = zeros<std::uint16_t>(bytes / 2);
  run_ptx(load_kernel(bytes, 2, "mov.u64 %rd2, %rd1;"), "tma_load", {.grid = {1}, .block = {128}},
          load_args(tensor_map_arg(desc), out, 0, 0));
  EXPECT_EQ(download<std::uint16_t>(out, bytes / 2), a);
  // a map in a global buffer, its address in a u64 parameter (the `tmap`
  // bytes then hold that pointer)
  runtime::KernelArg map = tensor_map_arg(desc);
  const auto in_global = upload(std::vector<std::byte>(map.bytes.begin(), map.bytes.end()));
  runtime::KernelArg pointer;
  pointer.bytes.assign(128, std::byte{0});
  std::memcpy(pointer.bytes.data(), &in_global, 8);
  auto out2 = zeros<std::uint16_t>(bytes / 2);
  run_ptx(load_kernel(bytes, 2, "ld.param.u64 %rd2, [tmap];"), "tma_load", {.grid = {1}, .block = {128}},
          load_args(pointer, out2, 0, 0));
  EXPECT_EQ(download<std::uint16_t>(out2, bytes / 2), a);
}

TEST_F(HopperTest, TmaLoadThroughTheRuntimeApi) {
  // make_tensor_map on Device::sim(), passed as Arg::bytes_of(map) to the
  // `.param .align 64 .b8 tmap[128]` parameter through Module::launch's checks.
  const runtime::Device device = runtime::Device::sim();
  const auto a = random_bf16(64 * 16);
  runtime::Buffer in(device, a.size() * 2), out(device, a.size() * 2);
  in.copy_from_host(a.data(), a.size() * 2);
  const runtime::TensorMap map = runtime::make_tensor_map(
      device, {.dtype = DType::bf16, .address = in.address(), .dims = {64, 16}, .strides_bytes = {128},
               .box = {64, 16}, .swizzle = TensorMapSwizzle::b128});
  runtime::Module module(device, ptx::parse(load_kernel(2048, 2)));
  module.launch("tma_load", {.grid = {1}, .block = {128}},
                {runtime::Arg::bytes_of(map), out, std::int32_t{0}, std::int32_t{0}, std::int32_t{0}});
  std::vector<std::uint16_t> got(a.size());
  out.copy_to_host(got.data(), got.size() * 2);
  for (std::uint64_t r = 0; r < 16; ++r)
    for (std::uint64_t c = 0; c < 64; ++c)
      ASSERT_EQ(got[r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8], a[r * 64 + c]) << r << "," << c;
}

TEST_F(HopperTest, TmaLoadRefusesAMapItDidNotWrite) {
  runtime::KernelArg garbage;
  garbage.bytes.assign(128, std::byte{0x5A});
  auto out = zeros<std::uint32_t>(256);
  const std::string msg =
      ptx_error(load_kernel(1024, 2), "tma_load", {.grid = {1}, .block = {128}}, load_args(garbage, out, 0, 0));
  EXPECT_NE(msg.find("kernel 'tma_load', PTX line"), std::string::npos) << msg;
  EXPECT_NE(msg.find("thread (0,0,0): the tensor map at 0x7c0000000000 is not a simulator tensor map: it does not "
                     "start with the simulator's tensor-map magic"),
            std::string::npos)
      << msg;
}

TEST_F(HopperTest, TmaLoadChecksTheRankAndTheDestination) {
  const TensorMapDesc desc{.dtype = DType::f32, .address = upload(std::vector<float>(64, 1.f)), .dims = {64},
                           .strides_bytes = {}, .box = {64}};
  auto out = zeros<std::uint32_t>(64);
  const std::string rank = ptx_error(load_kernel(256, 2), "tma_load", {.grid = {1}, .block = {128}},
                                     load_args(tensor_map_arg(desc), out, 0, 0));
  EXPECT_NE(rank.find("a .2d tensor copy with a rank-1 tensor map"), std::string::npos) << rank;
  // a 256-byte box into a 128-byte tile
  const std::string small = ptx_error(load_kernel(128, 1), "tma_load", {.grid = {1}, .block = {128}},
                                      load_args(tensor_map_arg(desc), out, 0, 0));
  EXPECT_NE(small.find("TMA load destination box of 256 bytes at shared address 0x0 leaves the"), std::string::npos)
      << small;
}


TEST_F(HopperTest, TmaMulticastFillsEveryCtaOfTheMaskAndSignalsEachBarrier) {
  std::vector<float> t(16 * 32);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  for (auto& v : t) v = u(rng);
  const TensorMapDesc desc{.dtype = DType::f32, .address = upload(t), .dims = {32, 16}, .strides_bytes = {128},
                           .box = {32, 16}};
  auto out = upload(std::vector<float>(2 * 512, -1.f));
  run_ptx(ptx_module(kMulticastKernel), "multicast", {.grid = {2}, .block = {128}, .cluster = {2, 1, 1}},
          {tensor_map_arg(desc), arg_u64(out)});
  const auto got = download<float>(out, 2 * 512);
  for (int rank = 0; rank < 2; ++rank)
    for (std::size_t i = 0; i < 512; ++i) ASSERT_EQ(got[rank * 512 + i], t[i]) << "rank " << rank << " element " << i;
}

// Threads fill a 16 x 64 bf16 tile (128B swizzle, as TMA would have left it)
// with 1000 + 64 r + c; thread 0 stores it at (c0, c1).
const char* kStoreKernel = R"(
.visible .entry tma_store(.param .align 64 .b8 tmap[128], .param .s32 c0, .param .s32 c1)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 1024 .b8 tile[2048];
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, tile;
  mov.u32 %r7, %r1;
FILL:
  setp.ge.u32 %p3, %r7, 1024;
  @%p3 bra FILLED;
  shr.u32 %r4, %r7, 6;
  and.b32 %r5, %r7, 63;
  shl.b32 %r6, %r4, 6;
  add.u32 %r6, %r6, %r5;
  add.u32 %r6, %r6, 1000;
  shl.b32 %r8, %r7, 1;
  shr.u32 %r9, %r8, 7;
  and.b32 %r9, %r9, 7;
  shl.b32 %r9, %r9, 4;
  xor.b32 %r8, %r8, %r9;
  add.u32 %r8, %r8, %r3;
  st.shared.u16 [%r8], %r6;
  add.u32 %r7, %r7, 128;
  bra FILL;
FILLED:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u64 %rd1, tmap;
  cvta.param.u64 %rd2, %rd1;
  ld.param.s32 %r10, [c0];
  ld.param.s32 %r11, [c1];
  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd2, {%r10, %r11}], [%r3];
  cp.async.bulk.commit_group;
  $AFTER
DONE:
  ret;
}
)";

TEST_F(HopperTest, TmaStoreWritesTheInBoundsPartOfTheBox) {
  // A 20 x 100 bf16 matrix; the 16 x 64 box at column 50, row 10 covers
  // columns 50..99 and rows 10..19 of it: the rest of the box is dropped.
  const std::uint64_t rows = 20, cols = 100, pitch = 104;
  const std::vector<std::uint16_t> poison(rows * pitch, 0x7777);
  const auto g = upload(poison);
  const TensorMapDesc desc{.dtype = DType::bf16,
                           .address = g,
                           .dims = {cols, rows},
                           .strides_bytes = {pitch * 2},
                           .box = {64, 16},
                           .swizzle = TensorMapSwizzle::b128};
  // As written: wait for the group. Then a race the ISA leaves undefined:
  // the tile's first element changed between the store's issue and the wait
  // (or the thread's exit, with no wait): the simulator reads shared memory as
  // late as allowed, so the new value reaches global memory.
  const std::string overwrite = "mov.u32 %r12, 9999;\n  st.shared.u16 [%r3], %r12;\n  ";
  for (const std::string& after : {std::string("cp.async.bulk.wait_group.read 0;"),
                                   overwrite + "cp.async.bulk.wait_group 0;", overwrite}) {
    sim.copy_to_device(g, poison.data(), poison.size() * 2, nullptr);
    run_ptx(ptx_module(fill(kStoreKernel, {{"AFTER", after}})), "tma_store", {.grid = {1}, .block = {128}},
            {tensor_map_arg(desc), arg_u32(50), arg_u32(10)});
    const auto got = download<std::uint16_t>(g, rows * pitch);
    for (std::uint64_t r = 0; r < rows; ++r)
      for (std::uint64_t c = 0; c < pitch; ++c) {
        const bool written = r >= 10 && c >= 50 && c < cols;
        std::uint16_t want = written ? static_cast<std::uint16_t>(1000 + 64 * (r - 10) + (c - 50)) : 0x7777;
        if (r == 10 && c == 50 && after != "cp.async.bulk.wait_group.read 0;") want = 9999;
        ASSERT_EQ(got[r * pitch + c], want) << "row " << r << " column " << c << " after: " << after;
      }
  }
}

// Each CTA's 256 threads put one f32 each into a 1 KB tile; thread 0 adds
// the tile into global memory with two bulk reduces of 512 bytes
// (cp.reduce.async.bulk ... .add.f32): every CTA into the same 256 floats.
const char* kBulkReduceKernel = R"(
.visible .entry bulk_add(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<12>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  .shared .align 128 .b8 tile[1024];
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mad.lo.u32 %r3, %r2, 256, %r1;
  mul.wide.u32 %rd3, %r3, 4;
  add.u64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  mov.u32 %r4, tile;
  shl.b32 %r5, %r1, 2;
  add.u32 %r6, %r4, %r5;
  st.shared.f32 [%r6], %f1;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd1], [%r4], 512;
  add.u64 %rd5, %rd1, 512;
  add.u32 %r7, %r4, 512;
  mov.u32 %r8, 512;
  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd5], [%r7], %r8;
  cp.async.bulk.commit_group;
  $AFTER
DONE:
  ret;
}
)";

TEST_F(HopperTest, BulkReduceAddsEachCtasTileIntoGlobalMemory) {
  // Fresh values in eighths (every order of the adds is exact), the sum
  // against an fp64 reference; then the source rewritten (tile[0] = 1000)
  // after the issue: before the group's wait the simulator reads it at the
  // wait (as late as the ISA allows), after wait_group.read it does not.
  constexpr int kCtas = 5;
  std::uniform_int_distribution<int> eighths(-800, 800);
  std::vector<float> in(kCtas * 256), start(256);
  for (auto& v : in) v = static_cast<float>(eighths(rng)) / 8.f;
  for (auto& v : start) v = static_cast<float>(eighths(rng)) / 8.f;
  const std::string overwrite = "mov.f32 %f2, 0f447A0000;\n  st.shared.f32 [%r4], %f2;\n  ";
  for (const std::string& after : {std::string("cp.async.bulk.wait_group.read 0;"),
                                   "cp.async.bulk.wait_group.read 0;\n  " + overwrite,
                                   overwrite + "cp.async.bulk.wait_group 0;", overwrite}) {
    auto out = upload(start);
    run_ptx(ptx_module(fill(kBulkReduceKernel, {{"AFTER", after}})), "bulk_add", {.grid = {kCtas}, .block = {256}},
            {arg_u64(out), arg_u64(upload(in))});
    const auto got = download<float>(out, 256);
    const bool late = after.rfind("mov.f32", 0) == 0;  // the rewrite precedes the wait
    for (int i = 0; i < 256; ++i) {
      double want = start[static_cast<std::size_t>(i)];
      for (int c = 0; c < kCtas; ++c) want += i == 0 && late ? 1000.0 : in[static_cast<std::size_t>(c * 256 + i)];
      ASSERT_EQ(got[static_cast<std::size_t>(i)], static_cast<float>(want)) << "element " << i << " after: " << after;
    }
  }
}

// Thread 0 loads a box of an f32 map (128-byte swizzle) and adds it back
// with cp.reduce.async.bulk.tensor ... .add into a second map of the same
// shape: the swizzle undone as the load applied it, the box's rows past the
// tensor dropped.
const char* kTmaReduceKernel = R"(
.visible .entry tma_add(.param .align 64 .b8 src[128], .param .align 64 .b8 dst[128], .param .s32 c0,
                        .param .s32 c1, .param .s32 c2)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<8>;
  .reg .pred %p<4>;
  .shared .align 1024 .b8 tile[8192];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  mov.u32 %r2, bar;
  mov.u32 %r3, tile;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 8192;
  mov.u64 %rd1, src;
  cvta.param.u64 %rd2, %rd1;
  mov.u64 %rd3, dst;
  cvta.param.u64 %rd4, %rd3;
  ld.param.s32 %r4, [c0];
  ld.param.s32 %r5, [c1];
  ld.param.s32 %r6, [c2];
  cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd2, {%r4, %r5, %r6}], [%r2];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
  @!%p2 bra WAIT;
  cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%rd4, {%r4, %r5, %r6}], [%r3];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
DONE:
  ret;
}
)";

TEST_F(HopperTest, TmaReduceAddsTheInBoundsPartOfTheBox) {
  // (64 columns, 3 heads, 100 rows) of f32, as the attention backward's dQ
  // sums; the box (32, 1, 64) at column 32, head 1, row 50 covers rows
  // 50..99. Three CTAs add it; values in eighths, so every order is exact.
  const std::uint64_t cols = 64, heads = 3, rows = 100;
  constexpr int kCtas = 3;
  std::uniform_int_distribution<int> eighths(-800, 800);
  std::vector<float> src(cols * heads * rows), start(src.size());
  for (auto& v : src) v = static_cast<float>(eighths(rng)) / 8.f;
  for (auto& v : start) v = static_cast<float>(eighths(rng)) / 8.f;
  const auto gs = upload(src), gd = upload(start);
  const auto map = [&](runtime::DevicePtr address) {
    return tensor_map_arg(TensorMapDesc{.dtype = DType::f32,
                                        .address = address,
                                        .dims = {cols, heads, rows},
                                        .strides_bytes = {cols * 4, cols * heads * 4},
                                        .box = {32, 1, 64},
                                        .swizzle = TensorMapSwizzle::b128});
  };
  run_ptx(ptx_module(kTmaReduceKernel), "tma_add", {.grid = {kCtas}, .block = {32}},
          {map(gs), map(gd), arg_u32(32), arg_u32(1), arg_u32(50)});
  const auto got = download<float>(gd, start.size());
  for (std::uint64_t r = 0; r < rows; ++r)
    for (std::uint64_t h = 0; h < heads; ++h)
      for (std::uint64_t c = 0; c < cols; ++c) {
        const std::uint64_t i = (r * heads + h) * cols + c;
        const bool added = r >= 50 && h == 1 && c >= 32;
        const double want = double{start[i]} + (added ? kCtas * double{src[i]} : 0.0);
        ASSERT_EQ(got[i], static_cast<float>(want)) << "row " << r << " head " << h << " column " << c;
      }
  // The simulator adds f32 only: a bf16 map is refused, naming its type.
  const auto half = [&](runtime::DevicePtr address) {
    return tensor_map_arg(TensorMapDesc{.dtype = DType::bf16,
                                        .address = address,
                                        .dims = {cols, heads, rows},
                                        .strides_bytes = {cols * 2, cols * heads * 2},
                                        .box = {64, 1, 64},
                                        .swizzle = TensorMapSwizzle::b128});
  };
  const std::string bf16 = ptx_error(ptx_module(kTmaReduceKernel), "tma_add", {.grid = {1}, .block = {32}},
                                     {half(gs), half(gd), arg_u32(0), arg_u32(1), arg_u32(50)});
  EXPECT_NE(bf16.find("cp.reduce.async.bulk.tensor's .add is simulated on f32 tensor maps only, not bf16"),
            std::string::npos)
      << bf16;
}

TEST_F(HopperTest, BulkReduceRefusesWhatTheIsaDoesNot) {
  const auto kernel = [](const std::string& form, const std::string& size) {
    return ptx_module(fill(R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  .shared .align 128 .b8 tile[256];
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, tile;
  cp.reduce.async.bulk.$FORM [%rd1], [%r1], $SIZE;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
  ret;
}
)", {{"FORM", form}, {"SIZE", size}}));
  };
  const runtime::LaunchConfig one{.grid = {1}, .block = {32}};
  auto out = upload(std::vector<float>(64, 0.f));
  const std::string size = ptx_error(kernel("global.shared::cta.bulk_group.add.f32", "40"), "k", one, {arg_u64(out)});
  EXPECT_NE(size.find("bulk reduce of 40 bytes; the size must be a positive multiple of 16"), std::string::npos)
      << size;
  const std::string type = ptx_error(kernel("global.shared::cta.bulk_group.add.u32", "64"), "k", one, {arg_u64(out)});
  EXPECT_NE(type.find("cp.reduce.async.bulk is simulated as .add.f32 only"), std::string::npos) << type;
  const std::string outside = ptx_error(kernel("global.shared::cta.bulk_group.add.f32", "512"), "k", one, {arg_u64(out)});
  EXPECT_NE(outside.find("load of 512 bytes at shared address 0x0 is out of bounds"), std::string::npos) << outside;
}

// cp.async.bulk.shared::cluster.shared::cta: each CTA of a pair sends 256
// bytes of its shared memory into the other's, completing on the other's
// mbarrier, which was armed for them (before or after they land: the
// transaction count may run ahead of the arming).
TEST_F(HopperTest, BulkCopyIntoThePartnerCtaSignalsItsBarrier) {
  auto out = upload(std::vector<std::uint32_t>(128, 0xDEADBEEFu));
  run_ptx(bulk_to_peer_kernel(), "bulk_to_peer", {.grid = {2}, .block = {32}, .cluster = {2, 1, 1}}, {arg_u64(out)});
  const auto got = download<std::uint32_t>(out, 128);
  for (std::uint32_t rank = 0; rank < 2; ++rank)
    for (std::uint32_t i = 0; i < 64; ++i) ASSERT_EQ(got[rank * 64 + i], 1000 * (rank ^ 1) + i) << rank << " " << i;
}

TEST_F(HopperTest, BulkCopyRefusesASizeSourceOrBarrierTheIsaDoesNot) {
  const runtime::LaunchConfig pair{.grid = {2}, .block = {32}, .cluster = {2, 1, 1}};
  auto out = upload(std::vector<std::uint32_t>(128, 0));
  const std::string size = ptx_error(bulk_to_peer_kernel("40"), "bulk_to_peer", pair, {arg_u64(out)});
  EXPECT_NE(size.find("bulk copy of 40 bytes; the size must be a positive multiple of 16"), std::string::npos) << size;
  const std::string own = ptx_error(bulk_to_peer_kernel("256", "%r2"), "bulk_to_peer", pair, {arg_u64(out)});
  EXPECT_NE(own.find("signals an mbarrier in another CTA; the ISA requires the destination's"), std::string::npos)
      << own;
  const std::string remote = ptx_error(bulk_to_peer_kernel("256", "%r9", "%r8"), "bulk_to_peer", pair, {arg_u64(out)});
  EXPECT_NE(remote.find("is another CTA's shared memory; the source is .shared::cta"), std::string::npos) << remote;
}

TEST_F(HopperTest, BulkCopiesTheSimulatorDoesNotRunAreRefusedAtDecode) {
  const std::string bulk = ptx_module(R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 16, [%r2];
  ret;
}
)");
  const std::string msg = ptx_error(bulk, "k", {.grid = {1}, .block = {32}}, {arg_u64(0)});
  EXPECT_NE(msg.find("cp.async.bulk without .tensor is simulated from .shared::cta into .shared::cluster only, "
                     "completing on an mbarrier (.mbarrier::complete_tx::bytes)"),
            std::string::npos)
      << msg;
  const std::string coords = ptx_module(R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r3];
  ret;
}
)");
  const std::string msg2 = ptx_error(coords, "k", {.grid = {1}, .block = {32}}, {arg_u64(0)});
  EXPECT_NE(msg2.find("a .2d tensor copy takes 2 coordinates, as [tensorMap, {c0, ...}]"), std::string::npos) << msg2;
  const std::string no_barrier = ptx_module(R"(
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  cp.async.bulk.tensor.1d.shared::cluster.global.tile.bulk_group [%r1], [%rd1, {%r2}];
  ret;
}
)");
  const std::string msg3 = ptx_error(no_barrier, "k", {.grid = {1}, .block = {32}}, {arg_u64(0)});
  EXPECT_NE(msg3.find("a TMA load completes on an mbarrier: .mbarrier::complete_tx::bytes is required"),
            std::string::npos)
      << msg3;
}

}  // namespace
}  // namespace warpforge::sim::testing
