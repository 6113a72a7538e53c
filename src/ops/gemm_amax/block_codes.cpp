// Block-scaled codes and their scales to bf16, exactly, inside a kernel
// (block_codes.hpp).
#include "block_codes.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

// Whether every scale byte in `bytes` (`count` each) folds: its value times
// 2^u (u = unbias_exponent()) a normal bf16 that one integer multiply-add
// builds (scale_factors). e8m0: E <= 254 - u (2^(E - 127 + u); E = 0 gives
// the subnormal 2^-127 times 2^u, normal). e4m3 (with E2M1 codes): S = 0, E
// in 1..8 (normal, below 4; subnormals, NaN and the rest go the slow way).
// Four bytes at a time in a word, SWAR: e8m0 fails where bit 7 is set and
// the low seven bits exceed 126 - u (adding 128 + u to them sets bit 7,
// without a carry out of the byte); e4m3 fits where byte + 0x38 lands in
// 0x40..0x7F (a carry out of a failing byte can only make its neighbour
// fail as well).
Pred BlockCodes::scales_fold(const std::vector<Reg>& bytes, int count) {
  const bool e8m0 = p_.sf_dtype == DType::e8m0;
  std::optional<Pred> all;
  for (std::size_t i = 0; i < bytes.size(); i += 4 / count) {
    Reg word = bytes[i];
    if (count == 2 && i + 1 < bytes.size()) {
      word = k_.reg(u32);
      k_.prmt(word, bytes[i], bytes[i + 1], 0x5410u);  // bytes[i]'s two below bytes[i + 1]'s
    } else if (count == 1) {
      word = k_.reg(u32);
      k_.mov(word, bytes[i]);
      for (std::size_t j = 1; j < 4 && i + j < bytes.size(); ++j) word = word | (bytes[i + j] << imm(8 * j));
    }
    // Bytes not filled by scales: 0, which folds in e8m0; in e4m3 a 0x08 put in their place does.
    const int filled = count * static_cast<int>(std::min<std::size_t>(4 / count, bytes.size() - i));
    if (!e8m0 && filled < 4) word = word | imm(0x08080808u << (8 * filled));
    const std::uint32_t above = static_cast<std::uint32_t>(128 + unbias_exponent() - 127) * 0x01010101u;
    Pred fits = e8m0 ? ((word & (((word & 0x7F7F7F7Fu) + imm(above))) & 0x80808080u) == 0u)
                     : (((word + 0x38383838u) & 0xC0C0C0C0u) == 0x40404040u);
    all = all ? Pred(*all && fits) : fits;
  }
  return *all;
}

// The bf16x2 bits (the value in both halves) of byte `byte` of `e`, `bytes`
// scales (1 or 2). e8m0 E,
// 2^(E-127), is the bf16 exponent field, one multiply placing it in both
// halves; E = 0 is the subnormal 2^-127 and E = 255 NaN (OCP MX v1.0,
// 5.4.1), both mantissa bit 6 on top of that. ue4m3 S.EEEE.MMM moves into
// the bf16 fields (the value times 2^-120; its subnormals land on bf16's),
// the sign coming from the byte prmt fills with it (PTX ISA 9.7.9.7,
// selector bit 3); an exact multiply restores the value; S.1111.111 is NaN.
Reg BlockCodes::decode_scale(const Reg& e, int byte, int bytes) {
  Reg bits = k_.reg(u32);
  if (p_.sf_dtype == DType::e8m0) {
    Reg x = byte ? Reg(e >> 8u) : bytes == 2 ? Reg(e & 0xFFu) : e;
    k_.mov(bits, x * 0x00800080u);
    k_.selp(bits, bits | 0x00400040u, bits, (x - 1u) >= 254u);  // E = 0 or 255
    return bits;
  }
  Reg with_signs = k_.reg(u32);
  // bytes: the scale, its sign, the scale, its sign
  k_.prmt(with_signs, e, e, byte ? 0x9191u : 0x8080u);
  Reg moved = (with_signs << 4) & 0x87F087F0u;
  k_.mul(bits.as(bf16x2), moved.as(bf16x2), k_.mov(b32, 0x7B807B80u).as(bf16x2));  // x 2^120, exact
  k_.selp(bits, 0x7FC07FC0u, bits, (with_signs & 0x7Fu) == 0x7Fu);
  return bits;
}

// d = y x 2^unbias_exponent() x scale, exact: two bf16x2 multiplies, or
// one when `folded` (factor2 is then the scale times 2^unbias_exponent(),
// itself exact: the caller folds only scales whose product stays finite).
void BlockCodes::apply_scale(const Reg& d, const Reg& y, const Reg& factor2, bool folded) {
  if (folded) {
    k_.mul(d.as(bf16x2), y.as(bf16x2), factor2.as(bf16x2));
    return;
  }
  const std::uint32_t unbias = static_cast<std::uint32_t>(unbias_exponent() + 127) << 7;
  k_.mul(d.as(bf16x2), y.as(bf16x2), k_.mov(b32, unbias | unbias << 16).as(bf16x2));
  k_.mul(d.as(bf16x2), d.as(bf16x2), factor2.as(bf16x2));
}

// E2M1 codes (no NaN or inf) to bf16: S.EE.M of each nibble into the bf16
// sign (bit 15) and fields (bits 8..6) is the value times 2^(1 - 127), code
// 1 (0.5) landing on a bf16 subnormal; then x 2^126 and x the scale
// (apply_scale). Word j holds codes 8j .. 8j + 7 (code 8j + c in bits
// 4c .. 4c + 3); codes 8j + i and 8j + i + 4 become the low and high halves
// of out[4j + i] (K permuted alike in both operands leaves the sum as it
// is). The bit moves are few because the integer ALU bounds this loop: a
// mask keeps the pair (nibbles i and i + 4: 16 bits apart), one multiply
// by 2^a + 2^b moves each code's EEM to bits 6..8 and its S to bit 15 of
// its half at once (the copies do not overlap, so no carries), a mask keeps
// them: for i = 0, 1 from the word, for i = 2, 3 from it shifted by 8.
void BlockCodes::dequant_fp4(const Regs& w, const Regs& factor2, const Regs& out, bool folded) {
  const int words = static_cast<int>(w.size());  // 4, or 2 (one scale)
  for (int j = 0; j < words; ++j) {
    Reg high = w[j] >> 8u;
    for (int i = 0; i < 4; ++i) {
      const Reg& from = i < 2 ? w[j] : high;
      // Nibble at bit 0 (16): EEM to 6 (x 2^6), S from 3 to 15 (x 2^12);
      // at bit 4 (20): x 2^2 and x 2^8.
      Reg y = ((from & (i % 2 ? 0x00F000F0u : 0x000F000Fu)) * (i % 2 ? 0x104u : 0x1040u)) & 0x81C081C0u;
      apply_scale(out[static_cast<std::size_t>(4 * j + i)], y, factor2[static_cast<std::size_t>(2 * j / words)], folded);
    }
  }
}

// FP8 codes to bf16, 4 words (16 codes) into 8 pairs: codes 2p and 2p + 1
// (bytes of word p / 2) are the low and high halves of out[p]. Folded (no
// NaN or inf among the codes: codes_finite): a prmt gives each code's byte
// a byte of its sign bits above it (PTX ISA 9.7.9.7, selector bit 3), a
// shift puts S.EEEE.MMM (e4m3) or S.EEEEE.MM (e5m2) in bf16's fields under
// the copied sign, a mask keeps them: the value times 2^-u, times factor2
// (the scale times 2^u). Else exactly through cvt (f16x2 holds every FP8
// value, NaN and inf included; f32 and bf16 too), then times the scale.
void BlockCodes::dequant_fp8(const Regs& w, const Reg& factor2, const Regs& out, bool folded) {
  const bool e4m3_codes = p_.ab_dtype == DType::e4m3;
  for (std::size_t p = 0; p < out.size(); ++p) {
    const Reg& word = w[p / 2];
    const std::uint32_t lo = 2 * (p % 2), hi = lo + 1;
    if (folded) {
      Reg x = k_.reg(u32);
      k_.prmt(x, word, word, (8 | hi) << 12 | hi << 8 | (8 | lo) << 4 | lo);
      Reg y = e4m3_codes ? Reg((x << 4u) & 0x87F087F0u) : Reg((x << 5u) & 0x8FE08FE0u);
      k_.mul(out[p].as(bf16x2), y.as(bf16x2), factor2.as(bf16x2));
      continue;
    }
    Reg pair = k_.reg(b16), halves = k_.reg(b32), h0 = k_.reg(b16), h1 = k_.reg(b16);
    k_.cvt(u16, u32, pair, word >> imm(16 * (p % 2)));
    k_.cvt_unpack_fp8(e4m3_codes ? e4m3x2 : e5m2x2, halves, pair);
    k_.cvt(u16, u32, h0, halves);
    k_.cvt(u16, u32, h1, halves >> 16u);
    Reg f0 = k_.reg(f32), f1 = k_.reg(f32), v = k_.reg(b32);
    k_.cvt(f32, f16, f0, h0);
    k_.cvt(f32, f16, f1, h1);
    k_.cvt_pack(bf16x2, v, f1, f0);
    k_.mul(out[p].as(bf16x2), v.as(bf16x2), factor2.as(bf16x2));
  }
}

// Whether no FP8 code in `words` is NaN or inf: SWAR per word, adding 1
// (e4m3: NaN is S.1111.111) or 4 (e5m2: NaN and inf are S.11111.xx) to
// every byte flips its bit 7 exactly where those bits are all ones (a
// carry into the next byte comes only out of such a byte); the flips of
// all words or-ed (one lop3 each with the xor), one test.
Pred BlockCodes::codes_finite(const std::vector<Regs>& words) {
  const std::uint32_t one = p_.ab_dtype == DType::e4m3 ? 0x01010101u : 0x04040404u;
  Reg flips = k_.mov(u32, 0u);
  for (const Regs& ws : words)
    for (const Reg& w : ws) k_.mov(flips, ((w + imm(one)) ^ w) | flips);
  return (flips & 0x80808080u) == 0u;
}

// The multiplier (bf16x2, the value in both halves) for scale g of the
// `count` in `bytes`: with `folded` (scales_fold held), scale x
// 2^unbias_exponent() built by one multiply-add on the byte put in both
// halves (e8m0: exponent field E + u; e4m3 S.EEEE.MMM: the fields moved
// 4 up plus 246 on the exponent, 2^(E - 7) x 1.MMM x 2^126); else the
// scale itself (decode_scale).
Reg BlockCodes::scale_factor(const Reg& bytes, int g, int count, bool folded) {
  const bool e8m0 = p_.sf_dtype == DType::e8m0;
  Reg f = k_.reg(u32);
  if (folded) {
    Reg both = k_.reg(u32);
    k_.prmt(both, bytes, k_.mov(u32, 0u), g ? 0x4141u : 0x4040u);  // byte g in both halves
    const std::uint32_t field = e8m0 ? static_cast<std::uint32_t>(unbias_exponent()) << 7 : 0x7B00u;  // + 246 << 7
    k_.mad(f, both, e8m0 ? 0x80u : 0x10u, imm(field | field << 16));
  } else {
    k_.mov(f, decode_scale(bytes, g, count));
  }
  return f;
}

}  // namespace warpforge::ops
