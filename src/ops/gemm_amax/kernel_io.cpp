#include "kernel_io.hpp"

#include "minifloat_encode.hpp"

namespace warpforge::ops {

using namespace dsl;
using runtime::DType;

namespace {

void fold_abs_max(Kernel& k, Reg& thread_max, const Reg& v, const Pred& in) {
  Reg bits = k.reg(b32);
  k.mov(bits, v);
  Reg magnitude =
      bits.as(u32) & 0x7fffffffu;  // |v| as bits: unsigned order = value order, NaN on top
  Reg kept = k.reg(u32);
  k.selp(kept, magnitude, 0u, in);
  k.max(thread_max, thread_max, kept);
}

void store_c_element(Kernel& k, DType c, const Reg& pc, const Reg& element, const Reg& v,
                     const Pred& in) {
  switch (c) {
    case DType::f32: {
      Reg a = global_address(k, pc, element << 2u);
      k.guarded(in, [&] { k.st(Space::global, f32, at(a), v); });
      return;
    }
    case DType::f16:
    case DType::bf16: {
      Reg h = k.reg(b16);
      k.cvt(c == DType::f16 ? f16 : bf16, f32, h, v, {Round::rn});
      Reg a = global_address(k, pc, element << 1u);
      k.guarded(in, [&] { k.st(Space::global, b16, at(a), h); });
      return;
    }
    default: {  // e4m3, e5m2
      Reg code = emit_minifloat_encode(k, v, c);
      Reg narrow = k.reg(u16);
      k.cvt(narrow, code);
      Reg a = global_address(k, pc, element);
      k.guarded(in, [&] { k.st(Space::global, u8, at(a), narrow); });
      return;
    }
  }
}

}  // namespace

Reg global_address(Kernel& k, const Reg& base, const Reg& byte_offset) {
  Reg wide = k.reg(u64);
  k.cvt(wide, byte_offset);
  return base + wide;
}

Reg load_global_byte(Kernel& k, const Reg& base, const Reg& byte_offset) {
  Reg narrow = k.reg(u16);
  k.ld(Space::global, u8, narrow, at(global_address(k, base, byte_offset)));
  Reg byte = k.reg(u32);
  k.cvt(byte, narrow);
  return byte;
}

void epilogue_column_pair(Kernel& k, const GemmAmaxProblem& p, const Reg& pc, const Reg& batch,
                          const Reg& row, const Pred& row_in, const Reg& col, const Reg& v0,
                          const Reg& v1, Reg& thread_max) {
  Pred in0 = row_in && (col < imm(p.n));
  Pred in1 = row_in && (col < imm(p.n - 1));  // col + 1 < N
  fold_abs_max(k, thread_max, v0, in0);
  fold_abs_max(k, thread_max, v1, in1);
  Reg element = (row * imm(p.c.row)) + (col * imm(p.c.col)) + (batch * imm(p.c.batch));
  if (p.c_dtype != DType::e2m1) {
    store_c_element(k, p.c_dtype, pc, element, v0, in0);
    store_c_element(k, p.c_dtype, pc, element + imm(p.c.col), v1, in1);
    return;
  }
  Reg lo = emit_minifloat_encode(k, v0, DType::e2m1);
  Reg hi = emit_minifloat_encode(k, v1, DType::e2m1);
  Reg hi_kept = k.reg(u32);
  k.selp(hi_kept, hi, 0u, in1);
  Reg byte = lo | (hi_kept << 4u);
  Reg narrow = k.reg(u16);
  k.cvt(narrow, byte);
  Reg at_byte = global_address(k, pc, element >> 1u);
  k.guarded(in0, [&] { k.st(Space::global, u8, at(at_byte), narrow); });
}

}  // namespace warpforge::ops
