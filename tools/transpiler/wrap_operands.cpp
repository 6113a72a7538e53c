#include "transpiler/wrap_operands.hpp"

#include <algorithm>

namespace warpforge::transpiler::wrap {

std::optional<ptx::Type> type_modifier(const ptx::Instruction& inst) {
  if (inst.modifiers.empty()) return std::nullopt;
  return ptx::parse_type(inst.modifiers.back());
}

std::optional<Code> src_code(const ptx::Operand& op, OperandWriter& ops,
                             std::optional<ptx::Type> view) {
  if (auto r = ops.reg(op, view)) return r;
  if (auto i = ops.int_imm(op)) return i;
  return ops.float_imm(op);
}

std::optional<Code> sources(const std::vector<ptx::Operand>& srcs, OperandWriter& ops) {
  Code out;
  for (const auto& s : srcs) {
    auto c = src_code(s, ops, std::nullopt);
    if (!c) return std::nullopt;
    out += Code(", ") + *c;
  }
  return out;
}

const std::map<std::string, std::pair<ptx::Space, std::string>> kSpaces = {
    {"global", {ptx::Space::global, "Space::global"}},
    {"shared", {ptx::Space::shared, "Space::shared"}},
    {"local", {ptx::Space::local, "Space::local"}},
    {"param", {ptx::Space::param, "Space::param"}},
    {"const", {ptx::Space::const_, "Space::const_"}}};

std::optional<Modes> modes(const std::vector<std::string>& modifiers, bool cvt) {
  static const std::map<std::string, dsl::Round> kRounds = {
      {"rn", dsl::Round::rn},   {"rz", dsl::Round::rz},   {"rm", dsl::Round::rm},
      {"rp", dsl::Round::rp},   {"rna", dsl::Round::rna}, {"rni", dsl::Round::rni},
      {"rzi", dsl::Round::rzi}, {"rmi", dsl::Round::rmi}, {"rpi", dsl::Round::rpi}};
  Modes m;
  std::vector<std::string> fields;
  for (const auto& mod : modifiers) {
    if (auto r = kRounds.find(mod); r != kRounds.end() && m.round == dsl::Round::none) {
      m.round = r->second;
      fields.push_back(".round = Round::" + mod);
    } else if (mod == "ftz") {
      m.ftz = true;
    } else if (mod == "sat") {
      m.sat = true;
    } else if (cvt && mod == "satfinite") {
      m.satfinite = true;
    } else if (cvt && mod == "relu") {
      m.relu = true;
    } else {
      return std::nullopt;
    }
  }
  // Designated initializers in declaration order (FloatMode, CvtMode).
  if (m.ftz) fields.push_back(".ftz = true");
  if (m.sat) fields.push_back(".sat = true");
  if (m.satfinite) fields.push_back(".satfinite = true");
  if (m.relu) fields.push_back(".relu = true");
  for (std::size_t i = 0; i < fields.size(); ++i) m.code += (i ? ", " : "{") + fields[i];
  if (!m.code.empty()) m.code += "}";
  return m;
}

std::vector<std::string> leading(const ptx::Instruction& inst, std::size_t n) {
  return {inst.modifiers.begin(),
          inst.modifiers.end() - static_cast<std::ptrdiff_t>(std::min(n, inst.modifiers.size()))};
}

}  // namespace warpforge::transpiler::wrap
