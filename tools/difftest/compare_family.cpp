// Comparisons and selection (PTX ISA 9.7.6): setp with every comparison of
// each type (the unordered float comparisons and num/nan included, with
// .ftz), combined with a predicate by .and/.or/.xor, and selp. A fifth of
// the pairs compare a value with itself or with its negation, so equality
// and signed zeros are exercised.
#include "difftest/families.hpp"
#include "difftest/scalar_form.hpp"

namespace warpforge::difftest {

namespace {

std::function<void(Rng&, std::uint64_t*)> pairs(std::function<std::uint64_t(Rng&)> one,
                                                std::uint64_t sign_bit) {
  return [one = std::move(one), sign_bit](Rng& rng, std::uint64_t* v) {
    v[0] = one(rng);
    const std::uint64_t r = rng.below(10);
    v[1] = r == 0 ? v[0] : r == 1 ? v[0] ^ sign_bit : one(rng);
    v[2] = rng.bits() & 1;  // the predicate of the .and/.or/.xor forms and of selp
  };
}

struct Typed {
  std::string type;
  int width;
  std::function<std::uint64_t(Rng&)> value;
  std::uint64_t sign_bit;
  bool is_float, is_unsigned;
};

}  // namespace

Family compare_family() {
  Family f{"compare_select", "setp (every comparison, .ftz, .and/.or/.xor) and selp", {}};
  auto add = [&](ScalarSpec s) { f.units.push_back(instruction_unit(scalar_form(std::move(s)))); };
  auto fl = [](const FloatFormat& fmt) {
    return [&fmt](Rng& rng) { return float_value(rng, fmt); };
  };
  auto in = [](int w) { return [w](Rng& rng) { return int_value(rng, w); }; };
  const std::vector<Typed> types = {
      {"u16", 16, in(16), 0x8000, false, true},
      {"s16", 16, in(16), 0x8000, false, false},
      {"u32", 32, in(32), 1u << 31, false, true},
      {"s32", 32, in(32), 1u << 31, false, false},
      {"u64", 64, in(64), 1ull << 63, false, true},
      {"s64", 64, in(64), 1ull << 63, false, false},
      {"f32", 32, fl(kF32), 1u << 31, true, false},
      {"ftz.f32", 32, fl(kF32), 1u << 31, true, false},
      {"f64", 64, fl(kF64), 1ull << 63, true, false},
      {"f16", 16, fl(kF16), 0x8000, true, false},
      {"ftz.f16", 16, fl(kF16), 0x8000, true, false},
      {"bf16", 16, fl(kBF16), 0x8000, true, false},
  };
  for (const Typed& t : types) {
    std::vector<std::string> cmps = {"eq", "ne", "lt", "le", "gt", "ge"};
    if (t.is_unsigned) cmps.insert(cmps.end(), {"lo", "ls", "hi", "hs"});
    if (t.is_float)
      cmps.insert(cmps.end(), {"equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"});
    for (const std::string& c : cmps)
      add({"setp." + c + "." + t.type, kPredicate, {t.width, t.width}, pairs(t.value, t.sign_bit)});
  }
  for (const char* bop : {"and", "or", "xor"}) {
    add({std::string("setp.lt.") + bop + ".s32",
         kPredicate,
         {32, 32, kPredicate},
         pairs(in(32), 1u << 31)});
    add({std::string("setp.gtu.") + bop + ".f32",
         kPredicate,
         {32, 32, kPredicate},
         pairs(fl(kF32), 1u << 31)});
  }
  for (const Typed& t : {types[1], types[2], types[3], types[4], types[6], types[8]})
    add({"selp." + t.type, t.width, {t.width, t.width, kPredicate}, pairs(t.value, t.sign_bit)});
  return f;
}

}  // namespace warpforge::difftest
