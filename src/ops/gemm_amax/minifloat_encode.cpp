#include "minifloat_encode.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "warpforge/error.hpp"

namespace warpforge::ops {

using namespace dsl;

namespace {

// E2M1 without a conversion: a = min(|m|, 6) (a NaN becomes 6: PTX min/max
// return the operand that is not NaN, ISA 9.7.3.10-11; -inf 6 too), then a
// rounded to the format's grid by adding M = 1.5·2^(22+s) + 2s·2^(s-1),
// 2^s being a's binade (max(a, 1): the grid's step 2^(s-1) is 0.5 below 2,
// 1 below 4, 2 up to 6). The sum's ulp is the step, so add.rn rounds to
// nearest even on the grid; M's bits are those of 1.5·2^(22+s), whose low
// 22 bits are 0, plus 2s (even: a tie still goes to the even step), so the
// sum's low byte is 2s + k for k steps (0..4), which is the code (s = 0: 0,
// 0.5, .., 2 are codes 0..4; s = 1: 2, 3, 4 are 4..6; s = 2: 4, 6 are 6, 7).
// M's bits are affine in a's exponent field E = 127 + s: one mad.lo. prmt
// gathers the even elements' low bytes into one word and the odd ones' into
// another (PTX ISA 9.7.8.7), and the codes' word is the even word plus 16
// times the odd one; the signs are gathered by prmt four at a time. Eight
// codes: 5 instructions an element, 7 placing and 8 signing the word (where
// two mad.lo an element placed each code and its exponent's correction).
constexpr std::uint32_t kMagic = (22u << 23) + 0x400000u - 254u;  // M's bits less E·(2^23 + 2)
constexpr std::uint32_t kMagicPerExponent = (1u << 23) + 2u;

// A u32 whose byte i is list[i]'s low byte (1 to 4 registers whose byte 1
// is 0), the bytes past the list 0.
Reg low_bytes(Kernel& k, const std::vector<Reg>& list) {
  auto pair = [&](const Reg& a, const Reg& b) {  // [a.0, b.0, 0, 0]
    Reg d = k.reg(u32);
    k.prmt(d, a, b, 0x1140u);
    return d;
  };
  Reg d = k.reg(u32);
  if (list.size() == 1) {
    k.and_(d, list[0], 0xFFu);
  } else if (list.size() == 2) {
    d = pair(list[0], list[1]);
  } else if (list.size() == 3) {
    k.prmt(d, pair(list[0], list[1]), list[2], 0x2410u);  // [lo.0, lo.1, c.0, lo.2 = 0]
  } else {
    k.prmt(d, pair(list[0], list[1]), pair(list[2], list[3]), 0x5410u);
  }
  return d;
}

}  // namespace

Reg emit_e2m1_codes(Kernel& k, const std::vector<Reg>& signs, const std::vector<Reg>& magnitudes) {
  if (signs.size() != magnitudes.size() || signs.empty() || signs.size() > 8)
    throw OpsError("emit_e2m1_codes: " + std::to_string(signs.size()) + " signs and " +
                   std::to_string(magnitudes.size()) + " magnitudes: accepted 1 to 8 of each, as many");
  auto bits = [&](const Reg& f) {  // f's bits as u32 (a mov: no instruction)
    Reg b = k.reg(b32);
    k.mov(b, f);
    return b.as(u32);
  };
  std::vector<Reg> even, odd;  // the sums' bits, their low bytes the codes
  for (std::size_t e = 0; e < magnitudes.size(); ++e) {
    Reg a = k.reg(f32), one_up = k.reg(f32);
    k.abs(a, magnitudes[e]);
    k.min(a, a, imm_f32(6.0f));
    k.max(one_up, a, imm_f32(1.0f));
    Reg exponent = k.reg(u32), magic = k.reg(u32), sum = k.reg(f32);
    k.shr(exponent, bits(one_up), 23u);  // E = 127 + s (one_up is positive)
    k.mad(magic, exponent, kMagicPerExponent, kMagic);
    k.add(sum, a, magic.as(f32), {Round::rn});
    (e % 2 == 0 ? even : odd).push_back(bits(sum));
  }
  Reg word = low_bytes(k, even);
  if (!odd.empty()) {
    Reg both = k.reg(u32);
    k.mad(both, low_bytes(k, odd), 16u, word);  // each byte's odd code in its high nibble: no carries
    word = both;
  }
  // The signs, four bytes at a time: prmt's sign mode (PTX ISA 9.7.9.7)
  // replicates each value's sign bit over a byte; the even elements' bytes
  // (0x00 or 0xFF) give bit 3 of each byte of the word, the odd ones' bit 7.
  const std::size_t n = signs.size();
  auto gather = [&](std::size_t first) {  // bytes i = sign of signs[first + 2i]
    auto of = [&](std::size_t i) { return bits(signs[std::min(first + 2 * i, n - 1)]); };
    Reg low = k.reg(u32);
    k.prmt(low, of(0), of(1), 0x00FBu);  // byte 0: of(0)'s byte 3, sign-replicated; byte 1: of(1)'s
    if (first + 4 >= n) return low;
    Reg high = k.reg(u32), all = k.reg(u32);
    k.prmt(high, of(2), of(3), 0xFB00u);  // bytes 2, 3 likewise
    k.prmt(all, low, high, 0x7610u);
    return all;
  };
  Reg nibbles = gather(0);  // each byte's sign in all its bits
  if (n > 1) {
    Reg both = k.reg(u32);
    k.lop3(both, nibbles, gather(1), 0x0F0F0F0Fu, 0xE4);  // (even & 0x0F..) | (odd & 0xF0..)
    nibbles = both;
  }
  const std::uint32_t sign_bits = n == 8 ? 0x88888888u : 0x88888888u & ((1u << (4 * n)) - 1);
  Reg signed_word = k.reg(u32);
  k.lop3(signed_word, word, nibbles, sign_bits, 0xF8);  // word | (nibbles & sign bits)
  return signed_word;
}

namespace {

// One code: its magnitude from the value, its sign from min(value, 6) (a
// NaN is +6, as ops::encode gives it).
Reg encode_e2m1(Kernel& k, const Reg& value) {
  Reg c = k.reg(f32);
  k.min(c, value, imm_f32(6.0f));
  return emit_e2m1_codes(k, {c}, {value});
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
