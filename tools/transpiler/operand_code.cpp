#include "transpiler/operand_code.hpp"

#include <charconv>
#include <cmath>

#include "transpiler/cpp_names.hpp"
#include "transpiler/ir_literal.hpp"
#include "warpforge/ptx/special_register.hpp"

namespace warpforge::transpiler {
namespace {

bool plain(const ptx::Operand& op) {
  return op.text.empty() && !op.negated && op.offset == 0 && !op.explicit_zero_offset;
}

// `sreg` names without '%' and '.', as the SReg enumerators are spelled.
std::string sreg_enumerator(std::string_view ptx_name) {
  std::string out;
  for (char c : ptx_name.substr(1)) out += c == '.' ? '_' : c;
  return out;
}

}  // namespace

std::string dsl_type(ptx::Type t) {
  if (t == ptx::Type::e2m1x2) return "Type::e2m1x2";  // dsl/types.hpp has no short name for it
  return std::string(ptx::name(t));
}

std::optional<std::string> exact_float_literal(const ptx::Operand& op) {
  if (op.kind != ptx::Operand::Kind::imm_float || op.text.size() < 2) return std::nullopt;
  char buf[64];
  if (op.text.compare(0, 2, "0f") == 0) {
    float v = static_cast<float>(op.float_value());
    if (!std::isfinite(v) || !(ptx::Operand::f32(v) == op)) return std::nullopt;
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return "imm_f32(" + s + "f)";
  }
  if (op.text.compare(0, 2, "0d") == 0) {
    double v = op.float_value();
    if (!std::isfinite(v) || !(ptx::Operand::f64(v) == op)) return std::nullopt;
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, r.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return "imm_f64(" + s + ")";
  }
  return std::nullopt;
}

std::optional<Code> OperandWriter::reg(const ptx::Operand& op, std::optional<ptx::Type> view) const {
  if (op.kind != ptx::Operand::Kind::reg || !(ptx::Operand::reg(op.text) == op)) return std::nullopt;
  auto h = scope_.find(op.text);
  if (!h || h->declared == ptx::Type::pred) return std::nullopt;
  if (view && *view != h->declared) return h->expr + Code(".as(" + dsl_type(*view) + ")");
  return h->expr;
}

std::optional<Code> OperandWriter::pred_use(const ptx::Operand& op) const {
  if (op.kind != ptx::Operand::Kind::reg || !(ptx::Operand::reg(op.text, op.negated) == op)) return std::nullopt;
  auto h = scope_.find(op.text);
  if (!h || h->declared != ptx::Type::pred) return std::nullopt;
  return (op.negated ? Code("!") : Code()) + h->expr;
}

std::optional<Code> OperandWriter::label(const ptx::Operand& op) const {
  if (op.kind != ptx::Operand::Kind::label || !(ptx::Operand::label(op.text) == op)) return std::nullopt;
  auto it = scope_.labels.find(op.text);
  if (it == scope_.labels.end()) return std::nullopt;
  return Code(it->second);
}

std::optional<Code> OperandWriter::sreg(const ptx::Operand& op) const {
  if (op.kind != ptx::Operand::Kind::sreg || !(ptx::Operand::sreg(op.text) == op)) return std::nullopt;
  auto s = ptx::parse_sreg(op.text);
  // operand_of(SReg) refuses registers the kernel's target lacks.
  if (!s || !ptx::info(*s).availability.has(target_) || ptx::info(*s).name != op.text)
    return std::nullopt;
  return Code("SReg::" + sreg_enumerator(op.text));
}

std::optional<Code> OperandWriter::int_imm(const ptx::Operand& op) const {
  if (op.kind != ptx::Operand::Kind::imm_int) return std::nullopt;
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(op.text.data(), op.text.data() + op.text.size(), v);
  // Only the spelling ptx::Operand::imm(v) writes back; INT64_MIN has no C++ literal.
  if (ec != std::errc() || end != op.text.data() + op.text.size() || v == INT64_MIN ||
      !(ptx::Operand::imm(v) == op))
    return std::nullopt;
  return Code::hole(v);
}

std::optional<Code> OperandWriter::float_imm(const ptx::Operand& op) const {
  if (auto f = exact_float_literal(op)) return Code(*f);
  return std::nullopt;
}

std::optional<Code> OperandWriter::regs_vector(const ptx::Operand& op) {
  if (op.kind != ptx::Operand::Kind::vector || !plain(op) || op.elems.empty()) return std::nullopt;
  std::vector<Code> parts;
  for (const auto& e : op.elems) {
    auto r = reg(e);
    if (!r) return std::nullopt;
    parts.push_back(*r);
  }
  // A run r[a], r[a+1] ... of one range reads better as slice(r, a, n).
  const auto& first = parts.front();
  bool run = parts.size() >= 4 && first.values.size() == 1;
  for (std::size_t i = 1; run && i < parts.size(); ++i)
    run = parts[i].text == first.text && parts[i].values.size() == 1 &&
          parts[i].values[0] == first.values[0] + static_cast<std::int64_t>(i);
  if (run) {
    used_slice_ = true;
    std::string name = first.text.substr(0, first.text.find('['));
    return Code("slice(" + name + ", ") + Code::hole(first.values[0]) + Code(", " + std::to_string(parts.size()) + ")");
  }
  return Code("Regs{") + join(parts) + Code("}");
}

std::optional<Code> OperandWriter::address(const ptx::Operand& op) {
  if (op.kind != ptx::Operand::Kind::address || op.elems.size() != 1 || op.explicit_zero_offset || op.negated ||
      !op.text.empty())
    return std::nullopt;
  const auto& base = op.elems[0];
  Code b;
  if (auto r = reg(base)) {
    b = *r;
  } else if (base.kind == ptx::Operand::Kind::symbol && ptx::Operand::symbol(base.text) == base &&
             scope_.params.count(base.text)) {
    used_params_.insert(base.text);
    b = Code(scope_.params.at(base.text));
  } else if (base.kind == ptx::Operand::Kind::symbol && ptx::Operand::symbol(base.text) == base) {
    b = Code("Symbol{" + cpp_string(base.text) + "}");  // a variable of the module
  } else {
    return std::nullopt;
  }
  if (op.offset == 0) return Code("at(") + b + Code(")");
  return Code("at(") + b + Code(", ") + Code::hole(op.offset) + Code(")");
}

Code OperandWriter::arg(const ptx::Operand& op) {
  if (auto v = int_imm(op)) return *v;
  Code handle = arg_if_handle(op);
  return handle.text.empty() ? expr(op) : handle;
}

Code OperandWriter::expr(const ptx::Operand& op) {
  using K = ptx::Operand::Kind;
  if (op.kind == K::imm_int) {
    if (auto v = int_imm(op)) return Code("ptx::Operand::imm(") + *v + Code(")");
  }
  Code handle = arg_if_handle(op);
  if (!handle.text.empty()) return Code("k.operand_of(") + handle + Code(")");
  // Compound operands keep their handles inside: {k.operand_of(r[1]), _}.
  auto elems = [&] {
    std::vector<Code> parts;
    for (const auto& e : op.elems) parts.push_back(expr(e));
    return join(parts);
  };
  if (op.kind == K::vector && plain(op)) return Code("ptx::Operand::vector({") + elems() + Code("})");
  if (op.kind == K::list && plain(op)) return Code("ptx::Operand::list({") + elems() + Code("})");
  if (op.kind == K::pair && plain(op) && op.elems.size() == 2) return Code("ptx::Operand::pair(") + elems() + Code(")");
  if ((op.kind == K::address || op.kind == K::generic) && op.elems.size() == 1 && op.text.empty() && !op.negated &&
      !op.explicit_zero_offset) {
    Code out = Code(op.kind == K::address ? "ptx::Operand::address(" : "ptx::Operand::generic(") + expr(op.elems[0]);
    if (op.offset) out += Code(", ") + Code::hole(op.offset);
    return out + Code(")");
  }
  if (op.elems.empty()) return Code(literal(op));
  // Any other compound: every field, with the parts as expressions.
  Code out("ptx::Operand{.kind = " + literal(op.kind));
  if (!op.text.empty()) out += Code(", .text = " + cpp_string(op.text));
  if (op.negated) out += Code(", .negated = true");
  if (op.offset) out += Code(", .offset = ") + Code::hole(op.offset);
  out += Code(", .elems = {") + elems() + Code("}");
  if (op.explicit_zero_offset) out += Code(", .explicit_zero_offset = true");
  return out + Code("}");
}

Code OperandWriter::arg_if_handle(const ptx::Operand& op) {
  using K = ptx::Operand::Kind;
  std::optional<Code> c;
  switch (op.kind) {
    case K::reg: c = reg(op); if (!c) c = pred_use(op); break;
    case K::sreg: c = sreg(op); break;
    case K::imm_float: c = float_imm(op); break;
    case K::label: c = label(op); break;
    case K::address: c = address(op); break;
    case K::vector: c = regs_vector(op); break;
    default: break;
  }
  return c ? *c : Code();
}

}  // namespace warpforge::transpiler
