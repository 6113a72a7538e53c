#include "warpforge/dsl/kernel_core.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "warpforge/error.hpp"

namespace warpforge::dsl {
namespace {

// nvcc's register prefixes by declared type; declarations are written in this order.
constexpr std::array<std::pair<Type, std::string_view>, 7> kPrefixes = {{
    {Type::pred, "%p"}, {Type::b16, "%rs"}, {Type::b32, "%r"}, {Type::b64, "%rd"},
    {Type::f32, "%f"}, {Type::f64, "%fd"}, {Type::b128, "%rq"},
}};

std::string_view prefix_for(Type storage) {
  for (const auto& [t, p] : kPrefixes)
    if (t == storage) return p;
  return "%r";
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// True for names of the automatic form (%r12, %rd3 ...), which named registers may not take.
bool looks_automatic(const std::string& s) {
  for (const auto& [t, p] : kPrefixes) {
    std::string_view stem = p.substr(1);
    if (s.size() > stem.size() && s.compare(0, stem.size(), stem) == 0 &&
        std::all_of(s.begin() + static_cast<long>(stem.size()), s.end(),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return true;
  }
  return false;
}

bool compatible(Type reg, Type inst) {
  if (ptx::bits(reg) != ptx::bits(inst)) return false;
  if (reg == inst || ptx::is_bits(reg) || ptx::is_bits(inst)) return true;
  return ptx::is_integer(reg) && ptx::is_integer(inst);
}

}  // namespace

const std::string& Reg::name() const { return owner_->reg_name(id_); }
const std::string& Pred::name() const { return owner_->pred_name(id_); }

Reg Reg::as(Type t) const {
  Type storage = ptx::storage_type(type_);
  if (ptx::bits(t) != ptx::bits(type_) || (!ptx::is_bits(storage) && ptx::storage_type(t) != storage &&
                                          !ptx::is_bits(t)))
    owner_->fail("as", "register " + name() + " of type " + std::string(ptx::name(type_)) +
                           " cannot be read as " + std::string(ptx::name(t)) +
                           "; a view keeps the width and a register declared ." +
                           std::string(ptx::name(storage)) + " is read as ." +
                           std::string(ptx::name(storage)) + " or a bit type of that width");
  return Reg(owner_, id_, t);
}

KernelCore::KernelCore(std::string name, Target target) : name_(std::move(name)), target_(target) {
  if (!is_identifier(name_))
    throw DslError("kernel name '" + name_ +
                   "' is not a PTX identifier; use letters, digits and '_', not starting with a digit");
}

std::string KernelCore::claim_name(std::string name, std::optional<int> range) {
  if (!is_identifier(name) || looks_automatic(name))
    fail(".reg", "register name '" + name +
                     "' is not usable: it must be an identifier and not of the automatic form "
                     "(p, rs, r, rd, f, fd, rq followed by digits)");
  if (range && std::isdigit(static_cast<unsigned char>(name.back())))
    fail(".reg", "register array name '" + name +
                     "' ends with a digit; a %name<N> range needs a name that does not (%" + name +
                     "1 would be ambiguous)");
  // An array's elements are name + digits: named after an automatic prefix
  // (r, rd, f ...) they would be the automatic registers (%r0 ...) declared twice.
  if (range)
    for (const auto& [t, p] : kPrefixes)
      if (p.substr(1) == name)
        fail(".reg", "register array name '" + name + "' is an automatic prefix; its elements %" + name +
                         "0 ... would collide with the automatic registers");
  std::vector<std::string> names;
  if (range)
    for (int i = 0; i < *range; ++i) names.push_back("%" + name + std::to_string(i));
  names.push_back("%" + name);
  for (const auto& n : names)
    if (scopes_.back().names.count(n))
      fail(".reg", "register name '" + n + "' is already declared in this scope");
  for (const auto& n : names) declare_in_scope(n, {});
  return "%" + name;
}

std::string KernelCore::auto_name(Type storage) {
  std::string prefix(prefix_for(storage));
  auto it = std::find_if(auto_counts_.begin(), auto_counts_.end(),
                         [&](const auto& e) { return e.first == prefix; });
  if (it == auto_counts_.end()) {
    auto_counts_.emplace_back(prefix, 0);
    it = std::prev(auto_counts_.end());
  }
  std::string name = prefix + std::to_string(it->second++);
  // Automatic registers are declared at the top of the body, so an exact
  // declaration of the name in any open scope would hide them.
  for (const auto& scope : scopes_)
    if (scope.names.count(name))
      fail(".reg",
           "automatic register name '" + name +
               "' is already declared by an exact declaration; do not mix declare_regs with reg() "
               "for the same prefix");
  scopes_.front().names[name] = {};
  return name;
}

void KernelCore::claim_exact(const std::string& name, Holder holder) {
  if (name.empty()) fail(".reg", "an exact declaration needs a name");
  if (scopes_.back().names.count(name))
    fail(".reg", "register name '" + name + "' is already declared in this scope");
  declare_in_scope(name, holder);
}

void KernelCore::declare_in_scope(const std::string& name, Holder holder) {
  scopes_.back().names[name] = holder;
}

// The handle for a register or predicate whose name a scope holds: the
// innermost one that has it names this handle.
Reg KernelCore::new_reg(std::string name, Type type) {
  regs_.push_back({name, type});
  Holder h{Holder::Kind::reg, static_cast<std::uint32_t>(regs_.size() - 1)};
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
    if (auto it = scope->names.find(name); it != scope->names.end()) {
      it->second = h;
      break;
    }
  return Reg(this, h.id, type);
}

Pred KernelCore::new_pred(std::string name) {
  preds_.push_back(name);
  Holder h{Holder::Kind::pred, static_cast<std::uint32_t>(preds_.size() - 1)};
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope)
    if (auto it = scope->names.find(name); it != scope->names.end()) {
      it->second = h;
      break;
    }
  return Pred(this, h.id);
}

void KernelCore::declare_named(const std::string& name, Type storage, std::optional<int> range) {
  // In the function's scope they join the declarations at the top of the
  // body; in a nested scope they are declared where they are made.
  if (scopes_.size() == 1)
    named_decls_.push_back({name, storage, range});
  else
    body_.push_back(
        ptx::Variable{.space = Space::reg, .type = storage, .name = name, .range = range});
}

void KernelCore::check_visible(const std::string& name, Holder holder,
                               std::string_view what) const {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->names.find(name);
    if (it == scope->names.end()) continue;
    if (it->second.kind == holder.kind && it->second.id == holder.id) return;
    fail(what, std::string(what) + " " + name + " is hidden here by another declaration of " +
                   name +
                   " in an enclosing scope (PTX names the innermost); use it outside that scope or "
                   "give one of "
                   "them another name");
  }
  fail(what, std::string(what) + " " + name + " is used outside the scope that declared it");
}

Reg KernelCore::reg(Type type, std::string name) {
  if (type == Type::pred) fail(".reg", "a predicate is not a Reg; use pred()");
  Type storage = ptx::storage_type(type);
  std::string full;
  if (name.empty()) {
    full = auto_name(storage);
  } else {
    full = claim_name(std::move(name), std::nullopt);
    declare_named(full, storage, std::nullopt);
  }
  return new_reg(std::move(full), type);
}

Regs KernelCore::regs(Type type, int count, std::string name) {
  if (count <= 0) fail(".reg", "register array of " + std::to_string(count) + " elements; need at least 1");
  Regs out;
  if (name.empty()) {
    for (int i = 0; i < count; ++i) out.push_back(reg(type));
    return out;
  }
  if (type == Type::pred) fail(".reg", "a predicate is not a Reg; use pred()");
  Type storage = ptx::storage_type(type);
  std::string base = claim_name(std::move(name), count);
  declare_named(base, storage, count);
  for (int i = 0; i < count; ++i) out.push_back(new_reg(base + std::to_string(i), type));
  return out;
}

Pred KernelCore::pred(std::string name) {
  std::string full;
  if (name.empty()) {
    full = auto_name(Type::pred);
  } else {
    full = claim_name(std::move(name), std::nullopt);
    declare_named(full, Type::pred, std::nullopt);
  }
  return new_pred(std::move(full));
}

Reg KernelCore::declare_reg(Type type, std::string name) {
  if (type == Type::pred) fail(".reg", "a predicate is not a Reg; use declare_pred()");
  claim_exact(name, {});
  body_.push_back(ptx::Variable{.space = Space::reg, .type = type, .name = name});
  return new_reg(std::move(name), type);
}

Regs KernelCore::declare_regs(Type type, std::string prefix, int count) {
  if (type == Type::pred) fail(".reg", "predicates are not Regs; use declare_preds()");
  if (count <= 0) fail(".reg", prefix + "<" + std::to_string(count) + ">: need at least 1 register");
  claim_exact(prefix, {});
  for (int i = 0; i < count; ++i) claim_exact(prefix + std::to_string(i), {});
  Regs out;
  for (int i = 0; i < count; ++i) out.push_back(new_reg(prefix + std::to_string(i), type));
  body_.push_back(ptx::Variable{.space = Space::reg, .type = type, .name = std::move(prefix), .range = count});
  return out;
}

Pred KernelCore::declare_pred(std::string name) {
  claim_exact(name, {});
  body_.push_back(ptx::Variable{.space = Space::reg, .type = Type::pred, .name = name});
  return new_pred(std::move(name));
}

std::vector<Pred> KernelCore::declare_preds(std::string prefix, int count) {
  if (count <= 0) fail(".reg", prefix + "<" + std::to_string(count) + ">: need at least 1 predicate");
  claim_exact(prefix, {});
  for (int i = 0; i < count; ++i) claim_exact(prefix + std::to_string(i), {});
  std::vector<Pred> out;
  for (int i = 0; i < count; ++i) out.push_back(new_pred(prefix + std::to_string(i)));
  body_.push_back(ptx::Variable{.space = Space::reg, .type = Type::pred, .name = std::move(prefix), .range = count});
  return out;
}

Label KernelCore::label_named(std::string name) {
  if (name.empty()) fail("label", "a label needs a name");
  return Label(this, std::move(name));
}

void KernelCore::statement(ptx::Statement s) { body_.push_back(std::move(s)); }

void KernelCore::scope(const std::function<void()>& body) {
  std::vector<ptx::Statement> outer;
  outer.swap(body_);
  scopes_.emplace_back();
  try {
    body();
  } catch (...) {
    scopes_.pop_back();
    body_.swap(outer);
    throw;
  }
  scopes_.pop_back();
  ptx::Block nested{std::move(body_)};
  body_ = std::move(outer);
  body_.push_back(std::move(nested));
}

Label KernelCore::label(std::string_view hint) {
  std::string h(hint);
  if (!is_identifier(h)) fail("label", "label hint '" + h + "' is not an identifier");
  return Label(this, "$" + h + "_" + std::to_string(label_counter_++));
}

void KernelCore::place(const Label& l) {
  check_owner(l.owner(), "label", l.name());
  // PTX scopes labels by block too: sibling scopes may each place one name.
  if (!scopes_.back().labels.insert(l.name()).second)
    fail(l.name() + ":", "label placed twice in one scope");
  placed_labels_.insert(l.name());
  body_.push_back(ptx::Label{l.name()});
}

Reg KernelCore::param(Type type, std::string name) {
  if (!is_identifier(name)) fail(".param", "parameter name '" + name + "' is not an identifier");
  if (type == Type::pred || ptx::bits(type) > 64 || ptx::bits(type) < 8)
    fail(".param", "parameter '" + name + "' of type " + std::string(ptx::name(type)) +
                       "; scalar parameters are 8- to 64-bit integer or float types");
  check_symbol_free(".param", name);
  params_.push_back({.space = Space::param, .type = type, .name = name});
  Reg r = reg(type);
  emit({ptx::Opcode::ld, {ptx::Mod::param, ptx::mod(type)}},
       {operand_of(r), ptx::Operand::address(ptx::Operand::symbol(name))});
  return r;
}

Reg KernelCore::param_ptr(std::string name, int align) {
  if (align != 0 && (align & (align - 1)) != 0)
    fail(".param", "pointer parameter '" + name + "' alignment " + std::to_string(align) +
                       " is not a power of two");
  Reg raw = param(Type::u64, name);
  auto& p = params_.back();
  p.ptr = true;
  p.ptr_space = Space::global;
  p.ptr_align = align;
  Reg global = reg(Type::u64);
  emit({ptx::Opcode::cvta, {ptx::Mod::to, ptx::Mod::global, ptx::mod(Type::u64)}},
       {operand_of(global), operand_of(raw)});
  return global;
}

ParamRef KernelCore::param_bytes(std::string name, int bytes, int align) {
  if (!is_identifier(name)) fail(".param", "parameter name '" + name + "' is not an identifier");
  if (bytes <= 0) fail(".param", "byte-array parameter '" + name + "' of " + std::to_string(bytes) + " bytes");
  check_symbol_free(".param", name);
  params_.push_back({.space = Space::param, .type = Type::b8, .name = name, .align = align, .dims = {bytes}});
  return ParamRef{name, bytes, align};
}

// Parameters, shared variables and the dynamic shared array share one namespace
// (ptxas: "Duplicate definition of variable"; a shared variable named like the
// module-scope dynamic array would shadow it).
void KernelCore::check_symbol_free(std::string_view what, const std::string& name) const {
  auto clash = [&](const char* kind) {
    fail(what, "name '" + name + "' is already declared as " + kind);
  };
  for (const auto& p : params_)
    if (p.name == name) clash("a parameter");
  for (const auto& s : shared_)
    if (s.name == name) clash("a shared variable");
  if (dynamic_shared_ && dynamic_shared_->name == name) clash("the dynamic shared array");
}

Shared KernelCore::shared(std::string name, std::int64_t bytes, int align) {
  if (!is_identifier(name)) fail(".shared", "shared variable name '" + name + "' is not an identifier");
  if (bytes <= 0) fail(".shared", "shared variable '" + name + "' of " + std::to_string(bytes) + " bytes");
  if (align <= 0 || (align & (align - 1)) != 0)
    fail(".shared", "alignment " + std::to_string(align) + " of '" + name + "' is not a power of two");
  check_symbol_free(".shared", name);
  shared_.push_back({.space = Space::shared, .type = Type::b8, .name = name, .align = align, .dims = {bytes}});
  return Shared{name, bytes, align};
}

Shared KernelCore::dynamic_shared(std::string name, int align) {
  if (dynamic_shared_) {
    if (dynamic_shared_->name != name)
      fail(".extern .shared", "the dynamic shared array is already declared as '" +
                                  dynamic_shared_->name + "'; a kernel has one");
    return Shared{name, 0, dynamic_shared_->align};
  }
  check_symbol_free(".extern .shared", name);
  dynamic_shared_ = ptx::Variable{.space = Space::shared, .linkage = ptx::Linkage::extern_,
                                  .type = Type::b8, .name = name, .align = align, .dims = {std::nullopt}};
  return Shared{name, 0, align};
}

Reg KernelCore::address_of(const Shared& var) {
  Reg r = reg(Type::u32);
  emit({ptx::Opcode::mov, {ptx::mod(Type::u32)}}, {operand_of(r), ptx::Operand::symbol(var.name)});
  return r;
}

Reg KernelCore::sreg(SReg s) {
  const SRegInfo& i = info(s);
  require("mov " + std::string(i.name), i.availability);
  if (i.type == Type::pred)
    fail("mov " + std::string(i.name), std::string(i.name) +
                                           " is a predicate, not a Reg; read it into a Pred with "
                                           "k.inst(\"mov.pred\", p, SReg::" +
                                           std::string(i.name.substr(1)) + ")");
  Reg r = reg(i.type);
  emit({ptx::Opcode::mov, {ptx::mod(i.type)}}, {operand_of(r), ptx::Operand::sreg(std::string(i.name))});
  return r;
}

Reg KernelCore::sreg(std::string_view sname) {
  auto s = ptx::parse_sreg(sname);
  if (!s) {
    std::string known;
    for (const auto& i : ptx::all_sregs())
      known += (known.empty() ? "" : ", ") + std::string(i.name);
    fail("mov", "unknown special register '" + std::string(sname) + "'; known: " + known);
  }
  return sreg(*s);
}

namespace {
// Comma-separated when there is more than one value, as the parser reads them,
// so that parse(emit(m)) == m.
ptx::Directive numbers(std::string name, std::initializer_list<std::uint32_t> values) {
  ptx::Directive d{.name = std::move(name), .comma_separated = values.size() > 1};
  for (auto v : values) d.args.push_back(ptx::Operand::imm_u(v));
  return d;
}
}  // namespace

void KernelCore::maxntid(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  directives_.push_back(numbers("maxntid", {x, y, z}));
}
void KernelCore::reqntid(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  directives_.push_back(numbers("reqntid", {x, y, z}));
}
void KernelCore::minnctapersm(std::uint32_t n) { directives_.push_back(numbers("minnctapersm", {n})); }
void KernelCore::maxnreg(std::uint32_t n) { directives_.push_back(numbers("maxnreg", {n})); }
void KernelCore::explicitcluster() {
  require(".explicitcluster", Availability::since(90));
  directives_.push_back({.name = "explicitcluster"});
}
void KernelCore::reqnctapercluster(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  require(".reqnctapercluster", Availability::since(90));
  directives_.push_back(numbers("reqnctapercluster", {x, y, z}));
}

void KernelCore::guarded(PredUse p, const std::function<void()>& body) {
  // Check the handle before reading its name: an uninitialised Pred has no kernel to ask.
  operand_of(p.pred);  // a handle of this kernel, visible here
  if (guard_)
    fail("@" + std::string(p.negated ? "!" : "") + p.pred.name(),
         "guarded blocks do not nest (an instruction has one guard); already inside @" +
             std::string(guard_->negated ? "!" : "") + guard_->pred);
  guard_ = ptx::Guard{p.pred.name(), p.negated};
  try {
    body();
  } catch (...) {
    guard_.reset();
    throw;
  }
  guard_.reset();
}

void KernelCore::check_owner(const KernelCore* owner, std::string_view what, const std::string& name,
                             InstructionName instruction) const {
  if (owner == this) return;
  std::string where = "kernel '" + name_ + "': " + (instruction.empty() ? "" : instruction.str() + ": ");
  if (owner == nullptr) throw DslError(where + "an uninitialised " + std::string(what) + " handle was used");
  throw DslError(where + std::string(what) + " " + name + " belongs to kernel '" +
                 owner->name() + "'; registers, predicates and labels are usable only in the kernel that made them");
}

ptx::Operand KernelCore::operand_of(const Reg& r) const {
  check_owner(r.owner(), "register", r.valid() ? r.name() : "");
  check_visible(r.name(), {Holder::Kind::reg, r.id_}, "register");
  return ptx::Operand::reg(r.name());
}

ptx::Operand KernelCore::operand_of(const Pred& p) const {
  check_owner(p.owner(), "predicate", p.valid() ? p.name() : "");
  check_visible(p.name(), {Holder::Kind::pred, p.id_}, "predicate");
  return ptx::Operand::reg(p.name());
}

ptx::Operand KernelCore::operand_of(const PredUse& p) const {
  ptx::Operand op = operand_of(p.pred);
  op.negated = p.negated;
  return op;
}

ptx::Operand KernelCore::operand_of(const Src& s) const {
  return s.is_reg() ? operand_of(s.reg()) : s.imm();
}

ptx::Operand KernelCore::operand_of(const Addr& a) const {
  ptx::Operand base = a.base ? operand_of(*a.base) : ptx::Operand::symbol(a.symbol);
  return ptx::Operand::address(std::move(base), a.offset);
}

ptx::Operand KernelCore::operand_of(const Label& l) const {
  check_owner(l.owner(), "label", l.name());
  return ptx::Operand::label(l.name());
}

ptx::Operand KernelCore::operand_of(SReg r) const {
  const SRegInfo& i = info(r);
  require(i.name, i.availability);
  return ptx::Operand::sreg(std::string(i.name));
}

ptx::Operand KernelCore::operand_of(const Regs& rs) const {
  std::vector<ptx::Operand> elems;
  for (const auto& r : rs) elems.push_back(operand_of(r));
  return ptx::Operand::vector(std::move(elems));
}

void KernelCore::fail(InstructionName instruction, const std::string& what) const {
  throw DslError("kernel '" + name_ + "': " + instruction.str() + ": " + what);
}

void KernelCore::require(InstructionName instruction, const Availability& a) const {
  if (a.has(target_)) return;
  throw TargetError("kernel '" + name_ + "': " + instruction.str() + ": not available on " +
                    std::string(ptx::name(target_)) + "; targets that have it: " + a.targets());
}

void KernelCore::expect_type(InstructionName instruction, const Reg& r, Type type,
                             std::string_view role) const {
  check_owner(r.owner(), "register", r.valid() ? r.name() : "", instruction);
  if (!compatible(r.type(), type))
    fail(instruction, std::string(role) + " " + r.name() + " has type " + std::string(ptx::name(r.type())) +
                          "; expected " + std::string(ptx::name(type)) +
                          " (or a register of that width declared as a bit type; convert with cvt or view with .as())");
  // A view (Reg::as) changes how a register is read, not how it is declared:
  // a register declared .f32/.f64 is usable only by instructions of that type
  // or of a bit type (PTX ISA 5.2.2, 6.4.2); ptxas refuses `mov.u32 %r1, %f1`.
  Type declared = ptx::storage_type(regs_[r.id_].type);
  if (!ptx::is_bits(declared) && !compatible(declared, type))
    fail(instruction, std::string(role) + " " + r.name() + " is declared ." + std::string(ptx::name(declared)) +
                          "; an instruction of type " + std::string(ptx::name(type)) +
                          " cannot read it (use a bit-typed instruction or convert with cvt)");
}

void KernelCore::expect_type(InstructionName instruction, const Src& s, Type type,
                             std::string_view role) const {
  if (s.is_reg()) return expect_type(instruction, s.reg(), type, role);
  if (s.imm_type() && !compatible(*s.imm_type(), type))
    fail(instruction, std::string(role) + " immediate " + s.imm().text + " is " +
                          std::string(ptx::name(*s.imm_type())) + "; expected " + std::string(ptx::name(type)));
  if (!s.imm_type() && ptx::is_float(type))
    fail(instruction, std::string(role) + " integer immediate " + s.imm().text + " for a " +
                          std::string(ptx::name(type)) + " operand; write a float immediate (imm_f32, imm_f64)");
}

void KernelCore::emit(ptx::Instruction inst) {
  // An instruction has one guard (PTX ISA 9.1): one that carries its own (bra_if,
  // and so if_then, for_range ...) inside guarded() would silently drop the block's.
  if (guard_ && inst.guard)
    fail(inst.full_opcode(), "this instruction is guarded by @" + std::string(inst.guard->negated ? "!" : "") +
                                 inst.guard->pred + " inside guarded(@" + std::string(guard_->negated ? "!" : "") +
                                 guard_->pred + "); guards do not nest");
  if (guard_) inst.guard = guard_;
  body_.push_back(std::move(inst));
}

void KernelCore::emit(ptx::Instruction form, std::vector<ptx::Operand> operands) {
  form.operands = std::move(operands);
  emit(std::move(form));
}



ptx::Function KernelCore::function() const {
  ptx::Function f;
  f.is_entry = true;
  f.linkage = ptx::Linkage::visible;
  f.name = name_;
  f.params = params_;
  f.directives = directives_;
  ptx::Block body;
  for (const auto& [type, prefix] : kPrefixes)
    for (const auto& [p, count] : auto_counts_)
      if (p == prefix) body.body.push_back(ptx::Variable{.space = Space::reg, .type = type, .name = p, .range = count});
  for (const auto& d : named_decls_)
    body.body.push_back(ptx::Variable{.space = Space::reg, .type = d.storage, .name = d.name, .range = d.range});
  for (const auto& s : shared_) body.body.push_back(s);
  // Every branch target must be placed somewhere in the body, nested blocks included.
  std::function<void(const std::vector<ptx::Statement>&)> check_labels = [&](const auto& statements) {
    for (const auto& s : statements) {
      if (const auto* nested = std::get_if<ptx::Block>(&s)) check_labels(nested->body);
      const auto* inst = std::get_if<ptx::Instruction>(&s);
      if (!inst) continue;
      for (const auto& op : inst->operands)
        if (op.kind == ptx::Operand::Kind::label && !placed_labels_.count(op.text))
          fail(inst->full_opcode(), "label " + op.text + " is used but never placed");
    }
  };
  check_labels(body_);
  body.body.insert(body.body.end(), body_.begin(), body_.end());
  bool ends = !body_.empty() && std::holds_alternative<ptx::Instruction>(body_.back()) &&
              std::get<ptx::Instruction>(body_.back()).opcode == ptx::Opcode::ret &&
              !std::get<ptx::Instruction>(body_.back()).guard;
  if (!ends) body.body.push_back(ptx::Instruction{.opcode = ptx::Opcode::ret});
  f.body = std::move(body);
  return f;
}

ptx::Module KernelCore::module() const {
  ptx::Module m;
  auto v = ptx::ptx_version(target_);
  m.version_major = v.major;
  m.version_minor = v.minor;
  m.target = {std::string(ptx::name(target_))};
  m.address_size = 64;
  if (dynamic_shared_) m.items.push_back(*dynamic_shared_);
  m.items.push_back(function());
  return m;
}

}  // namespace warpforge::dsl
