#include "warpforge/ptx/emitter.hpp"

#include <sstream>

namespace warpforge::ptx {
namespace {

std::string join_operands(const std::vector<Operand>& ops, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i) out += sep;
    out += to_string(ops[i]);
  }
  return out;
}

std::string emit_initializer(const Initializer& init) {
  if (init.value) return to_string(*init.value);
  std::string out = "{";
  for (std::size_t i = 0; i < init.elements.size(); ++i) {
    if (i) out += ", ";
    out += emit_initializer(init.elements[i]);
  }
  return out + "}";
}

std::string param_list(const std::vector<Variable>& params, bool multiline);

std::string directive_args(const Directive& d) {
  if (d.comma_before.empty()) return join_operands(d.args, d.comma_separated ? ", " : " ");
  std::string out;
  std::size_t next_comma = 0;
  for (std::size_t i = 0; i < d.args.size(); ++i) {
    bool comma = next_comma < d.comma_before.size() && d.comma_before[next_comma] == i;
    if (comma) ++next_comma;
    if (i) out += comma ? ", " : " ";
    out += to_string(d.args[i]);
  }
  return out;
}

std::string emit_directive(const Directive& d) {
  std::string out = "." + d.name;
  if (d.prototype) {  // PTX ISA 11.3.3: .callprototype [(returns)] _ (params) [.noreturn]
    if (!d.prototype->returns.empty()) out += " " + param_list(d.prototype->returns, false);
    out += " _ " + param_list(d.prototype->params, false);
    if (d.prototype->noreturn) out += " .noreturn";
  }
  if (!d.args.empty()) out += " " + directive_args(d);
  if (d.semicolon) out += ";";
  return out;
}

class BodyWriter {
 public:
  explicit BodyWriter(std::ostringstream& out) : out_(out) {}

  void block(const Block& b, int depth) {
    for (const auto& s : b.body) statement(s, depth);
  }

 private:
  void indent(int depth) {
    for (int i = 0; i < depth; ++i) out_ << '\t';
  }

  void statement(const Statement& s, int depth) {
    if (const auto* inst = std::get_if<Instruction>(&s)) {
      indent(depth);
      out_ << emit(*inst) << '\n';
    } else if (const auto* label = std::get_if<Label>(&s)) {
      out_ << label->name << ":\n";
    } else if (const auto* var = std::get_if<Variable>(&s)) {
      indent(depth);
      out_ << emit(*var) << ";\n";
    } else if (const auto* dir = std::get_if<Directive>(&s)) {
      indent(depth);
      out_ << emit_directive(*dir) << '\n';
    } else if (const auto* nested = std::get_if<Block>(&s)) {
      indent(depth);
      out_ << "{\n";
      block(*nested, depth + 1);
      indent(depth);
      out_ << "}\n";
    }
  }

  std::ostringstream& out_;
};

std::string param_list(const std::vector<Variable>& params, bool multiline) {
  std::string out = "(";
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (multiline) out += "\n\t";
    out += emit(params[i]);
    if (i + 1 < params.size()) out += multiline ? "," : ", ";
  }
  if (multiline && !params.empty()) out += "\n";
  return out + ")";
}

}  // namespace

std::string emit(const Instruction& inst) {
  std::string out;
  if (inst.guard) out += "@" + std::string(inst.guard->negated ? "!" : "") + inst.guard->pred + " ";
  out += inst.full_opcode();
  if (!inst.operands.empty()) out += " " + join_operands(inst.operands, ", ");
  return out + ";";
}

std::string emit(const Variable& v) {
  std::string out;
  if (v.linkage != Linkage::none) out += "." + std::string(name(v.linkage)) + " ";
  out += "." + std::string(name(v.space));
  if (!v.attributes.empty()) {
    out += " .attribute(";
    for (std::size_t i = 0; i < v.attributes.size(); ++i) out += (i ? ", ." : ".") + v.attributes[i];
    out += ")";
  }
  if (v.align) out += " .align " + std::to_string(v.align);
  if (v.vector_width) out += " .v" + std::to_string(v.vector_width);
  out += " ." + std::string(name(v.type));
  if (v.ptr) {  // PTX ISA 5.1.6.4: `.param .type .ptr [.space] [.align N] name`
    out += " .ptr";
    if (v.ptr_space) out += " ." + std::string(name(*v.ptr_space));
    if (v.ptr_align) out += " .align " + std::to_string(v.ptr_align);
  }
  out += " " + v.name;
  if (v.range) out += "<" + std::to_string(*v.range) + ">";
  for (const auto& d : v.dims) out += d ? "[" + std::to_string(*d) + "]" : "[]";
  if (v.init) out += " = " + emit_initializer(*v.init);
  return out;
}

std::string emit(const Function& f) {
  std::ostringstream out;
  if (f.is_entry && f.linkage == Linkage::visible && f.body) out << "\t// .globl\t" << f.name << "\n";
  if (f.linkage != Linkage::none) out << "." << name(f.linkage) << " ";
  out << (f.is_entry ? ".entry " : ".func ");
  if (!f.is_entry && !f.returns.empty()) out << param_list(f.returns, false) << " ";
  out << f.name << param_list(f.params, true) << "\n";
  for (const auto& d : f.directives) out << emit_directive(d) << "\n";
  if (!f.body) {
    out << ";\n";
    return out.str();
  }
  out << "{\n";
  BodyWriter(out).block(*f.body, 1);
  out << "}\n";
  return out.str();
}

std::string emit(const Module& m) {
  std::ostringstream out;
  out << ".version " << m.version_major << "." << m.version_minor << "\n";
  out << ".target ";
  for (std::size_t i = 0; i < m.target.size(); ++i) out << (i ? ", " : "") << m.target[i];
  out << "\n.address_size " << m.address_size << "\n";
  for (const auto& item : m.items) {
    out << "\n";
    if (const auto* v = std::get_if<Variable>(&item)) {
      out << emit(*v) << ";\n";
    } else if (const auto* f = std::get_if<Function>(&item)) {
      out << emit(*f);
    } else if (const auto* d = std::get_if<Directive>(&item)) {
      out << emit_directive(*d) << "\n";
    } else if (const auto* s = std::get_if<Section>(&item)) {
      out << ".section " << s->name << "\n{\n";
      for (const auto& line : s->lines) {
        if (line.label) out << *line.label << ":\n";
        else out << "\t." << name(line.type) << " " << join_operands(line.values, ", ") << "\n";
      }
      out << "}\n";
    }
  }
  return out.str();
}

}  // namespace warpforge::ptx
