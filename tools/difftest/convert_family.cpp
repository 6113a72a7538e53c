// Conversions (PTX ISA 9.7.9.21 cvt): float to float in every rounding mode
// with .ftz/.sat/.satfinite/.relu, rounding to an integral value, float to
// integer, integer to float, integer widths with .sat, and the packed forms
// (f16x2, bf16x2, e4m3x2, e5m2x2). Inputs mix the source format's edges,
// ties of the destination's precision (and one unit either side), values
// just inside and past the destination's largest finite value or integer
// range, and halves for the rounding to integers.
#include <algorithm>
#include <cmath>

#include "difftest/families.hpp"
#include "difftest/scalar_form.hpp"
#include "warpforge/error.hpp"

namespace warpforge::difftest {

namespace {

struct Format {
  std::string name;
  int width;               // of the register holding it
  const FloatFormat* fmt;  // nullptr for integers
  int int_bits = 0;        // integers: the type's width (8 for s8/u8 in a 16-bit register)
  bool is_signed = false;
};

const Format kFormats[] = {
    {"f64", 64, &kF64},       {"f32", 32, &kF32},
    {"f16", 16, &kF16},       {"bf16", 16, &kBF16},
    {"tf32", 32, &kF32},      {"s8", 16, nullptr, 8, true},
    {"u8", 16, nullptr, 8},   {"s16", 16, nullptr, 16, true},
    {"u16", 16, nullptr, 16}, {"s32", 32, nullptr, 32, true},
    {"u32", 32, nullptr, 32}, {"s64", 64, nullptr, 64, true},
    {"u64", 64, nullptr, 64},
};

const Format& format(const std::string& name) {
  for (const Format& f : kFormats)
    if (f.name == name) return f;
  throw Error("convert_family: no format " + name);
}

// The largest finite value of a float format, and the mantissa bits it keeps
// (tf32 keeps 10 of f32's 23).
double largest(const Format& f) {
  if (f.name == "tf32") return std::ldexp(2.0 - std::ldexp(1.0, -10), 127);
  const FloatFormat& x = *f.fmt;
  const int top = (1 << x.exponent_bits) - (x.has_infinity ? 2 : 1);
  const std::uint64_t mant = x.has_infinity ? x.mantissa_mask() : x.mantissa_mask() - 1;
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(mant), -x.mantissa_bits), top - x.bias());
}
int kept_bits(const Format& f) {
  return f.name == "tf32" ? 10 : f.fmt ? f.fmt->mantissa_bits : 64;
}

// One source value of `src` for a conversion to `dst`.
std::uint64_t source_value(Rng& rng, const Format& src, const Format& dst) {
  if (!src.fmt) {
    std::uint64_t v = int_value(rng, src.int_bits);
    if (src.is_signed && src.int_bits < src.width && (v >> (src.int_bits - 1) & 1))
      v |= ~0ull << src.int_bits;  // a narrow signed value sign-extended in its register
    return v & (src.width == 64 ? ~0ull : (1ull << src.width) - 1);
  }
  const FloatFormat& s = *src.fmt;
  const std::uint64_t r = rng.below(100);
  if (r < 40) return float_value(rng, s);
  if (r < 65 && dst.fmt) return float_tie(rng, s, kept_bits(dst));
  // Near the destination's bound: its largest finite value or its integer range.
  double bound;
  if (dst.fmt)
    bound = largest(dst);
  else
    bound = std::ldexp(1.0, dst.int_bits - (dst.is_signed ? 1 : 0));
  const double k = static_cast<double>(rng.below(17)) - 8;
  double v;
  if (dst.fmt)
    v = bound * (1 + std::ldexp(k, -kept_bits(dst) - 2));
  else if (r < 75)
    v = static_cast<double>(rng.below(64)) / 4;  // small halves and quarters
  else if (r < 88)
    v = bound + k * std::max(0.5, std::ldexp(bound, -s.mantissa_bits));  // the integer range's ends
  else
    v = std::floor(
            std::ldexp(static_cast<double>(rng.below(1 << 20)), -static_cast<int>(rng.below(20)))) +
        0.5;
  if (rng.percent(50)) v = -v;
  return float_bits_toward_zero(v, s);
}

}  // namespace

Family convert_family() {
  Family f{
      "convert",
      "cvt: every rounding mode, .ftz/.sat/.satfinite/.relu, packed f16x2/bf16x2/e4m3x2/e5m2x2",
      {}};
  // cvt<mods>.<dst>.<src> d, a.
  auto scalar = [&](const std::string& mods, const std::string& dst, const std::string& src) {
    const Format& d = format(dst);
    const Format& s = format(src);
    f.units.push_back(instruction_unit(
        scalar_form({"cvt" + mods + "." + dst + "." + src,
                     d.width,
                     {s.width},
                     [&d, &s](Rng& rng, std::uint64_t* v) { v[0] = source_value(rng, s, d); }})));
  };
  const char* rnd[] = {".rn", ".rz", ".rm", ".rp"};
  const char* rndi[] = {".rni", ".rzi", ".rmi", ".rpi"};
  for (const char* r : rnd) {
    scalar(r, "f16", "f32");
    scalar(r, "bf16", "f32");
    scalar(r, "f32", "f64");
    scalar(std::string(r) + ".ftz", "f32", "f64");
    for (const char* i : {"s32", "u32", "s64", "u64"}) scalar(r, "f32", i);
    scalar(r, "f64", "s64");
    scalar(r, "f16", "f64");
  }
  for (const char* m : {".rn.relu", ".rn.satfinite", ".rn.sat", ".rz.relu"}) {
    scalar(m, "f16", "f32");
    scalar(m, "bf16", "f32");
  }
  for (const char* m : {".rna", ".rna.satfinite", ".rn", ".rz"}) scalar(m, "tf32", "f32");
  scalar("", "f32", "f16");
  scalar("", "f32", "bf16");
  scalar(".ftz", "f32", "f16");
  scalar("", "f64", "f32");
  scalar(".ftz", "f64", "f32");
  scalar("", "f64", "f16");
  scalar(".sat", "f32", "f32");
  scalar(".ftz.sat", "f32", "f32");
  for (const char* r : rndi) {
    scalar(r, "f32", "f32");
    scalar(std::string(r) + ".ftz", "f32", "f32");
    scalar(r, "f64", "f64");
    scalar(r, "f16", "f16");
    for (const char* i : {"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"})
      scalar(r, i, "f32");
    for (const char* i : {"s32", "u32", "s64", "u64"}) scalar(r, i, "f64");
    scalar(r, "s32", "f16");
    scalar(r, "u16", "f16");
    scalar(r, "s32", "bf16");
  }
  scalar(".rzi.ftz", "s32", "f32");
  scalar(".rn", "f16", "s32");
  scalar(".rn", "f16", "u16");
  scalar(".rn", "bf16", "s32");
  scalar(".rn", "f64", "u32");
  // Integer widths: sign or zero extension by the source's type, cuts, .sat.
  for (const auto& [d, s] : std::vector<std::pair<const char*, const char*>>{{"s32", "s8"},
                                                                             {"u32", "u8"},
                                                                             {"s32", "s16"},
                                                                             {"u32", "u16"},
                                                                             {"s64", "s32"},
                                                                             {"u64", "u32"},
                                                                             {"s64", "u32"},
                                                                             {"s8", "s32"},
                                                                             {"u8", "u32"},
                                                                             {"s16", "s32"},
                                                                             {"u16", "s32"},
                                                                             {"s32", "s64"},
                                                                             {"u32", "u64"},
                                                                             {"s32", "u32"}}) {
    scalar("", d, s);
    scalar(".sat", d, s);
  }
  // Packed: two f32 sources into one register (the first into the upper half).
  auto packed = [&](const std::string& mods, const std::string& dst, int dst_width) {
    const Format& target = format(dst == "f16x2" ? "f16" : dst == "bf16x2" ? "bf16" : "f16");
    const FloatFormat* fp8 = dst == "e4m3x2" ? &kE4M3 : dst == "e5m2x2" ? &kE5M2 : nullptr;
    f.units.push_back(instruction_unit(scalar_form(
        {"cvt" + mods + "." + dst + ".f32",
         dst_width,
         {32, 32},
         [&target, fp8](Rng& rng, std::uint64_t* v) {
           for (int i = 0; i < 2; ++i) {
             if (!fp8) {
               v[i] = source_value(rng, format("f32"), target);
               continue;
             }
             // FP8 targets: values around its range, ties of its precision, and past its bound.
             const std::uint64_t r = rng.below(4);
             const int kept = fp8->mantissa_bits;
             const double max = fp8 == &kE4M3 ? 448.0 : 57344.0;
             if (r == 0)
               v[i] = float_value(rng, kF32);
             else if (r == 1)
               v[i] = float_tie(rng, kF32, kept);
             else if (r == 2)
               v[i] = float_moderate(rng, kF32, fp8 == &kE4M3 ? 10 : 17);
             else
               v[i] = float_bits_toward_zero(
                   (rng.percent(50) ? -max : max) *
                       (1 + std::ldexp(static_cast<double>(rng.below(17)) - 8, -kept - 2)),
                   kF32);
           }
         }})));
  };
  for (const char* m :
       {".rn", ".rn.relu", ".rz", ".rz.relu", ".rn.satfinite", ".rn.relu.satfinite"}) {
    packed(m, "f16x2", 32);
    packed(m, "bf16x2", 32);
  }
  for (const char* m : {".rn.satfinite", ".rn.satfinite.relu"}) {
    packed(m, "e4m3x2", 16);
    packed(m, "e5m2x2", 16);
    for (const char* dst : {"e4m3x2", "e5m2x2"})
      f.units.push_back(instruction_unit(scalar_form(
          {std::string("cvt") + m + "." + dst + ".f16x2", 16, {32}, [](Rng& rng, std::uint64_t* v) {
             v[0] = float_value(rng, kF16) | float_moderate(rng, kF16, 10) << 16;
           }})));
  }
  for (const char* m : {".rn", ".rn.relu"})
    for (const char* src : {"e4m3x2", "e5m2x2"})
      f.units.push_back(instruction_unit(scalar_form(
          {std::string("cvt") + m + ".f16x2." + src, 32, {16}, [](Rng& rng, std::uint64_t* v) {
             v[0] = rng.bits() & 0xFFFF;
           }})));
  return f;
}

}  // namespace warpforge::difftest
