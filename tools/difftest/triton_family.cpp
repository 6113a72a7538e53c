// The PTX forms the simulator added to run what Triton writes (issue 45):
// a tensor map a kernel builds field by field (tensormap.replace, copied to
// global memory by tensormap.cp_fenceproxy: Triton's
// tl.make_tensor_descriptor) and a TMA load through it, boxes partly past
// the tensor's edges; and signed loads into 64-bit registers, which
// sign-extend (Triton loads its i32 arguments with ld.param.s32 into a
// 64-bit register); and ptxas's fusing of products with the sums after them
// (src/sim/contraction.hpp), which every compiled kernel meets. The map's bytes are the hardware's own format on a GPU
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
// inside it in each dimension, each launch's map at an address of its own.
// On an H200 (scripts/tensormap_probe.py, session 4) a box starting past
// the tensor's end (27, 13) faults with an illegal instruction, and so did
// a second launch at the same map address after the map was zeroed between
// them: the unit's launches before.
Outcome built_map(const runtime::Device& device, std::uint64_t seed) {
  Rng rng(seed);
  const std::string text = sim::testing::built_map_kernel();
  runtime::Module module(device, ptx::parse(text));
  std::vector<std::uint32_t> tensor(240);
  for (auto& v : tensor) v = rng.u32();
  runtime::Buffer src(device, tensor.size() * 4), maps(device, 128 * kBoxes), out(device, 32 * 4);
  src.upload(tensor);
  maps.fill(0);
  Outcome o;
  for (int i = 0; i < kBoxes; ++i) {
    out.fill(0xFF);
    const auto c0 = static_cast<std::int32_t>(rng.below(28)) - 4, c1 = static_cast<std::int32_t>(rng.below(14)) - 4;
    const auto map = static_cast<std::uint64_t>(maps.address() + 128 * static_cast<std::uint64_t>(i));
    module.launch("built_map", {.grid = {1}, .block = {128}}, {src, map, out, c0, c1});
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

// ptxas's contraction of a product (mul.f32, div.full.f32) with the
// add.f32/sub.f32 after it (src/sim/contraction.hpp), in the forms whose
// outcome the rule states and in those it decides by its choices: each
// thread reads five moderate f32 (exponents within ±4, either sign) and
// writes ten sums, each product of its own operands (so that ptxas cannot
// merge them):
//   0 div.full(a,b) + c   1 div.full(c,d) - a   2 e - div.full(b,d)
//   3 mul(a,c) + e        4 mul(a,d) - mul(b,c)  5 mul(b,d) + mul(c,e)
//   6, 7 p + b, p - d of one p = mul(a,e) (two uses: not contracted here)
//   8 div.full.ftz(d,a) + b (.ftz)   9 add.rn(mul(b,e), a) (never contracted)
const char* kContractKernel = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry contract(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<28>;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 32;
  add.u64 %rd4, %rd1, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
  ld.global.f32 %f5, [%rd4+16];
  div.full.f32 %f6, %f1, %f2;
  add.f32 %f7, %f6, %f3;
  div.full.f32 %f8, %f3, %f4;
  sub.f32 %f9, %f8, %f1;
  div.full.f32 %f10, %f2, %f4;
  sub.f32 %f11, %f5, %f10;
  mul.f32 %f12, %f1, %f3;
  add.f32 %f13, %f12, %f5;
  mul.f32 %f14, %f1, %f4;
  mul.f32 %f15, %f2, %f3;
  sub.f32 %f16, %f14, %f15;
  mul.f32 %f17, %f2, %f4;
  mul.f32 %f18, %f3, %f5;
  add.f32 %f19, %f17, %f18;
  mul.f32 %f20, %f1, %f5;
  add.f32 %f21, %f20, %f2;
  sub.f32 %f22, %f20, %f4;
  div.full.ftz.f32 %f23, %f4, %f1;
  add.ftz.f32 %f24, %f23, %f2;
  mul.f32 %f25, %f2, %f5;
  add.rn.f32 %f26, %f25, %f1;
  mul.wide.u32 %rd5, %r1, 40;
  add.u64 %rd6, %rd2, %rd5;
  st.global.f32 [%rd6], %f7;
  st.global.f32 [%rd6+4], %f9;
  st.global.f32 [%rd6+8], %f11;
  st.global.f32 [%rd6+12], %f13;
  st.global.f32 [%rd6+16], %f16;
  st.global.f32 [%rd6+20], %f19;
  st.global.f32 [%rd6+24], %f21;
  st.global.f32 [%rd6+28], %f22;
  st.global.f32 [%rd6+32], %f24;
  st.global.f32 [%rd6+36], %f26;
  ret;
}
)";

constexpr int kContractThreads = 256, kContractLaunches = 4, kContractSums = 10;

// The ten sums of every thread of every launch, thread by thread.
std::vector<std::uint32_t> contracted_sums(const runtime::Device& device, std::uint64_t seed) {
  Rng rng(seed);
  runtime::Module module(device, ptx::parse(kContractKernel));
  runtime::Buffer in(device, kContractThreads * 32), out(device, kContractThreads * kContractSums * 4);
  std::vector<std::uint32_t> sums;
  for (int i = 0; i < kContractLaunches; ++i) {
    std::vector<std::uint32_t> words(kContractThreads * 8, 0);
    for (int t = 0; t < kContractThreads; ++t)
      for (int k = 0; k < 5; ++k) words[8 * t + k] = static_cast<std::uint32_t>(float_moderate(rng, kF32, 4));
    in.upload(words);
    out.fill(0xAB);
    module.launch("contract", {.grid = {1}, .block = {kContractThreads}}, {in, out});
    const auto stored = out.download<std::uint32_t>(kContractThreads * kContractSums);
    sums.insert(sums.end(), stored.begin(), stored.end());
  }
  return sums;
}

// A unit of the sums `columns` of contracted_sums.
Unit contraction_unit(const std::string& name, std::vector<int> columns) {
  const std::int64_t cases = kContractLaunches * kContractThreads * static_cast<std::int64_t>(columns.size());
  return {name, cases, [columns](const runtime::Device& device, std::uint64_t seed) {
            const std::vector<std::uint32_t> sums = contracted_sums(device, seed);
            Outcome o;
            for (std::size_t row = 0; row < sums.size(); row += kContractSums)
              for (int c : columns) {
                const std::uint32_t v = sums[row + static_cast<std::size_t>(c)];
                o.bytes.insert(o.bytes.end(), reinterpret_cast<const std::uint8_t*>(&v),
                               reinterpret_cast<const std::uint8_t*>(&v) + 4);
              }
            o.fingerprint = runtime::to_hex(runtime::sha256(std::string(kContractKernel))).substr(0, 16);
            return o;
          }};
}

}  // namespace

Family triton_family() {
  Family f{"triton_ptx", "what Triton's PTX needed: kernel-built TMA maps (tensormap.replace), signed loads into "
                         "64-bit registers, ptxas's contraction of products with sums", {}, ""};
  // The tensor map unit last: on a GPU that faults in it, the fault ends the
  // context, and the units after it could not run.
  f.units.push_back({"ld.global.s32/s16/s8, ld.param.s32 into .b64 registers", kWidenLaunches * 256 * 4, widen});
  f.units.push_back(contraction_unit("contraction: div.full.f32 then add/sub.f32 of it (3 forms, .ftz)", {0, 1, 2, 8}));
  f.units.push_back(contraction_unit("contraction: mul.f32 then add/sub.f32 of it, of two products", {3, 4, 5}));
  f.units.push_back(contraction_unit("contraction: a mul.f32 read twice; add.rn.f32 (neither contracted)", {6, 7, 9}));
  f.units.push_back({"tensormap.replace + cp_fenceproxy + TMA load (8x4 f32 boxes)", kBoxes * 32, built_map});
  return f;
}

}  // namespace warpforge::difftest
