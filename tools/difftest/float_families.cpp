// Float arithmetic (PTX ISA 9.7.3 "Floating-Point Instructions", 9.7.4
// "Half Precision ..."): three families.
//  - float_arith: add/sub/mul/fma in every rounding mode, with and without
//    .ftz and .sat, min/max/abs/neg, for f32, f64, f16, bf16, f16x2, bf16x2;
//    inputs with cancellation (b near -a, c near -a·b) besides the edges.
//  - float_divide: the correctly rounded div/rcp/sqrt in every rounding mode.
//  - float_approx: the .approx (and div.full) instructions, whose results
//    PTX leaves to the hardware: the simulator is held to every bit where
//    it models the hardware's rule (approx_ulp_bound), else to a stated bound.
#include <cmath>
#include <cstring>

#include "difftest/families.hpp"
#include "difftest/scalar_form.hpp"

namespace warpforge::difftest {

namespace {

// The largest difference in ulps between the simulator and the H100 in the
// recording (1,024 cases each, measured with every bound at 2^29). The PTX
// ISA states these functions' errors as bounds, not results. rcp, sqrt,
// rsqrt and ex2 .approx.f32 (with and without .ftz), and div.approx and
// div.full (the reciprocal times a), are held to every bit (no entry): the
// simulator computes the multifunction unit's results from tables recorded
// over their whole reduced domains on an H200 (src/sim/mufu_f32.cpp,
// tools/difftest/mufu_sweep.hpp), which every case of both H100
// recordings agrees with. lg2 (whose table is not made) and the f16/bf16
// forms keep the largest difference recorded; rcp.approx.ftz.f64 one unit
// of its 20th significand bit (2^32 f64 ulps, approx_tolerance).
// rsqrt.approx.f64 agrees bit for bit; sin/cos.approx are held to an
// absolute bound (approx_tolerance).
std::int64_t approx_ulp_bound(const std::string& op) {
  constexpr std::int64_t kTwentiethBit = std::int64_t{1} << 32;  // of an f64 significand
  static const std::pair<const char*, std::int64_t> bounds[] = {
      {"lg2.approx.f32", 13},
      {"lg2.approx.ftz.f32", 20},
      {"tanh.approx.f32", 114},
      {"ex2.approx.f16", 1},
      {"ex2.approx.f16x2", 1},
      {"ex2.approx.ftz.bf16", 1},
      {"ex2.approx.ftz.bf16x2", 1},
      {"tanh.approx.f16", 1},
      {"tanh.approx.f16x2", 1},
      {"tanh.approx.bf16", 1},
      {"rcp.approx.ftz.f64", kTwentiethBit}};
  for (const auto& [form, ulps] : bounds)
    if (op == form) return ulps;
  return 0;
}

// How the replay holds an .approx unit of `width`-bit registers.
Tolerance approx_tolerance(const std::string& op, int width) {
  // sin/cos.approx.f32: the H100's range reduction is modelled, its sine
  // unit is not; every recorded case is within an absolute 2^-21.54
  // (approx_functions.cpp, sin_cos_approx_f32).
  if (op.starts_with("sin.") || op.starts_with("cos.")) return {0, 8, 23, std::exp2(-21.5)};
  const std::int64_t ulps = approx_ulp_bound(op);
  if (width == 64) return {ulps, 11, 52};
  if (op.find("bf16") != std::string::npos) return {ulps, 8, 7};
  if (op.find("f16") != std::string::npos) return {ulps, 5, 10};
  return {ulps};
}

struct FloatType {
  std::string name;
  const FloatFormat* fmt;
  int width;  // of the register (32 for the packed pairs)
  bool packed;
};

const FloatType kTypes[] = {{"f32", &kF32, 32, false},  {"f64", &kF64, 64, false},
                            {"f16", &kF16, 16, false},  {"bf16", &kBF16, 16, false},
                            {"f16x2", &kF16, 32, true}, {"bf16x2", &kBF16, 32, true}};

double value_of(std::uint64_t bits, const FloatFormat& f) {
  if (&f == &kF64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  const std::uint32_t w =
      static_cast<std::uint32_t>(bits << (32 - f.width()));  // f32 and bf16: the top bits of an f32
  if (f.exponent_bits == 8) {
    float x;
    std::memcpy(&x, &w, 4);
    return x;
  }
  const int e = static_cast<int>((bits & f.exponent_mask()) >> f.mantissa_bits);
  const double m = static_cast<double>(bits & f.mantissa_mask());
  const double mag = e == 0 ? std::ldexp(m, 1 - f.bias() - f.mantissa_bits)
                            : std::ldexp(1 + std::ldexp(m, -f.mantissa_bits), e - f.bias());
  return bits & f.sign_bit() ? -mag : mag;
}

// Sources a, b, c of one element: edges and random values, with b near -a or
// near a (cancellation, and ties of the sum), and c near -a·b.
void arith_sources(Rng& rng, const FloatFormat& f, std::uint64_t* v) {
  v[0] = float_value(rng, f);
  const std::uint64_t low = (1ull << (f.mantissa_bits / 2)) - 1;
  switch (rng.below(6)) {
    case 0:
      v[1] = (v[0] ^ f.sign_bit()) ^ (rng.bits() & low);
      break;
    case 1:
      v[1] = v[0] ^ (rng.bits() & low);
      break;
    default:
      v[1] = float_value(rng, f);
  }
  if (rng.percent(25)) {
    const double p = value_of(v[0], f) * value_of(v[1], f);
    v[2] =
        std::isfinite(p) ? float_bits_toward_zero(-p, f) ^ (rng.bits() & 3) : float_value(rng, f);
  } else {
    v[2] = float_value(rng, f);
  }
}

std::function<void(Rng&, std::uint64_t*)> arith_values(const FloatType& t) {
  return [&t](Rng& rng, std::uint64_t* v) {
    if (!t.packed) return arith_sources(rng, *t.fmt, v);
    std::uint64_t lo[3], hi[3];
    arith_sources(rng, *t.fmt, lo);
    arith_sources(rng, *t.fmt, hi);
    for (int i = 0; i < 3; ++i) v[i] = lo[i] | hi[i] << 16;
  };
}

void add_form(Family& f, const std::string& opcode, const FloatType& t, int sources,
              int threads = 256) {
  std::vector<int> widths(static_cast<std::size_t>(sources), t.width);
  f.units.push_back(
      instruction_unit(scalar_form({opcode, t.width, widths, arith_values(t), {}, threads})));
}

}  // namespace

Family float_arith_family() {
  Family f{"float_arith", "add/sub/mul/fma/min/max/abs/neg, every rounding mode, .ftz, .sat", {}};
  const FloatType &f32 = kTypes[0], &f64 = kTypes[1];
  for (const char* op : {"add", "sub", "mul", "fma"}) {
    const int n = std::string(op) == "fma" ? 3 : 2;
    for (const char* r : {".rn", ".rz", ".rm", ".rp"}) {
      add_form(f, std::string(op) + r + ".f32", f32, n);
      add_form(f, std::string(op) + r + ".ftz.f32", f32, n);
      add_form(f, std::string(op) + r + ".f64", f64, n);
    }
    add_form(f, std::string(op) + ".rn.sat.f32", f32, n);
    add_form(f, std::string(op) + ".rn.ftz.sat.f32", f32, n);
    for (const FloatType* t : {&kTypes[2], &kTypes[3], &kTypes[4], &kTypes[5]}) {
      add_form(f, std::string(op) + ".rn." + t->name, *t, n);
      if (t->name == "f16" || t->name == "f16x2") {
        add_form(f, std::string(op) + ".rn.ftz." + t->name, *t, n);
        add_form(f, std::string(op) + ".rn.sat." + t->name, *t, n);
      }
    }
  }
  add_form(f, "add.f32", f32, 2);
  add_form(f, "mul.f32", f32, 2);
  add_form(f, "fma.rn.relu.f16", kTypes[2], 3);
  add_form(f, "fma.rn.relu.bf16", kTypes[3], 3);
  for (const FloatType& t : kTypes) {
    for (const char* op : {"min", "max"}) add_form(f, std::string(op) + "." + t.name, t, 2);
    for (const char* op : {"abs", "neg"}) add_form(f, std::string(op) + "." + t.name, t, 1);
    if (t.name == "f32" || t.name == "f16" || t.name == "f16x2") {
      for (const char* op : {"min", "max"}) add_form(f, std::string(op) + ".ftz." + t.name, t, 2);
      for (const char* op : {"abs", "neg"}) add_form(f, std::string(op) + ".ftz." + t.name, t, 1);
    }
  }
  return f;
}

Family float_divide_family() {
  Family f{"float_divide", "div/rcp/sqrt correctly rounded, every rounding mode, .ftz", {}};
  const FloatType &f32 = kTypes[0], &f64 = kTypes[1];
  for (const char* r : {".rn", ".rz", ".rm", ".rp"}) {
    for (const char* ftz : {"", ".ftz"}) {
      add_form(f, std::string("div") + r + ftz + ".f32", f32, 2, 512);
      add_form(f, std::string("rcp") + r + ftz + ".f32", f32, 1, 512);
      add_form(f, std::string("sqrt") + r + ftz + ".f32", f32, 1, 512);
    }
    add_form(f, std::string("div") + r + ".f64", f64, 2, 512);
    add_form(f, std::string("rcp") + r + ".f64", f64, 1, 512);
    add_form(f, std::string("sqrt") + r + ".f64", f64, 1, 512);
  }
  return f;
}

Family float_approx_family() {
  Family f{"float_approx", ".approx div/rcp/sqrt/rsqrt/ex2/lg2/sin/cos/tanh and div.full", {}};
  // Inputs: a third the f32 mix (edges included), the rest the function's
  // interesting range.
  auto ranged = [](double lo, double hi) {
    return [lo, hi](Rng& rng, std::uint64_t* v) {
      for (int i = 0; i < 2; ++i) {
        if (rng.percent(33)) {
          v[i] = float_value(rng, kF32);
          continue;
        }
        const double x = lo + (hi - lo) * static_cast<double>(rng.bits() >> 11) * 0x1p-53;
        v[i] = float_bits_toward_zero(x, kF32);
      }
    };
  };
  // Each unit is held to every bit or to the largest difference from the
  // H100 that the recording showed (approx_tolerance).
  auto add = [&](const std::string& op, int width, int sources,
                 std::function<void(Rng&, std::uint64_t*)> values) {
    const Tolerance tolerance = approx_tolerance(op, width);
    f.units.push_back(
        instruction_unit(scalar_form({op,
                                      width,
                                      std::vector<int>(static_cast<std::size_t>(sources), width),
                                      std::move(values),
                                      {},
                                      1024,
                                      tolerance})));
  };
  for (const char* ftz : {"", ".ftz"}) {
    const std::string z = ftz;
    add("div.approx" + z + ".f32", 32, 2, ranged(-1e3, 1e3));
    add("div.full" + z + ".f32", 32, 2, ranged(-1e3, 1e3));
    add("rcp.approx" + z + ".f32", 32, 1, ranged(-1e3, 1e3));
    add("sqrt.approx" + z + ".f32", 32, 1, ranged(0, 1e4));
    add("rsqrt.approx" + z + ".f32", 32, 1, ranged(0, 1e4));
    add("ex2.approx" + z + ".f32", 32, 1, ranged(-140, 140));
    add("lg2.approx" + z + ".f32", 32, 1, ranged(0, 1e4));
    add("sin.approx" + z + ".f32", 32, 1, ranged(-100, 100));
    add("cos.approx" + z + ".f32", 32, 1, ranged(-100, 100));
  }
  add("tanh.approx.f32", 32, 1, ranged(-10, 10));
  add("rcp.approx.ftz.f64", 64, 1, each(1, [](Rng& rng) { return float_value(rng, kF64); }));
  add("rsqrt.approx.f64", 64, 1, each(1, [](Rng& rng) { return float_value(rng, kF64); }));
  auto half = [](const FloatFormat& fmt, double lo, double hi, bool packed) {
    return [&fmt, lo, hi, packed](Rng& rng, std::uint64_t* v) {
      v[0] = 0;
      for (int h = 0; h < (packed ? 2 : 1); ++h) {
        const double x = lo + (hi - lo) * static_cast<double>(rng.bits() >> 11) * 0x1p-53;
        v[0] |= (rng.percent(33) ? float_value(rng, fmt) : float_bits_toward_zero(x, fmt))
                << (16 * h);
      }
    };
  };
  add("ex2.approx.f16", 16, 1, half(kF16, -25, 16, false));
  add("ex2.approx.f16x2", 32, 1, half(kF16, -25, 16, true));
  add("ex2.approx.ftz.bf16", 16, 1, half(kBF16, -130, 130, false));
  add("ex2.approx.ftz.bf16x2", 32, 1, half(kBF16, -130, 130, true));
  add("tanh.approx.f16", 16, 1, half(kF16, -8, 8, false));
  add("tanh.approx.f16x2", 32, 1, half(kF16, -8, 8, true));
  add("tanh.approx.bf16", 16, 1, half(kBF16, -8, 8, false));
  return f;
}

}  // namespace warpforge::difftest
