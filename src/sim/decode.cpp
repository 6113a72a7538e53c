#include "decode.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "contraction.hpp"
#include "decode_checks.hpp"
#include "decode_forms.hpp"
#include "float_format.hpp"
#include "kernel_decoder.hpp"
#include "tcgen05_decode.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/scopes.hpp"
#include "warpforge/runtime/launch_check.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;
using K = ptx::Operand::Kind;

std::uint32_t align_up(std::uint32_t v, std::uint32_t a) {
  return (v + a - 1) / a * a;
}

// The type an immediate in operand `index` is written in.
Type immediate_type(const Inst& d, std::size_t index) {
  const Type t = d.ntypes ? d.types[0] : Type::u32;
  switch (d.op) {
    case Op::shl:
    case Op::shr:
      return index == 2 ? Type::u32 : t;
    case Op::bfe:
      return index >= 2 ? Type::u32 : t;
    case Op::bfi:
      return index >= 3 ? Type::u32 : t;
    case Op::cvt:
      return index >= 1 && d.ntypes > 1 ? d.types[1] : t;
    case Op::setp:
    case Op::selp:
      return index >= 3 ? Type::pred : t;
    case Op::mad:
      return t;
    case Op::shfl:
    case Op::vote:
    case Op::redux:
    case Op::bar_sync:
    case Op::bar_arrive:
    case Op::bar_warp_sync:
    case Op::cp_async:
    case Op::cp_async_wait_group:
    case Op::elect:
    case Op::setmaxnreg:
    case Op::bulk_wait:
    case Op::mapa:
    case Op::bulk_copy:
    case Op::bulk_reduce:
    case Op::wmma:  // the stride of a load or store
      return Type::u32;
    case Op::wgmma:  // descriptors (u64) and the small signed immediates
    case Op::tensor_copy:
      return Type::s64;
    case Op::tcgen05:  // column counts, enable-input-d, CTA masks (tcgen05_decode.cpp)
    case Op::tcgen05_sync:
      return Type::u32;
    default:
      return t;
  }
}

std::uint64_t encode_immediate(const ptx::Operand& o, Type t) {
  const bool float_text = o.kind == K::imm_float;
  // 0f + 8 hex digits is an f32's bit pattern (PTX ISA 4.5.1), taken as it
  // is: through float_value's double a signalling NaN would be quieted.
  const bool f32_pattern =
      float_text && o.text.size() == 10 && (o.text[1] == 'f' || o.text[1] == 'F');
  if (f32_pattern && (t == Type::f32 || ptx::bits(t) == 32))
    return std::strtoul(o.text.c_str() + 2, nullptr, 16);
  if (t == Type::f64) return bits_of(o.float_value());
  if (t == Type::f32) return bits_of(static_cast<float>(o.float_value()));
  // PTX has no 16-bit float literals: an integer is the bit pattern.
  if (t == Type::f16 || t == Type::bf16)
    return float_text ? encode_float(o.float_value(), float_format(t), Rounding::rn, false)
                      : static_cast<std::uint64_t>(o.int_value()) & 0xFFFF;
  if (float_text) {  // a float literal in a bit-typed operand: its bit pattern
    return ptx::bits(t) == 64 ? bits_of(o.float_value())
                              : bits_of(static_cast<float>(o.float_value()));
  }
  return static_cast<std::uint64_t>(o.int_value());
}

}  // namespace

KernelDecoder::KernelDecoder(const ptx::Module& module, std::size_t item_index,
                             const ModuleSymbols& symbols)
    : module_(module),
      function_(std::get<ptx::Function>(module.items[item_index])),
      module_symbols_(symbols),
      sources_(module) {
  kernel_.name = function_.name;
  line_ = first_body_line(module, item_index);
  layout_params();
  for (const auto& item : module.items)
    if (const auto* v = std::get_if<ptx::Variable>(&item); v && v->space == ptx::Space::shared)
      place_shared(*v);
}

void KernelDecoder::fail(int line, const std::string& text, const std::string& why) const {
  throw SimError("kernel '" + kernel_.name + "', PTX line " + std::to_string(line) + " (" + text +
                 "): " + why);
}

Kernel KernelDecoder::run() {
  if (!function_.body) throw SimError("kernel '" + kernel_.name + "' has no body (a prototype)");
  // PTX scopes registers and labels by block; the decoder's tables are flat,
  // so a name declared again in another block (nvcc's inline-asm `%p1`,
  // Triton's `waitLoop`) is decoded under a name of its own (`%p1$1`),
  // which is also what error messages quote for it.
  std::vector<std::string>
      scope_problems;  // the verifier's to report; the decoder fails at the use
  collect(ptx::with_unique_names(function_, scope_problems));
  // Falling off the end of the body is an exit (the closing brace's line).
  pending_.push_back({ptx::Instruction{.opcode = ptx::Opcode::exit}, line_});
  collect_copies();
  for (const Pending& p : pending_) {
    kernel_.code.push_back(p.kind == Synthetic::none ? decode(p.inst, p.line)
                                                     : decode_synthetic(p));
    kernel_.code.back().source = p.source;
  }
  contract_products(kernel_.code);
  kernel_.sources = sources_.take_positions();
  std::string why;
  if (const std::size_t at = mixed_cta_group(kernel_.code, why); at < kernel_.code.size())
    fail(kernel_.code[at].line, kernel_.code[at].text, why);
  kernel_.register_slots = static_cast<std::uint32_t>(slots_.size());
  kernel_.static_shared_bytes = shared_top_;
  kernel_.dynamic_shared_offset = (shared_top_ + extern_align_ - 1) / extern_align_ * extern_align_;
  kernel_.local_bytes = local_top_;
  return std::move(kernel_);
}

// The .param space as a launch packs it (runtime::param_layout).
void KernelDecoder::layout_params() {
  const runtime::ParamLayout layout = runtime::param_layout(function_);
  for (std::size_t i = 0; i < function_.params.size(); ++i) {
    const std::string& name = function_.params[i].name;
    kernel_.params.push_back({name, layout.offsets[i], layout.sizes[i]});
    symbols_[name] = {Space::param, layout.offsets[i]};
  }
  kernel_.param_bytes = layout.bytes;
}

void KernelDecoder::place_shared(const ptx::Variable& v) {
  std::uint32_t align = v.align ? v.align : std::max<std::uint32_t>(1, (ptx::bits(v.type) + 7) / 8);
  const bool unsized = !v.dims.empty() && !v.dims.back();
  if (unsized) {  // `.extern .shared .b8 smem[]`: the dynamic shared memory (PTX ISA 5.1.5)
    extern_align_ = std::max(extern_align_, align);
    extern_names_.push_back(v.name);
    return;
  }
  shared_top_ = align_up(shared_top_, align);
  symbols_[v.name] = {Space::shared, shared_top_};
  shared_top_ += static_cast<std::uint32_t>(v.size_bytes());
}

void KernelDecoder::declare(const ptx::Variable& v) {
  switch (v.space) {
    case ptx::Space::reg:
      if (v.type == Type::b128) fail(line_, ptx::emit(v), ".b128 registers are not simulated");
      if (v.range) {
        for (int i = 0; i < *v.range; ++i)
          add_register(v.name + std::to_string(i), ptx::bits(v.type));
      } else {
        add_register(v.name, ptx::bits(v.type));
      }
      return;
    case ptx::Space::shared:
      place_shared(v);
      return;
    case ptx::Space::param:  // a call's argument or return value (PTX ISA 5.1.6.2)
      frame_params_.insert(v.name);
      [[fallthrough]];
    case ptx::Space::local: {
      std::uint32_t align =
          v.align ? v.align : std::max<std::uint32_t>(1, (ptx::bits(v.type) + 7) / 8);
      local_top_ = align_up(local_top_, align);
      symbols_[v.name] = {Space::local, local_top_};
      local_top_ += static_cast<std::uint32_t>(v.size_bytes());
      return;
    }
    default:
      fail(line_, ptx::emit(v),
           "declarations in ." + std::string(ptx::name(v.space)) +
               " inside a kernel body are not simulated");
  }
}

void KernelDecoder::add_register(const std::string& name, int bits) {
  if (!slots_.count(name)) slots_.emplace(name, static_cast<std::uint32_t>(slots_.size()));
  if (bits == 64) wide_slots_.insert(slots_[name]);
}

// Walks the body as the emitter prints it, one line per statement, braces
// of nested blocks on their own lines.
// Variables declared in nested blocks follow the block scoping of
// registers (scopes.hpp): nvcc declares `.param .b64 param0` in the block
// of each call, in several sizes. A name declared again gets a name of its
// own (`param0$v2`) for the rest of its block.
void KernelDecoder::collect(const ptx::Block& block) {
  variable_scopes_.emplace_back();
  for (const auto& s : block.body) {
    if (const auto* original = std::get_if<ptx::Instruction>(&s)) {
      const ptx::Instruction scoped = in_scope(*original);
      const ptx::Instruction* inst = &scoped;
      if (inst->opcode == ptx::Opcode::call) {
        collect_call(*inst);
      } else if (inst->opcode == ptx::Opcode::ret &&
                 depth_ > 0) {  // through the copy's return register
        ptx::Instruction ret = *inst;
        ret.operands = {copy_return_};
        pending_.push_back({std::move(ret), line_, Synthetic::ret});
      } else {
        pending_.push_back({*inst, line_, Synthetic::none, sources_.current()});
      }
      ++line_;
    } else if (const auto* label = std::get_if<ptx::Label>(&s)) {
      labels_[label->name] = static_cast<std::uint32_t>(pending_.size());
      sources_.see_label(label->name);
      ++line_;
    } else if (const auto* var = std::get_if<ptx::Variable>(&s)) {
      if (var->space != ptx::Space::reg && symbols_.count(var->name)) {
        ptx::Variable again = *var;
        again.name += "$v" + std::to_string(++redeclared_);
        variable_scopes_.back()[var->name] = again.name;
        declare(again);
      } else {
        declare(*var);
      }
      ++line_;
    } else if (const auto* directive = std::get_if<ptx::Directive>(&s)) {
      sources_.see(*directive);
      ++line_;
    } else if (const auto* nested = std::get_if<ptx::Block>(&s)) {
      ++line_;
      collect(*nested);
      ++line_;
    }
  }
  variable_scopes_.pop_back();
}

// `inst` with the variables it names renamed as collect() declared them.
ptx::Instruction KernelDecoder::in_scope(const ptx::Instruction& inst) const {
  ptx::Instruction out = inst;
  if (redeclared_ == 0) return out;
  const std::function<void(ptx::Operand&)> rename = [&](ptx::Operand& o) {
    if (o.kind == K::symbol)
      for (auto scope = variable_scopes_.rbegin(); scope != variable_scopes_.rend(); ++scope)
        if (auto it = scope->find(o.text); it != scope->end()) {
          o.text = it->second;
          break;
        }
    for (auto& e : o.elems) rename(e);
  };
  for (auto& o : out.operands) rename(o);
  return out;
}

Arg KernelDecoder::scalar(const ptx::Operand& o, Type imm_type, int line, const std::string& text) {
  Arg a;
  switch (o.kind) {
    case K::reg: {
      auto it = slots_.find(o.text);
      if (it == slots_.end()) fail(line, text, "register " + o.text + " is not declared");
      a.kind = Arg::Kind::reg;
      a.slot = it->second;
      a.negated = o.negated;
      return a;
    }
    case K::sreg: {
      const std::optional<SReg> reg = ptx::parse_sreg(o.text);
      if (!reg || o.text.front() != '%')
        fail(line, text, "special register " + o.text + " is not simulated");
      a.kind = Arg::Kind::sreg;
      a.sreg = *reg;
      return a;
    }
    case K::imm_int:
    case K::imm_float:
      a.kind = Arg::Kind::imm;
      a.bits = encode_immediate(o, imm_type);
      return a;
    case K::symbol: {
      names_frame_param_ |= frame_params_.count(o.text) != 0;
      const SymbolInfo* s = find_symbol(o.text);
      if (!s) {
        // A register name the builder wrote as a symbol still names the register.
        if (slots_.count(o.text)) return scalar(ptx::Operand::reg(o.text), imm_type, line, text);
        fail(line, text, "symbol '" + o.text + "' is not a variable or parameter of this module");
      }
      a.kind = s->space == Space::shared ? Arg::Kind::shared_symbol : Arg::Kind::imm;
      a.bits = s->address;
      return a;
    }
    case K::sink:
      return a;
    default:
      fail(line, text, "operand '" + ptx::to_string(o) + "' is not a value");
  }
}

const SymbolInfo* KernelDecoder::find_symbol(const std::string& name) const {
  if (auto it = symbols_.find(name); it != symbols_.end()) return &it->second;
  if (auto it = module_symbols_.find(name); it != module_symbols_.end()) return &it->second;
  if (std::find(extern_names_.begin(), extern_names_.end(), name) != extern_names_.end()) {
    extern_symbol_ = {Space::shared, align_up(shared_top_, extern_align_)};
    return &extern_symbol_;
  }
  return nullptr;
}

std::vector<Arg> KernelDecoder::operand(const ptx::Operand& o, Type imm_type, int line,
                                        const std::string& text) {
  switch (o.kind) {
    case K::vector:
    case K::pair: {
      std::vector<Arg> parts;
      for (const auto& e : o.elems) parts.push_back(scalar(e, imm_type, line, text));
      return parts;
    }
    case K::address: {
      if (o.elems.size() != 1) fail(line, text, "only [base+offset] addresses are simulated");
      Arg a = scalar(o.elems[0], Type::u64, line, text);
      if (a.kind == Arg::Kind::imm)
        a.bits += static_cast<std::uint64_t>(o.offset);
      else
        a.offset = o.offset;
      return {a};
    }
    case K::label: {
      auto it = labels_.find(o.text);
      if (it == labels_.end()) fail(line, text, "label '" + o.text + "' is not in this kernel");
      Arg a;
      a.kind = Arg::Kind::imm;
      a.bits = it->second;
      return {a};
    }
    default:
      return {scalar(o, imm_type, line, text)};
  }
}

Inst KernelDecoder::decode(const ptx::Instruction& in, int line) {
  Inst d;
  d.line = line;
  d.text = ptx::emit(in);
  if (!d.text.empty() && d.text.back() == ';') d.text.pop_back();
  std::vector<ptx::Mod> rest = in.modifiers;
  if (const std::string why = decode_form(in, d, rest); !why.empty()) fail(line, d.text, why);
  decode_guard(d, in.guard);
  if (d.op == Op::vprintf) return decode_vprintf(in, std::move(d));
  parse_modifiers(d, rest, ptx::info(in.opcode).modifiers, d.text);
  names_frame_param_ = false;
  for (std::size_t i = 0; i < in.operands.size(); ++i) {
    const ptx::Operand& o = in.operands[i];
    if (d.op == Op::tensor_copy && o.kind == K::address && o.elems.size() == 2 &&
        o.elems[1].kind == K::vector) {
      // [tensorMap, {c0, ...}]: the map's address, then the coordinates
      std::vector<Arg> parts{scalar(o.elems[0], Type::u64, line, d.text)};
      for (const auto& c : o.elems[1].elems) parts.push_back(scalar(c, Type::s32, line, d.text));
      d.ops.push_back(std::move(parts));
      continue;
    }
    d.ops.push_back(operand(o, immediate_type(d, i), line, d.text));
  }
  if (names_frame_param_ && d.space == Space::param) d.space = Space::local;  // a call's argument
  if (d.op == Op::bra) {
    if (d.ops.size() != 1 || in.operands[0].kind != K::label)
      fail(line, d.text, "bra takes one label");
    d.target = static_cast<std::uint32_t>(d.ops[0][0].bits);
  }
  // A signed load into a wider register sign-extends to the register's
  // width (PTX ISA 9.7.9.8 "ld"): ld.param.s32 %rd1 (Triton's i32 arguments).
  if (d.op == Op::ld && ptx::is_signed(d.type()) && ptx::bits(d.type()) < 64 && !d.ops.empty())
    d.widen = std::all_of(d.ops[0].begin(), d.ops[0].end(), [&](const Arg& a) {
      return a.kind == Arg::Kind::reg && wide_slots_.count(a.slot);
    });
  if (const std::string why = check_operands(d, in.has(ptx::Mod::L2_cache_hint)); !why.empty())
    fail(line, d.text, why);
  return d;
}

void KernelDecoder::decode_guard(Inst& d, const std::optional<ptx::Guard>& guard) {
  if (!guard) return;
  const auto g = slots_.find(guard->pred);
  if (g == slots_.end())
    fail(d.line, d.text, "guard predicate " + guard->pred + " is not declared");
  d.guarded = true;
  d.guard.kind = Arg::Kind::reg;
  d.guard.slot = g->second;
  d.guard.negated = guard->negated;
}

// Reads each modifier's meaning from the PTX vocabulary, among the classes
// the opcode takes (ptx/modifiers.hpp). Hints (cache, memory order, scope,
// proxy, the .sync/.aligned promises) change nothing the simulator can
// observe: every access here is sequentially consistent and the
// scheduler checks convergence itself.
void KernelDecoder::parse_modifiers(Inst& d, const std::vector<ptx::Mod>& mods,
                                    ptx::ModifierClasses classes, const std::string& text) {
  using C = ptx::ModifierClass;
  const int line = d.line;
  for (const ptx::Mod m : mods) {
    const std::string word(ptx::name(m));
    const std::optional<ptx::Modifier> mod = ptx::meaning(m, classes);
    if (!mod) fail(line, text, "modifier ." + word + " is not simulated");
    switch (mod->cls) {
      case C::type:
        if (d.ntypes == d.types.size()) fail(line, text, "too many type modifiers");
        d.types[d.ntypes++] = static_cast<Type>(mod->value);
        break;
      case C::rounding:
      case C::integral_rounding:
        d.rounding = static_cast<Rounding>(mod->value);
        d.integral = mod->cls == C::integral_rounding;
        break;
      case C::ftz:
        d.ftz = true;
        break;
      case C::saturation:
        (mod->value ? d.satfinite : d.sat) = true;
        break;
      case C::relu:
        d.relu = true;
        break;
      case C::transpose:
        d.trans = true;
        break;
      case C::convert_to:
        d.to = true;
        break;
      case C::comparison:
      case C::atomic_op:
      case C::mul_mode:
      case C::shfl_mode:
      case C::vote_mode:
        d.mode = mod->value;
        break;
      case C::bool_op:
        d.combine = static_cast<BoolOp>(mod->value);
        break;
      case C::space:
        d.space = static_cast<Space>(mod->value);
        break;
      case C::vector:
      case C::matrix_count:
        d.vec = mod->value;
        break;
      case C::shape:
        if (d.op == Op::wmma) d.mode = mod->value;  // check_operands checks it
        if (d.op == Op::mma) {
          const auto shape = static_cast<MmaShape>(mod->value);
          if (shape > MmaShape::m16n8k32)
            fail(line, text,
                 "mma shape ." + word + " is not simulated; m16n8k8, m16n8k16 and m16n8k32 are");
          d.mode = mod->value;
        }
        break;
      case C::approximation:
        d.approx = mod->value == 0;  // .approx, not .full
        break;
      case C::layout:  // only row.col exists for the mma shapes simulated
      case C::noftz:
      case C::sync:
      case C::cache:
      case C::memory_order:
      case C::scope:
      case C::proxy:
        break;
      case C::form:  // the forms this decoder knows were taken out before
      case C::element_type:
      case C::wgmma_shape:
      case C::count:
        fail(line, text, "modifier ." + word + " is not simulated");
    }
  }
}
Kernel decode_kernel(const ptx::Module& module, std::size_t item_index,
                     const ModuleSymbols& symbols) {
  return KernelDecoder(module, item_index, symbols).run();
}

}  // namespace warpforge::sim
