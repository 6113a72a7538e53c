// Integer arithmetic and logic (PTX ISA 9.7.1 "Integer Arithmetic", 9.7.7
// "Logic and Shift", 9.7.8.7-9 prmt/bfe/bfi...): every form on random
// integers with their edges (0, ±1, the signed and unsigned extremes, powers
// of two); shift and field amounts past the width.
#include "difftest/families.hpp"
#include "difftest/scalar_form.hpp"

namespace warpforge::difftest {

namespace {

std::function<std::uint64_t(Rng&)> ints(int width) {
  return [width](Rng& rng) { return int_value(rng, width); };
}

// Amounts for shifts and bit fields: mostly in range, some past the width.
std::uint64_t amount(Rng& rng) {
  return rng.percent(80) ? rng.below(33) : rng.below(300);
}

}  // namespace

Family integer_family() {
  Family f{"integer_logic", "integer arithmetic, logic, shifts, bit fields", {}};
  auto add = [&](ScalarSpec s) { f.units.push_back(instruction_unit(scalar_form(std::move(s)))); };
  for (int w : {16, 32, 64}) {
    const std::string ws = std::to_string(w);
    for (const char* sign : {"u", "s"}) {
      const std::string t = sign + ws;
      for (const char* op : {"add", "sub", "mul.lo", "mul.hi", "min", "max", "div", "rem"})
        add({std::string(op) + "." + t, w, {w, w}, each(2, ints(w))});
      add({"mad.lo." + t, w, {w, w, w}, each(3, ints(w))});
      add({"mad.hi." + t, w, {w, w, w}, each(3, ints(w))});
      if (w < 64) {
        add({"mul.wide." + t, 2 * w, {w, w}, each(2, ints(w))});
        add({"mad.wide." + t, 2 * w, {w, w, 2 * w}, [w](Rng& rng, std::uint64_t* v) {
               v[0] = int_value(rng, w);
               v[1] = int_value(rng, w);
               v[2] = int_value(rng, 2 * w);
             }});
      }
      add({"shr." + t, w, {w, 32}, [w](Rng& rng, std::uint64_t* v) {
             v[0] = int_value(rng, w);
             v[1] = amount(rng);
           }});
    }
    const std::string b = "b" + ws;
    for (const char* op : {"and", "or", "xor"})
      add({std::string(op) + "." + b, w, {w, w}, each(2, ints(w))});
    add({"not." + b, w, {w}, each(1, ints(w))});
    add({"cnot." + b, w, {w}, each(1, ints(w))});
    add({"shl." + b, w, {w, 32}, [w](Rng& rng, std::uint64_t* v) {
           v[0] = int_value(rng, w);
           v[1] = amount(rng);
         }});
    add({"abs.s" + ws, w, {w}, each(1, ints(w))});
    add({"neg.s" + ws, w, {w}, each(1, ints(w))});
  }
  for (int w : {32, 64}) {
    const std::string ws = std::to_string(w);
    add({"popc.b" + ws, 32, {w}, each(1, ints(w))});
    add({"clz.b" + ws, 32, {w}, each(1, ints(w))});
    add({"brev.b" + ws, w, {w}, each(1, ints(w))});
    for (const char* t : {"u", "s"})
      add({"bfe." + std::string(t) + ws, w, {w, 32, 32}, [w](Rng& rng, std::uint64_t* v) {
             v[0] = int_value(rng, w);
             v[1] = amount(rng);
             v[2] = amount(rng);
           }});
    add({"bfi.b" + ws, w, {w, w, 32, 32}, [w](Rng& rng, std::uint64_t* v) {
           v[0] = int_value(rng, w);
           v[1] = int_value(rng, w);
           v[2] = amount(rng);
           v[3] = amount(rng);
         }});
  }
  add({"add.sat.s32", 32, {32, 32}, each(2, ints(32))});
  add({"sub.sat.s32", 32, {32, 32}, each(2, ints(32))});
  for (std::int64_t lut : {0x96, 0xE8, 0x1E, 0xCA, 0x80, 0xFE, 0x3C})
    add({"lop3.b32", 32, {32, 32, 32}, each(3, ints(32)), {lut}});
  add({"prmt.b32", 32, {32, 32, 32}, each(3, ints(32))});
  return f;
}

}  // namespace warpforge::difftest
