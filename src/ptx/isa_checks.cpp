#include "isa_checks.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "isa_catalogue.hpp"
#include "warpforge/ptx/scopes.hpp"
#include "warpforge/ptx/vocabulary.hpp"

namespace warpforge::ptx {
namespace {

std::string version_text(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

bool before(PtxVersion a, int major, int minor) {
  return a.major > major || (a.major == major && a.minor > minor);
}

// "sm_90a" -> 90 and 'a' ('\0' without a suffix); nothing for other names.
struct Sm {
  int number = 0;
  char suffix = '\0';
};
std::optional<Sm> sm_of(std::string_view target) {
  if (!target.starts_with("sm_")) return std::nullopt;
  Sm sm;
  const char* end = target.data() + target.size();
  const auto [stop, error] = std::from_chars(target.data() + 3, end, sm.number);
  if (error != std::errc() || end - stop > 1) return std::nullopt;
  if (stop != end) sm.suffix = *stop;
  return sm;
}

// The targets that have an instruction, in words: "sm_80 or later", "sm_90a".
std::string targets_text(const Availability& a) {
  const std::string first = "sm_" + std::to_string(a.min_sm) + (a.needs_arch_specific ? "a" : "");
  if (a.max_sm == a.min_sm) return first;
  if (a.needs_arch_specific) return first + " or a later architecture- or family-specific target";
  return first + " or later";
}

// What operands an instruction's one type modifier describes (PTX ISA 9.7,
// each instruction's syntax): all, the listed positions, or the relaxed
// rules of ld, st and cvt (PTX ISA 6.4 "Operand Size Exceeding
// Instruction-Type Size": a data register may be wider than the type).
struct TypedOperands {
  enum class Rule { exact, relaxed } rule = Rule::exact;
  std::vector<int> positions;  // empty: every operand
};

std::optional<TypedOperands> typed_operands(const Instruction& inst) {
  using R = TypedOperands::Rule;
  using O = Opcode;
  switch (inst.opcode) {
    case O::add: case O::sub: case O::min: case O::max: case O::and_: case O::or_:
    case O::xor_: case O::not_: case O::cnot: case O::neg: case O::abs: case O::rem:
    case O::div: case O::fma: case O::rcp: case O::sqrt: case O::rsqrt: case O::ex2:
    case O::lg2: case O::sin: case O::cos: case O::tanh: case O::brev: case O::mov:
    case O::prmt: case O::lop3:
      return TypedOperands{};
    case O::mul:
    case O::mad:  // .wide: d (and mad's c) twice as wide as a and b
      return inst.has(Mod::wide) ? TypedOperands{R::exact, {1, 2}} : TypedOperands{};
    case O::shl: case O::shr: case O::bfe:
      return TypedOperands{R::exact, {0, 1}};  // b, c: u32
    case O::bfi: case O::selp:
      return TypedOperands{R::exact, {0, 1, 2}};  // c (, d): u32 / pred
    case O::setp:
      return TypedOperands{R::exact, {1, 2}};  // d: pred
    case O::popc: case O::clz:
      return TypedOperands{R::exact, {1}};  // d: u32
    case O::ld: case O::ldu:
      return TypedOperands{R::relaxed, {0}};
    case O::st:
      return TypedOperands{R::relaxed, {1}};
    default:
      return std::nullopt;
  }
}

// PTX ISA 6.1: a bit-size type is compatible with every type of its size,
// integer types of one size with each other, and a float type only with
// itself. Under the relaxed rules a register may also be wider.
bool compatible(Type inst, Type reg, TypedOperands::Rule rule) {
  if (inst == reg) return true;
  if (inst == Type::pred || reg == Type::pred) return false;
  if (rule == TypedOperands::Rule::relaxed) return bits(reg) >= bits(inst);
  if (bits(inst) != bits(reg)) return false;
  return is_bits(inst) || is_bits(reg) || (is_integer(inst) && is_integer(reg));
}

std::string accepted_registers(Type inst, TypedOperands::Rule rule) {
  const std::string size = std::to_string(bits(inst));
  if (inst == Type::pred) return "a .pred register";
  if (rule == TypedOperands::Rule::relaxed) return "a register of at least " + size + " bits";
  if (is_bits(inst)) return "a " + size + "-bit register";
  if (is_integer(inst)) return "a " + size + "-bit .b, .u or .s register";
  return "a ." + std::string(name(inst)) + " or .b" + size + " register";
}

class InstructionChecks {
 public:
  InstructionChecks(const Module& m, const Function& f, std::vector<std::string>& problems)
      : function_(f), problems_(problems) {
    if (!m.target.empty()) sm_ = sm_of(m.target.front());
    if (sm_) target_ = m.target.front();
    for (const auto* list : {&f.params, &f.returns})
      for (const Variable& v : *list)
        if (v.space == Space::reg) declare(v);
  }

  void block(const Block& b) {
    for (const auto& s : b.body) {
      if (const auto* v = std::get_if<Variable>(&s); v && v->space == Space::reg) declare(*v);
      if (const auto* inst = std::get_if<Instruction>(&s)) instruction(*inst);
      if (const auto* nested = std::get_if<Block>(&s)) block(*nested);
    }
  }

 private:
  void problem(const std::string& what) { problems_.push_back("function " + function_.name + ": " + what); }

  void declare(const Variable& v) {
    if (v.vector_width != 0 || !v.dims.empty()) return;  // vectors and arrays: not type-checked
    if (v.range)
      ranges_.push_back({v.name, *v.range, v.type});
    else
      scalars_[v.name] = v.type;
  }

  std::optional<Type> type_of(const std::string& reg) const {
    if (auto it = scalars_.find(reg); it != scalars_.end()) return it->second;
    for (const auto& r : ranges_)
      if (range_index(reg, r.prefix, r.count)) return r.type;
    return std::nullopt;  // undeclared: the scope check reports it
  }

  void instruction(const Instruction& inst) {
    // Every opcode of the IR is the vocabulary's (the parser refuses others).
    const Availability& a = info(inst.opcode).availability;
    if (sm_ && (sm_->number < a.min_sm || sm_->number > a.max_sm ||
                (a.needs_arch_specific && sm_->suffix != 'a' && sm_->suffix != 'f')))
      problem(inst.full_opcode() + ": " + std::string(name(inst.opcode)) + " needs " + targets_text(a) +
              "; the module's .target is " + target_);
    operand_types(inst);
  }

  void operand_types(const Instruction& inst) {
    const std::vector<Type> types = inst.types();
    if (inst.opcode == Opcode::cvt) {
      // cvt.dtype.atype d, a; the packing forms (d, a, b) are left to ptxas.
      if (types.size() == 2 && inst.operands.size() == 2)
        for (int i : {0, 1}) check_operand(inst, i, inst.operands[i], types[i], TypedOperands::Rule::relaxed);
      return;
    }
    const auto typed = typed_operands(inst);
    if (!typed || types.size() != 1) return;
    for (int i = 0; i < static_cast<int>(inst.operands.size()); ++i) {
      if (!typed->positions.empty() &&
          std::find(typed->positions.begin(), typed->positions.end(), i) == typed->positions.end())
        continue;
      const Operand& op = inst.operands[i];
      if (op.kind == Operand::Kind::vector && typed->rule == TypedOperands::Rule::relaxed) {
        for (const Operand& e : op.elems) check_operand(inst, i, e, types[0], typed->rule);
      } else {
        check_operand(inst, i, op, types[0], typed->rule);
      }
    }
  }

  void check_operand(const Instruction& inst, int position, const Operand& op, Type want,
                     TypedOperands::Rule rule) {
    if (op.kind != Operand::Kind::reg) return;
    const auto type = type_of(op.text);
    if (!type || compatible(want, *type, rule)) return;
    problem(inst.full_opcode() + " operand " + std::to_string(position + 1) + " is " + op.text +
            ", a ." + std::string(name(*type)) + " register; its type ." +
            std::string(name(want)) + " takes " + accepted_registers(want, rule) +
            " (PTX ISA 6.1)");
  }

  struct Range {
    std::string prefix;
    int count;
    Type type;
  };

  const Function& function_;
  std::vector<std::string>& problems_;
  std::optional<Sm> sm_;
  std::string target_;
  std::map<std::string, Type, std::less<>> scalars_;
  std::vector<Range> ranges_;
};

}  // namespace

void check_header(const Module& m, std::vector<std::string>& problems) {
  const std::string version = version_text(m.version_major, m.version_minor);
  if (!is_isa_version(m.version_major, m.version_minor))
    problems.push_back(".version " + version + " is no PTX ISA version; the published ones are " +
                       isa_versions());
  for (std::size_t i = 0; i < m.target.size(); ++i) {
    const std::string& t = m.target[i];
    if (is_target_option(t)) {
      if (i == 0)
        problems.push_back(".target " + t + " is an option; name the architecture first (e.g. .target sm_80, " + t + ")");
      continue;
    }
    const auto first = first_version_with_target(t);
    if (!first)
      problems.push_back(".target " + t +
                         " is no target of the PTX ISA; accepted: sm_XX names such as sm_80, "
                         "sm_90a or sm_100a, then the options debug, map_f64_to_f32, "
                         "texmode_unified, texmode_independent");
    else if (before(*first, m.version_major, m.version_minor))
      problems.push_back(".target " + t + " needs .version " + version_text(first->major, first->minor) +
                         " or later; the module has .version " + version);
  }
}

void check_instructions(const Module& m, const Function& f, const Block& unique_body,
                        std::vector<std::string>& problems) {
  InstructionChecks(m, f, problems).block(unique_body);
}

}  // namespace warpforge::ptx
