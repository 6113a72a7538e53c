#include "decode_checks.hpp"

#include <algorithm>

#include "operations.hpp"
#include "tcgen05_decode.hpp"
#include "warpforge/ptx/vocabulary_wmma.hpp"

namespace warpforge::sim {
namespace {

using ptx::Type;

std::string need(const Inst& d, std::size_t n) {
  if (d.ops.size() == n) return "";
  return "expects " + std::to_string(n) + " operands, has " + std::to_string(d.ops.size());
}

// Operand i is a vector of n parts.
std::string parts(const Inst& d, std::size_t i, std::size_t n, const char* what) {
  if (d.ops.size() > i && d.ops[i].size() == n) return "";
  return std::string(what) + " must be a vector of " + std::to_string(n) + " registers";
}

bool all_registers(const std::vector<Arg>& parts) {
  return std::ranges::all_of(parts, [](const Arg& a) { return a.kind == Arg::Kind::reg; });
}

// mma.sync (PTX ISA 9.7.14.5.14) in the forms simulated.
std::string check_mma(const Inst& d) {
  if (auto why = need(d, 4); !why.empty()) return why;
  if (d.ntypes != 4) return "mma needs .dtype.atype.btype.ctype";
  const Type dt = d.types[0], at = d.types[1], bt = d.types[2], ct = d.types[3];
  const auto shape = static_cast<MmaShape>(d.mode);
  const bool half = (at == Type::f16 && bt == Type::f16) || (at == Type::bf16 && bt == Type::bf16);
  const bool fp8 = (at == Type::e4m3 || at == Type::e5m2) && (bt == Type::e4m3 || bt == Type::e5m2);
  const bool acc_ok = (dt == Type::f32 && ct == Type::f32) ||
                      (dt == Type::f16 && ct == Type::f16 && (at == Type::f16 || fp8));
  const bool shape_ok = shape == MmaShape::m16n8k32 ? fp8 : half;
  if (!acc_ok || !shape_ok)
    return "mma.sync combinations simulated: m16n8k8/m16n8k16 with f16 or bf16 inputs "
           "(f32 accumulators, or f16 for f16 inputs) and m16n8k32 with e4m3/e5m2 inputs";
  const bool k8 = shape == MmaShape::m16n8k8;
  const std::size_t acc_regs = dt == Type::f32 ? 4 : 2;
  std::string why = parts(d, 0, acc_regs, "mma's d");
  if (why.empty()) why = parts(d, 1, k8 ? 2 : 4, "mma's a");
  if (why.empty()) why = parts(d, 2, k8 ? 1 : 2, "mma's b");
  if (why.empty()) why = parts(d, 3, acc_regs, "mma's c");
  return why;
}

// The dense forms of PTX ISA 9.7.15.5.2 "wgmma.mma_async": f16/bf16
// inputs (K = 16) into f32 or (f16 inputs) f16 accumulators, with the
// transpose immediates; e4m3/e5m2 inputs (K = 32) into f32 or f16, without
// them. A is a shared-memory descriptor or a vector of four .b32 registers;
// the register form has no imm-trans-a:
//   d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-a, imm-trans-b]
//   d, {a},    b-desc, scale-d, imm-scale-a, imm-scale-b[, imm-trans-b]
std::string check_wgmma(const Inst& d) {
  const auto op = static_cast<WgmmaOp>(d.mode);
  if (op == WgmmaOp::wait_group) {
    if (auto why = need(d, 1); !why.empty()) return why;
    if (d.op0(0).kind != Arg::Kind::imm) return "wgmma.wait_group's count must be an immediate";
    return "";
  }
  if (op != WgmmaOp::mma_async) return need(d, 0);
  if (d.ntypes != 3) return "wgmma.mma_async needs .dtype.atype.btype";
  const Type dt = d.types[0], at = d.types[1], bt = d.types[2];
  const bool half = (at == Type::f16 && bt == Type::f16) || (at == Type::bf16 && bt == Type::bf16);
  const bool fp8 = (at == Type::e4m3 || at == Type::e5m2) && (bt == Type::e4m3 || bt == Type::e5m2);
  const bool acc_ok = dt == Type::f32 || (dt == Type::f16 && (at == Type::f16 || fp8));
  const int k = half ? 16 : 32;
  const int n = d.extent;
  if (!(half || fp8) || !acc_ok || d.vec != k || n < 8 || n > 256 || n % 8 != 0)
    return "wgmma.mma_async forms simulated: m64nNk16 with f16 or bf16 inputs (f32 accumulators, "
           "or f16 for f16 inputs) and m64nNk32 with e4m3/e5m2 inputs (f32 or f16 accumulators), "
           "N = 8..256 in steps of 8";
  const bool a_in_registers = d.ops.size() > 1 && d.ops[1].size() != 1;
  if (auto why = need(d, half ? (a_in_registers ? 7 : 8) : 6); !why.empty()) return why;
  const std::size_t acc_regs = static_cast<std::size_t>(dt == Type::f32 ? n / 2 : n / 4);
  if (d.ops[0].size() != acc_regs)
    return "wgmma's d must be a vector of " + std::to_string(acc_regs) + " registers";
  if (a_in_registers && (d.ops[1].size() != 4 || !all_registers(d.ops[1])))
    return "wgmma's A from registers must be a vector of 4 .b32 registers, no immediates or _ "
           "(PTX ISA 9.7.15.5.1.1); it has " +
           std::to_string(d.ops[1].size()) + " operands";
  if (!a_in_registers && d.op0(1).kind == Arg::Kind::sink)
    return "wgmma's A is the sink _; give A's matrix descriptor or its 4 fragment registers";
  for (std::size_t i = 4; i < d.ops.size(); ++i) {
    const Arg& a = d.op0(i);
    const auto v = static_cast<std::int64_t>(a.bits);
    const bool scale = i < 6;
    if (a.kind != Arg::Kind::imm || (scale ? v != 1 && v != -1 : v != 0 && v != 1))
      return scale ? "imm-scale-a/b must be the immediate 1 or -1"
                   : "imm-trans-a/b must be the immediate 0 or 1";
  }
  return "";
}

// The floating-point wmma forms (ptx/vocabulary_wmma.hpp): loads and
// stores take .type (one), mma .dtype.ctype (f16 inputs) or
// .dtype.atype.btype.ctype; the fragments their registers.
std::string check_wmma(const Inst& d) {
  using ptx::WmmaMatrix;
  const auto op = static_cast<WmmaOp>(d.extent);
  const auto shape = static_cast<MmaShape>(d.mode);
  if (!ptx::wmma_dims(shape))
    return "wmma needs a shape: m16n16k16, m32n8k16, m8n32k16 or m16n16k8";
  auto registers = [&](std::size_t i, WmmaMatrix x, Type t, const char* what) -> std::string {
    const int n = ptx::wmma_fragment_registers(shape, x, t);
    if (d.ops[i].size() == static_cast<std::size_t>(n) && all_registers(d.ops[i])) return "";
    return std::string(what) + " must be a vector of " + std::to_string(n) + " registers";
  };
  if (op == WmmaOp::mma) {
    if (auto why = need(d, 4); !why.empty()) return why;
    if (d.ntypes != 2 && d.ntypes != 4)
      return "wmma.mma needs .dtype.ctype (f16 inputs) or .dtype.atype.btype.ctype";
    const Type dt = d.types[0], ct = d.types[d.ntypes - 1];
    const Type at = d.ntypes == 4 ? d.types[1] : Type::f16;
    const Type bt = d.ntypes == 4 ? d.types[2] : Type::f16;
    std::string why = at != bt ? "A and B types differ" : ptx::wmma_form_error(shape, at, dt);
    if (why.empty()) why = ptx::wmma_form_error(shape, at, ct);
    if (!why.empty()) return "wmma.mma: " + why;
    why = registers(0, WmmaMatrix::d, dt, "wmma.mma's d");
    if (why.empty()) why = registers(1, WmmaMatrix::a, at, "wmma.mma's a");
    if (why.empty()) why = registers(2, WmmaMatrix::b, bt, "wmma.mma's b");
    if (why.empty()) why = registers(3, WmmaMatrix::c, ct, "wmma.mma's c");
    return why;
  }
  if (d.ntypes != 1) return "a wmma load or store needs one element type";
  const Type t = d.types[0];
  const bool store = op == WmmaOp::store_d;
  const WmmaMatrix x = op == WmmaOp::load_a   ? WmmaMatrix::a
                       : op == WmmaOp::load_b ? WmmaMatrix::b
                       : op == WmmaOp::load_c ? WmmaMatrix::c
                                              : WmmaMatrix::d;
  if (const std::string why = ptx::wmma_element_error(shape, x, t); !why.empty())
    return std::string("wmma ") + (store ? "store" : "load") + " of " + why;
  if (d.ops.size() != 2 && d.ops.size() != 3)
    return "a wmma load or store takes a fragment, an address and an optional stride";
  return registers(store ? 1 : 0, x, t, store ? "wmma.store's source" : "wmma.load's destination");
}

// cp.async.bulk.tensor (PTX ISA 9.7.9.25.5.1): a load takes [dstMem],
// [tensorMap, {coordinates}], [mbar] and with .multicast::cluster a CTA mask;
// a store [tensorMap, {coordinates}], [srcMem].
std::string check_tensor_copy(const Inst& d, bool cache_hint) {
  const bool load = static_cast<TensorCopyDir>(d.mode) == TensorCopyDir::global_to_shared;
  const std::size_t tensor = load ? 1 : 0;
  const std::size_t expected = load ? 3 + (d.multicast ? 1 : 0) : 2;
  // .L2::cache_hint adds a 64-bit policy operand at the end, ignored as the hint it is
  if (d.ops.size() != expected + (cache_hint ? 1 : 0))
    return load ? "a TMA load takes [dstMem], [tensorMap, {coordinates}], [mbar]" +
                      std::string(d.multicast ? ", ctaMask" : "")
                : "a TMA store takes [tensorMap, {coordinates}], [srcMem]";
  if (d.ops[tensor].size() != std::size_t{d.extent} + 1)
    return "a ." + std::to_string(d.extent) + "d tensor copy takes " + std::to_string(d.extent) +
           " coordinates, as [tensorMap, {c0, ...}]";
  return "";
}

}  // namespace

std::string check_operands(const Inst& d, bool cache_hint) {
  std::string why;
  switch (d.op) {
    case Op::mma:
      return check_mma(d);
    case Op::wmma:
      return check_wmma(d);
    case Op::wgmma:
      return check_wgmma(d);
    case Op::tcgen05:
    case Op::tcgen05_sync:
      return validate_tcgen05(d);
    case Op::tensor_copy:
      return check_tensor_copy(d, cache_hint);
    case Op::ldmatrix:
    case Op::ld:
      if (why = need(d, 2); why.empty())
        why = parts(d, 0, d.vec, d.op == Op::ld ? "ld's destination" : "ldmatrix's destination");
      return why;
    case Op::atom:
    case Op::red:
      if (d.ntypes == 0) return "instruction needs a type modifier";
      if (d.vec == 1) return "";
      // The vector form (PTX ISA 9.7.13.8): red.global.add.v2/.v4.f32.
      if (d.op == Op::atom || d.space != Space::global || d.type() != Type::f32 ||
          static_cast<AtomOp>(d.mode) != AtomOp::add)
        return "a vector atomic is red.global.add.v2/.v4.f32 only";
      return parts(d, 1, d.vec, "red's source");
    case Op::stmatrix:
    case Op::st:
      if (why = need(d, 2); why.empty())
        why = parts(d, 1, d.vec, d.op == Op::st ? "st's source" : "stmatrix's source");
      return why;
    case Op::shfl:
      return need(d, 5);
    case Op::mapa:
      return need(d, 3);
    case Op::bulk_copy:
      return need(d, 4);
    case Op::bulk_reduce:
      if (why = need(d, 3); !why.empty()) return why;
      if (d.ntypes != 1 || d.type() != Type::f32 || static_cast<AtomOp>(d.mode) != AtomOp::add)
        return "cp.reduce.async.bulk is simulated as .add.f32 only";
      return "";
    case Op::cp_async:
      if (d.ops.size() < 3 || d.ops.size() > 4)
        return "cp.async takes [dst], [src], size[, src-size]";
      if (d.ops[2][0].kind != Arg::Kind::imm) return "cp.async's copy size must be an immediate";
      if (d.ops[2][0].bits != 4 && d.ops[2][0].bits != 8 && d.ops[2][0].bits != 16)
        return "cp.async copies 4, 8 or 16 bytes";
      return "";
    case Op::cvt:
      return d.ntypes == 2 ? "" : "cvt needs .dtype.atype";
    case Op::setmaxnreg:
      if (why = need(d, 1); !why.empty()) return why;
      if (d.op0(0).kind != Arg::Kind::imm || d.op0(0).bits % 8 != 0 || d.op0(0).bits < 24 ||
          d.op0(0).bits > 256)
        return "setmaxnreg's register count must be an immediate multiple of 8 in 24..256";
      return "";
    case Op::bulk_wait:
      if (why = need(d, 1); !why.empty()) return why;
      if (d.op0(0).kind != Arg::Kind::imm)
        return "cp.async.bulk.wait_group's count must be an immediate";
      return "";
    default:
      // Arithmetic, logic, comparison and conversion all name their type.
      if (d.ntypes == 0 && needs_type(d.op)) return "instruction needs a type modifier";
      return "";
  }
}

}  // namespace warpforge::sim
