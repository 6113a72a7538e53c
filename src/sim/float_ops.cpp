// Floating-point arithmetic (PTX ISA 9.7.3 "Floating-Point Instructions",
// 9.7.4 "Half Precision Floating-Point Instructions") for f32, f64, f16, bf16
// and the packed f16x2/bf16x2 forms, under the rounding modifiers
// .rn/.rz/.rm/.rp and with .ftz and .sat.
//
// f32 and narrower: each operation is computed in double together with the
// sign of its exact error (an error-free transformation: TwoSum, the fma
// residual of a product, a quotient or a square root). The pair pins the
// exact result between two adjacent doubles, which is all that rounding to a
// narrower format under any mode needs. f64 with a directed mode runs the
// host FPU in that mode.
#include <cfenv>
#include <cmath>
#include <optional>

#include "approx_functions.hpp"
#include "execute.hpp"
#include "float_format.hpp"
#include "operations.hpp"
#include "rounding_mode_scope.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

// The exact result lies strictly between hi and the next double in the
// direction of lo_sign (or is hi when lo_sign is 0).
struct Exact {
  double hi;
  int lo_sign;
};

int sign_of(double v) {
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

Exact two_sum(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return {s, 0};
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  return {s, sign_of(err)};
}

// Inputs are at most f32-wide, so products are exact in double.
Exact exact_op(Op op, double a, double b, double c) {
  switch (op) {
    case Op::add:
      return two_sum(a, b);
    case Op::sub:
      return two_sum(a, -b);
    case Op::mul:
      return {a * b, 0};
    case Op::fma:
    case Op::mad:
      return two_sum(a * b, c);
    case Op::div: {
      const double q = a / b;
      if (!std::isfinite(q) || q == 0) return {q, 0};
      return {q, sign_of(std::fma(-q, b, a)) * sign_of(b)};
    }
    case Op::rcp: {
      const double q = 1.0 / a;
      if (!std::isfinite(q) || q == 0) return {q, 0};
      return {q, sign_of(std::fma(-q, a, 1.0)) * sign_of(a)};
    }
    case Op::sqrt: {
      const double s = std::sqrt(a);
      if (!std::isfinite(s) || s == 0) return {s, 0};
      return {s, sign_of(std::fma(-s, s, a))};
    }
    // The .approx functions without a modelled H100 rule
    // (approx_functions.hpp has those): the simulator computes them in
    // double and rounds once (the H100 is within a few ulps of this).
    case Op::rsqrt:
      return {1.0 / std::sqrt(a), 0};
    case Op::ex2:
      return {std::exp2(a), 0};
    case Op::lg2:
      return {std::log2(a), 0};
    case Op::tanh:
      return {std::tanh(a), 0};
    case Op::min:
    case Op::max: {
      // PTX ISA 9.7.3.10-11: a NaN operand yields the other operand.
      if (std::isnan(a)) return {b, 0};
      if (std::isnan(b)) return {a, 0};
      if (a == b) return {op == Op::min ? (std::signbit(a) ? a : b) : (std::signbit(a) ? b : a), 0};
      return {op == Op::min ? std::min(a, b) : std::max(a, b), 0};
    }
    default:
      throw SimError("not a floating-point instruction");
  }
}

long double pinned(const Exact& e) {
  if (e.lo_sign == 0 || !std::isfinite(e.hi)) return e.hi;
  // A value strictly between hi and its neighbour double: long double has 11
  // more significand bits, and no narrower format has a point (or a midpoint)
  // there.
  return static_cast<long double>(e.hi) +
         e.lo_sign * std::ldexp(static_cast<long double>(std::fabs(e.hi)), -60);
}

bool is_unary(Op op) {
  return operation(op).sources == 1;
}

bool is_additive(Op op) {
  return op == Op::add || op == Op::sub || op == Op::fma || op == Op::mad;
}

// An exact zero sum rounded toward -inf is -0 unless both addends are +0
// (IEEE 754 6.3; the host computes the sum in round-to-nearest, which gives
// +0). An H100 follows it: add.rm.f32 of -1 and 1 gives 0x80000000, and so
// do every recorded add/sub/fma .rm case with an exact zero result
// (tests/gpu_truth/float_arith.truth).
bool negative_zero_sum(Op op, double x, double y, double z) {
  double p = x, q = y;
  if (op == Op::sub) q = -y;
  if (op == Op::fma || op == Op::mad) p = x * y, q = z;
  return std::signbit(p) || std::signbit(q);
}

bool is_nan(std::uint32_t bits, const FloatFormat& f) {
  const std::uint32_t exp = (bits >> f.mantissa_bits) & ((1u << f.exponent_bits) - 1);
  return exp == (1u << f.exponent_bits) - 1 && (bits & ((1u << f.mantissa_bits) - 1)) != 0;
}

// abs and neg of f32, f16, bf16 (and the packed forms) on an H100: a NaN
// operand gives the canonical NaN (0x7FFFFFFF, 0x7FFF), not the operand with
// its sign bit changed as PTX ISA 9.7.3.6-7 describe, and .ftz flushes a
// subnormal operand to a zero of its sign before the sign bit is changed
// (abs.ftz.f32 of 0x80000001 is +0, neg.ftz.f32 of 0x00000001 is -0).
// Evidence: every recorded abs/neg case of those types
// (tests/gpu_truth/float_arith.truth).
std::uint32_t abs_neg(const Inst& in, const FloatFormat& f, std::uint32_t a) {
  if (is_nan(a, f)) return f.nan_bits;
  if (in.ftz) a = flush_subnormal(a, f);
  const std::uint32_t sign = 1u << (f.exponent_bits + f.mantissa_bits);
  return in.op == Op::abs ? a & ~sign : a ^ sign;
}

double clamp_sat(double v) {  // .sat: clamp to [0, 1], NaN to +0 (PTX ISA 9.7.3.1)
  if (std::isnan(v) || v <= 0) return 0.0;
  return v > 1 ? 1.0 : v;
}

// One element of a float instruction in a format no wider than f32.
std::uint32_t narrow_element(const Inst& in, const FloatFormat& f, std::uint32_t a, std::uint32_t b,
                             std::uint32_t c) {
  const int width = 1 + f.exponent_bits + f.mantissa_bits;
  const std::uint32_t sign = 1u << (width - 1);
  if (in.op == Op::abs || in.op == Op::neg) return abs_neg(in, f, a);
  if (in.ftz) {
    a = flush_subnormal(a, f);
    b = flush_subnormal(b, f);
    c = flush_subnormal(c, f);
  }
  if (&f == &kF32 && (in.rounding == Rounding::none || in.rounding == Rounding::rn)) {
    // Round-to-nearest f32: the host's IEEE single operations are the answer.
    const float x = f32_of(a), y = f32_of(b), z = f32_of(c);
    float r;
    switch (in.op) {
      case Op::add:
        r = x + y;
        break;
      case Op::sub:
        r = x - y;
        break;
      case Op::mul:
        r = x * y;
        break;
      case Op::fma:
      case Op::mad:
        r = in.op == Op::fma && in.mode
                ? f32_of(contracted_sum_f32(a, b, c, in.mode))
                : std::fma(x, y, z);
        break;
      case Op::div:  // div.approx and div.full: the H100's rules (approx_functions.hpp)
        if (in.approx)
          r = f32_of(div_approx_f32(a, b));
        else
          r = in.rounding == Rounding::none ? f32_of(div_full_f32(a, b)) : x / y;
        break;
      case Op::sin:  // sin and cos exist only as .approx.f32 (PTX ISA 9.7.3)
      case Op::cos:
        r = f32_of(sin_cos_approx_f32(in.op, a));
        break;
      case Op::rcp:  // the multifunction unit's .approx forms (approx_functions.hpp)
      case Op::sqrt:
        r = in.approx ? f32_of(mufu_approx_f32(in.op, a))
                      : static_cast<float>(pinned(exact_op(in.op, x, y, z)));
        break;
      case Op::rsqrt:
      case Op::ex2:
        r = f32_of(mufu_approx_f32(in.op, a));
        break;
      default:
        r = static_cast<float>(pinned(exact_op(in.op, x, y, z)));
    }
    std::uint32_t bits = std::isnan(r) ? f.nan_bits : static_cast<std::uint32_t>(bits_of(r));
    if (in.ftz) bits = flush_subnormal(bits, f);
    if (in.sat)
      bits = static_cast<std::uint32_t>(bits_of(static_cast<float>(clamp_sat(f32_of(bits)))));
    return bits;
  }
  const double x = decode_float(a, f), y = decode_float(b, f), z = decode_float(c, f);
  if ((in.op == Op::min || in.op == Op::max) && std::isnan(x) && std::isnan(y)) return f.nan_bits;
  const Exact e = exact_op(in.op, x, y, z);
  // .sat turns a NaN into +0 (PTX ISA 9.7.3; an H100 agrees for f16 and f16x2).
  if (std::isnan(e.hi)) return in.sat ? 0 : f.nan_bits;
  std::uint32_t r = encode_float(pinned(e), f, in.rounding, false);
  if (r == 0 && e.hi == 0 && in.rounding == Rounding::rm && is_additive(in.op) &&
      negative_zero_sum(in.op, x, y, z))
    r = sign;
  if (in.ftz) r = flush_subnormal(r, f);
  if (in.relu && (r & sign))
    r = 0;  // fma .relu: negative results and -0 become +0 (an H100 agrees)
  if (in.sat) r = encode_float(clamp_sat(decode_float(r, f)), f, Rounding::rn, false);
  return r;
}

double f64_element(Op op, double a, double b, double c) {
  // volatile keeps the arithmetic between the rounding-mode switches.
  volatile double va = a, vb = b, vc = c;
  switch (op) {
    case Op::add:
      return va + vb;
    case Op::sub:
      return va - vb;
    case Op::mul:
      return va * vb;
    case Op::fma:
    case Op::mad:
      return std::fma(va, vb, vc);
    case Op::div:
      return va / vb;
    case Op::rcp:
      return 1.0 / va;
    case Op::sqrt:
      return std::sqrt(va);
    case Op::abs:
      return std::fabs(va);
    case Op::neg:
      return -va;
    case Op::min:
    case Op::max:
      return exact_op(op, va, vb, vc).hi;
    default:
      throw SimError("instruction has no .f64 form in the simulator");
  }
}

bool is_nan64(std::uint64_t bits) {
  return (bits & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
}

// A NaN result of f64 add, sub, mul, fma, min, max, abs and neg on an H100
// is an operand's NaN, quieted (bit 51 set), its sign as it was (sub does not
// negate b's NaN, nor neg or abs a's): b's when b is a NaN, else a's
// (fma and mad: else c's, else a's), signalling or quiet alike. The host
// (x86) prefers a's instead. min and max give the other operand for one NaN
// (PTX ISA 9.7.3.10-11) and b's for two. Evidence: every recorded f64 case of
// these instructions, in both recordings (tests/gpu_truth/float_arith.truth
// and seed20261126/), e.g. add.rz.f64 of 0x7ff4656c14d0c3e8 and
// 0x7ff4656c14a85a0a gives 0x7ffc656c14a85a0a. fma's c before a shows only
// out of sample (seed 20261126; seed 0 has no fma.f64 case with NaNs in a
// and c but not b): fma.rn.f64 of a = 0x7ffbf425aba62f76 (quiet), a finite
// b and c = 0x7ff21d291b0d2e22 (signalling) gives 0x7ffa1d291b0d2e22, and
// fma.rp.f64 of a = 0x7ff8000000000000, a finite b and c =
// 0x7ffe1c29bfd13464 gives c (cases 126, 87 and 235); b still wins over a
// signalling c (seed 0, fma.rn.f64 case 82: b 0x7ff8000000000000, c
// 0x7ff51d525383afb9 gives b).
std::optional<std::uint64_t> f64_nan_result(Op op, std::uint64_t a, std::uint64_t b,
                                            std::uint64_t c) {
  constexpr std::uint64_t kQuiet = 1ull << 51;
  switch (op) {
    case Op::abs:
    case Op::neg:
      if (is_nan64(a)) return a | kQuiet;
      return std::nullopt;
    case Op::min:
    case Op::max:
      if (is_nan64(a) && is_nan64(b)) return b | kQuiet;
      return std::nullopt;
    case Op::add:
    case Op::sub:
    case Op::mul:
      for (const std::uint64_t v : {b, a})
        if (is_nan64(v)) return v | kQuiet;
      return std::nullopt;
    case Op::fma:
    case Op::mad:
      for (const std::uint64_t v : {b, c, a})
        if (is_nan64(v)) return v | kQuiet;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

void exec_f64(const Inst& in, Warp& w, std::uint32_t active) {
  const std::size_t n = in.ops.size();
  const bool unary = is_unary(in.op);
  RoundingModeScope scope(in.rounding);
  for_lanes(active, [&](int l) {
    const std::uint64_t abits = read(w, in.op0(1), l);
    const std::uint64_t bbits = !unary && n > 2 ? read(w, in.op0(2), l) : 0;
    const std::uint64_t cbits = !unary && n > 3 ? read(w, in.op0(3), l) : 0;
    // The f64 .approx forms: rcp.approx.ftz.f64 and rsqrt.approx.f64.
    if (in.op == Op::rsqrt || (in.op == Op::rcp && in.approx)) {
      write(w, in.op0(0), l,
            in.op == Op::rsqrt ? rsqrt_approx_f64(abits) : rcp_approx_ftz_f64(abits));
      return;
    }
    if (const auto nan = f64_nan_result(in.op, abits, bbits, cbits)) {
      write(w, in.op0(0), l, *nan);
      return;
    }
    const double a = f64_of(abits), b = f64_of(bbits), c = f64_of(cbits);
    volatile double r = f64_element(in.op, a, b, c);
    double v = r;
    if (in.sat) v = clamp_sat(v);
    write(w, in.op0(0), l, bits_of(v));
  });
}

}  // namespace

void exec_float(const Inst& in, Warp& w, std::uint32_t active) {
  const Type t = in.type();
  if (t == Type::f64) return exec_f64(in, w, active);
  const FloatFormat& f = float_format(t);
  const bool packed = t == Type::f16x2 || t == Type::bf16x2;
  const int width = packed ? 16 : ptx::bits(t);
  const std::uint32_t mask = width == 32 ? 0xFFFFFFFFu : (1u << width) - 1;
  const std::size_t n = in.ops.size();
  const bool unary = is_unary(in.op);
  for_lanes(active, [&](int l) {
    const std::uint64_t a = read(w, in.op0(1), l);
    const std::uint64_t b = !unary && n > 2 ? read(w, in.op0(2), l) : 0;
    const std::uint64_t c = !unary && n > 3 ? read(w, in.op0(3), l) : 0;
    std::uint64_t d = 0;
    for (int h = 0; h < (packed ? 2 : 1); ++h) {
      const int s = 16 * h;
      const std::uint32_t r = narrow_element(in, f, static_cast<std::uint32_t>(a >> s) & mask,
                                             static_cast<std::uint32_t>(b >> s) & mask,
                                             static_cast<std::uint32_t>(c >> s) & mask);
      d |= std::uint64_t{r & mask} << s;
    }
    write(w, in.op0(0), l, d);
  });
}

}  // namespace warpforge::sim
