#include "warpforge/dsl/isa/wgmma.hpp"

#include <utility>
#include <vector>

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::mod;
using detail::O;

namespace {
// wgmma and setmaxnreg exist only on the architecture-specific sm_90a (PTX
// ISA 9.7.15.5.2 and 9.7.19.x, "Target ISA notes").
const Availability kHopperOnly = Availability::arch_specific(90, 90);

bool is_half(Type t) { return t == Type::f16 || t == Type::bf16; }
bool is_fp8(Type t) { return t == Type::e4m3 || t == Type::e5m2; }

// {d}, a, b-desc, scale-d, imm-scale-a = 1, imm-scale-b = 1: how both A
// forms start (PTX ISA 9.7.15.5.2).
std::vector<ptx::Operand> leading_operands(ptx::Operand d, ptx::Operand a, ptx::Operand desc_b, ptx::Operand scale) {
  return {std::move(d), std::move(a), std::move(desc_b), std::move(scale), ptx::Operand::imm(1), ptx::Operand::imm(1)};
}

// imm-trans-a/b: 1 reads the operand MN-major ("transposed").
ptx::Operand trans(WgmmaMajor m) { return ptx::Operand::imm(m == WgmmaMajor::mn ? 1 : 0); }
}  // namespace

void WgmmaOps::wgmma_fence() {
  const ptx::Instruction form{O::wgmma, {M::fence, M::sync, M::aligned}};
  require(form, kHopperOnly);
  emit(form, {});
}

void WgmmaOps::wgmma_commit_group() {
  const ptx::Instruction form{O::wgmma, {M::commit_group, M::sync, M::aligned}};
  require(form, kHopperOnly);
  emit(form, {});
}

void WgmmaOps::wgmma_wait_group(int pending) {
  const ptx::Instruction form{O::wgmma, {M::wait_group, M::sync, M::aligned}};
  require(form, kHopperOnly);
  if (pending < 0 || pending > 7) fail(form, "pending group count " + std::to_string(pending) + "; 0..7");
  emit(form, {ptx::Operand::imm(pending)});
}

ptx::Instruction WgmmaOps::mma_async_opcode(Type a_type, Type b_type, const Regs& d,
                                            const Reg& desc_b, WgmmaMajor b_major) {
  const bool half = is_half(a_type) && a_type == b_type;
  const bool fp8 = is_fp8(a_type) && is_fp8(b_type);
  const int n = static_cast<int>(d.size()) * 2;
  const ptx::Instruction unshaped{O::wgmma, {M::mma_async, M::sync, M::aligned}};
  if (n < 8 || n > 256 || n % 8 != 0)
    fail(unshaped, std::to_string(d.size()) + " accumulator registers (N = " + std::to_string(n) +
                       "); N is a multiple of 8 in 8..256, so 4..128 registers in steps of 4");
  // Each wgmma takes 32 bytes of K: 16 two-byte or 32 one-byte elements.
  const ptx::Instruction opcode{
      O::wgmma,
      {M::mma_async, M::sync, M::aligned, *ptx::wgmma_shape(n, fp8 ? 32 : 16), mod(Type::f32),
       mod(a_type), mod(b_type)}};
  require(opcode, kHopperOnly);
  if (!half && !fp8)
    fail(opcode, "operand types " + detail::type_name(a_type) + "×" + detail::type_name(b_type) +
                     "; accepted: bf16×bf16 or f16×f16 (m64nNk16), e4m3/e5m2 × e4m3/e5m2 (m64nNk32)");
  for (const Reg& r : d)  // exactly f32: a b32 register would pass the width check
    if (r.type() != Type::f32)
      fail(opcode, "accumulator " + r.name() + " is " + detail::type_name(r.type()) + "; f32");
  expect_type(opcode, desc_b, Type::b64, "B descriptor");
  require_k_major(opcode, b_type, b_major, "B");
  return opcode;
}

void WgmmaOps::require_k_major(const ptx::Instruction& opcode, Type type, WgmmaMajor major,
                               const char* operand) {
  // PTX ISA 9.7.15.5.2: only the .f16/.bf16 forms take imm-trans-a/b; the
  // 8-bit forms read A and B K-major.
  if (is_fp8(type) && major == WgmmaMajor::mn)
    fail(opcode, std::string(operand) + " is MN-major with " + detail::type_name(type) +
                     " elements; e4m3/e5m2 operands have no transpose operand and must be K-major "
                     "(WgmmaMajor::k)");
}

ptx::Operand WgmmaOps::scale_operand(const std::variant<bool, PredUse>& scale_d) const {
  return std::holds_alternative<bool>(scale_d) ? ptx::Operand::imm(std::get<bool>(scale_d) ? 1 : 0)
                                               : operand_of(std::get<PredUse>(scale_d));
}

void WgmmaOps::wgmma_mma_async(Type a_type, Type b_type, const Regs& d, const Reg& desc_a, const Reg& desc_b,
                               std::variant<bool, PredUse> scale_d, WgmmaMajor a_major, WgmmaMajor b_major) {
  const ptx::Instruction opcode = mma_async_opcode(a_type, b_type, d, desc_b, b_major);
  expect_type(opcode, desc_a, Type::b64, "A descriptor");
  require_k_major(opcode, a_type, a_major, "A");
  std::vector<ptx::Operand> ops =
      leading_operands(operand_of(d), operand_of(desc_a), operand_of(desc_b), scale_operand(scale_d));
  if (is_half(a_type)) ops.insert(ops.end(), {trans(a_major), trans(b_major)});
  emit(opcode, ops);
}

void WgmmaOps::wgmma_mma_async(Type ab_type, const Regs& d, const Reg& desc_a, const Reg& desc_b,
                               std::variant<bool, PredUse> scale_d, WgmmaMajor a_major, WgmmaMajor b_major) {
  wgmma_mma_async(ab_type, ab_type, d, desc_a, desc_b, scale_d, a_major, b_major);
}

void WgmmaOps::wgmma_mma_async(Type a_type, Type b_type, const Regs& d, const Regs& a, const Reg& desc_b,
                               std::variant<bool, PredUse> scale_d, WgmmaMajor b_major) {
  const ptx::Instruction opcode = mma_async_opcode(a_type, b_type, d, desc_b, b_major);
  // PTX ISA 9.7.15.5.1.1: A's fragment is four .b32 registers per thread for
  // every input type (two 16-bit or four 8-bit elements each).
  if (a.size() != 4)
    fail(opcode, "A from registers has " + std::to_string(a.size()) + " registers; the A fragment is 4 b32 "
                 "registers per thread");
  for (const Reg& r : a) {
    // ptxas takes only registers declared .b32 here ("Unexpected instruction
    // types" for .u32, .s32 or .f32 ones); the DSL declares every 32-bit
    // handle but f32 as .b32, so u32, s32 and f16x2/bf16x2 handles do.
    if (ptx::storage_type(r.type()) != Type::b32)
      fail(opcode, "A register " + r.name() + " is " + detail::type_name(r.type()) + ", declared ." +
                       detail::type_name(ptx::storage_type(r.type())) +
                       "; A's packed elements go in .b32 registers (b32, u32, s32, f16x2 or bf16x2 handles)");
    expect_type(opcode, r, Type::b32, "A register");
  }
  std::vector<ptx::Operand> ops =
      leading_operands(operand_of(d), operand_of(a), operand_of(desc_b), scale_operand(scale_d));
  if (is_half(a_type)) ops.push_back(trans(b_major));
  emit(opcode, ops);
}

void WgmmaOps::setmaxnreg(ptx::Mod direction, int count) {
  const ptx::Instruction opcode{O::setmaxnreg, {direction, M::sync, M::aligned, mod(Type::u32)}};
  require(opcode, kHopperOnly);
  if (count < 24 || count > 256 || count % 8 != 0)
    fail(opcode, "register count " + std::to_string(count) + "; a multiple of 8 in 24..256");
  emit(opcode, {ptx::Operand::imm(count)});
}

void WgmmaOps::setmaxnreg_inc(int count) { setmaxnreg(M::inc, count); }
void WgmmaOps::setmaxnreg_dec(int count) { setmaxnreg(M::dec, count); }

}  // namespace warpforge::dsl
