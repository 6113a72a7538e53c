#include "decode.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <unordered_map>

#include "float_format.hpp"
#include "source_lines.hpp"
#include "tcgen05_decode.hpp"
#include "tensormap.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/scopes.hpp"
#include "warpforge/ptx/vocabulary.hpp"
#include "warpforge/ptx/vocabulary_wmma.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;
using K = ptx::Operand::Kind;

// The operation of an opcode of one form: its own, but for the spellings
// that execute as another's (the opcodes whose modifiers pick among several
// operations are decoded by KernelDecoder::decode).
Op single_form_op(ptx::Opcode opcode) {
  using O = ptx::Opcode;
  switch (opcode) {
    case O::ldu:
      return Op::ld;
    case O::membar:
      return Op::fence;
    case O::ret:  // a kernel's; a device function's is collect_call's
      return Op::exit;
    default:
      return op_of(opcode);
  }
}

// What KernelDecoder::collect() found, decoded by run(): instructions, and
// the parts of a device function call (collect_call), whose `inst` holds the
// operands.
enum class Synthetic : std::uint8_t { none, frame_copy, call, ret, depth_trap };
struct Pending {
  ptx::Instruction inst;
  int line;
  Synthetic kind = Synthetic::none;
  std::uint32_t source = 0;  // SourceLines' index of the .loc in effect
};

class KernelDecoder {
 public:
  KernelDecoder(const ptx::Module& module, std::size_t item_index, const ModuleSymbols& symbols)
      : module_(module),
        function_(std::get<ptx::Function>(module.items[item_index])),
        module_symbols_(symbols),
        sources_(module) {
    kernel_.name = function_.name;
    line_ = first_body_line(module, item_index);
    layout_params();
    layout_module_shared(module);
  }

  Kernel run() {
    if (!function_.body) throw SimError("kernel '" + kernel_.name + "' has no body (a prototype)");
    // PTX scopes registers and labels by block; the decoder's tables are flat,
    // so a name declared again in another block (nvcc's inline-asm `%p1`,
    // Triton's `waitLoop`) is decoded under a name of its own (`%p1$1`),
    // which is also what error messages quote for it.
    std::vector<std::string>
        scope_problems;  // the verifier's to report; the decoder fails at the use
    collect(ptx::with_unique_names(function_, scope_problems));
    // Falling off the end of the body is an exit (the closing brace's line).
    ptx::Instruction implicit_exit = ptx::Instruction::parse_opcode("exit");
    pending_.push_back({implicit_exit, line_});
    collect_copies();
    for (const Pending& p : pending_) {
      kernel_.code.push_back(p.kind == Synthetic::none ? decode(p.inst, p.line)
                                                       : decode_synthetic(p));
      kernel_.code.back().source = p.source;
    }
    kernel_.sources = sources_.take_positions();
    std::string why;
    if (const std::size_t at = mixed_cta_group(kernel_.code, why); at < kernel_.code.size())
      fail(kernel_.code[at].line, kernel_.code[at].text, why);
    kernel_.register_slots = static_cast<std::uint32_t>(slots_.size());
    kernel_.static_shared_bytes = shared_top_;
    kernel_.dynamic_shared_offset =
        (shared_top_ + extern_align_ - 1) / extern_align_ * extern_align_;
    kernel_.local_bytes = local_top_;
    return std::move(kernel_);
  }

 private:
  [[noreturn]] void fail(int line, const std::string& text, const std::string& why) const {
    throw SimError("kernel '" + kernel_.name + "', PTX line " + std::to_string(line) + " (" + text +
                   "): " + why);
  }

  static std::uint32_t align_up(std::uint32_t v, std::uint32_t a) { return (v + a - 1) / a * a; }

  void layout_params() {
    std::uint32_t offset = 0;
    for (const auto& p : function_.params) {
      const auto size = static_cast<std::uint32_t>(p.size_bytes());
      std::uint32_t align =
          p.align ? p.align : std::max<std::uint32_t>(1, (ptx::bits(p.type) + 7) / 8);
      offset = align_up(offset, align);
      kernel_.params.push_back({p.name, offset, size});
      symbols_[p.name] = {Space::param, offset};
      offset += size;
    }
    kernel_.param_bytes = offset;
  }

  void place_shared(const ptx::Variable& v) {
    std::uint32_t align =
        v.align ? v.align : std::max<std::uint32_t>(1, (ptx::bits(v.type) + 7) / 8);
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

  void layout_module_shared(const ptx::Module& module) {
    for (const auto& item : module.items)
      if (const auto* v = std::get_if<ptx::Variable>(&item); v && v->space == ptx::Space::shared)
        place_shared(*v);
  }

  void declare(const ptx::Variable& v) {
    switch (v.space) {
      case ptx::Space::reg:
        if (v.type == Type::b128) fail(line_, ptx::emit(v), ".b128 registers are not simulated");
        if (v.range) {
          for (int i = 0; i < *v.range; ++i) add_register(v.name + std::to_string(i), ptx::bits(v.type));
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

  void add_register(const std::string& name, int bits = 0) {
    if (!slots_.count(name)) slots_.emplace(name, static_cast<std::uint32_t>(slots_.size()));
    if (bits == 64) wide_slots_.insert(slots_[name]);
  }

  int body_line(std::size_t item) {
    auto it = body_lines_.find(item);
    if (it == body_lines_.end())
      it = body_lines_.emplace(item, first_body_line(module_, item)).first;
    return it->second;
  }

  // `call[.uni] (returns), f, (arguments)` (PTX ISA 9.7.12.2) in the calling
  // sequence nvcc writes: arguments and return values are .param variables
  // of the caller's body. Each function has one copy of its body per call
  // depth (copy_of), with registers and variables of its own, so that the
  // frames of a recursion never share storage while calls at one depth share
  // the code. A call copies the arguments into the copy's parameters, saves
  // the return address in the copy's return register and branches; `ret`
  // branches back, where the return values are copied out. vprintf, the CUDA
  // ABI's printf, is executed by the simulator itself (decode_vprintf).
  void collect_call(const ptx::Instruction& call) {
    std::string text = ptx::emit(call);
    if (!text.empty() && text.back() == ';') text.pop_back();
    const int line = line_;
    std::vector<ptx::Operand> returns, arguments;
    const ptx::Operand* callee = nullptr;
    for (const auto& o : call.operands) {
      if (o.kind == K::list)
        (callee ? arguments : returns) = o.elems;
      else if (!callee)
        callee = &o;
      else
        fail(line, text, "indirect calls through a .callprototype are not simulated");
    }
    if (!callee || callee->kind != K::symbol)
      fail(line, text,
           "indirect calls (through " +
               (callee ? ptx::to_string(*callee) : std::string("nothing")) +
               ") are not simulated; direct calls of the module's functions are");
    const std::string& name = callee->text;
    if (name == "vprintf") {
      pending_.push_back({call, line});
      return;
    }
    std::size_t item = module_.items.size();
    for (std::size_t i = 0; i < module_.items.size() && item == module_.items.size(); ++i)
      if (const auto* f = std::get_if<ptx::Function>(&module_.items[i]);
          f && f->name == name && f->body)
        item = i;
    if (item == module_.items.size())
      fail(line, text,
           "calls '" + name +
               "', which has no body in this module (an .extern function, or none); the simulator "
               "runs "
               "calls of functions the module defines, and vprintf");
    const ptx::Function& f = std::get<ptx::Function>(module_.items[item]);
    if (returns.size() != f.returns.size() || arguments.size() != f.params.size())
      fail(line, text,
           "passes " + std::to_string(arguments.size()) + " arguments and " +
               std::to_string(returns.size()) + " return values; '" + name + "' takes " +
               std::to_string(f.params.size()) + " and returns " +
               std::to_string(f.returns.size()));
    for (const auto& given : {&arguments, &returns})
      for (const auto& o : *given)
        if (o.kind != K::symbol || !frame_params_.count(o.text))
          fail(line, text,
               "passes " + ptx::to_string(o) +
                   "; the simulator passes .param variables of the caller's body, as nvcc does");
    const auto synthetic = [&](Synthetic kind, std::vector<ptx::Operand> operands) {
      ptx::Instruction i = ptx::Instruction::parse_opcode("call");
      i.guard = call.guard;
      i.operands = std::move(operands);
      pending_.push_back({std::move(i), line, kind});
    };
    if (depth_ == kMaxCallDepth) {
      synthetic(Synthetic::depth_trap, {});
      return;
    }
    const std::string suffix = copy_of(item, depth_ + 1);
    const auto copy = [&](const ptx::Variable& to, const ptx::Operand& from, bool out) {
      ptx::Operand callee_side = ptx::Operand::symbol(to.name + suffix);
      synthetic(Synthetic::frame_copy, {out ? from : callee_side, out ? callee_side : from,
                                        ptx::Operand::imm(to.size_bytes())});
    };
    for (std::size_t i = 0; i < arguments.size(); ++i) copy(f.params[i], arguments[i], false);
    synthetic(Synthetic::call, {ptx::Operand::label(entry_label(suffix)),
                                ptx::Operand::reg(return_register(suffix))});
    for (std::size_t i = 0; i < returns.size(); ++i) copy(f.returns[i], returns[i], true);
  }

  static std::string entry_label(const std::string& suffix) { return "$entry" + suffix; }
  static std::string return_register(const std::string& suffix) { return "%return" + suffix; }

  // The suffix of the names of function `item`'s copy for call depth `depth`,
  // queued for collect_copies() when new.
  std::string copy_of(std::size_t item, int depth) {
    auto [it, added] = copies_.try_emplace({item, depth}, "");
    if (added) {
      it->second =
          "$" + std::get<ptx::Function>(module_.items[item]).name + "@" + std::to_string(depth);
      queued_copies_.push_back({item, depth, it->second});
    }
    return it->second;
  }

  // The function copies the calls need, after the kernel's code: each its
  // parameters and return values (.param variables of its own), its return
  // register, its entry label, its body with the copy's names, and a return
  // at the end (falling off a function's end returns).
  void collect_copies() {
    while (!queued_copies_.empty()) {
      const QueuedCopy q = queued_copies_.front();
      queued_copies_.erase(queued_copies_.begin());
      const ptx::Function& f = std::get<ptx::Function>(module_.items[q.item]);
      std::map<std::string, std::string> parameters;
      for (const auto* list : {&f.params, &f.returns})
        for (ptx::Variable v : *list) {
          parameters[v.name] = v.name + q.suffix;
          v.name += q.suffix;
          v.space = ptx::Space::param;
          declare(v);
        }
      add_register(return_register(q.suffix));
      std::vector<std::string> scope_problems;  // the verifier's to report
      const ptx::Block unique = ptx::with_unique_names(f, scope_problems);
      CallCopy copy{parameters, q.suffix};
      copy.declarations(unique);
      depth_ = q.depth;
      copy_return_ = ptx::Operand::reg(return_register(q.suffix));
      line_ = body_line(q.item);
      labels_[entry_label(q.suffix)] = static_cast<std::uint32_t>(pending_.size());
      collect(copy.copy(unique));
      ptx::Instruction ret = ptx::Instruction::parse_opcode("ret");
      ret.operands = {copy_return_};
      pending_.push_back({std::move(ret), line_, Synthetic::ret});
      // Recursion that nvcc did not turn into a loop makes a copy per depth.
      constexpr std::size_t kMaxInstructions = 1 << 20;
      if (pending_.size() > kMaxInstructions)
        fail(line_, "." + f.name,
             "the kernel with the copies of its device functions exceeds " +
                 std::to_string(kMaxInstructions) + " instructions");
    }
  }

  // A function body as one of its copies (collect_copies): the parameters
  // become the copy's; what the body declares gets the copy's suffix:
  // variables, labels and scalar registers `name$f@2`, ranges `%r<45>` become
  // `%r$f@2_<45>` (so `%r10` is `%r$f@2_10`).
  struct CallCopy {
    const std::map<std::string, std::string>& parameters;
    std::string suffix;
    std::set<std::string> variables, registers;
    std::vector<std::pair<std::string, int>> ranges;

    void declarations(const ptx::Block& block) {
      for (const auto& s : block.body) {
        if (const auto* v = std::get_if<ptx::Variable>(&s)) {
          if (v->space != ptx::Space::reg)
            variables.insert(v->name);
          else if (v->range)
            ranges.emplace_back(v->name, *v->range);
          else
            registers.insert(v->name);
        } else if (const auto* nested = std::get_if<ptx::Block>(&s)) {
          declarations(*nested);
        }
      }
    }

    std::string register_name(const std::string& name) const {
      if (!registers.count(name))
        for (const auto& [prefix, count] : ranges)
          if (auto i = ptx::range_index(name, prefix, count))
            return prefix + suffix + "_" + std::to_string(*i);
      return name + suffix;
    }

    void rename(ptx::Operand& o) const {
      if (o.kind == K::reg) {
        o.text = register_name(o.text);
      } else if (o.kind == K::label) {
        o.text += suffix;
      } else if (o.kind == K::symbol) {
        if (auto it = parameters.find(o.text); it != parameters.end())
          o.text = it->second;
        else if (variables.count(o.text))
          o.text += suffix;
      }
      for (auto& e : o.elems) rename(e);
    }

    ptx::Block copy(const ptx::Block& block) const {
      ptx::Block out;
      for (const auto& s : block.body) {
        if (const auto* inst = std::get_if<ptx::Instruction>(&s)) {
          ptx::Instruction i = *inst;
          if (i.guard) i.guard->pred = register_name(i.guard->pred);
          for (auto& o : i.operands) rename(o);
          out.body.emplace_back(std::move(i));
        } else if (const auto* label = std::get_if<ptx::Label>(&s)) {
          out.body.emplace_back(ptx::Label{label->name + suffix});
        } else if (const auto* v = std::get_if<ptx::Variable>(&s)) {
          ptx::Variable c = *v;
          c.name = v->space == ptx::Space::reg && v->range ? v->name + suffix + "_"
                   : v->space == ptx::Space::reg           ? register_name(v->name)
                                                           : v->name + suffix;
          out.body.emplace_back(std::move(c));
        } else if (const auto* nested = std::get_if<ptx::Block>(&s)) {
          out.body.emplace_back(copy(*nested));
        } else {
          out.body.push_back(s);
        }
      }
      return out;
    }
  };

  // Walks the body as the emitter prints it, one line per statement, braces
  // of nested blocks on their own lines.
  // Variables declared in nested blocks follow the block scoping of
  // registers (scopes.hpp): nvcc declares `.param .b64 param0` in the block
  // of each call, in several sizes. A name declared again gets a name of its
  // own (`param0$v2`) for the rest of its block.
  void collect(const ptx::Block& block) {
    variable_scopes_.emplace_back();
    for (const auto& s : block.body) {
      if (const auto* original = std::get_if<ptx::Instruction>(&s)) {
        const ptx::Instruction scoped = in_scope(*original);
        const ptx::Instruction* inst = &scoped;
        if (inst->opcode == "call") {
          collect_call(*inst);
        } else if (inst->opcode == "ret" && depth_ > 0) {  // through the copy's return register
          ptx::Instruction ret = *inst;
          ret.operands = {copy_return_};
          pending_.push_back({std::move(ret), line_, Synthetic::ret});
        } else {
          pending_.push_back({*inst, line_, Synthetic::none, sources_.current()});
        }
        ++line_;
      } else if (const auto* label = std::get_if<ptx::Label>(&s)) {
        labels_[label->name] = static_cast<std::uint32_t>(pending_.size());
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
  ptx::Instruction in_scope(const ptx::Instruction& inst) const {
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

  // The type an immediate in operand `index` is written in.
  static Type immediate_type(const Inst& d, std::size_t index) {
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
        return index >= 3 ? Type::pred : t;
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

  static std::uint64_t encode_immediate(const ptx::Operand& o, Type t) {
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

  Arg scalar(const ptx::Operand& o, Type imm_type, int line, const std::string& text) {
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

  const SymbolInfo* find_symbol(const std::string& name) const {
    if (auto it = symbols_.find(name); it != symbols_.end()) return &it->second;
    if (auto it = module_symbols_.find(name); it != module_symbols_.end()) return &it->second;
    if (std::find(extern_names_.begin(), extern_names_.end(), name) != extern_names_.end()) {
      extern_symbol_ = {Space::shared, align_up(shared_top_, extern_align_)};
      return &extern_symbol_;
    }
    return nullptr;
  }

  std::vector<Arg> operand(const ptx::Operand& o, Type imm_type, int line,
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

  Inst decode(const ptx::Instruction& in, int line) {
    Inst d;
    d.line = line;
    d.text = ptx::emit(in);
    if (!d.text.empty() && d.text.back() == ';') d.text.pop_back();
    const std::string& text = d.text;
    const ptx::OpcodeInfo* known = ptx::find_opcode(in.opcode);
    if (!known)
      fail(line, text,
           "instruction '" + in.opcode + "' is not simulated (no PTX opcode warpforge knows)");
    using O = ptx::Opcode;
    const O opcode = known->opcode;
    std::vector<std::string> mods = in.modifiers;
    if (opcode == O::barrier && in.has_modifier("cluster")) {
      // barrier.cluster.arrive[.release|.relaxed][.aligned] / .wait[.acquire][.aligned] (PTX ISA 9.7.13.3)
      if (in.has_modifier("arrive"))
        d.op = Op::cluster_arrive;
      else if (in.has_modifier("wait"))
        d.op = Op::cluster_wait;
      else
        fail(line, text, "barrier.cluster takes .arrive or .wait");
      std::erase_if(mods, [](const std::string& m) { return m == "arrive" || m == "wait"; });
    } else if (opcode == O::bar || opcode == O::barrier) {
      // bar.sync / bar.arrive / bar.warp.sync / barrier[.cta].sync / .arrive (PTX ISA 9.7.13.1)
      if (in.has_modifier("red")) fail(line, text, "bar.red is not simulated");
      if (in.has_modifier("cluster")) fail(line, text, "cluster barriers are not simulated");
      if (in.has_modifier("warp"))
        d.op = Op::bar_warp_sync;
      else if (in.has_modifier("arrive"))
        d.op = Op::bar_arrive;
      else
        d.op = Op::bar_sync;
      std::erase_if(mods, [](const std::string& m) { return m == "warp" || m == "arrive"; });
    } else if (opcode == O::mbarrier || (opcode == O::cp && in.has_modifier("mbarrier"))) {
      d.op = Op::mbarrier;
      MbarrierOp op;
      if (opcode == O::cp)
        op = MbarrierOp::cp_async_arrive;
      else if (in.has_modifier("init"))
        op = MbarrierOp::init;
      else if (in.has_modifier("arrive") && in.has_modifier("expect_tx"))
        op = MbarrierOp::arrive_expect_tx;
      else if (in.has_modifier("arrive"))
        op = MbarrierOp::arrive;
      else if (in.has_modifier("expect_tx"))
        op = MbarrierOp::expect_tx;
      else if (in.has_modifier("complete_tx"))
        op = MbarrierOp::complete_tx;
      else if (in.has_modifier("test_wait"))
        op = MbarrierOp::test_wait;
      else if (in.has_modifier("try_wait"))
        op = MbarrierOp::try_wait;
      else if (in.has_modifier("inval"))
        op = MbarrierOp::inval;
      else
        fail(line, d.text, "this mbarrier operation is not simulated");
      d.mode = static_cast<std::uint8_t>(op);
      // .parity for the waits, .noinc for cp.async.mbarrier.arrive
      d.parity = in.has_modifier("parity") || in.has_modifier("noinc");
      std::erase_if(mods, [](const std::string& m) {
        return m == "init" || m == "arrive" || m == "expect_tx" || m == "complete_tx" ||
               m == "test_wait" || m == "try_wait" || m == "parity" || m == "noinc" ||
               m == "mbarrier" || m == "async" || m == "inval";
      });
    } else if (opcode == O::cp && in.has_modifier("bulk")) {
      decode_bulk(in, d, mods, line);
    } else if (opcode == O::wgmma) {
      decode_wgmma(in, d, mods, line);
    } else if (opcode == O::wmma) {
      decode_wmma(in, d, mods, line);
    } else if (opcode == O::tcgen05) {  // tcgen05_decode.cpp
      if (std::string why = decode_tcgen05(in, d, mods); !why.empty()) fail(line, d.text, why);
    } else if (opcode == O::tensormap) {  // tensormap.cpp
      if (std::string why = decode_tensormap(in, d, mods); !why.empty()) fail(line, d.text, why);
    } else if (opcode == O::setmaxnreg) {
      // setmaxnreg.{inc,dec}.sync.aligned.u32 N (PTX ISA 9.7.19.7): a hint to
      // the register allocator with no effect the simulator models, but
      // checked: N and the warpgroup that must execute it together.
      d.op = Op::setmaxnreg;
      std::erase_if(mods, [](const std::string& m) { return m == "inc" || m == "dec"; });
    } else if (opcode == O::cp && in.has_modifier("async")) {
      if (in.has_modifier("commit_group"))
        d.op = Op::cp_async_commit;
      else if (in.has_modifier("wait_group"))
        d.op = Op::cp_async_wait_group;
      else if (in.has_modifier("wait_all"))
        d.op = Op::cp_async_wait_all;
      else
        d.op = Op::cp_async;
      std::erase_if(mods, [](const std::string& m) {
        return m == "async" || m == "commit_group" || m == "wait_group" || m == "wait_all";
      });
    } else if (opcode == O::griddepcontrol) {
      // griddepcontrol.{wait, launch_dependents} (PTX ISA 9.7.13): the
      // simulator runs a stream's grids one after another, so every grid a
      // wait could name has completed and its memory is visible before the
      // next begins; launching dependents early is a scheduling hint.
      if (!(mods.size() == 1 && (mods[0] == "wait" || mods[0] == "launch_dependents")))
        fail(line, text, "griddepcontrol takes one action: .wait or .launch_dependents");
      d.op = Op::fence;
      mods.clear();
    } else if (opcode == O::nanosleep || opcode == O::prefetch || opcode == O::prefetchu) {
      // Scheduling and cache hints (prefetch.tensormap included): nothing a
      // thread can observe.
      d.op = Op::fence;
      mods.clear();
    } else if (opcode >= O::tex && opcode <= O::suq) {
      fail(line, text,
           "textures and surfaces are not simulated (" + in.opcode +
               "); the simulator runs the kernels of this module that use neither");
    } else if (opcode == O::call) {  // vprintf: collect_call made the others synthetic
      return decode_vprintf(in, std::move(d), line);
    } else if (opcode == O::trap) {
      d.op = Op::trap;
    } else if (opcode == O::cp) {
      fail(line, text, "instruction '" + in.opcode + "' is not simulated");
    } else {
      d.op = single_form_op(opcode);
    }
    parse_modifiers(d, mods, known->modifiers, line, text);
    if (in.guard) {
      auto g = slots_.find(in.guard->pred);
      if (g == slots_.end())
        fail(line, text, "guard predicate " + in.guard->pred + " is not declared");
      d.guarded = true;
      d.guard.kind = Arg::Kind::reg;
      d.guard.slot = g->second;
      d.guard.negated = in.guard->negated;
    }
    names_frame_param_ = false;
    for (std::size_t i = 0; i < in.operands.size(); ++i) {
      const ptx::Operand& o = in.operands[i];
      if (d.op == Op::tensor_copy && o.kind == K::address && o.elems.size() == 2 && o.elems[1].kind == K::vector) {
        // [tensorMap, {c0, ...}]: the map's address, then the coordinates
        std::vector<Arg> parts{scalar(o.elems[0], Type::u64, line, text)};
        for (const auto& c : o.elems[1].elems) parts.push_back(scalar(c, Type::s32, line, text));
        d.ops.push_back(std::move(parts));
        continue;
      }
      d.ops.push_back(operand(o, immediate_type(d, i), line, text));
    }
    if (names_frame_param_ && d.space == Space::param) d.space = Space::local;  // a call's argument
    if (d.op == Op::bra) {
      if (d.ops.size() != 1 || in.operands[0].kind != K::label)
        fail(line, text, "bra takes one label");
      d.target = static_cast<std::uint32_t>(d.ops[0][0].bits);
    }
    cache_hint_ = in.has_modifier("L2::cache_hint");
    // A signed load into a wider register sign-extends to the register's
    // width (PTX ISA 9.7.9.8 "ld"): ld.param.s32 %rd1 (Triton's i32 arguments).
    if (d.op == Op::ld && ptx::is_signed(d.type()) && ptx::bits(d.type()) < 64 && !d.ops.empty())
      d.widen = std::all_of(d.ops[0].begin(), d.ops[0].end(),
                            [&](const Arg& a) { return a.kind == Arg::Kind::reg && wide_slots_.count(a.slot); });
    validate(d, line, text);
    return d;
  }

  // The parts of a device function call (collect_call), which have no PTX
  // text of their own: messages quote the call's line.
  Inst decode_synthetic(const Pending& p) {
    Inst d;
    d.line = p.line;
    d.text = "call";
    if (p.inst.guard) {
      auto g = slots_.find(p.inst.guard->pred);
      if (g == slots_.end())
        fail(p.line, d.text, "guard predicate " + p.inst.guard->pred + " is not declared");
      d.guarded = true;
      d.guard.kind = Arg::Kind::reg;
      d.guard.slot = g->second;
      d.guard.negated = p.inst.guard->negated;
    }
    for (const auto& o : p.inst.operands) d.ops.push_back(operand(o, Type::u32, p.line, d.text));
    switch (p.kind) {
      case Synthetic::frame_copy:
        d.op = Op::frame_copy;
        break;
      case Synthetic::call:
        d.op = Op::call;
        d.target = static_cast<std::uint32_t>(d.op0(0).bits);
        break;
      case Synthetic::ret:
        d.op = Op::ret;
        break;
      case Synthetic::depth_trap:
        d.op = Op::trap;
        d.mode = kTrapCallDepth;
        break;
      case Synthetic::none:
        break;
    }
    return d;
  }

  // call[.uni] (r), vprintf, (format, arguments), which collect_call keeps:
  // operands the return value's frame address (or _), then the parameters'.
  Inst decode_vprintf(const ptx::Instruction& in, Inst d, int line) {
    d.op = Op::vprintf;
    std::vector<ptx::Operand> returns, arguments;
    bool past_callee = false;
    for (const auto& o : in.operands) {
      if (o.kind == K::list)
        (past_callee ? arguments : returns) = o.elems;
      else
        past_callee = true;
    }
    if (arguments.size() != 2 || returns.size() > 1)
      fail(line, d.text, "vprintf takes (format, arguments) and returns at most one value");
    const auto frame_param = [&](const ptx::Operand& o) {
      if (o.kind != K::symbol || !frame_params_.count(o.text))
        fail(line, d.text,
             "passes " + ptx::to_string(o) +
                 "; the simulator passes .param variables of the caller's body");
      return std::vector<Arg>{scalar(o, Type::u64, line, d.text)};
    };
    d.ops.push_back(returns.empty() ? std::vector<Arg>{Arg{}} : frame_param(returns[0]));
    for (const auto& a : arguments) d.ops.push_back(frame_param(a));
    return d;
  }

  // cp.async.bulk.tensor.Nd.shared::cluster.global[.tile].mbarrier::complete_tx::bytes[.multicast::cluster]
  // and cp.async.bulk.tensor.Nd.global.shared::cta[.tile].bulk_group (PTX ISA 9.7.9.25.5.1), with
  // cp.async.bulk.commit_group and cp.async.bulk.wait_group[.read] (9.7.9.25.5.3-4); and
  // cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes (9.7.9.25.4.1).
  void decode_bulk(const ptx::Instruction& in, Inst& d, std::vector<std::string>& mods, int line) {
    if (in.has_modifier("commit_group")) {
      d.op = Op::bulk_commit;
    } else if (in.has_modifier("wait_group")) {
      d.op = Op::bulk_wait;
    } else if (in.has_modifier("tensor")) {
      d.op = Op::tensor_copy;
      for (int rank = 1; rank <= 5; ++rank)
        if (in.has_modifier(std::to_string(rank) + "d")) d.extent = static_cast<std::uint16_t>(rank);
      if (d.extent == 0) fail(line, d.text, "cp.async.bulk.tensor needs a dimension .1d to .5d");
      const auto at = [&](const char* m) {
        return std::find(in.modifiers.begin(), in.modifiers.end(), m) - in.modifiers.begin();
      };
      const auto global = at("global");
      const auto shared = std::min(at("shared::cluster"), at("shared::cta"));
      if (global == static_cast<std::ptrdiff_t>(in.modifiers.size()) ||
          shared == static_cast<std::ptrdiff_t>(in.modifiers.size()))
        fail(line, d.text, "cp.async.bulk.tensor copies between .global and .shared::cluster/.shared::cta");
      const bool load = shared < global;  // the destination's space comes first
      d.mode = static_cast<std::uint8_t>(load ? TensorCopyDir::global_to_shared : TensorCopyDir::shared_to_global);
      if (load && !in.has_modifier("mbarrier::complete_tx::bytes"))
        fail(line, d.text, "a TMA load completes on an mbarrier: .mbarrier::complete_tx::bytes is required");
      if (!load && !in.has_modifier("bulk_group"))
        fail(line, d.text, "a TMA store completes through a bulk async-group: .bulk_group is required");
      d.multicast = in.has_modifier("multicast::cluster");
    } else if (in.has_modifier("shared::cluster") && in.has_modifier("shared::cta") &&
               in.has_modifier("mbarrier::complete_tx::bytes") &&
               std::find(in.modifiers.begin(), in.modifiers.end(), "shared::cluster") <
                   std::find(in.modifiers.begin(), in.modifiers.end(), "shared::cta")) {
      d.op = Op::bulk_copy;
    } else {
      fail(line, d.text,
           "cp.async.bulk without .tensor is simulated from .shared::cta into .shared::cluster only, "
           "completing on an mbarrier (.mbarrier::complete_tx::bytes)");
    }
    std::erase_if(mods, [](const std::string& m) {
      return m == "async" || m == "bulk" || m == "tensor" || m == "tile" || m == "mbarrier::complete_tx::bytes" ||
             m == "multicast::cluster" || m == "bulk_group" || m == "commit_group" || m == "wait_group" ||
             m == "read" || m == "global" || m == "shared::cluster" || m == "shared::cta" ||
             (m.size() == 2 && m[1] == 'd' && m[0] >= '1' && m[0] <= '5');
    });
  }

  // wgmma.fence / commit_group / wait_group N and
  // wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype (PTX ISA 9.7.15.5).
  void decode_wgmma(const ptx::Instruction& in, Inst& d, std::vector<std::string>& mods, int line) {
    d.op = Op::wgmma;
    WgmmaOp op;
    if (in.has_modifier("fence"))
      op = WgmmaOp::fence;
    else if (in.has_modifier("commit_group"))
      op = WgmmaOp::commit_group;
    else if (in.has_modifier("wait_group"))
      op = WgmmaOp::wait_group;
    else if (in.has_modifier("mma_async"))
      op = WgmmaOp::mma_async;
    else
      fail(line, d.text, "wgmma takes .fence, .commit_group, .wait_group or .mma_async");
    d.mode = static_cast<std::uint8_t>(op);
    if (in.has_modifier("sp")) fail(line, d.text, "sparse wgmma (.sp) is not simulated");
    std::erase_if(mods, [&](const std::string& m) {
      int n = 0, k = 0;
      if (std::sscanf(m.c_str(), "m64n%dk%d", &n, &k) == 2 && m == "m64n" + std::to_string(n) + "k" + std::to_string(k)) {
        d.extent = static_cast<std::uint16_t>(n);
        d.vec = static_cast<std::uint8_t>(k);  // the K of the shape
        return true;
      }
      return m == "fence" || m == "commit_group" || m == "wait_group" || m == "mma_async";
    });
  }

  // wmma.load.{a,b,c} / wmma.mma / wmma.store.d (PTX ISA 9.7.14.4.2-4):
  // the operation and the layouts come out here; the shape, the types and
  // the state space go through parse_modifiers.
  void decode_wmma(const ptx::Instruction& in, Inst& d, std::vector<std::string>& mods, int line) {
    d.op = Op::wmma;
    WmmaOp op;
    if (in.has_modifier("load") && in.has_modifier("a"))
      op = WmmaOp::load_a;
    else if (in.has_modifier("load") && in.has_modifier("b"))
      op = WmmaOp::load_b;
    else if (in.has_modifier("load") && in.has_modifier("c"))
      op = WmmaOp::load_c;
    else if (in.has_modifier("store") && in.has_modifier("d"))
      op = WmmaOp::store_d;
    else if (in.has_modifier("mma"))
      op = WmmaOp::mma;
    else
      fail(line, d.text, "wmma takes .load.a, .load.b, .load.c, .mma or .store.d");
    if (in.has_modifier("satfinite")) fail(line, d.text, "wmma.mma .satfinite is not simulated");
    d.extent = static_cast<std::uint16_t>(op);
    d.vec = 0;
    int layouts = 0;
    for (const std::string& m : in.modifiers)
      if (m == "row" || m == "col") d.vec |= static_cast<std::uint8_t>((m == "col") << layouts++);
    if (layouts != (op == WmmaOp::mma ? 2 : 1))
      fail(line, d.text,
           op == WmmaOp::mma ? "wmma.mma needs A's and B's layouts (.row or .col each)"
                             : "a wmma load or store needs one layout, .row or .col");
    std::erase_if(mods, [](const std::string& m) {
      return m == "load" || m == "store" || m == "mma" || m == "a" || m == "b" || m == "c" ||
             m == "d" || m == "row" || m == "col";
    });
  }

  // Reads each modifier's meaning from the PTX vocabulary, among the classes
  // the opcode takes (ptx/modifiers.hpp). Hints (cache, memory order, scope,
  // proxy, the .sync/.aligned promises) change nothing the simulator can
  // observe: every access here is sequentially consistent and the
  // scheduler checks convergence itself.
  void parse_modifiers(Inst& d, const std::vector<std::string>& mods, ptx::ModifierClasses classes,
                       int line, const std::string& text) {
    using C = ptx::ModifierClass;
    for (const auto& m : mods) {
      const std::optional<ptx::Modifier> mod = ptx::find_modifier(m, classes);
      if (!mod) fail(line, text, "modifier ." + m + " is not simulated");
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
          if (d.op == Op::wmma) d.mode = mod->value;  // validate_wmma checks it
          if (d.op == Op::mma) {
            const auto shape = static_cast<MmaShape>(mod->value);
            if (shape > MmaShape::m16n8k32)
              fail(line, text,
                   "mma shape ." + m + " is not simulated; m16n8k8, m16n8k16 and m16n8k32 are");
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
        case C::count:
          fail(line, text, "modifier ." + m + " is not simulated");
      }
    }
  }

  // The dense forms of PTX ISA 9.7.15.5.2 "wgmma.mma_async": f16/bf16
  // inputs (K = 16) into f32 or (f16 inputs) f16 accumulators, with the
  // transpose immediates; e4m3/e5m2 inputs (K = 32) into f32 or f16, without
  // them. A is a shared-memory descriptor or a vector of four .b32 registers;
  // the register form has no imm-trans-a:
  //   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b]
  //   d, {a},    b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-b]
  void validate_wgmma(const Inst& d, int line, const std::string& text) const {
    const auto op = static_cast<WgmmaOp>(d.mode);
    if (op == WgmmaOp::wait_group) {
      need(d, 1, line, text);
      if (d.op0(0).kind != Arg::Kind::imm) fail(line, text, "wgmma.wait_group's count must be an immediate");
      return;
    }
    if (op != WgmmaOp::mma_async) return need(d, 0, line, text);
    if (d.ntypes != 3) fail(line, text, "wgmma.mma_async needs .dtype.atype.btype");
    const Type dt = d.types[0], at = d.types[1], bt = d.types[2];
    const bool half = (at == Type::f16 && bt == Type::f16) || (at == Type::bf16 && bt == Type::bf16);
    const bool fp8 = (at == Type::e4m3 || at == Type::e5m2) && (bt == Type::e4m3 || bt == Type::e5m2);
    const bool acc_ok = dt == Type::f32 || (dt == Type::f16 && (at == Type::f16 || fp8));
    const int k = half ? 16 : 32;
    const int n = d.extent;
    if (!(half || fp8) || !acc_ok || d.vec != k || n < 8 || n > 256 || n % 8 != 0)
      fail(line, text,
           "wgmma.mma_async forms simulated: m64nNk16 with f16 or bf16 inputs (f32 accumulators, or f16 for f16 "
           "inputs) and m64nNk32 with e4m3/e5m2 inputs (f32 or f16 accumulators), N = 8..256 in steps of 8");
    const bool a_in_registers = d.ops.size() > 1 && d.ops[1].size() != 1;
    need(d, half ? (a_in_registers ? 7 : 8) : 6, line, text);
    const std::size_t acc_regs = static_cast<std::size_t>(dt == Type::f32 ? n / 2 : n / 4);
    if (d.ops[0].size() != acc_regs)
      fail(line, text, "wgmma's d must be a vector of " + std::to_string(acc_regs) + " registers");
    const auto not_register = [](const Arg& a) { return a.kind != Arg::Kind::reg; };
    if (a_in_registers && (d.ops[1].size() != 4 || std::ranges::any_of(d.ops[1], not_register)))
      fail(line, text,
           "wgmma's A from registers must be a vector of 4 .b32 registers, no immediates or _ (PTX ISA "
           "9.7.15.5.1.1); it has " +
               std::to_string(d.ops[1].size()) + " operands");
    if (!a_in_registers && d.op0(1).kind == Arg::Kind::sink)
      fail(line, text, "wgmma's A is the sink _; give A's matrix descriptor or its 4 fragment registers");
    for (std::size_t i = 4; i < d.ops.size(); ++i) {
      const Arg& a = d.op0(i);
      const auto v = static_cast<std::int64_t>(a.bits);
      const bool scale = i < 6;
      if (a.kind != Arg::Kind::imm || (scale ? v != 1 && v != -1 : v != 0 && v != 1))
        fail(line, text,
             std::string(scale ? "imm-scale-a/b must be the immediate 1 or -1" : "imm-trans-a/b must be the immediate 0 or 1"));
    }
  }

  // The floating-point wmma forms (ptx/vocabulary_wmma.hpp): loads and
  // stores take .type (one), mma .dtype.ctype (f16 inputs) or
  // .dtype.atype.btype.ctype; the fragments their registers.
  void validate_wmma(const Inst& d, int line, const std::string& text) const {
    using ptx::WmmaMatrix;
    const auto op = static_cast<WmmaOp>(d.extent);
    const auto shape = static_cast<MmaShape>(d.mode);
    if (!ptx::wmma_dims(shape))
      fail(line, text, "wmma needs a shape: m16n16k16, m32n8k16, m8n32k16 or m16n16k8");
    auto registers = [&](std::size_t i, WmmaMatrix x, Type t, const char* what) {
      const int n = ptx::wmma_fragment_registers(shape, x, t);
      if (d.ops[i].size() != static_cast<std::size_t>(n) ||
          std::ranges::any_of(d.ops[i], [](const Arg& a) { return a.kind != Arg::Kind::reg; }))
        fail(line, text,
             std::string(what) + " must be a vector of " + std::to_string(n) + " registers");
    };
    if (op == WmmaOp::mma) {
      need(d, 4, line, text);
      if (d.ntypes != 2 && d.ntypes != 4)
        fail(line, text, "wmma.mma needs .dtype.ctype (f16 inputs) or .dtype.atype.btype.ctype");
      const Type dt = d.types[0], ct = d.types[d.ntypes - 1];
      const Type at = d.ntypes == 4 ? d.types[1] : Type::f16;
      const Type bt = d.ntypes == 4 ? d.types[2] : Type::f16;
      std::string why = at != bt ? "A and B types differ" : ptx::wmma_form_error(shape, at, dt);
      if (why.empty()) why = ptx::wmma_form_error(shape, at, ct);
      if (!why.empty()) fail(line, text, "wmma.mma: " + why);
      registers(0, WmmaMatrix::d, dt, "wmma.mma's d");
      registers(1, WmmaMatrix::a, at, "wmma.mma's a");
      registers(2, WmmaMatrix::b, bt, "wmma.mma's b");
      registers(3, WmmaMatrix::c, ct, "wmma.mma's c");
      return;
    }
    if (d.ntypes != 1) fail(line, text, "a wmma load or store needs one element type");
    const Type t = d.types[0];
    const bool store = op == WmmaOp::store_d;
    const WmmaMatrix x = op == WmmaOp::load_a   ? WmmaMatrix::a
                         : op == WmmaOp::load_b ? WmmaMatrix::b
                         : op == WmmaOp::load_c ? WmmaMatrix::c
                                                : WmmaMatrix::d;
    if (const std::string why = ptx::wmma_element_error(shape, x, t); !why.empty())
      fail(line, text, std::string("wmma ") + (store ? "store" : "load") + " of " + why);
    if (d.ops.size() != 2 && d.ops.size() != 3)
      fail(line, text, "a wmma load or store takes a fragment, an address and an optional stride");
    registers(store ? 1 : 0, x, t, store ? "wmma.store's source" : "wmma.load's destination");
  }

  void need(const Inst& d, std::size_t n, int line, const std::string& text) const {
    if (d.ops.size() != n)
      fail(line, text,
           "expects " + std::to_string(n) + " operands, has " + std::to_string(d.ops.size()));
  }

  void validate(const Inst& d, int line, const std::string& text) const {
    auto parts = [&](std::size_t i, std::size_t n, const char* what) {
      if (d.ops.size() <= i || d.ops[i].size() != n)
        fail(line, text,
             std::string(what) + " must be a vector of " + std::to_string(n) + " registers");
    };
    switch (d.op) {
      case Op::mma: {
        need(d, 4, line, text);
        if (d.ntypes != 4) fail(line, text, "mma needs .dtype.atype.btype.ctype");
        const Type dt = d.types[0], at = d.types[1], bt = d.types[2], ct = d.types[3];
        const auto shape = static_cast<MmaShape>(d.mode);
        const bool half =
            (at == Type::f16 && bt == Type::f16) || (at == Type::bf16 && bt == Type::bf16);
        const bool fp8 =
            (at == Type::e4m3 || at == Type::e5m2) && (bt == Type::e4m3 || bt == Type::e5m2);
        const bool acc_ok = (dt == Type::f32 && ct == Type::f32) ||
                            (dt == Type::f16 && ct == Type::f16 && (at == Type::f16 || fp8));
        const bool shape_ok = shape == MmaShape::m16n8k32 ? fp8 : half;
        if (!acc_ok || !shape_ok)
          fail(line, text,
               "mma.sync combinations simulated: m16n8k8/m16n8k16 with f16 or bf16 inputs "
               "(f32 accumulators, or f16 for f16 inputs) and m16n8k32 with e4m3/e5m2 inputs");
        const int k = shape == MmaShape::m16n8k8 ? 8 : shape == MmaShape::m16n8k16 ? 16 : 32;
        const std::size_t acc_regs = dt == Type::f32 ? 4 : 2;
        parts(0, acc_regs, "mma's d");
        parts(1, k == 8 ? 2 : 4, "mma's a");
        parts(2, k == 8 ? 1 : 2, "mma's b");
        parts(3, acc_regs, "mma's c");
        return;
      }
      case Op::wmma:
        return validate_wmma(d, line, text);
      case Op::ldmatrix:
        need(d, 2, line, text);
        parts(0, d.vec, "ldmatrix's destination");
        return;
      case Op::stmatrix:
        need(d, 2, line, text);
        parts(1, d.vec, "stmatrix's source");
        return;
      case Op::ld:
        need(d, 2, line, text);
        parts(0, d.vec, "ld's destination");
        return;
      case Op::st:
        need(d, 2, line, text);
        parts(1, d.vec, "st's source");
        return;
      case Op::shfl:
        need(d, 5, line, text);
        return;
      case Op::cp_async:
        if (d.ops.size() < 3 || d.ops.size() > 4)
          fail(line, text, "cp.async takes [dst], [src], size[, src-size]");
        if (d.ops[2][0].kind != Arg::Kind::imm)
          fail(line, text, "cp.async's copy size must be an immediate");
        if (d.ops[2][0].bits != 4 && d.ops[2][0].bits != 8 && d.ops[2][0].bits != 16)
          fail(line, text, "cp.async copies 4, 8 or 16 bytes");
        return;
      case Op::cvt:
        if (d.ntypes != 2) fail(line, text, "cvt needs .dtype.atype");
        return;
      case Op::tcgen05:
      case Op::tcgen05_sync:
        if (std::string why = validate_tcgen05(d); !why.empty()) fail(line, text, why);
        break;
      case Op::wgmma:
        validate_wgmma(d, line, text);
        return;
      case Op::setmaxnreg: {
        need(d, 1, line, text);
        const Arg& n = d.op0(0);
        if (n.kind != Arg::Kind::imm || n.bits % 8 != 0 || n.bits < 24 || n.bits > 256)
          fail(line, text, "setmaxnreg's register count must be an immediate multiple of 8 in 24..256");
        return;
      }
      case Op::bulk_wait:
        need(d, 1, line, text);
        if (d.op0(0).kind != Arg::Kind::imm) fail(line, text, "cp.async.bulk.wait_group's count must be an immediate");
        return;
      case Op::tensor_copy: {
        const bool load = static_cast<TensorCopyDir>(d.mode) == TensorCopyDir::global_to_shared;
        const std::size_t tensor = load ? 1 : 0;
        const std::size_t expected = load ? 3 + (d.multicast ? 1 : 0) : 2;
        // .L2::cache_hint adds a 64-bit policy operand at the end, ignored as the hint it is
        const std::size_t hint = cache_hint_ ? 1 : 0;
        if (d.ops.size() != expected + hint)
          fail(line, text,
               load ? "a TMA load takes [dstMem], [tensorMap, {coordinates}], [mbar]" +
                          std::string(d.multicast ? ", ctaMask" : "")
                    : "a TMA store takes [tensorMap, {coordinates}], [srcMem]");
        if (d.ops[tensor].size() != std::size_t{d.extent} + 1)
          fail(line, text,
               "a ." + std::to_string(d.extent) + "d tensor copy takes " + std::to_string(d.extent) +
                   " coordinates, as [tensorMap, {c0, ...}]");
        return;
      }
      case Op::mapa:
        need(d, 3, line, text);
        return;
      case Op::bulk_copy:
        need(d, 4, line, text);
        return;
      default:
        // Arithmetic, logic, comparison and conversion all name their type.
        if (d.ntypes == 0 && d.op < Op::cvta) fail(line, text, "instruction needs a type modifier");
        return;
    }
  }

  const ptx::Module& module_;
  const ptx::Function& function_;
  const ModuleSymbols& module_symbols_;
  SourceLines sources_;
  Kernel kernel_;
  int line_ = 0;
  std::vector<Pending> pending_;
  std::unordered_map<std::string, std::uint32_t> slots_;
  std::set<std::uint32_t> wide_slots_;  // the 64-bit registers' slots
  std::unordered_map<std::string, std::uint32_t> labels_;
  std::unordered_map<std::string, SymbolInfo> symbols_;
  std::vector<std::string> extern_names_;
  mutable SymbolInfo extern_symbol_;
  std::uint32_t shared_top_ = 0;
  std::uint32_t extern_align_ = 16;
  std::uint32_t local_top_ = 0;
  bool cache_hint_ = false;  // the instruction being validated has .L2::cache_hint
  // Device function calls: the call depth of the code being collected (0:
  // the kernel's body), the copies of functions by (item, depth) with their
  // names' suffix, those not yet collected, each function's first body line.
  struct QueuedCopy {
    std::size_t item;
    int depth;
    std::string suffix;
  };
  int depth_ = 0;
  ptx::Operand copy_return_;  // the return register of the copy being collected
  std::map<std::pair<std::size_t, int>, std::string> copies_;
  std::vector<QueuedCopy> queued_copies_;
  std::map<std::size_t, int> body_lines_;
  // .param variables declared in the body (call arguments and return
  // values): per-thread storage, in the local space; an instruction naming
  // one in a .param access reads or writes there.
  std::set<std::string> frame_params_;
  std::vector<std::map<std::string, std::string>> variable_scopes_;  // collect()'s, innermost last
  int redeclared_ = 0;
  bool names_frame_param_ = false;
};

}  // namespace

Kernel decode_kernel(const ptx::Module& module, std::size_t item_index,
                     const ModuleSymbols& symbols) {
  return KernelDecoder(module, item_index, symbols).run();
}

}  // namespace warpforge::sim
