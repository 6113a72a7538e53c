// C++ expressions that construct given IR values exactly: the transpiler's
// fallback for whatever the DSL has no call for (module variables, debug
// sections, directives, prototypes, parameters). Each expression, compiled
// with `using namespace warpforge;`, compares == to the value it was made from.
#pragma once

#include <optional>
#include <string>

#include "warpforge/ptx/module.hpp"

namespace warpforge::transpiler {

std::string literal(ptx::Type t);     // ptx::Type::u32
std::string literal(ptx::Space s);    // ptx::Space::shared
std::string literal(ptx::Linkage l);  // ptx::Linkage::visible
std::string literal(ptx::Operand::Kind k);  // ptx::Operand::Kind::imm_int
std::string literal(ptx::Opcode op);  // ptx::Opcode::and_
std::string literal(ptx::Mod m);      // ptx::Mod::shared_cta, ptx::mod(ptx::Type::u32)
std::string literal(const ptx::Operand& op);
std::string literal(const ptx::Variable& v);
std::string literal(const ptx::Directive& d);
std::string literal(const ptx::Instruction& inst);
std::string literal(const ptx::Statement& s);
std::string literal(const ptx::Function& f);
std::string literal(const ptx::Section::Line& l);  // one line of a debug section

// The decimal C++ literal of an integer immediate that
// ptx::Operand::imm_text(Kind::imm_int, std::to_string(value)) rebuilds
// exactly (PTX spelled it as canonical decimal); nullopt for any other operand.
std::optional<std::string> decimal_literal(const ptx::Operand& op);

// {a, b, c} of the literals of `values`.
template <class T>
std::string braced(const std::vector<T>& values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + literal(values[i]);
  return out + "}";
}

}  // namespace warpforge::transpiler
