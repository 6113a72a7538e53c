#include "minifloat_encode.hpp"

#include <cmath>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::ops {

using namespace dsl;

Reg emit_minifloat_encode(Kernel& k, const Reg& value, runtime::DType format) {
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
