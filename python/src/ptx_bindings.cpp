// The PTX vocabulary from Python (warpforge._warpforge.ptx): the enums
// Opcode and Mod made at import from the vocabulary's own tables
// (ptx/vocabulary.hpp, ptx/modifier_words.hpp), nothing listed here, and
// what each opcode takes. Kernel.instruction (dsl_bindings.cpp) emits any
// instruction of the ISA from them, and the Python DSL's
// `k.op.<opcode>.<modifier>...(operands)` (python/warpforge/instructions.py)
// is built on that: every instruction the vocabulary knows is reachable
// from Python without a binding of its own.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace nb = nanobind;

namespace warpforge::python {

namespace {

// Every Mod: the types, the words, wgmma's shapes (modifiers.hpp), until
// name() has no more.
std::vector<ptx::Mod> every_mod() {
  std::vector<ptx::Mod> out;
  for (int i = 0;; ++i) {
    const auto m = static_cast<ptx::Mod>(i);
    if (m >= ptx::Mod::first_wgmma_shape && !ptx::wgmma_shape_of(m)) break;
    out.push_back(m);
  }
  return out;
}

// A Python name: the C++ enumerator's (shared_cta, and_), or for the types
// and shapes their spelling (u32, m64n128k16), with a trailing "_" where
// that is a Python keyword (global_, async_).
std::string python_name(std::string_view name) {
  std::string out(name);
  if (nb::cast<bool>(nb::module_::import_("keyword").attr("iskeyword")(out))) out += "_";
  return out;
}

std::string python_name(ptx::Mod m) {
  const std::string_view e = ptx::enumerator(m);
  return python_name(e.empty() ? ptx::name(m) : e);
}

}  // namespace

void bind_ptx(nb::module_& m) {
  nb::module_ ptx = m.def_submodule("ptx", "The PTX vocabulary: every opcode and modifier word.");

  nb::enum_<ptx::Opcode> opcode(ptx, "Opcode",
                                "Every opcode of the PTX ISA (its spelling: spelling()).");
  for (const ptx::OpcodeInfo& i : ptx::vocabulary())
    opcode.value(python_name(ptx::enumerator(i.opcode)).c_str(), i.opcode);

  nb::enum_<ptx::Mod> mod(ptx, "Mod",
                          "Every modifier word of the PTX ISA, by its C++ enumerator's name "
                          "(shared_cta for .shared::cta; the types and wgmma shapes as spelled)");
  for (const ptx::Mod x : every_mod()) mod.value(python_name(x).c_str(), x);

  ptx.def(
         "spelling", [](ptx::Opcode o) { return std::string(ptx::name(o)); }, nb::arg("opcode"),
         "The opcode as PTX spells it: 'and' for Opcode.and_.")
      .def(
          "spelling", [](ptx::Mod x) { return std::string(ptx::name(x)); }, nb::arg("modifier"),
          "The word as PTX spells it, without the dot: 'shared::cta' for Mod.shared_cta.")
      .def(
          "info",
          [](ptx::Opcode o) {
            const ptx::OpcodeInfo& i = ptx::info(o);
            std::vector<std::string> classes;
            for (const ptx::ModifierClass c : i.modifiers.list())
              classes.emplace_back(ptx::name(c));
            return nb::make_tuple(i.arity.min, i.arity.max, classes, i.availability.targets());
          },
          nb::arg("opcode"),
          "(fewest operands, most operands, the modifier classes it takes, the targets that have "
          "it)")
      .def(
          "meaning",
          [](ptx::Mod x, ptx::Opcode o) -> std::optional<std::string> {
            const std::optional<ptx::Modifier> meant = ptx::meaning(x, ptx::info(o).modifiers);
            if (!meant) return std::nullopt;
            return std::string(ptx::name(meant->cls));
          },
          nb::arg("modifier"), nb::arg("opcode"),
          "The class the word has as a modifier of the opcode ('comparison' for setp's .lo), "
          "None where the opcode takes no such word.")
      .def(
          "parse_opcode",
          [](const std::string& dotted) {
            const ptx::Instruction i = ptx::Instruction::parse_opcode(dotted);
            return nb::make_tuple(i.opcode, i.modifiers);
          },
          nb::arg("dotted"), "'ld.global.v4.b32' as (Opcode.ld, [Mod.global_, Mod.v4, Mod.b32]).");
}

}  // namespace warpforge::python
