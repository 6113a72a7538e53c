#include "difftest/known_departures.hpp"

#include <string_view>
#include <vector>

namespace warpforge::difftest {

namespace {

// Why each unit departs: the rule of the H100 the simulator does not follow yet.
constexpr std::string_view kBitField64 =
    "64-bit bfe/bfi with start or length past 63: the H100 rule is not yet modelled";
constexpr std::string_view kSatNaN = ".sat: the H100 gives +0 for NaN; the simulator a NaN";
constexpr std::string_view kSinCos =
    "sin/cos.approx: the H100's range reduction and absolute error near zeros are not modelled";
constexpr std::string_view kWgmmaFp8Half =
    "FP8 wgmma into f16 accumulators: a few results near f16 overflow differ from the rule";
constexpr std::string_view kStreamK =
    "stream-K: the partial sums of split tiles are added in another order on the simulator";
constexpr std::string_view kNaNConversion =
    "NaN conversion: the H100 keeps the NaN's sign and payload (quieted); the simulator writes its "
    "canonical NaN";
constexpr std::string_view kIntegralZero =
    "round to integral: the H100 keeps the sign of a result that rounds to zero (-0) and the NaN "
    "payload";
constexpr std::string_view kNaNToInteger =
    "float to 32/64-bit integer: the H100 gives the sign bit alone (0x80..0) for NaN; the "
    "simulator 0";
constexpr std::string_view kF64NaN =
    "f64 NaN results: the H100 keeps an operand's payload; the simulator writes the canonical NaN";
constexpr std::string_view kRoundDownZero =
    "round toward -inf: the H100 gives -0 for an exact zero sum of opposite signs; the simulator "
    "+0";
constexpr std::string_view kAbsNeg =
    "abs/neg: the H100 writes the canonical NaN for a NaN (f64: its own sign rule) and flushes "
    "subnormals with .ftz";
constexpr std::string_view kDivApprox =
    "div.approx: the H100 algorithm (reciprocal then product, flushing near overflow) is not "
    "modelled";
constexpr std::string_view kF64Approx =
    "f64 .approx: the H100 computes about 20 significand bits (the low word zero for rcp); not "
    "modelled";
constexpr std::string_view kAtomicAdd =
    "atomic float add: the H100 writes the canonical NaN and flushes subnormal results; the "
    "simulator does neither";
constexpr std::string_view kMmaFp8 =
    "e4m3/e5m2 mma.sync into f32: the H100's sum (not the wgmma FP8 rule, not the f16 one) is not "
    "yet found";

const std::vector<KnownDeparture>& table() {
  static const std::vector<KnownDeparture> all = {
      {"integer_logic", "bfe.u64", 13, kBitField64},
      {"integer_logic", "bfe.s64", 13, kBitField64},
      {"integer_logic", "bfi.b64", 13, kBitField64},
      {"convert", "cvt.rn.f32.f64", 3, kNaNConversion},
      {"convert", "cvt.rn.ftz.f32.f64", 3, kNaNConversion},
      {"convert", "cvt.rn.f16.f64", 3, kNaNConversion},
      {"convert", "cvt.rz.f32.f64", 2, kNaNConversion},
      {"convert", "cvt.rz.ftz.f32.f64", 2, kNaNConversion},
      {"convert", "cvt.rz.f16.f64", 4, kNaNConversion},
      {"convert", "cvt.rm.f32.f64", 5, kNaNConversion},
      {"convert", "cvt.rm.ftz.f32.f64", 5, kNaNConversion},
      {"convert", "cvt.rm.f16.f64", 3, kNaNConversion},
      {"convert", "cvt.rp.f32.f64", 1, kNaNConversion},
      {"convert", "cvt.rp.ftz.f32.f64", 9, kNaNConversion},
      {"convert", "cvt.rp.f16.f64", 6, kNaNConversion},
      {"convert", "cvt.rn.sat.f16.f32", 8, kSatNaN},
      {"convert", "cvt.rna.tf32.f32", 5, kNaNConversion},
      {"convert", "cvt.rna.satfinite.tf32.f32", 4, kNaNConversion},
      {"convert", "cvt.rn.tf32.f32", 3, kNaNConversion},
      {"convert", "cvt.rz.tf32.f32", 6, kNaNConversion},
      {"convert", "cvt.f32.bf16", 7, kNaNConversion},
      {"convert", "cvt.f64.f32", 6, kNaNConversion},
      {"convert", "cvt.ftz.f64.f32", 4, kNaNConversion},
      {"convert", "cvt.f64.f16", 5, kNaNConversion},
      {"convert", "cvt.sat.f32.f32", 13, kSatNaN},
      {"convert", "cvt.ftz.sat.f32.f32", 12, kSatNaN},
      {"convert", "cvt.rni.f64.f64", 35, kIntegralZero},
      {"convert", "cvt.rni.s64.f32", 2, kNaNToInteger},
      {"convert", "cvt.rni.u64.f32", 4, kNaNToInteger},
      {"convert", "cvt.rni.s32.f64", 8, kNaNToInteger},
      {"convert", "cvt.rni.u32.f64", 4, kNaNToInteger},
      {"convert", "cvt.rni.s64.f64", 8, kNaNToInteger},
      {"convert", "cvt.rni.u64.f64", 3, kNaNToInteger},
      {"convert", "cvt.rzi.f64.f64", 9, kIntegralZero},
      {"convert", "cvt.rzi.s64.f32", 7, kNaNToInteger},
      {"convert", "cvt.rzi.u64.f32", 6, kNaNToInteger},
      {"convert", "cvt.rzi.s32.f64", 5, kNaNToInteger},
      {"convert", "cvt.rzi.u32.f64", 4, kNaNToInteger},
      {"convert", "cvt.rzi.s64.f64", 6, kNaNToInteger},
      {"convert", "cvt.rzi.u64.f64", 6, kNaNToInteger},
      {"convert", "cvt.rmi.f64.f64", 2, kIntegralZero},
      {"convert", "cvt.rmi.s64.f32", 10, kNaNToInteger},
      {"convert", "cvt.rmi.u64.f32", 6, kNaNToInteger},
      {"convert", "cvt.rmi.s32.f64", 4, kNaNToInteger},
      {"convert", "cvt.rmi.u32.f64", 5, kNaNToInteger},
      {"convert", "cvt.rmi.s64.f64", 4, kNaNToInteger},
      {"convert", "cvt.rmi.u64.f64", 4, kNaNToInteger},
      {"convert", "cvt.rpi.f64.f64", 4, kIntegralZero},
      {"convert", "cvt.rpi.s64.f32", 2, kNaNToInteger},
      {"convert", "cvt.rpi.u64.f32", 7, kNaNToInteger},
      {"convert", "cvt.rpi.s32.f64", 4, kNaNToInteger},
      {"convert", "cvt.rpi.u32.f64", 5, kNaNToInteger},
      {"convert", "cvt.rpi.s64.f64", 5, kNaNToInteger},
      {"convert", "cvt.rpi.u64.f64", 3, kNaNToInteger},
      {"float_arith", "add.rz.f64", 4, kF64NaN},
      {"float_arith", "add.rm.f32", 2, kRoundDownZero},
      {"float_arith", "add.rm.ftz.f32", 9, kRoundDownZero},
      {"float_arith", "add.rm.f64", 7, kF64NaN},
      {"float_arith", "add.rp.f64", 6, kF64NaN},
      {"float_arith", "sub.rn.f64", 3, kF64NaN},
      {"float_arith", "sub.rz.f64", 3, kF64NaN},
      {"float_arith", "sub.rm.ftz.f32", 3, kRoundDownZero},
      {"float_arith", "sub.rm.f64", 2, kF64NaN},
      {"float_arith", "sub.rp.f64", 8, kF64NaN},
      {"float_arith", "mul.rn.f64", 4, kF64NaN},
      {"float_arith", "mul.rz.f64", 7, kF64NaN},
      {"float_arith", "mul.rm.f64", 6, kF64NaN},
      {"float_arith", "mul.rp.f64", 5, kF64NaN},
      {"float_arith", "fma.rn.f64", 2, kF64NaN},
      {"float_arith", "fma.rz.f64", 7, kF64NaN},
      {"float_arith", "fma.rm.f32", 1, kRoundDownZero},
      {"float_arith", "fma.rm.ftz.f32", 10, kRoundDownZero},
      {"float_arith", "fma.rm.f64", 7, kF64NaN},
      {"float_arith", "fma.rp.f64", 4, kF64NaN},
      {"float_arith", "abs.f32", 15, kAbsNeg},
      {"float_arith", "neg.f32", 12, kAbsNeg},
      {"float_arith", "abs.ftz.f32", 33, kAbsNeg},
      {"float_arith", "neg.ftz.f32", 32, kAbsNeg},
      {"float_arith", "max.f64", 1, kF64NaN},
      {"float_arith", "abs.f64", 10, kAbsNeg},
      {"float_arith", "neg.f64", 11, kAbsNeg},
      {"float_arith", "abs.f16", 19, kAbsNeg},
      {"float_arith", "neg.f16", 15, kAbsNeg},
      {"float_arith", "abs.ftz.f16", 32, kAbsNeg},
      {"float_arith", "neg.ftz.f16", 30, kAbsNeg},
      {"float_arith", "abs.bf16", 12, kAbsNeg},
      {"float_arith", "neg.bf16", 8, kAbsNeg},
      {"float_arith", "abs.f16x2", 27, kAbsNeg},
      {"float_arith", "neg.f16x2", 30, kAbsNeg},
      {"float_arith", "abs.ftz.f16x2", 68, kAbsNeg},
      {"float_arith", "neg.ftz.f16x2", 60, kAbsNeg},
      {"float_arith", "abs.bf16x2", 28, kAbsNeg},
      {"float_arith", "neg.bf16x2", 23, kAbsNeg},
      {"float_approx", "div.approx.f32", 259, kDivApprox},
      {"float_approx", "sin.approx.f32", 971, kSinCos},
      {"float_approx", "cos.approx.f32", 881, kSinCos},
      {"float_approx", "div.approx.ftz.f32", 266, kDivApprox},
      {"float_approx", "sin.approx.ftz.f32", 946, kSinCos},
      {"float_approx", "cos.approx.ftz.f32", 863, kSinCos},
      {"float_approx", "rcp.approx.ftz.f64", 895, kF64Approx},
      {"float_approx", "rsqrt.approx.f64", 121, kF64Approx},
      {"atomics", "atom.global.add.f32", 42, kAtomicAdd},
      {"atomics", "atom.global.add.f64", 10, kAtomicAdd},
      {"atomics", "atom.shared.add.f32", 48, kAtomicAdd},
      {"atomics", "red.global.add.f32", 49, kAtomicAdd},
      {"mma_sync", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 764, kMmaFp8},
      {"mma_sync", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", 1132, kMmaFp8},
      {"mma_sync", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", 1220, kMmaFp8},
      {"mma_sync", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", 1260, kMmaFp8},
      {"wgmma", "wgmma.mma_async.sync.aligned.m64n128k32.f16.e4m3.e5m2", 9, kWgmmaFp8Half},
      {"kernels", "gemm sm90a 128x128x64 s4 w2x1 c1x1 streamk bf16 40x48x256 D = A.B + C", 1408,
       kStreamK},
  };
  return all;
}

}  // namespace

const KnownDeparture* known_departure(std::string_view family, std::string_view unit) {
  for (const KnownDeparture& d : table())
    if (d.family == family && d.unit == unit) return &d;
  return nullptr;
}

}  // namespace warpforge::difftest
