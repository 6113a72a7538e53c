// Small kernels built as PTX IR by hand (there is no parser or DSL in this
// layer's tests), for the GPU tests of the runtime.
#pragma once

#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::runtime::gpu_testing {

inline ptx::Operand r(const std::string& name) { return ptx::Operand::reg(name); }
inline ptx::Operand at(const std::string& base, std::int64_t offset = 0) {
  return ptx::Operand::address(base[0] == '%' ? ptx::Operand::reg(base) : ptx::Operand::symbol(base), offset);
}

// One instruction: the dotted opcode and its operands.
inline ptx::Statement inst(const std::string& opcode, std::vector<ptx::Operand> operands) {
  ptx::Instruction i = ptx::Instruction::parse_opcode(opcode);
  i.operands = std::move(operands);
  return i;
}

inline ptx::Statement guarded(const std::string& pred, ptx::Statement s) {
  std::get<ptx::Instruction>(s).guard = ptx::Guard{pred, false};
  return s;
}

inline ptx::Variable regs(ptx::Type type, const std::string& prefix, int count) {
  return ptx::Variable{.space = ptx::Space::reg, .type = type, .name = prefix, .range = count};
}

inline ptx::Variable pointer_param(const std::string& name, int align) {
  ptx::Variable v{.space = ptx::Space::param, .type = ptx::Type::u64, .name = name};
  v.ptr = true;
  v.ptr_space = ptx::Space::global;
  v.ptr_align = align;
  return v;
}

inline ptx::Variable scalar_param(ptx::Type type, const std::string& name) {
  return ptx::Variable{.space = ptx::Space::param, .type = type, .name = name};
}

inline ptx::Module module_for(ptx::Target target) {
  ptx::Module m;
  const ptx::PtxVersion v = ptx::ptx_version(target);
  m.version_major = v.major;
  m.version_minor = v.minor;
  m.target = {std::string(ptx::name(target))};
  return m;
}

// %r5 = ctaid.x * ntid.x + tid.x (and %r4 = tid.x).
inline std::vector<ptx::Statement> global_index() {
  return {inst("mov.u32", {r("%r2"), ptx::Operand::sreg("%ctaid.x")}),
          inst("mov.u32", {r("%r3"), ptx::Operand::sreg("%ntid.x")}),
          inst("mov.u32", {r("%r4"), ptx::Operand::sreg("%tid.x")}),
          inst("mad.lo.s32", {r("%r5"), r("%r2"), r("%r3"), r("%r4")})};
}

// vadd(A, B, C, n): C[i] = A[i] + B[i] for i < n. `extra` is inserted before
// the first load (to plant an error).
inline ptx::Module vector_add(ptx::Target target, std::vector<ptx::Statement> extra = {}) {
  ptx::Module m = module_for(target);
  ptx::Function f;
  f.name = "vadd";
  f.params = {pointer_param("A", 4), pointer_param("B", 4), pointer_param("C", 4),
              scalar_param(ptx::Type::u32, "n")};
  std::vector<ptx::Statement> body = {
      regs(ptx::Type::pred, "%p", 2), regs(ptx::Type::b32, "%r", 8), regs(ptx::Type::f32, "%f", 4),
      regs(ptx::Type::b64, "%rd", 12),
      inst("ld.param.u64", {r("%rd1"), at("A")}),
      inst("ld.param.u64", {r("%rd2"), at("B")}),
      inst("ld.param.u64", {r("%rd3"), at("C")}),
      inst("ld.param.u32", {r("%r1"), at("n")}),
  };
  for (auto& s : global_index()) body.push_back(s);
  body.push_back(inst("setp.ge.u32", {r("%p1"), r("%r5"), r("%r1")}));
  body.push_back(guarded("%p1", inst("bra.uni", {ptx::Operand::label("$L_done")})));
  for (auto& s : extra) body.push_back(s);
  for (auto& s : std::vector<ptx::Statement>{
           inst("mul.wide.u32", {r("%rd4"), r("%r5"), ptx::Operand::imm(4)}),
           inst("cvta.to.global.u64", {r("%rd5"), r("%rd1")}),
           inst("cvta.to.global.u64", {r("%rd6"), r("%rd2")}),
           inst("cvta.to.global.u64", {r("%rd7"), r("%rd3")}),
           inst("add.s64", {r("%rd8"), r("%rd5"), r("%rd4")}),
           inst("add.s64", {r("%rd9"), r("%rd6"), r("%rd4")}),
           inst("add.s64", {r("%rd10"), r("%rd7"), r("%rd4")}),
           inst("ld.global.f32", {r("%f1"), at("%rd8")}),
           inst("ld.global.f32", {r("%f2"), at("%rd9")}),
           inst("add.f32", {r("%f3"), r("%f1"), r("%f2")}),
           inst("st.global.f32", {at("%rd10"), r("%f3")}),
       })
    body.push_back(s);
  body.push_back(ptx::Label{"$L_done"});
  body.push_back(inst("ret", {}));
  f.body = ptx::Block{std::move(body)};
  m.items.push_back(f);
  return m;
}

// shared_echo(out): each thread stores its %tid.x into dynamic shared memory
// at byte `offset` + 4 * tid, waits at a barrier, and copies the value back
// out, so it only runs when `offset` + 4 * ntid bytes of dynamic shared
// memory were granted.
inline ptx::Module shared_echo(ptx::Target target, std::int64_t offset) {
  ptx::Module m = module_for(target);
  m.items.push_back(ptx::Variable{.space = ptx::Space::shared, .linkage = ptx::Linkage::extern_,
                                  .type = ptx::Type::b8, .name = "dyn", .align = 16, .dims = {std::nullopt}});
  ptx::Function f;
  f.name = "shared_echo";
  f.params = {pointer_param("out", 4)};
  std::vector<ptx::Statement> body = {
      regs(ptx::Type::b32, "%r", 10), regs(ptx::Type::b64, "%rd", 6),
      inst("ld.param.u64", {r("%rd1"), at("out")}),
      inst("mov.u32", {r("%r1"), ptx::Operand::sreg("%tid.x")}),
      inst("mov.u32", {r("%r2"), ptx::Operand::symbol("dyn")}),
      inst("shl.b32", {r("%r3"), r("%r1"), ptx::Operand::imm(2)}),
      inst("add.u32", {r("%r4"), r("%r2"), r("%r3")}),
      inst("st.shared.u32", {at("%r4", offset), r("%r1")}),
      inst("bar.sync", {ptx::Operand::imm(0)}),
      inst("ld.shared.u32", {r("%r5"), at("%r4", offset)}),
      inst("cvta.to.global.u64", {r("%rd2"), r("%rd1")}),
      inst("mul.wide.u32", {r("%rd3"), r("%r1"), ptx::Operand::imm(4)}),
      inst("add.s64", {r("%rd4"), r("%rd2"), r("%rd3")}),
      inst("st.global.u32", {at("%rd4"), r("%r5")}),
      inst("ret", {}),
  };
  f.body = ptx::Block{std::move(body)};
  m.items.push_back(f);
  return m;
}

// cluster_rank(out): out[%ctaid.x] = %cluster_ctarank (PTX ISA 10.12, sm_90).
inline ptx::Module cluster_rank(ptx::Target target) {
  ptx::Module m = module_for(target);
  ptx::Function f;
  f.name = "cluster_rank";
  f.params = {pointer_param("out", 4)};
  std::vector<ptx::Statement> body = {
      regs(ptx::Type::b32, "%r", 4), regs(ptx::Type::b64, "%rd", 5),
      inst("ld.param.u64", {r("%rd1"), at("out")}),
      inst("mov.u32", {r("%r1"), ptx::Operand::sreg("%ctaid.x")}),
      inst("mov.u32", {r("%r2"), ptx::Operand::sreg("%cluster_ctarank")}),
      inst("cvta.to.global.u64", {r("%rd2"), r("%rd1")}),
      inst("mul.wide.u32", {r("%rd3"), r("%r1"), ptx::Operand::imm(4)}),
      inst("add.s64", {r("%rd4"), r("%rd2"), r("%rd3")}),
      inst("st.global.u32", {at("%rd4"), r("%r2")}),
      inst("ret", {}),
  };
  f.body = ptx::Block{std::move(body)};
  m.items.push_back(f);
  return m;
}

}  // namespace warpforge::runtime::gpu_testing
