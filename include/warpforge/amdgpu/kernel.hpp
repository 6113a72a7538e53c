// amdgpu::AmdKernel: the DSL for AMD CDNA (wave64) kernels, in the PTX DSL's
// style. Registers are typed values (Val); one call adds one IR operation,
// which the emitter turns into one LLVM IR instruction or intrinsic call (the
// few that print a short fixed sequence say so); C++ loops unroll, and
// if_then / if_else / for_range make runtime control flow.
//
//   amdgpu::AmdKernel k("scale", amdgpu::Target::gfx942, 64);
//   Val x = k.param_ptr("x");
//   Val n = k.param_i32("n");
//   Val i = k.workitem_id(0);
//   k.if_then(i < n, [&] {
//     Val p = k.ptr_add(x, i << 2);
//     k.store(p, k.fmul(k.load(Type::f32, p), 2.0f));
//   });
//
// Integer operators (+ - * & | ^ << >>) work on i32 and i64 (and the bitwise
// ones on i1); comparisons (< <= > >= == !=) are unsigned on i32; k.icmp
// gives the signed ones. Misuse throws DslError naming the kernel, the
// operation, the operand and what would be accepted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "warpforge/amdgpu/ir.hpp"
#include "warpforge/amdgpu/target.hpp"

namespace warpforge::amdgpu {

class AmdKernel;

// A register of one kernel.
struct Val {
  AmdKernel* kernel = nullptr;
  int reg = -1;
  Type type = Type::i32;
};

// An operand: a register, or an immediate whose type is taken from the
// operation (an integer literal becomes i32 unless the other operand is i64; a
// float literal is f32).
struct Arg {
  Arg(Val v) : val(v) {}  // NOLINT: implicit on purpose, like the PTX DSL's operands
  Arg(int v) : is_imm(true), integer(v) {}
  Arg(std::int64_t v) : is_imm(true), integer(v) {}
  Arg(float v) : is_imm(true), is_float(true), real(v) {}
  Val val{};
  bool is_imm = false;
  bool is_float = false;
  std::int64_t integer = 0;
  float real = 0;
};

class AmdKernel {
 public:
  // workgroup_size: work-items per workgroup (1..1024), a multiple of 64 keeps
  // every wave full. It becomes "amdgpu-flat-work-group-size" (so LLVM
  // compiles for exactly that size) and the simulator's workgroup size.
  AmdKernel(std::string name, Target target, int workgroup_size);
  AmdKernel(const AmdKernel&) = delete;
  AmdKernel& operator=(const AmdKernel&) = delete;

  const KernelIR& ir() const { return ir_; }
  Target target() const { return target_; }
  const std::string& name() const { return ir_.name; }

  // Kernel parameters, in order: a global pointer, an i32, an f32.
  Val param_ptr(const std::string& name);
  Val param_i32(const std::string& name);
  Val param_f32(const std::string& name);

  Val reg(Type t);          // a fresh register, unwritten
  void mov(Val d, Arg a);   // d = a (same type)
  Val copy(Arg a, Type t);  // a fresh register holding a

  Val workitem_id(int dim);   // llvm.amdgcn.workitem.id.x; workgroups are one-dimensional, dim = 0
  Val workgroup_id(int dim);  // llvm.amdgcn.workgroup.id.{x,y,z}
  // llvm.amdgcn.readfirstlane: the value of the wave's lowest active lane, which
  // LLVM then knows to be the same in every lane (an SGPR): branches on it are
  // scalar and values chosen by it stay uniform.
  Val readfirstlane(Val a);  // i32

  Val add(Arg a, Arg b);
  Val sub(Arg a, Arg b);
  Val mul(Arg a, Arg b);
  Val bit_and(Arg a, Arg b);
  Val bit_or(Arg a, Arg b);
  Val bit_xor(Arg a, Arg b);
  Val shl(Arg a, Arg b);
  Val lshr(Arg a, Arg b);
  Val ashr(Arg a, Arg b);
  Val icmp(Cmp c, Arg a, Arg b);  // i1
  Val select(Arg cond, Arg a, Arg b);

  Val fadd(Arg a, Arg b);  // f32, round to nearest even
  Val fsub(Arg a, Arg b);
  Val fmul(Arg a, Arg b);
  Val fma(Arg a, Arg b, Arg c);  // llvm.fma.f32: one rounding

  Val zext(Val a);              // i32 -> i64
  Val trunc(Val a);             // i64 -> i32
  Val sitofp(Val a);            // i32 -> f32
  Val fptosi(Val a);            // f32 -> i32, toward zero
  Val f32_to_bf16(Val a);       // f32 -> bf16 bits (i16), RNE
  Val bf16_to_f32(Val a);       // bf16 bits -> f32, exact
  Val f32_to_f16(Val a);        // f32 -> f16 bits (i16), RNE
  Val f16_to_f32(Val a);        // f16 bits -> f32, exact
  Val bitcast(Type to, Val a);  // same size, bits unchanged
  Val extract(Val vec, int index);
  void insert(Val vec, int index, Arg element);  // vec[index] = element, in place

  // A new array in the workgroup's LDS (64 KiB in all on gfx90a and gfx942,
  // AMDGPUUsage "Memory Spaces"); returns its base.
  Val lds(std::uint32_t bytes, std::uint32_t align = 16);
  Val ptr_add(Val ptr, Arg bytes);  // global or LDS pointer + unsigned i32 bytes

  // Global or LDS (by the pointer's type) load and store of 2, 4, 8 or 16
  // bytes; the address must be aligned to the access size.
  Val load(Type t, Val ptr);
  void store(Val ptr, Arg value);
  // The workgroup barrier; prints fence release, llvm.amdgcn.s.barrier, fence
  // acquire (workgroup scope) so that LDS stores before it are visible after.
  void barrier();

  // d = a * b + c (d and c may be the same register).
  void mfma(Mfma m, Val d, Val a, Val b, Val c);

  // A raw buffer resource (V#) for [base, base + bytes): base in words 0-1,
  // num_records = bytes in word 2, stride 0, and word 3 = 0x00020000, the
  // data-format bits CDNA (gfx9) raw buffer access expects.
  Val make_rsrc(Val base, Arg bytes);
  // llvm.amdgcn.raw.buffer.load / store of i32, v2i32 or v4i32 (x1, x2, x4) at
  // a byte offset: out-of-range dwords read as zero and are not written.
  Val buffer_load(Type t, Val rsrc, Arg offset);
  void buffer_store(Val rsrc, Arg offset, Val value);

  void if_then(Arg cond, const std::function<void()>& then_body);
  void if_else(Arg cond, const std::function<void()>& then_body,
               const std::function<void()>& else_body);
  // for (i = begin; i <u end; i += step) body(i), at run time; step > 0.
  void for_range(Arg begin, Arg end, std::int32_t step, const std::function<void(Val)>& body);

 private:
  Val param(const std::string& name, Type type);
  [[noreturn]] void refuse(const std::string& op, const std::string& what) const;
  Operand operand(const std::string& op, const Arg& a, Type want) const;
  Operand operand_like(const std::string& op, const Arg& a, const Arg& other) const;
  Val emit(Inst inst);
  Val integer_binary(Op op, Arg a, Arg b);
  Val float_binary(Op op, Arg a, Arg b);
  Val convert(Op op, Val a, Type from, Type to);
  void check_own(const std::string& op, Val v) const;
  void nest(Block& block, const std::function<void()>& body);

  KernelIR ir_;
  Target target_;
  Block* current_;
};

inline Val operator+(Val a, Arg b) {
  return a.kernel->add(a, b);
}
inline Val operator-(Val a, Arg b) {
  return a.kernel->sub(a, b);
}
inline Val operator*(Val a, Arg b) {
  return a.kernel->mul(a, b);
}
inline Val operator&(Val a, Arg b) {
  return a.kernel->bit_and(a, b);
}
inline Val operator|(Val a, Arg b) {
  return a.kernel->bit_or(a, b);
}
inline Val operator^(Val a, Arg b) {
  return a.kernel->bit_xor(a, b);
}
inline Val operator<<(Val a, Arg b) {
  return a.kernel->shl(a, b);
}
inline Val operator>>(Val a, Arg b) {
  return a.kernel->lshr(a, b);
}
inline Val operator<(Val a, Arg b) {
  return a.kernel->icmp(Cmp::ult, a, b);
}
inline Val operator<=(Val a, Arg b) {
  return a.kernel->icmp(Cmp::ule, a, b);
}
inline Val operator>(Val a, Arg b) {
  return a.kernel->icmp(Cmp::ugt, a, b);
}
inline Val operator>=(Val a, Arg b) {
  return a.kernel->icmp(Cmp::uge, a, b);
}
inline Val operator==(Val a, Arg b) {
  return a.kernel->icmp(Cmp::eq, a, b);
}
inline Val operator!=(Val a, Arg b) {
  return a.kernel->icmp(Cmp::ne, a, b);
}

}  // namespace warpforge::amdgpu
