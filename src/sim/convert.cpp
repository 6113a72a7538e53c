// cvt (PTX ISA 9.7.9.21): integer widths, integer <-> float, float <-> float
// for f64/f32/f16/bf16/tf32/e4m3/e5m2, and the packed forms
// cvt.rn[.satfinite][.relu].{f16x2,bf16x2,e4m3x2,e5m2x2}.f32 d, a, b
// (a lands in the upper half), cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 and
// cvt.rn.f16x2.{e4m3x2,e5m2x2}.
#include <cfenv>
#include <cmath>
#include <optional>

#include "execute.hpp"
#include "float_format.hpp"
#include "rounding_mode_scope.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

bool is_packed(Type t) {
  return t == Type::f16x2 || t == Type::bf16x2 || t == Type::e4m3x2 || t == Type::e5m2x2;
}

Type element_of(Type t) {
  switch (t) {
    case Type::f16x2:
      return Type::f16;
    case Type::bf16x2:
      return Type::bf16;
    case Type::e4m3x2:
      return Type::e4m3;
    case Type::e5m2x2:
      return Type::e5m2;
    default:
      return t;
  }
}

long double float_value(Type t, std::uint64_t bits) {
  if (t == Type::f64) return f64_of(bits);
  if (t == Type::f32) return f32_of(bits);
  return decode_float(static_cast<std::uint32_t>(bits), float_format(t));
}

long double int_value(Type t, std::uint64_t bits) {
  const int n = ptx::bits(t);
  const std::uint64_t m = n >= 64 ? ~0ull : (1ull << n) - 1;
  if (ptx::is_signed(t)) {
    const std::uint64_t sb = 1ull << (n - 1);
    return static_cast<long double>(static_cast<std::int64_t>(((bits & m) ^ sb) - sb));
  }
  return static_cast<long double>(bits & m);
}

// Rounds to an integral value in the given mode (the .rni/.rzi/.rmi/.rpi
// forms, and float -> integer conversions).
long double round_integral(long double v, Rounding r) {
  switch (r) {
    case Rounding::rz:
      return std::trunc(v);
    case Rounding::rm:
      return std::floor(v);
    case Rounding::rp:
      return std::ceil(v);
    case Rounding::rna:
      return std::round(v);
    default: {  // a result that rounds to zero keeps v's sign, as on an H100
      const long double f = std::floor(v), rest = v - f;
      if (rest > 0.5L || (rest == 0.5L && std::fmod(f, 2.0L) != 0)) return std::copysign(f + 1, v);
      return std::copysign(f, v);
    }
  }
}

// Where a NaN goes through cvt on an H100 (PTX ISA 9.7.9.21 leaves it to
// the implementation). Evidence: every recorded NaN case of the cvt forms
// below (tests/gpu_truth/convert.truth).
//   between f64 and f32/f16, and from f16 to f64: the sign and the payload's
//     leading bits are kept, quieted (f64 0x7ffd5a07984661d8 -> f32
//     0x7fead03c; f32 0xff8aa3a3 -> f64 0xfff9547460000000);
//     .ftz f32 -> f64 first makes the NaN the canonical 0x7FFFFFFF
//     (-> 0x7fffffffe0000000);
//   bf16 -> f32: the bits, shifted, not even quieted (0x7f93 -> 0x7f930000);
//   f32 -> tf32 .rna: the low 13 bits cut, not quieted (0xffb351e2 ->
//     0xffb34000); with .satfinite one tf32 unit less besides (0x7fc00000 ->
//     0x7fbfe000: the hardware clamps infinity to the largest finite value by
//     that decrement, and so decrements every all-ones exponent); .rn and .rz
//     give 0x7fffe000;
//   .sat gives +0 (cvt.sat.f32.f32, cvt.rn.sat.f16.f32);
//   f64 -> f64 (.rni/.rzi/.rmi/.rpi): the NaN, quieted;
//   to a 32-bit integer from f64, and to a 64-bit integer from f32 or f64:
//     the sign bit alone (0x80000000, 0x8000000000000000); to other integer
//     destinations 0 (the simulator's to_int).
// Other pairs (f32 -> f16, bf16, f32; f16 -> f32; the FP8 forms) give the
// destination's canonical NaN, as the simulator's encoding does. Returns
// nullopt when the source is not a NaN or the pair is not one of the above.
struct Layout {
  int bits, mantissa_bits;
};

std::optional<Layout> nan_layout(Type t) {
  switch (t) {
    case Type::f64:
      return Layout{64, 52};
    case Type::f32:
      return Layout{32, 23};
    case Type::f16:
      return Layout{16, 10};
    default:
      return std::nullopt;
  }
}

bool is_nan_bits(Type t, std::uint64_t bits) {
  if (t == Type::f64) return std::isnan(f64_of(bits));
  if (t == Type::f32) return std::isnan(f32_of(bits));
  if (t == Type::f16 || t == Type::bf16)
    return std::isnan(decode_float(static_cast<std::uint32_t>(bits), float_format(t)));
  return false;
}

// The NaN `bits` of layout s in layout d: sign kept, payload aligned to the
// left, quieted (the quiet bit is the mantissa's leading bit).
std::uint64_t move_nan(std::uint64_t bits, Layout s, Layout d) {
  const std::uint64_t sign = (bits >> (s.bits - 1)) & 1;
  std::uint64_t payload = bits & ((1ull << s.mantissa_bits) - 1);
  payload = d.mantissa_bits >= s.mantissa_bits ? payload << (d.mantissa_bits - s.mantissa_bits)
                                               : payload >> (s.mantissa_bits - d.mantissa_bits);
  const int exponent_bits = d.bits - 1 - d.mantissa_bits;
  const std::uint64_t exponent = ((1ull << exponent_bits) - 1) << d.mantissa_bits;
  return (sign << (d.bits - 1)) | exponent | payload | (1ull << (d.mantissa_bits - 1));
}

std::optional<std::uint64_t> nan_conversion(Type dst, Type src, std::uint64_t bits,
                                            const Inst& in) {
  if (!is_nan_bits(src, bits)) return std::nullopt;
  if (!ptx::is_float(dst)) {
    const int n = ptx::bits(dst);
    if ((src == Type::f64 && n == 32) || n == 64) return 1ull << (n - 1);
    return std::nullopt;
  }
  if (in.sat) return 0;
  if (dst == Type::tf32) {
    if (in.rounding != Rounding::rna) return 0x7FFFE000u;
    const std::uint64_t cut = bits & 0xFFFFE000u;
    return in.satfinite ? cut - 0x2000u : cut;
  }
  if (src == Type::bf16 && dst == Type::f32) return bits << 16;
  if (in.ftz && src == Type::f32 && dst == Type::f64) bits = 0x7FFFFFFFu;
  const bool moved =
      (src == Type::f64 && (dst == Type::f32 || dst == Type::f16)) ||
      (dst == Type::f64 && (src == Type::f32 || src == Type::f16 || src == Type::f64));
  if (!moved) return std::nullopt;
  return move_nan(bits, *nan_layout(src), *nan_layout(dst));
}

// To a float format of at most 32 bits, or to f64.
std::uint64_t to_float(Type dst, long double v, const Inst& in) {
  if (in.relu && !std::isnan(v) && v <= 0) v = 0;  // .relu: negatives and -0 become +0 (an H100 agrees), NaN stays NaN
  if (in.integral) v = round_integral(v, in.rounding);
  // .sat clamps to [0, 1], -0 to +0 (cvt.sat.f32.f32 of 0x80000000 is +0 on an H100).
  if (in.sat && !std::isnan(v)) v = v <= 0 ? 0 : v > 1 ? 1 : v;
  if (dst == Type::f64) {
    if (std::isnan(v)) return 0x7FFFFFFFFFFFFFFFull;
    RoundingModeScope mode(in.integral ? Rounding::rn : in.rounding);
    volatile long double in_value = v;
    volatile double out = static_cast<double>(in_value);
    return bits_of(static_cast<double>(out));
  }
  const FloatFormat& f = float_format(dst);
  std::uint32_t bits = encode_float(v, f, in.integral ? Rounding::rn : in.rounding, in.satfinite);
  if (in.ftz) bits = flush_subnormal(bits, f);
  return bits;
}

// Float -> integer saturates to the destination's range; NaN gives 0.
std::uint64_t to_int(Type dst, long double v, const Inst& in, bool from_float) {
  const int n = ptx::bits(dst);
  if (from_float) {
    if (std::isnan(v)) return 0;
    v = round_integral(v, in.rounding);
  }
  const bool sat = from_float || in.sat;
  const std::uint64_t m = n >= 64 ? ~0ull : (1ull << n) - 1;
  if (ptx::is_signed(dst)) {
    const long double lo = -std::ldexp(1.0L, n - 1), hi = std::ldexp(1.0L, n - 1) - 1;
    if (sat) v = v < lo ? lo : v > hi ? hi : v;
    const std::uint64_t cut = static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) & m;
    if (n >= 32) return cut;
    // Narrow signed results are sign-extended into their (32-bit) register.
    const std::uint64_t sign = 1ull << (n - 1);
    return ((cut ^ sign) - sign) & 0xFFFFFFFFull;
  }
  if (ptx::is_unsigned(dst) && sat) {
    const long double hi = std::ldexp(1.0L, n) - 1;
    v = v < 0 ? 0 : v > hi ? hi : v;
  }
  if (v < 0) return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) & m;
  return static_cast<std::uint64_t>(v) & m;
}

std::uint64_t convert_scalar(Type dst, Type src, std::uint64_t bits, const Inst& in) {
  const bool src_float = ptx::is_float(src), dst_float = ptx::is_float(dst);
  if (src_float)
    if (const auto nan = nan_conversion(dst, src, bits, in)) return *nan;
  if (!src_float && !dst_float) {  // integer widths: extend by the source's signedness, then cut
    return to_int(dst, int_value(src, bits), in, false);
  }
  const long double v = src_float ? float_value(src, bits) : int_value(src, bits);
  if (dst_float) {
    if (in.ftz && src == Type::f32) {
      const std::uint32_t flushed = flush_subnormal(static_cast<std::uint32_t>(bits), kF32);
      return to_float(dst, f32_of(flushed), in);
    }
    return to_float(dst, v, in);
  }
  return to_int(dst, v, in, true);
}

}  // namespace

void exec_convert(const Inst& in, Warp& w, std::uint32_t active) {
  const Type dst = in.types[0], src = in.types[1];
  if (dst == Type::e2m1x2 || src == Type::e2m1x2)
    throw SimError("cvt with .e2m1x2 is not simulated");
  const Arg& d = in.op0(0);
  if (is_packed(dst) && !is_packed(src)) {  // two scalars -> one packed value, a in the upper half
    if (in.ops.size() != 3) throw SimError("packed cvt takes d, a, b");
    const Type e = element_of(dst);
    const int half = ptx::bits(e);
    for_lanes(active, [&](int l) {
      const std::uint64_t hi = convert_scalar(e, src, read(w, in.op0(1), l), in);
      const std::uint64_t lo = convert_scalar(e, src, read(w, in.op0(2), l), in);
      write(w, d, l, (hi << half) | lo);
    });
    return;
  }
  if (is_packed(dst) && is_packed(src)) {  // element-wise, upper to upper
    const Type de = element_of(dst), se = element_of(src);
    const int dh = ptx::bits(de), sh = ptx::bits(se);
    const std::uint64_t smask = (1ull << sh) - 1;
    for_lanes(active, [&](int l) {
      const std::uint64_t a = read(w, in.op0(1), l);
      const std::uint64_t lo = convert_scalar(de, se, a & smask, in);
      const std::uint64_t hi = convert_scalar(de, se, (a >> sh) & smask, in);
      write(w, d, l, (hi << dh) | lo);
    });
    return;
  }
  if (is_packed(src)) throw SimError("cvt from a packed type to a scalar is not a PTX form");
  for_lanes(active,
            [&](int l) { write(w, d, l, convert_scalar(dst, src, read(w, in.op0(1), l), in)); });
}

}  // namespace warpforge::sim
