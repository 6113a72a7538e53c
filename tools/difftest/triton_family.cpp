// The PTX forms the simulator added to run what Triton writes (issue 45):
// a tensor map a kernel builds field by field (tensormap.replace, copied to
// global memory by tensormap.cp_fenceproxy: Triton's
// tl.make_tensor_descriptor) and a TMA load through it, boxes partly past
// the tensor's edges; and signed loads into 64-bit registers, which
// sign-extend (Triton loads its i32 arguments with ld.param.s32 into a
// 64-bit register). The map's bytes are the hardware's own format on a GPU
// and the simulator's elsewhere, so the units record what the kernels load
// and store, not the map.
#include <cstring>

#include "difftest/families.hpp"
#include "difftest/values.hpp"
#include "sim/hopper_kernels.hpp"
#include "warpforge/ptx/parser.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/sha256.hpp"

namespace warpforge::difftest {
namespace {

// Launches per unit (a recording holds at least 10,000 cases): boxes of 8x4
// f32 of the built-map kernel, grids of 256 threads of the loads.
constexpr int kBoxes = 64, kWidenLaunches = 8;

// The built-map kernel (tests/sim/hopper_kernels.hpp) on a 10x24 f32 tensor
// of random bits, its box at random coordinates from 4 before the tensor to
// 4 past its end in each dimension.
Outcome built_map(const runtime::Device& device, std::uint64_t seed) {
  Rng rng(seed);
  const std::string text = sim::testing::built_map_kernel();
  runtime::Module module(device, ptx::parse(text));
  std::vector<std::uint32_t> tensor(240);
  for (auto& v : tensor) v = rng.u32();
  runtime::Buffer src(device, tensor.size() * 4), maps(device, 128), out(device, 32 * 4);
  src.upload(tensor);
  Outcome o;
  for (int i = 0; i < kBoxes; ++i) {
    maps.fill(0);
    out.fill(0xFF);
    const auto c0 = static_cast<std::int32_t>(rng.below(32)) - 4, c1 = static_cast<std::int32_t>(rng.below(18)) - 4;
    module.launch("built_map", {.grid = {1}, .block = {128}}, {src, maps, out, c0, c1});
    const auto tile = out.download<std::uint8_t>(32 * 4);
    o.bytes.insert(o.bytes.end(), tile.begin(), tile.end());
  }
  o.fingerprint = runtime::to_hex(runtime::sha256(text)).substr(0, 16);
  return o;
}

// Each of 256 threads loads a random s32, s16 and s8 from global memory and
// an s32 parameter into 64-bit registers and stores the four.
const char* kWidenKernel = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry widen(.param .u64 in, .param .u64 out, .param .s32 p)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.s32 %rd5, [%rd4];
  ld.global.s16 %rd6, [%rd4+4];
  ld.global.s8 %rd7, [%rd4+6];
  ld.param.s32 %rd8, [p];
  mul.wide.u32 %rd9, %r1, 32;
  add.u64 %rd10, %rd2, %rd9;
  st.global.v2.u64 [%rd10], {%rd5, %rd6};
  st.global.v2.u64 [%rd10+16], {%rd7, %rd8};
  ret;
}
)";

Outcome widen(const runtime::Device& device, std::uint64_t seed) {
  Rng rng(seed);
  runtime::Module module(device, ptx::parse(kWidenKernel));
  runtime::Buffer in(device, 256 * 8), out(device, 256 * 32);
  Outcome o;
  for (int i = 0; i < kWidenLaunches; ++i) {
    std::vector<std::uint64_t> words(256);
    for (auto& w : words) w = rng.bits();  // about half of each field negative
    in.upload(words);
    out.fill(0xAB);
    const auto p = static_cast<std::int32_t>(rng.u32() | (i % 2 ? 0u : 0x80000000u));  // negative, then either
    module.launch("widen", {.grid = {1}, .block = {256}}, {in, out, p});
    const auto stored = out.download<std::uint8_t>(256 * 32);
    o.bytes.insert(o.bytes.end(), stored.begin(), stored.end());
  }
  o.fingerprint = runtime::to_hex(runtime::sha256(std::string(kWidenKernel))).substr(0, 16);
  return o;
}

}  // namespace

Family triton_family() {
  Family f{"triton_ptx", "what Triton's PTX needed: kernel-built TMA maps (tensormap.replace), signed loads into "
                         "64-bit registers", {}, ""};
  f.units.push_back({"tensormap.replace + cp_fenceproxy + TMA load (8x4 f32 boxes)", kBoxes * 32, built_map});
  f.units.push_back({"ld.global.s32/s16/s8, ld.param.s32 into .b64 registers", kWidenLaunches * 256 * 4, widen});
  return f;
}

}  // namespace warpforge::difftest
