#include "transpiler/ir_literal.hpp"

#include <cctype>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>

#include "transpiler/cpp_names.hpp"

namespace warpforge::transpiler {
namespace {

std::string kind_literal(ptx::Operand::Kind k) {
  using K = ptx::Operand::Kind;
  switch (k) {
    case K::reg: return "reg";
    case K::sreg: return "sreg";
    case K::imm_int: return "imm_int";
    case K::imm_float: return "imm_float";
    case K::symbol: return "symbol";
    case K::label: return "label";
    case K::string: return "string";
    case K::address: return "address";
    case K::vector: return "vector";
    case K::list: return "list";
    case K::pair: return "pair";
    case K::sink: return "sink";
    case K::generic: return "generic";
  }
  return "sink";
}

std::string int_literal(std::int64_t v) {
  // The most negative value has no literal of its own.
  if (v == INT64_MIN) return "INT64_MIN";
  return std::to_string(v);
}

// The factory call that rebuilds `op`, where one does exactly.
std::optional<std::string> factory(const ptx::Operand& op) {
  using K = ptx::Operand::Kind;
  using O = ptx::Operand;
  std::string call;
  O rebuilt;
  switch (op.kind) {
    case K::reg:
      rebuilt = O::reg(op.text, op.negated);
      call = "ptx::Operand::reg(" + cpp_string(op.text) + (op.negated ? ", true)" : ")");
      break;
    case K::sreg: rebuilt = O::sreg(op.text), call = "ptx::Operand::sreg(" + cpp_string(op.text) + ")"; break;
    case K::imm_int:
    case K::imm_float:
      rebuilt = O::imm_text(op.kind, op.text);
      call = "ptx::Operand::imm_text(" + literal(op.kind) + ", " + cpp_string(op.text) + ")";
      break;
    case K::symbol: rebuilt = O::symbol(op.text), call = "ptx::Operand::symbol(" + cpp_string(op.text) + ")"; break;
    case K::label: rebuilt = O::label(op.text), call = "ptx::Operand::label(" + cpp_string(op.text) + ")"; break;
    case K::string: rebuilt = O::string(op.text), call = "ptx::Operand::string(" + cpp_string(op.text) + ")"; break;
    case K::sink: rebuilt = O::sink(), call = "ptx::Operand::sink()"; break;
    case K::vector: rebuilt = O::vector(op.elems), call = "ptx::Operand::vector(" + braced(op.elems) + ")"; break;
    case K::list: rebuilt = O::list(op.elems), call = "ptx::Operand::list(" + braced(op.elems) + ")"; break;
    case K::pair:
      if (op.elems.size() != 2) return std::nullopt;
      rebuilt = O::pair(op.elems[0], op.elems[1]);
      call = "ptx::Operand::pair(" + literal(op.elems[0]) + ", " + literal(op.elems[1]) + ")";
      break;
    case K::address:
    case K::generic:
      if (op.elems.size() != 1) return std::nullopt;
      rebuilt = op.kind == K::address ? O::address(op.elems[0], op.offset) : O::generic(op.elems[0], op.offset);
      call = std::string("ptx::Operand::") + (op.kind == K::address ? "address(" : "generic(") +
             literal(op.elems[0]) + (op.offset ? ", " + int_literal(op.offset) : "") + ")";
      break;
  }
  if (!(rebuilt == op)) return std::nullopt;
  return call;
}

std::string initializer_literal(const ptx::Initializer& init) {
  if (init.value) return "ptx::Initializer{.value = " + literal(*init.value) + "}";
  std::string out = "ptx::Initializer{.elements = {";
  for (std::size_t i = 0; i < init.elements.size(); ++i)
    out += (i ? ", " : "") + initializer_literal(init.elements[i]);
  return out + "}}";
}

std::string prototype_literal(const ptx::CallPrototype& p) {
  std::string out = "ptx::CallPrototype{";
  std::string sep;
  if (!p.returns.empty()) out += ".returns = " + braced(p.returns), sep = ", ";
  if (!p.params.empty()) out += sep + ".params = " + braced(p.params), sep = ", ";
  if (p.noreturn) out += sep + ".noreturn = true";
  return out + "}";
}

// Designated initializers list only the fields that differ from the default.
class Fields {
 public:
  explicit Fields(std::string type) : out_(std::move(type) + "{") {}
  void add(const std::string& name, const std::string& value) {
    out_ += (first_ ? "." : ", .") + name + " = " + value;
    first_ = false;
  }
  std::string done() { return out_ + "}"; }

 private:
  std::string out_;
  bool first_ = true;
};

std::string strings_literal(const std::vector<std::string>& v) {
  std::string out = "{";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + cpp_string(v[i]);
  return out + "}";
}

}  // namespace

std::string literal(ptx::Type t) { return "ptx::Type::" + std::string(ptx::name(t)); }

std::string literal(ptx::Space s) {
  // `const` is a keyword: the enumerator is const_.
  return "ptx::Space::" + std::string(ptx::name(s)) + (s == ptx::Space::const_ ? "_" : "");
}

std::string literal(ptx::Linkage l) {
  switch (l) {
    case ptx::Linkage::none: return "ptx::Linkage::none";
    case ptx::Linkage::visible: return "ptx::Linkage::visible";
    case ptx::Linkage::extern_: return "ptx::Linkage::extern_";
    case ptx::Linkage::weak: return "ptx::Linkage::weak";
    case ptx::Linkage::common: return "ptx::Linkage::common";
  }
  return "ptx::Linkage::none";
}

std::string literal(ptx::Operand::Kind k) { return "ptx::Operand::Kind::" + kind_literal(k); }

std::string literal(const ptx::Operand& op) {
  if (auto f = factory(op)) return *f;
  Fields f("ptx::Operand");
  f.add("kind", literal(op.kind));
  if (!op.text.empty()) f.add("text", cpp_string(op.text));
  if (op.negated) f.add("negated", "true");
  if (op.offset) f.add("offset", int_literal(op.offset));
  if (!op.elems.empty()) f.add("elems", braced(op.elems));
  if (op.explicit_zero_offset) f.add("explicit_zero_offset", "true");
  return f.done();
}

std::string literal(const ptx::Variable& v) {
  const ptx::Variable d;
  Fields f("ptx::Variable");
  if (v.space != d.space) f.add("space", literal(v.space));
  if (v.linkage != d.linkage) f.add("linkage", literal(v.linkage));
  if (v.type != d.type) f.add("type", literal(v.type));
  if (!v.name.empty()) f.add("name", cpp_string(v.name));
  if (v.align) f.add("align", std::to_string(v.align));
  if (v.vector_width) f.add("vector_width", std::to_string(v.vector_width));
  if (v.range) f.add("range", std::to_string(*v.range));
  if (!v.dims.empty()) {
    std::string dims = "{";
    for (std::size_t i = 0; i < v.dims.size(); ++i)
      dims += (i ? ", " : "") + (v.dims[i] ? "std::optional<std::int64_t>(" + int_literal(*v.dims[i]) + ")"
                                           : std::string("std::nullopt"));
    f.add("dims", dims + "}");
  }
  if (v.init) f.add("init", initializer_literal(*v.init));
  if (v.ptr) f.add("ptr", "true");
  if (v.ptr_space) f.add("ptr_space", literal(*v.ptr_space));
  if (v.ptr_align) f.add("ptr_align", std::to_string(v.ptr_align));
  if (!v.attributes.empty()) f.add("attributes", strings_literal(v.attributes));
  return f.done();
}

std::string literal(const ptx::Directive& d) {
  Fields f("ptx::Directive");
  f.add("name", cpp_string(d.name));
  if (!d.args.empty()) f.add("args", braced(d.args));
  if (d.comma_separated) f.add("comma_separated", "true");
  if (d.semicolon) f.add("semicolon", "true");
  if (!d.comma_before.empty()) {
    std::string list = "{";
    for (std::size_t i = 0; i < d.comma_before.size(); ++i) list += (i ? ", " : "") + std::to_string(d.comma_before[i]);
    f.add("comma_before", list + "}");
  }
  if (d.prototype) f.add("prototype", prototype_literal(*d.prototype));
  return f.done();
}

std::string literal(ptx::Opcode op) {
  return "ptx::Opcode::" + std::string(ptx::enumerator(op));
}

std::string literal(ptx::Mod m) {
  if (const auto t = ptx::type_of(m)) return "ptx::mod(" + literal(*t) + ")";
  if (const auto shape = ptx::wgmma_shape_of(m))
    return "*ptx::wgmma_shape(" + std::to_string(shape->n) + ", " + std::to_string(shape->k) + ")";
  return "ptx::Mod::" + std::string(ptx::enumerator(m));
}

std::string literal(const ptx::Instruction& inst) {
  Fields f("ptx::Instruction");
  f.add("opcode", literal(inst.opcode));
  if (!inst.modifiers.empty()) f.add("modifiers", braced(inst.modifiers));
  if (!inst.operands.empty()) f.add("operands", braced(inst.operands));
  if (inst.guard)
    f.add("guard", "ptx::Guard{" + cpp_string(inst.guard->pred) + (inst.guard->negated ? ", true}" : "}"));
  return f.done();
}

std::string literal(const ptx::Statement& s) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, ptx::Label>) return "ptx::Label{" + cpp_string(v.name) + "}";
        else if constexpr (std::is_same_v<T, ptx::Block>) return "ptx::Block{" + braced(v.body) + "}";
        else return literal(v);
      },
      s);
}

std::string literal(const ptx::Function& fn) {
  const ptx::Function d;
  Fields f("ptx::Function");
  if (fn.is_entry != d.is_entry) f.add("is_entry", fn.is_entry ? "true" : "false");
  if (fn.linkage != d.linkage) f.add("linkage", literal(fn.linkage));
  f.add("name", cpp_string(fn.name));
  if (!fn.returns.empty()) f.add("returns", braced(fn.returns));
  if (!fn.params.empty()) f.add("params", braced(fn.params));
  if (!fn.directives.empty()) f.add("directives", braced(fn.directives));
  if (fn.body) f.add("body", "ptx::Block{" + braced(fn.body->body) + "}");
  return f.done();
}

std::string literal(const ptx::Section::Line& l) {
  Fields f("ptx::Section::Line");
  if (l.label) f.add("label", cpp_string(*l.label));
  if (l.type != ptx::Type::b8) f.add("type", literal(l.type));
  if (!l.values.empty()) f.add("values", braced(l.values));
  return f.done();
}

std::optional<std::string> decimal_literal(const ptx::Operand& op) {
  const std::string& t = op.text;
  const std::size_t sign = !t.empty() && t[0] == '-', digits = t.size() - sign;
  // 18 digits: within int64 whatever they are.
  if (digits == 0 || digits > 18 || (digits > 1 && t[sign] == '0')) return std::nullopt;
  for (std::size_t i = sign; i < t.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return std::nullopt;
  if (t == "-0" || literal(op) != literal(ptx::Operand::imm_text(ptx::Operand::Kind::imm_int, t)))
    return std::nullopt;
  return t;
}

}  // namespace warpforge::transpiler
