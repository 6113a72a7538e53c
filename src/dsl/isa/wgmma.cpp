#include "warpforge/dsl/isa/wgmma.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

namespace {
// wgmma and setmaxnreg exist only on the architecture-specific sm_90a (PTX
// ISA 9.7.15.5.2 and 9.7.19.x, "Target ISA notes").
const Availability kHopperOnly = Availability::arch_specific(90, 90);
}  // namespace

void WgmmaOps::wgmma_fence() {
  require("wgmma.fence.sync.aligned", kHopperOnly);
  emit("wgmma.fence.sync.aligned", {});
}

void WgmmaOps::wgmma_commit_group() {
  require("wgmma.commit_group.sync.aligned", kHopperOnly);
  emit("wgmma.commit_group.sync.aligned", {});
}

void WgmmaOps::wgmma_wait_group(int pending) {
  require("wgmma.wait_group.sync.aligned", kHopperOnly);
  if (pending < 0 || pending > 7)
    fail("wgmma.wait_group.sync.aligned", "pending group count " + std::to_string(pending) + "; 0..7");
  emit("wgmma.wait_group.sync.aligned", {ptx::Operand::imm(pending)});
}

void WgmmaOps::wgmma_mma_async(Type ab_type, const Regs& d, const Reg& desc_a, const Reg& desc_b,
                               std::variant<bool, PredUse> scale_d, WgmmaMajor a_major, WgmmaMajor b_major) {
  const int n = static_cast<int>(d.size()) * 2;
  std::string opcode = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32" + detail::dot(ab_type) +
                       detail::dot(ab_type);
  require(opcode, kHopperOnly);
  if (ab_type != Type::bf16 && ab_type != Type::f16)
    fail(opcode, "operand type " + detail::type_name(ab_type) + "; bf16 or f16");
  if (n < 8 || n > 256 || n % 8 != 0)
    fail(opcode, std::to_string(d.size()) + " accumulator registers (N = " + std::to_string(n) +
                     "); N is a multiple of 8 in 8..256, so 4..128 registers in steps of 4");
  for (const Reg& r : d)  // exactly f32: a b32 register would pass the width check
    if (r.type() != Type::f32)
      fail(opcode, "accumulator " + r.name() + " is " + detail::type_name(r.type()) + "; f32");
  expect_type(opcode, desc_a, Type::b64, "A descriptor");
  expect_type(opcode, desc_b, Type::b64, "B descriptor");
  ptx::Operand scale = std::holds_alternative<bool>(scale_d)
                           ? ptx::Operand::imm(std::get<bool>(scale_d) ? 1 : 0)
                           : operand_of(std::get<PredUse>(scale_d));
  emit(opcode, {operand_of(d), operand_of(desc_a), operand_of(desc_b), scale, ptx::Operand::imm(1),
                ptx::Operand::imm(1), ptx::Operand::imm(a_major == WgmmaMajor::mn ? 1 : 0),
                ptx::Operand::imm(b_major == WgmmaMajor::mn ? 1 : 0)});
}

void WgmmaOps::setmaxnreg(const char* opcode, int count) {
  require(opcode, kHopperOnly);
  if (count < 24 || count > 256 || count % 8 != 0)
    fail(opcode, "register count " + std::to_string(count) + "; a multiple of 8 in 24..256");
  emit(opcode, {ptx::Operand::imm(count)});
}

void WgmmaOps::setmaxnreg_inc(int count) { setmaxnreg("setmaxnreg.inc.sync.aligned.u32", count); }
void WgmmaOps::setmaxnreg_dec(int count) { setmaxnreg("setmaxnreg.dec.sync.aligned.u32", count); }

}  // namespace warpforge::dsl
