#include "decode.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "float_format.hpp"
#include "tcgen05_decode.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/ptx/scopes.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;
using K = ptx::Operand::Kind;

const std::unordered_map<std::string, Op>& opcode_table() {
  static const std::unordered_map<std::string, Op> table = {
      {"mov", Op::mov},
      {"add", Op::add},
      {"sub", Op::sub},
      {"mul", Op::mul},
      {"mad", Op::mad},
      {"div", Op::div},
      {"rem", Op::rem},
      {"abs", Op::abs},
      {"neg", Op::neg},
      {"min", Op::min},
      {"max", Op::max},
      {"and", Op::and_},
      {"or", Op::or_},
      {"xor", Op::xor_},
      {"not", Op::not_},
      {"cnot", Op::cnot},
      {"shl", Op::shl},
      {"shr", Op::shr},
      {"lop3", Op::lop3},
      {"prmt", Op::prmt},
      {"bfe", Op::bfe},
      {"bfi", Op::bfi},
      {"popc", Op::popc},
      {"clz", Op::clz},
      {"brev", Op::brev},
      {"setp", Op::setp},
      {"selp", Op::selp},
      {"fma", Op::fma},
      {"rcp", Op::rcp},
      {"sqrt", Op::sqrt},
      {"rsqrt", Op::rsqrt},
      {"ex2", Op::ex2},
      {"lg2", Op::lg2},
      {"sin", Op::sin},
      {"cos", Op::cos},
      {"tanh", Op::tanh},
      {"cvt", Op::cvt},
      {"cvta", Op::cvta},
      {"ld", Op::ld},
      {"ldu", Op::ld},
      {"st", Op::st},
      {"atom", Op::atom},
      {"red", Op::red},
      {"membar", Op::fence},
      {"fence", Op::fence},
      {"shfl", Op::shfl},
      {"vote", Op::vote},
      {"redux", Op::redux},
      {"activemask", Op::activemask},
      {"elect", Op::elect},
      {"mma", Op::mma},
      {"ldmatrix", Op::ldmatrix},
      {"stmatrix", Op::stmatrix},
      {"bra", Op::bra},
      {"ret", Op::exit},
      {"exit", Op::exit},
  };
  return table;
}

const std::unordered_map<std::string, SReg>& sreg_table() {
  static const std::unordered_map<std::string, SReg> table = {
      {"%tid.x", SReg::tid_x},
      {"%tid.y", SReg::tid_y},
      {"%tid.z", SReg::tid_z},
      {"%ntid.x", SReg::ntid_x},
      {"%ntid.y", SReg::ntid_y},
      {"%ntid.z", SReg::ntid_z},
      {"%ctaid.x", SReg::ctaid_x},
      {"%ctaid.y", SReg::ctaid_y},
      {"%ctaid.z", SReg::ctaid_z},
      {"%nctaid.x", SReg::nctaid_x},
      {"%nctaid.y", SReg::nctaid_y},
      {"%nctaid.z", SReg::nctaid_z},
      {"%laneid", SReg::laneid},
      {"%warpid", SReg::warpid},
      {"%nwarpid", SReg::nwarpid},
      {"%smid", SReg::smid},
      {"%nsmid", SReg::nsmid},
      {"%gridid", SReg::gridid},
      {"%clock", SReg::clock},
      {"%clock64", SReg::clock64},
      {"%globaltimer", SReg::globaltimer},
      {"%lanemask_eq", SReg::lanemask_eq},
      {"%lanemask_lt", SReg::lanemask_lt},
      {"%lanemask_le", SReg::lanemask_le},
      {"%lanemask_gt", SReg::lanemask_gt},
      {"%lanemask_ge", SReg::lanemask_ge},
      {"%dynamic_smem_size", SReg::dynamic_smem_size},
      {"%total_smem_size", SReg::total_smem_size},
      {"%clusterid.x", SReg::clusterid_x},
      {"%clusterid.y", SReg::clusterid_y},
      {"%clusterid.z", SReg::clusterid_z},
      {"%nclusterid.x", SReg::nclusterid_x},
      {"%nclusterid.y", SReg::nclusterid_y},
      {"%nclusterid.z", SReg::nclusterid_z},
      {"%cluster_ctaid.x", SReg::cluster_ctaid_x},
      {"%cluster_ctaid.y", SReg::cluster_ctaid_y},
      {"%cluster_ctaid.z", SReg::cluster_ctaid_z},
      {"%cluster_nctaid.x", SReg::cluster_nctaid_x},
      {"%cluster_nctaid.y", SReg::cluster_nctaid_y},
      {"%cluster_nctaid.z", SReg::cluster_nctaid_z},
      {"%cluster_ctarank", SReg::cluster_ctarank},
      {"%cluster_nctarank", SReg::cluster_nctarank},
      {"%is_explicit_cluster", SReg::is_explicit_cluster},
  };
  return table;
}

// Modifiers that change nothing the simulator can observe: cache and eviction
// hints, memory-model scopes and orders (every access here is sequentially
// consistent), and the .sync/.aligned promises that the scheduler checks by
// construction.
bool is_ignorable(const std::string& m) {
  static const std::set<std::string> words = {"ca",
                                              "cg",
                                              "cs",
                                              "lu",
                                              "cv",
                                              "wb",
                                              "wt",
                                              "nc",
                                              "volatile",
                                              "relaxed",
                                              "acquire",
                                              "release",
                                              "acq_rel",
                                              "weak",
                                              "sc",
                                              "gpu",
                                              "gl",
                                              "cta",
                                              "sys",
                                              "cluster",
                                              "sync",
                                              "aligned",
                                              "full",
                                              "approx",
                                              "L1::no_allocate",
                                              "L1::evict_normal",
                                              "L1::evict_first",
                                              "L1::evict_last",
                                              "L1::evict_unchanged",
                                              "L2::evict_normal",
                                              "L2::evict_first",
                                              "L2::evict_last",
                                              "L2::cache_hint",
                                              "L2::64B",
                                              "L2::128B",
                                              "L2::256B",
                                              "noftz",
                                              "proxy",
                                              "async",
                                              "mbarrier_init",
                                              "uni"};
  return words.count(m) != 0;
}

std::optional<Cmp> parse_cmp(const std::string& m) {
  static const std::unordered_map<std::string, Cmp> t = {
      {"eq", Cmp::eq},   {"ne", Cmp::ne},   {"lt", Cmp::lt},   {"le", Cmp::le},   {"gt", Cmp::gt},
      {"ge", Cmp::ge},   {"lo", Cmp::lo},   {"ls", Cmp::ls},   {"hi", Cmp::hi},   {"hs", Cmp::hs},
      {"equ", Cmp::equ}, {"neu", Cmp::neu}, {"ltu", Cmp::ltu}, {"leu", Cmp::leu}, {"gtu", Cmp::gtu},
      {"geu", Cmp::geu}, {"num", Cmp::num}, {"nan", Cmp::nan}};
  auto it = t.find(m);
  if (it == t.end()) return std::nullopt;
  return it->second;
}

std::optional<AtomOp> parse_atom_op(const std::string& m) {
  static const std::unordered_map<std::string, AtomOp> t = {
      {"add", AtomOp::add}, {"min", AtomOp::min},  {"max", AtomOp::max}, {"exch", AtomOp::exch},
      {"cas", AtomOp::cas}, {"and", AtomOp::and_}, {"or", AtomOp::or_},  {"xor", AtomOp::xor_},
      {"inc", AtomOp::inc}, {"dec", AtomOp::dec}};
  auto it = t.find(m);
  if (it == t.end()) return std::nullopt;
  return it->second;
}

class KernelDecoder {
 public:
  KernelDecoder(const ptx::Module& module, std::size_t item_index, const ModuleSymbols& symbols)
      : function_(std::get<ptx::Function>(module.items[item_index])), module_symbols_(symbols) {
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
    for (const auto& [inst, line] : pending_) kernel_.code.push_back(decode(inst, line));
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
      symbols_[p.name] = {MemSpace::param, offset};
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
    symbols_[v.name] = {MemSpace::shared, shared_top_};
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
          for (int i = 0; i < *v.range; ++i) add_register(v.name + std::to_string(i));
        } else {
          add_register(v.name);
        }
        return;
      case ptx::Space::shared:
        place_shared(v);
        return;
      case ptx::Space::local: {
        std::uint32_t align =
            v.align ? v.align : std::max<std::uint32_t>(1, (ptx::bits(v.type) + 7) / 8);
        local_top_ = align_up(local_top_, align);
        symbols_[v.name] = {MemSpace::local, local_top_};
        local_top_ += static_cast<std::uint32_t>(v.size_bytes());
        return;
      }
      default:
        fail(line_, ptx::emit(v),
             "declarations in ." + std::string(ptx::name(v.space)) +
                 " inside a kernel body are not simulated");
    }
  }

  void add_register(const std::string& name) {
    if (!slots_.count(name)) slots_.emplace(name, static_cast<std::uint32_t>(slots_.size()));
  }

  // Walks the body as the emitter prints it, one line per statement, braces
  // of nested blocks on their own lines.
  void collect(const ptx::Block& block) {
    for (const auto& s : block.body) {
      if (const auto* inst = std::get_if<ptx::Instruction>(&s)) {
        pending_.push_back({*inst, line_++});
      } else if (const auto* label = std::get_if<ptx::Label>(&s)) {
        labels_[label->name] = static_cast<std::uint32_t>(pending_.size());
        ++line_;
      } else if (const auto* var = std::get_if<ptx::Variable>(&s)) {
        declare(*var);
        ++line_;
      } else if (std::holds_alternative<ptx::Directive>(s)) {
        ++line_;
      } else if (const auto* nested = std::get_if<ptx::Block>(&s)) {
        ++line_;
        collect(*nested);
        ++line_;
      }
    }
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
        auto it = sreg_table().find(o.text);
        if (it == sreg_table().end())
          fail(line, text, "special register " + o.text + " is not simulated");
        a.kind = Arg::Kind::sreg;
        a.sreg = it->second;
        return a;
      }
      case K::imm_int:
      case K::imm_float:
        a.kind = Arg::Kind::imm;
        a.bits = encode_immediate(o, imm_type);
        return a;
      case K::symbol: {
        const SymbolInfo* s = find_symbol(o.text);
        if (!s) {
          // A register name the builder wrote as a symbol still names the register.
          if (slots_.count(o.text)) return scalar(ptx::Operand::reg(o.text), imm_type, line, text);
          fail(line, text, "symbol '" + o.text + "' is not a variable or parameter of this module");
        }
        a.kind = s->space == MemSpace::shared ? Arg::Kind::shared_symbol : Arg::Kind::imm;
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
      extern_symbol_ = {MemSpace::shared, align_up(shared_top_, extern_align_)};
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
    auto it = opcode_table().find(in.opcode);
    std::vector<std::string> mods = in.modifiers;
    if (in.opcode == "barrier" && in.has_modifier("cluster")) {
      // barrier.cluster.arrive[.release|.relaxed][.aligned] / .wait[.acquire][.aligned] (PTX ISA 9.7.13.3)
      if (in.has_modifier("arrive"))
        d.op = Op::cluster_arrive;
      else if (in.has_modifier("wait"))
        d.op = Op::cluster_wait;
      else
        fail(line, text, "barrier.cluster takes .arrive or .wait");
      std::erase_if(mods, [](const std::string& m) { return m == "arrive" || m == "wait"; });
    } else if (in.opcode == "bar" || in.opcode == "barrier") {
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
    } else if (in.opcode == "mbarrier" || (in.opcode == "cp" && in.has_modifier("mbarrier"))) {
      d.op = Op::mbarrier;
      MbarrierOp op;
      if (in.opcode == "cp")
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
      else
        fail(line, d.text, "this mbarrier operation is not simulated");
      d.mode = static_cast<std::uint8_t>(op);
      // .parity for the waits, .noinc for cp.async.mbarrier.arrive
      d.parity = in.has_modifier("parity") || in.has_modifier("noinc");
      std::erase_if(mods, [](const std::string& m) {
        return m == "init" || m == "arrive" || m == "expect_tx" || m == "complete_tx" ||
               m == "test_wait" || m == "try_wait" || m == "parity" || m == "noinc" ||
               m == "mbarrier" || m == "async";
      });
    } else if (in.opcode == "cp" && in.has_modifier("bulk")) {
      decode_bulk(in, d, mods, line);
    } else if (in.opcode == "wgmma") {
      decode_wgmma(in, d, mods, line);
    } else if (in.opcode == "tcgen05") {  // tcgen05_decode.cpp
      if (std::string why = decode_tcgen05(in, d, mods); !why.empty()) fail(line, d.text, why);
    } else if (in.opcode == "setmaxnreg") {
      // setmaxnreg.{inc,dec}.sync.aligned.u32 N (PTX ISA 9.7.19.7): a hint to
      // the register allocator with no effect the simulator models, but
      // checked: N and the warpgroup that must execute it together.
      d.op = Op::setmaxnreg;
      std::erase_if(mods, [](const std::string& m) { return m == "inc" || m == "dec"; });
    } else if (in.opcode == "mapa") {
      d.op = Op::mapa;
    } else if (in.opcode == "cp" && in.has_modifier("async")) {
      if (in.has_modifier("commit_group"))
        d.op = Op::cp_async_commit;
      else if (in.has_modifier("wait_group"))
        d.op = Op::cp_async_wait_group;
      else if (in.has_modifier("wait_all"))
        d.op = Op::cp_async_wait_all;
      else
        d.op = Op::cp_async;
      std::erase_if(mods, [](const std::string& m) {
        return m == "commit_group" || m == "wait_group" || m == "wait_all";
      });
    } else if (in.opcode == "nanosleep" || in.opcode == "prefetch" || in.opcode == "prefetchu") {
      // Scheduling and cache hints (prefetch.tensormap included): nothing a
      // thread can observe.
      d.op = Op::fence;
      mods.clear();
    } else if (it != opcode_table().end()) {
      d.op = it->second;
    } else {
      fail(line, text, "instruction '" + in.opcode + "' is not simulated");
    }
    parse_modifiers(d, mods, line, text);
    if (in.guard) {
      auto g = slots_.find(in.guard->pred);
      if (g == slots_.end())
        fail(line, text, "guard predicate " + in.guard->pred + " is not declared");
      d.guarded = true;
      d.guard.kind = Arg::Kind::reg;
      d.guard.slot = g->second;
      d.guard.negated = in.guard->negated;
    }
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
    if (d.op == Op::bra) {
      if (d.ops.size() != 1 || in.operands[0].kind != K::label)
        fail(line, text, "bra takes one label");
      d.target = static_cast<std::uint32_t>(d.ops[0][0].bits);
    }
    cache_hint_ = in.has_modifier("L2::cache_hint");
    validate(d, line, text);
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

  void parse_modifiers(Inst& d, const std::vector<std::string>& mods, int line,
                       const std::string& text) {
    for (const auto& m : mods) {
      if (auto t = ptx::parse_type(m)) {
        if (d.ntypes == d.types.size()) fail(line, text, "too many type modifiers");
        d.types[d.ntypes++] = *t;
        continue;
      }
      if (d.op == Op::setp) {
        if (auto c = parse_cmp(m)) {
          d.mode = static_cast<std::uint8_t>(*c);
          continue;
        }
        if (m == "and") {
          d.combine = BoolOp::and_;
          continue;
        }
        if (m == "or") {
          d.combine = BoolOp::or_;
          continue;
        }
        if (m == "xor") {
          d.combine = BoolOp::xor_;
          continue;
        }
      }
      if (d.op == Op::atom || d.op == Op::red || d.op == Op::redux) {
        if (auto a = parse_atom_op(m)) {
          d.mode = static_cast<std::uint8_t>(*a);
          continue;
        }
      }
      if (d.op == Op::shfl) {
        static const std::unordered_map<std::string, ShflMode> t = {{"up", ShflMode::up},
                                                                    {"down", ShflMode::down},
                                                                    {"bfly", ShflMode::bfly},
                                                                    {"idx", ShflMode::idx}};
        if (auto s = t.find(m); s != t.end()) {
          d.mode = static_cast<std::uint8_t>(s->second);
          continue;
        }
      }
      if (d.op == Op::vote) {
        static const std::unordered_map<std::string, VoteMode> t = {{"all", VoteMode::all},
                                                                    {"any", VoteMode::any},
                                                                    {"uni", VoteMode::uni},
                                                                    {"ballot", VoteMode::ballot}};
        if (auto s = t.find(m); s != t.end()) {
          d.mode = static_cast<std::uint8_t>(s->second);
          continue;
        }
      }
      if (d.op == Op::mul || d.op == Op::mad) {
        if (m == "lo") {
          d.mode = static_cast<std::uint8_t>(MulMode::lo);
          continue;
        }
        if (m == "hi") {
          d.mode = static_cast<std::uint8_t>(MulMode::hi);
          continue;
        }
        if (m == "wide") {
          d.mode = static_cast<std::uint8_t>(MulMode::wide);
          continue;
        }
      }
      if (d.op == Op::mma) {
        if (m == "m16n8k8") {
          d.mode = static_cast<std::uint8_t>(MmaShape::m16n8k8);
          continue;
        }
        if (m == "m16n8k16") {
          d.mode = static_cast<std::uint8_t>(MmaShape::m16n8k16);
          continue;
        }
        if (m == "m16n8k32") {
          d.mode = static_cast<std::uint8_t>(MmaShape::m16n8k32);
          continue;
        }
        if (m == "row" || m == "col")
          continue;  // only row.col exists for these shapes (checked below)
      }
      if (d.op == Op::ldmatrix || d.op == Op::stmatrix) {
        if (m == "m8n8") continue;
        if (m == "x1" || m == "x2" || m == "x4") {
          d.vec = static_cast<std::uint8_t>(m[1] - '0');
          continue;
        }
      }
      if (m == "global") {
        d.space = MemSpace::global;
        continue;
      }
      if (m == "shared" || m == "shared::cta" || m == "shared::cluster") {
        d.space = MemSpace::shared;
        continue;
      }
      if (m == "local") {
        d.space = MemSpace::local;
        continue;
      }
      if (m == "param" || m == "param::entry") {
        d.space = MemSpace::param;
        continue;
      }
      if (m == "const") {
        d.space = MemSpace::const_;
        continue;
      }
      if (m == "rn" || m == "rni") {
        d.rounding = Rounding::rn;
        d.integral = m.size() == 3;
        continue;
      }
      if (m == "rz" || m == "rzi") {
        d.rounding = Rounding::rz;
        d.integral = m.size() == 3;
        continue;
      }
      if (m == "rm" || m == "rmi") {
        d.rounding = Rounding::rm;
        d.integral = m.size() == 3;
        continue;
      }
      if (m == "rp" || m == "rpi") {
        d.rounding = Rounding::rp;
        d.integral = m.size() == 3;
        continue;
      }
      if (m == "rna") {
        d.rounding = Rounding::rna;
        continue;
      }
      if (m == "ftz") {
        d.ftz = true;
        continue;
      }
      if (m == "sat") {
        d.sat = true;
        continue;
      }
      if (m == "satfinite") {
        d.satfinite = true;
        continue;
      }
      if (m == "relu") {
        d.relu = true;
        continue;
      }
      if (m == "trans") {
        d.trans = true;
        continue;
      }
      if (m == "to") {
        d.to = true;
        continue;
      }
      if (m == "v2") {
        d.vec = 2;
        continue;
      }
      if (m == "v4") {
        d.vec = 4;
        continue;
      }
      if (is_ignorable(m)) continue;
      fail(line, text, "modifier ." + m + " is not simulated");
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

  const ptx::Function& function_;
  const ModuleSymbols& module_symbols_;
  Kernel kernel_;
  int line_ = 0;
  std::vector<std::pair<ptx::Instruction, int>> pending_;
  std::unordered_map<std::string, std::uint32_t> slots_;
  std::unordered_map<std::string, std::uint32_t> labels_;
  std::unordered_map<std::string, SymbolInfo> symbols_;
  std::vector<std::string> extern_names_;
  mutable SymbolInfo extern_symbol_;
  std::uint32_t shared_top_ = 0;
  std::uint32_t extern_align_ = 16;
  std::uint32_t local_top_ = 0;
  bool cache_hint_ = false;  // the instruction being validated has .L2::cache_hint
};

}  // namespace

Kernel decode_kernel(const ptx::Module& module, std::size_t item_index,
                     const ModuleSymbols& symbols) {
  return KernelDecoder(module, item_index, symbols).run();
}

}  // namespace warpforge::sim
