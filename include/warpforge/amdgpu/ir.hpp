// The AMDGPU kernel IR: what amdgpu::AmdKernel builds, what the LLVM-IR emitter
// prints and what the wave64 simulator runs. Registers are mutable, typed and
// numbered (the emitter gives each an alloca that opt promotes to SSA); control
// flow is structured (if / counted loop), which is what the emitter lowers to
// branches and the simulator to exec-mask pushes and pops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "warpforge/amdgpu/mfma.hpp"
#include "warpforge/amdgpu/types.hpp"

namespace warpforge::amdgpu {

// clang-format off: grouped by kind, one comment per group
enum class Op {
  mov,  // d = a
  // i32 / i64 wrapping arithmetic; and, or, xor also on i1; shifts on i32 by less than 32
  add, sub, mul, and_, or_, xor_, shl, lshr, ashr,
  icmp,    // d:i1 = a <pred> b
  select,  // d = a ? b : c
  // f32, rounded to nearest even (fma once)
  fadd, fsub, fmul, fma,
  // i32 -> i64, i64 -> i32, i32 <-> f32, f32 <-> bf16 / f16 bit patterns in i16 (RNE)
  zext, trunc, sitofp, fptosi, f32_to_bf16, bf16_to_f32, f32_to_f16, f16_to_f32,
  bitcast,  // same size, bits unchanged
  extract,  // d = a[imm]
  insert,   // d = a with [imm] = b
  workitem_id, workgroup_id,  // imm: 0 = x, 1 = y, 2 = z
  readfirstlane,  // d = a of the wave's lowest active lane, in every lane
  param,         // d = kernel parameter #imm
  lds_base,      // d:ptr.lds = the kernel's LDS region + imm bytes
  ptr_add,       // d = a + (unsigned) b bytes
  load,          // d = *a  (global or LDS, by a's type)
  store,         // *a = b
  barrier,       // the workgroup meets; LDS writes before are seen after
  mfma,          // d = a * b + c, imm = Mfma
  make_rsrc,     // d:v4i32 = buffer descriptor of base a, b bytes in range
  buffer_load,   // d = rsrc a at byte offset b, zero where out of range
  buffer_store,  // rsrc a at byte offset b = c, dropped where out of range
};
// clang-format on

enum class Cmp { eq, ne, ult, ule, ugt, uge, slt, sle, sgt, sge };

const char* op_name(Op op);
const char* cmp_name(Cmp c);

struct Operand {
  bool is_reg = true;
  int reg = -1;  // register number when is_reg
  Type type = Type::i32;
  std::uint64_t bits = 0;  // the immediate's bits (f32 as its IEEE pattern)
};

struct Inst {
  Op op;
  int dst = -1;  // the register written, -1 for none
  std::vector<Operand> args;
  std::int64_t imm = 0;  // dimension, parameter index, element index, Mfma
  Cmp cmp = Cmp::eq;
  Type type = Type::i32;  // the result (or stored) type
};

struct Stmt;
using Block = std::vector<Stmt>;

struct Stmt {
  enum class Kind { inst, if_, loop };
  Kind kind = Kind::inst;
  Inst inst{};   // Kind::inst
  Operand cond;  // Kind::if_ (i1)
  Block then_body, else_body;
  int counter = -1;  // Kind::loop: for (counter = begin; counter <u end; counter += step)
  Operand begin, end;
  std::int32_t step = 1;
  Block body;
};

struct Param {
  std::string name;
  Type type;  // ptr.global, i32 or f32
};

struct KernelIR {
  std::string name;
  int workgroup_size = 64;      // work-items per workgroup (one dimension)
  std::uint32_t lds_bytes = 0;  // the LDS region, bytes
  std::vector<Param> params;
  std::vector<Type> regs;  // register number -> type
  Block body;
};

// One instruction as text, for listings and error messages:
// "%12:v4i32 = load %5:ptr.global".
std::string to_string(const Inst& inst);

}  // namespace warpforge::amdgpu
