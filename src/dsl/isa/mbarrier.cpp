#include "warpforge/dsl/isa/mbarrier.hpp"

#include <string>


namespace warpforge::dsl {

namespace {
const Availability kAmpere = Availability::since(80);
const Availability kHopper = Availability::since(90);
}  // namespace

void MbarrierOps::mbarrier_init(const Addr& bar, const Src& count) {
  const char* opcode = "mbarrier.init.shared.b64";
  require(opcode, kAmpere);
  expect_type(opcode, count, Type::u32, "arrival count");
  emit(opcode, {operand_of(bar), operand_of(count)});
}

void MbarrierOps::mbarrier_arrive(const Addr& bar) {
  const char* opcode = "mbarrier.arrive.shared.b64";
  require(opcode, kAmpere);
  // The returned state goes to a scratch register: PTX before 7.8 has no sink here.
  emit(opcode, {operand_of(reg(Type::b64)), operand_of(bar)});
}

void MbarrierOps::mbarrier_arrive_expect_tx(const Addr& bar, const Src& bytes) {
  const char* opcode = "mbarrier.arrive.expect_tx.shared::cta.b64";
  require(opcode, kHopper);
  expect_type(opcode, bytes, Type::u32, "transaction bytes");
  emit(opcode, {ptx::Operand::sink(), operand_of(bar), operand_of(bytes)});
}

void MbarrierOps::mbarrier_arrive_cluster(const Reg& cluster_bar, Scope scope) {
  if (scope != Scope::cta && scope != Scope::cluster)
    fail("mbarrier_arrive_cluster", "scope " + std::string(scope == Scope::gpu ? "gpu" : "sys") +
                                        "; mbarrier.arrive takes .cta or .cluster");
  const std::string text =
      std::string("mbarrier.arrive.release.") + (scope == Scope::cta ? "cta" : "cluster") + ".shared::cluster.b64";
  const char* opcode = text.c_str();
  require(opcode, kHopper);
  expect_type(opcode, cluster_bar, Type::u32, "shared::cluster address");
  emit(opcode, {ptx::Operand::sink(), operand_of(at(cluster_bar))});
}

void MbarrierOps::mbarrier_try_wait_parity(const Pred& ready, const Addr& bar, const Src& parity) {
  const char* opcode = "mbarrier.try_wait.parity.shared::cta.b64";
  require(opcode, kHopper);
  expect_type(opcode, parity, Type::u32, "phase parity");
  emit(opcode, {operand_of(ready), operand_of(bar), operand_of(parity)});
}

void MbarrierOps::mbarrier_wait_parity(const Addr& bar, const Src& parity) {
  Label retry = label("mbar_wait");
  place(retry);
  Pred ready = pred();
  mbarrier_try_wait_parity(ready, bar, parity);
  ptx::Instruction branch = ptx::Instruction::parse_opcode("bra");
  branch.operands = {operand_of(retry)};
  branch.guard = ptx::Guard{ready.name(), true};
  emit(std::move(branch));
}

void MbarrierOps::fence_mbarrier_init() {
  const char* opcode = "fence.mbarrier_init.release.cluster";
  require(opcode, kHopper);
  emit(opcode, {});
}

}  // namespace warpforge::dsl
