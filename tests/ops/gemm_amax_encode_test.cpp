// The in-kernel f32 -> e4m3/e5m2/e2m1 sequence of the sm80 GemmAmax epilogue
// (sm_80 has no cvt to these), run on the simulator against ops::encode over
// every midpoint between codes, its neighbours, specials, every bf16 value
// and random floats.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "../../src/ops/gemm_amax/minifloat_encode.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

TEST(GemmAmaxEncode, InKernelEncodeMatchesTheHostOnEveryBoundary) {
  for (DType t : {DType::e4m3, DType::e5m2, DType::e2m1}) {
    std::vector<float> probes{0.0f,
                              -0.0f,
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::denorm_min(),
                              1e30f,
                              -1e-30f};
    const int codes = t == DType::e2m1 ? 8 : 128;
    for (int c = 0; c + 1 < codes; ++c) {
      const float lo = decode(t, static_cast<std::uint8_t>(c)),
                  hi = decode(t, static_cast<std::uint8_t>(c + 1));
      if (!std::isfinite(hi)) break;
      const float mid = (lo + hi) / 2;
      probes.insert(probes.end(),
                    {lo, -lo, mid, -mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)});
    }
    probes.insert(probes.end(),
                  {max_finite(t) * 1.0625f, max_finite(t) * 1.25f, -max_finite(t) * 3,
                   -std::numeric_limits<float>::quiet_NaN()});
    // Every bf16 value (a block of bf16 activations quantized as they are).
    for (std::uint32_t h = 0; h < 0x10000; ++h) probes.push_back(std::bit_cast<float>(h << 16));
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> exponent(-20.0f, 18.0f);
    while (probes.size() % 32 != 0 || probes.size() < 1024)
      probes.push_back(std::exp2(exponent(rng)) * (rng() % 2 ? 1.0f : -1.0f));

    using namespace dsl;
    Kernel k("encode", Target::sm_80);
    Reg in = k.param_ptr("in", 4), out = k.param_ptr("out");
    Reg i = k.sreg(SReg::ctaid_x) * 32u + k.sreg(SReg::tid_x);
    Reg offset = k.reg(u64);
    k.mul_wide(offset, i, 4);
    Reg v = k.reg(f32);
    k.ld(Space::global, f32, v, at(in + offset));
    Reg code = emit_minifloat_encode(k, v, t);
    Reg narrow = k.reg(u16);
    k.cvt(narrow, code);
    Reg byte_offset = k.reg(u64);
    k.cvt(byte_offset, i);
    k.st(Space::global, u8, at(out + byte_offset), narrow);

    const runtime::Device dev = runtime::Device::sim();
    runtime::Buffer input(dev, probes.size() * 4), output(dev, probes.size());
    input.upload(probes);
    output.fill(0xAA);
    runtime::Module m(dev, k.module());
    m.launch("encode", {.grid = {static_cast<std::uint32_t>(probes.size() / 32)}, .block = {32}},
             {input, output});
    dev.synchronize();
    const auto got = output.download<std::uint8_t>(probes.size());
    for (std::size_t j = 0; j < probes.size(); ++j)
      EXPECT_EQ(got[j], encode(t, probes[j])) << runtime::name(t) << " of " << probes[j];
  }
}

TEST(GemmAmaxEncode, RefusesOtherFormats) {
  dsl::Kernel k("encode", dsl::Target::sm_80);
  dsl::Reg v = k.reg(dsl::f32);
  try {
    emit_minifloat_encode(k, v, DType::bf16);
    FAIL();
  } catch (const OpsError& e) {
    EXPECT_STREQ(e.what(), "in-kernel encode to bf16 refused: accepted e4m3, e5m2, e2m1");
  }
}

}  // namespace
}  // namespace warpforge::ops
