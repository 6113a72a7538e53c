// What the wrapper families share: reading an instruction's type and float
// modes from its modifiers, the state spaces by modifier word, and sources
// written as a wrapper takes them.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "transpiler/code.hpp"
#include "transpiler/operand_code.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/ptx/instruction.hpp"

namespace warpforge::transpiler::wrap {

// The last modifier as a type (`ld.global.f32`: f32), nullopt where it is none.
std::optional<ptx::Type> type_modifier(const ptx::Instruction& inst);

// A source operand as a wrapper takes it (Src): register, decimal or exact
// float immediate (imm_f32 for 0f, imm_f64 for 0d).
std::optional<Code> src_code(const ptx::Operand& op, OperandWriter& ops,
                             std::optional<ptx::Type> view);

// Sources as wrappers take them (no view), joined after ", ".
std::optional<Code> sources(const std::vector<ptx::Operand>& srcs, OperandWriter& ops);

// The addressable state spaces by modifier word, with the DSL's spelling.
extern const std::map<ptx::Mod, std::pair<ptx::Space, std::string>> kSpaces;

// The rounding and float modifiers between the opcode and its type(s):
// `.rn.ftz.sat` as FloatMode / CvtMode fields, with their C++ spelling.
struct Modes {
  dsl::Round round = dsl::Round::none;
  bool ftz = false, sat = false, satfinite = false, relu = false;
  std::string code;  // `{.round = Round::rn, .ftz = true}`, "" when all are off
};
// The modes of `modifiers` (cvt: also .satfinite and .relu); nullopt where one is none of them.
std::optional<Modes> modes(const std::vector<ptx::Mod>& modifiers, bool cvt);

// The modifiers before the last `n` (the types).
std::vector<ptx::Mod> leading(const ptx::Instruction& inst, std::size_t n);

// Whether `inst` is `opcode` with exactly `modifiers` (bar.sync: bar, {sync}).
bool spelled(const ptx::Instruction& inst, ptx::Opcode opcode,
             std::initializer_list<ptx::Mod> modifiers);

// The opcode's spelling, which is also its DSL wrapper's name for prmt, bfe, popc ...
std::string opcode_name(const ptx::Instruction& inst);

}  // namespace warpforge::transpiler::wrap
