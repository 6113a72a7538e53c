#include "minifloat_encode.hpp"

#include <cmath>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

// E2M1 in 11 instructions, no conversion: c = min(t, 6) (NaN becomes +6:
// PTX min/max return the operand that is not NaN, ISA 9.7.3.10-11; c keeps
// t's sign, -0 and -inf included), a = min(|c|, 6), then a rounded to the
// format's grid by adding M = 1.5·2^(22+s), 2^s being a's binade
// (max(a, 1): the grid's step 2^(s-1) is 0.5 below 2, 1 below 4, 2 up to
// 6): the sum's ulp is the step, so add.rn rounds to nearest even on the
// grid, and the sum's bits less M's are the steps k (0..4). The code of
// k steps of 2^(s-1) is k + 2s (s = 0: 0, 0.5, .., 2 are codes 0..4; s =
// 1: 2, 3, 4 are 4..6; s = 2: 4, 6 are 6, 7), one integer subtraction of
// M's bits less 2s; the sign bit is c's.
Reg encode_e2m1(Kernel& k, const Reg& value) {
  Reg c = k.reg(f32), a = k.reg(f32), one_up = k.reg(f32);
  k.min(c, value, imm_f32(6.0f));
  k.abs(a, c);
  k.min(a, a, imm_f32(6.0f));
  k.max(one_up, a, imm_f32(1.0f));
  auto bits = [&](const Reg& f) {  // f's bits as u32 (a mov: no instruction)
    Reg b = k.reg(b32);
    k.mov(b, f);
    return b.as(u32);
  };
  Reg exponent = k.reg(u32), magic = k.reg(u32), minus = k.reg(u32);
  k.shr(exponent, bits(one_up), 23u);                                    // 127 + s (one_up is positive)
  k.mad(magic, exponent, 1u << 23, (22u << 23) | 0x400000u);             // M = 1.5·2^(22 + s)
  k.mad(minus, exponent, (1u << 23) - 2u, ((22u << 23) | 0x400000u) + 254u);  // M's bits - 2s
  Reg sum = k.reg(f32);
  k.add(sum, a, magic.as(f32), {Round::rn});
  return (bits(sum) - minus) | ((bits(c) >> 28) & 8u);
}

}  // namespace

Reg emit_minifloat_encode(Kernel& k, const Reg& value, runtime::DType format) {
  if (format == runtime::DType::e2m1) return encode_e2m1(k, value);
  struct Format {
    int exponent_bits, mantissa_bits, bias;
    std::uint32_t max_code, nan_code;
  };
  Format f{};
  switch (format) {
    case runtime::DType::e4m3:
      f = {4, 3, 7, 0x7E, 0x7F};
      break;
    case runtime::DType::e5m2:
      f = {5, 2, 15, 0x7B, 0x7F};
      break;
    case runtime::DType::e2m1:
      f = {2, 1, 1, 0x7, 0x7};
      break;  // no NaN: +6, as ops::encode
    default:
      throw OpsError("in-kernel encode to " + std::string(runtime::name(format)) +
                     " refused: accepted e4m3, e5m2, e2m1");
  }
  const int m = f.mantissa_bits;
  const int shift = 23 - m;  // f32 mantissa bits dropped

  Reg bits = k.reg(b32);
  k.mov(bits, value);
  Reg magnitude = bits.as(u32) & 0x7fffffffu;
  Reg sign = bits.as(u32) >> 31;

  // Below the format's smallest normal 2^(1-bias): the code is |x| in units of
  // the subnormal step 2^(1-bias-m), rounded to the nearest even integer
  // (cvt.rni); a count of 2^m is exactly the smallest normal's code.
  Reg absolute = k.reg(f32);
  k.abs(absolute, value);
  Reg steps = k.reg(f32);
  k.mul(steps, absolute, imm_f32(std::ldexp(1.0f, f.bias + m - 1)), {Round::rn});
  Reg subnormal = k.reg(u32);
  k.cvt(subnormal, steps, {Round::rni});

  // Normal: rebias the f32 exponent field, then drop `shift` mantissa bits
  // rounding to nearest even: add half an ulp less one, plus the kept lsb.
  // A carry out of the mantissa moves into the exponent, as it should.
  Reg rebiased = magnitude - static_cast<std::uint32_t>((127 - f.bias) << 23);
  Reg lsb = (rebiased >> shift) & 1u;
  Reg rounded = (rebiased + static_cast<std::uint32_t>((1u << (shift - 1)) - 1)) + lsb;
  Reg normal = rounded >> shift;

  Pred small = magnitude < static_cast<std::uint32_t>((127 + 1 - f.bias) << 23);
  Reg code = k.reg(u32);
  k.selp(code, subnormal, normal, small);
  k.min(code, code, f.max_code);  // satfinite (inf and NaN handled too: NaN is replaced below)
  Reg signed_code = code | (sign << (f.exponent_bits + m));
  Pred nan = magnitude > 0x7f800000u;
  Reg result = k.reg(u32);
  k.selp(result, f.nan_code, signed_code, nan);
  return result;
}

}  // namespace warpforge::ops
