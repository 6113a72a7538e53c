#include "transpiler/function_writer.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "transpiler/cpp_names.hpp"
#include "transpiler/ir_literal.hpp"
#include "transpiler/operand_code.hpp"
#include "transpiler/wrappers.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::transpiler {

const char* const kLocHelper =
    "// .loc file line column: the PTX source position of what follows.\n"
    "void loc(Kernel& k, int file, int line, int column) {\n"
    "  k.statement(ptx::Directive{.name = \"loc\", .args = "
    "{ptx::Operand::imm_text(ptx::Operand::Kind::imm_int, "
    "std::to_string(file)),\n"
    "                                                  "
    "ptx::Operand::imm_text(ptx::Operand::Kind::imm_int, "
    "std::to_string(line)),\n"
    "                                                  "
    "ptx::Operand::imm_text(ptx::Operand::Kind::imm_int, "
    "std::to_string(column))}});\n"
    "}\n";

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

void collect_label_operands(const ptx::Operand& op, std::set<std::string>& used) {
  if (op.kind == ptx::Operand::Kind::label) used.insert(op.text);
  for (const auto& e : op.elems) collect_label_operands(e, used);
}

// The labels placed in `b` in order of first placement, and those that an
// instruction names (a branch target, a brx.idx table entry).
void collect_labels(const ptx::Block& b, std::vector<std::string>& order,
                    std::set<std::string>& placed, std::set<std::string>& used) {
  for (const auto& s : b.body) {
    if (const auto* l = std::get_if<ptx::Label>(&s)) {
      if (placed.insert(l->name).second) order.push_back(l->name);
    } else if (const auto* nested = std::get_if<ptx::Block>(&s)) {
      collect_labels(*nested, order, placed, used);
    } else if (const auto* inst = std::get_if<ptx::Instruction>(&s)) {
      for (const auto& op : inst->operands) collect_label_operands(op, used);
    }
  }
}

// The DSL's calls for the performance directives, where one writes `d` exactly
// (KernelCore::maxntid and friends write three comma-separated decimals, or one).
std::optional<std::string> directive_call(const ptx::Directive& d, ptx::Target target) {
  static const std::map<std::string, std::size_t> kArgs = {{"maxntid", 3}, {"reqntid", 3}, {"reqnctapercluster", 3},
                                                           {"minnctapersm", 1}, {"maxnreg", 1}, {"explicitcluster", 0}};
  auto it = kArgs.find(d.name);
  if (it == kArgs.end()) return std::nullopt;
  // These two are refused below sm_90 (KernelCore::require).
  if ((d.name == "explicitcluster" || d.name == "reqnctapercluster") && ptx::sm_number(target) < 90) return std::nullopt;
  ptx::Directive rebuilt{.name = d.name, .comma_separated = it->second > 1};
  std::string call = "k." + d.name + "(";
  for (std::size_t i = 0; i < d.args.size() && i < it->second; ++i) {
    const auto& a = d.args[i];
    if (a.kind != ptx::Operand::Kind::imm_int || a.text.empty() || a.text.size() > 10 ||
        !std::all_of(a.text.begin(), a.text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return std::nullopt;
    std::uint64_t v = std::stoull(a.text);
    if (v > UINT32_MAX) return std::nullopt;
    rebuilt.args.push_back(ptx::Operand::imm_u(v));
    call += (i ? ", " : "") + a.text;
  }
  if (!(rebuilt == d)) return std::nullopt;
  return call + ");";
}

class BodyWriter {
 public:
  BodyWriter(Scope& scope, OperandWriter& ops) : scope_(scope), ops_(ops) {}

  void write(const std::vector<ptx::Statement>& body, const std::string& indent, std::string& out) {
    std::vector<Code> run;
    for (const auto& s : body) {
      if (const auto* nested = std::get_if<ptx::Block>(&s)) {
        write_folded(run, indent, out);
        run.clear();
        out += indent + "k.scope([&] {\n";
        scope_.open();
        write(nested->body, indent + "  ", out);
        scope_.close();
        out += indent + "});\n";
      } else if (const auto* v = std::get_if<ptx::Variable>(&s)) {
        run.push_back(declaration(*v));
      } else if (const auto* l = std::get_if<ptx::Label>(&s)) {
        // Sibling blocks may each place the same name (Triton's waitLoop):
        // one handle serves them all, placed in each scope. A label no
        // instruction names (the -G builds' $L__tmp<n>, which only the debug
        // sections use) needs no handle.
        auto handle = scope_.labels.find(l->name);
        run.push_back(
            Code("k.place(" +
                 (handle != scope_.labels.end() ? handle->second
                                                : "k.label_named(" + cpp_string(l->name) + ")") +
                 ");"));
      } else if (const auto* d = std::get_if<ptx::Directive>(&s)) {
        run.push_back(directive(*d));
      } else {
        run.push_back(instruction(std::get<ptx::Instruction>(s)));
      }
    }
    write_folded(run, indent, out);
  }

 private:
  // `.loc file line column` (nvcc's line information, one before nearly
  // every instruction of a -G build) as loc(k, 1, 48, 0); any other
  // directive as its IR value.
  Code directive(const ptx::Directive& d) {
    std::vector<std::string> args;
    for (const auto& a : d.args)
      if (auto v = decimal_literal(a)) args.push_back(*v);
    if (d.name != "loc" || d.args.size() != 3 || args.size() != 3 ||
        literal(d) != literal(ptx::Directive{.name = "loc", .args = d.args}))
      return Code("k.statement(" + literal(d) + ");");
    uses_loc = true;
    return Code("loc(k, " + args[0] + ", " + args[1] + ", " + args[2] + ");");
  }

  Code declaration(const ptx::Variable& v) {
    // What declare_reg(s)/declare_pred(s) write; anything more is written as IR.
    const bool simple = ptx::Variable{.space = ptx::Space::reg, .type = v.type, .name = v.name, .range = v.range} == v &&
                        (!v.range || *v.range > 0);
    if (!simple) return Code("k.statement(" + literal(v) + ");");
    std::string cpp = scope_.names.claim(v.name, v.type == ptx::Type::pred ? "p" : "r");
    std::string name = cpp_string(v.name);
    std::string handle, call;
    if (v.range) {
      scope_.add_range(v.name, *v.range, v.type, cpp);
      std::string count = std::to_string(*v.range);
      handle = (v.type == ptx::Type::pred ? "std::vector<Pred> " : "Regs ") + cpp + " = ";
      call = v.type == ptx::Type::pred ? "k.declare_preds(" + name + ", " + count + ");"
                                       : "k.declare_regs(" + dsl_type(v.type) + ", " + name + ", " + count + ");";
    } else {
      scope_.add_scalar(v.name, v.type, cpp);
      handle = (v.type == ptx::Type::pred ? "Pred " : "Reg ") + cpp + " = ";
      call = v.type == ptx::Type::pred ? "k.declare_pred(" + name + ");"
                                       : "k.declare_reg(" + dsl_type(v.type) + ", " + name + ");";
    }
    declared_.push_back({cpp, handle + call, call});
    return Code(handle + call);
  }

  // k.inst("opcode", args...), where the DSL's operand-count and target
  // checks and opcode splitting accept it.
  std::optional<Code> inst_call(const ptx::Instruction& inst) {
    const ptx::OpcodeInfo& known = ptx::info(inst.opcode);
    const int n = static_cast<int>(inst.operands.size());
    if (n < known.arity.min || n > known.arity.max || !known.availability.has(ops_.target()))
      return std::nullopt;
    Code call("k.inst(" + cpp_string(inst.full_opcode()));
    for (const auto& op : inst.operands) call += Code(", ") + ops_.arg(op);
    return call + Code(");");
  }

  // k.emit(ptx::Instruction{...}) with the operands as expressions: always exact.
  Code emit_call(const ptx::Instruction& inst) {
    Code out("k.emit(ptx::Instruction{.opcode = " + literal(inst.opcode));
    if (!inst.modifiers.empty()) out += Code(", .modifiers = " + braced(inst.modifiers));
    if (!inst.operands.empty()) {
      std::vector<Code> parts;
      for (const auto& op : inst.operands) parts.push_back(ops_.expr(op));
      out += Code(", .operands = {") + join(parts) + Code("}");
    }
    if (inst.guard)
      out += Code(", .guard = ptx::Guard{" + cpp_string(inst.guard->pred) + (inst.guard->negated ? ", true}" : "}"));
    return out + Code("});");
  }

  Code instruction(const ptx::Instruction& inst) {
    if (inst.opcode == ptx::Opcode::bra) {
      if (auto w = wrapper_call(inst, ops_)) return *w;
    }
    ptx::Instruction bare = inst;
    bare.guard.reset();
    std::optional<Code> call = wrapper_call(bare, ops_);
    if (!call) call = inst_call(bare);
    if (!inst.guard) return call ? *call : emit_call(inst);
    auto p = ops_.pred_use(ptx::Operand::reg(inst.guard->pred, inst.guard->negated));
    if (!call || !p) return emit_call(inst);
    return Code("k.guarded(") + *p + Code(", [&] { ") + *call + Code(" });");
  }

  Scope& scope_;
  OperandWriter& ops_;

 public:
  // Each handle declared, with its declaration with and without the handle.
  struct Declared {
    std::string cpp, with_handle, without_handle;
  };
  std::vector<Declared> declared_;
  bool uses_loc = false;
};

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether the identifier `word` occurs in `text` outside [skip_from, skip_to)
// and outside string literals (which hold the PTX names).
bool used_elsewhere(const std::string& text, const std::string& word, std::size_t skip_from, std::size_t skip_to) {
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      ++i;
    } else if (is_word_char(text[i])) {
      std::size_t start = i;
      while (i < text.size() && is_word_char(text[i])) ++i;
      if ((start < skip_from || start >= skip_to) && text.compare(start, i - start, word) == 0 && i - start == word.size())
        return true;
    } else {
      ++i;
    }
  }
  return false;
}

// Registers the body never names keep their declaration but get no handle,
// which would be an unused variable.
void drop_unused_handles(std::string& body, const std::vector<BodyWriter::Declared>& declared) {
  for (const auto& d : declared) {
    std::size_t at = body.find(d.with_handle);
    if (at == std::string::npos || used_elsewhere(body, d.cpp, at, at + d.with_handle.size())) continue;
    body.replace(at, d.with_handle.size(), d.without_handle);
  }
}

// Whether `line` begins a statement of the function's outermost block (the
// lines of a loop or a scope are indented further, and their closing lines
// begin with `}`).
bool starts_outer_statement(const std::string& line) {
  return line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ' && line[2] != '}';
}

bool declares_handle(const std::string& line) {
  for (const char* type : {"  Regs ", "  Reg ", "  Pred ", "  std::vector<Pred> "})
    if (line.rfind(type, 0) == 0) return true;
  return false;
}

// A body of more than kPartSize outermost statements, in parts of at most
// that many, each a lambda called where it stands; declarations of handles
// stay outside, where every later part sees them. GCC's time on one function
// grows faster than its length, even at -O0 (docs/TRANSPILER.md has the
// measurements).
std::string in_parts(const std::string& body) {
  constexpr int kPartSize = 100;
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < body.size();) {
    std::size_t end = body.find('\n', at);
    lines.push_back(body.substr(at, end - at));
    at = end + 1;
  }
  if (std::count_if(lines.begin(), lines.end(), starts_outer_statement) <= kPartSize) return body;
  std::string out, part;
  int statements = 0;
  auto close_part = [&] {
    if (statements > 0) out += "  [&] {\n" + part + "  }();\n";
    part.clear();
    statements = 0;
  };
  for (const auto& line : lines) {
    if (declares_handle(line)) {
      close_part();
      out += line + "\n";
      continue;
    }
    if (starts_outer_statement(line) && statements == kPartSize) close_part();
    statements += starts_outer_statement(line);
    part += "  " + line + "\n";
  }
  close_part();
  return out;
}

bool ends_with_ret(const ptx::Block& b) {
  if (b.body.empty()) return false;
  const auto* inst = std::get_if<ptx::Instruction>(&b.body.back());
  return inst && inst->opcode == ptx::Opcode::ret && !inst->guard;
}

}  // namespace

FunctionSource write_function(const ptx::Function& f, ptx::Target dsl_target, const std::string& cpp_name) {
  Scope scope;
  OperandWriter ops(scope, dsl_target);
  std::string head, body;

  std::vector<std::string> label_order;
  std::set<std::string> placed, named;
  collect_labels(*f.body, label_order, placed, named);
  for (const auto& l : label_order) {
    if (!named.count(l)) continue;
    scope.labels[l] = scope.names.claim(l, "L");
    head += "  Label " + scope.labels[l] + " = k.label_named(" + cpp_string(l) + ");\n";
  }
  // nvcc names parameters <function>_param_<n>; the handles drop the function part.
  for (const auto& p : f.params) {
    std::string hint = p.name;
    if (hint.size() > f.name.size() + 1 && hint.compare(0, f.name.size() + 1, f.name + "_") == 0)
      hint = hint.substr(f.name.size() + 1);
    scope.params[p.name] = scope.names.claim(hint, "param");
  }

  std::vector<std::string> directive_calls;
  for (const auto& d : f.directives) {
    auto call = directive_call(d, dsl_target);
    if (!call) {
      directive_calls.clear();
      break;
    }
    directive_calls.push_back(*call);
  }
  const bool directives_by_dsl = directive_calls.size() == f.directives.size();

  BodyWriter writer(scope, ops);
  writer.write(f.body->body, "  ", body);
  drop_unused_handles(body, writer.declared_);
  body = in_parts(body);

  std::string out = "// " + std::string(f.is_entry ? ".entry " : ".func ") + f.name + "\n";
  out += "ptx::Function " + cpp_name + "() {\n";
  // The Kernel's name must be an identifier; others are set on the result.
  const bool name_by_dsl = is_identifier(f.name);
  out += "  Kernel k(" + cpp_string(name_by_dsl ? f.name : "imported") + ", Target::" +
         std::string(ptx::name(dsl_target)) + ");\n";
  if (directives_by_dsl)
    for (const auto& c : directive_calls) out += "  " + c + "\n";
  for (const auto& p : f.params)
    if (ops.used_params().count(p.name))
      out += "  const ParamRef " + scope.params[p.name] + "{" + cpp_string(p.name) + "};\n";
  out += head + body;
  out += "  ptx::Function fn = k.function();\n";
  if (!ends_with_ret(*f.body))
    out +=
        "  fn.body->body.pop_back();  // k.function() closes the body with ret; this one has "
        "none\n";
  if (!name_by_dsl) out += "  fn.name = " + cpp_string(f.name) + ";\n";
  if (!f.is_entry) out += "  fn.is_entry = false;\n";
  if (f.linkage != ptx::Linkage::visible) out += "  fn.linkage = " + literal(f.linkage) + ";\n";
  if (!f.returns.empty()) out += "  fn.returns = " + braced(f.returns) + ";\n";
  if (!f.params.empty()) {
    out += "  fn.params = {\n";
    for (const auto& p : f.params) out += "      " + literal(p) + ",\n";
    out += "  };\n";
  }
  if (!directives_by_dsl) out += "  fn.directives = " + braced(f.directives) + ";\n";
  out += "  return fn;\n}\n";
  return {out, ops.used_slice(), writer.uses_loc};
}

}  // namespace warpforge::transpiler
