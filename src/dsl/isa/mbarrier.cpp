#include "warpforge/dsl/isa/mbarrier.hpp"

#include <string>

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::O;
using ptx::kAmpere;
using ptx::kHopper;

namespace {
const M kB64 = ptx::mod(Type::b64);
}  // namespace

void MbarrierOps::mbarrier_init(const Addr& bar, const Src& count) {
  const ptx::Instruction opcode{O::mbarrier, {M::init, M::shared, kB64}};
  require(opcode, kAmpere);
  expect_type(opcode, count, Type::u32, "arrival count");
  emit(opcode, {operand_of(bar), operand_of(count)});
}

void MbarrierOps::mbarrier_arrive(const Addr& bar) {
  const ptx::Instruction opcode{O::mbarrier, {M::arrive, M::shared, kB64}};
  require(opcode, kAmpere);
  // The returned state goes to a scratch register: PTX before 7.8 has no sink here.
  emit(opcode, {operand_of(reg(Type::b64)), operand_of(bar)});
}

void MbarrierOps::mbarrier_arrive_expect_tx(const Addr& bar, const Src& bytes) {
  const ptx::Instruction opcode{O::mbarrier, {M::arrive, M::expect_tx, M::shared_cta, kB64}};
  require(opcode, kHopper);
  expect_type(opcode, bytes, Type::u32, "transaction bytes");
  emit(opcode, {ptx::Operand::sink(), operand_of(bar), operand_of(bytes)});
}

void MbarrierOps::mbarrier_arrive_cluster(const Reg& cluster_bar, Scope scope) {
  if (scope != Scope::cta && scope != Scope::cluster)
    fail("mbarrier_arrive_cluster", "scope " + std::string(scope == Scope::gpu ? "gpu" : "sys") +
                                        "; mbarrier.arrive takes .cta or .cluster");
  const ptx::Instruction opcode{
      O::mbarrier,
      {M::arrive, M::release, scope == Scope::cta ? M::cta : M::cluster, M::shared_cluster, kB64}};
  require(opcode, kHopper);
  expect_type(opcode, cluster_bar, Type::u32, "shared::cluster address");
  emit(opcode, {ptx::Operand::sink(), operand_of(at(cluster_bar))});
}

void MbarrierOps::mbarrier_try_wait_parity(const Pred& ready, const Addr& bar, const Src& parity) {
  const ptx::Instruction opcode{O::mbarrier, {M::try_wait, M::parity, M::shared_cta, kB64}};
  require(opcode, kHopper);
  expect_type(opcode, parity, Type::u32, "phase parity");
  emit(opcode, {operand_of(ready), operand_of(bar), operand_of(parity)});
}

void MbarrierOps::mbarrier_wait_parity(const Addr& bar, const Src& parity) {
  Label retry = label("mbar_wait");
  place(retry);
  Pred ready = pred();
  mbarrier_try_wait_parity(ready, bar, parity);
  ptx::Instruction branch{O::bra};
  branch.operands = {operand_of(retry)};
  branch.guard = ptx::Guard{ready.name(), true};
  emit(std::move(branch));
}

void MbarrierOps::fence_mbarrier_init() {
  const ptx::Instruction opcode{O::fence, {M::mbarrier_init, M::release, M::cluster}};
  require(opcode, kHopper);
  emit(opcode, {});
}

}  // namespace warpforge::dsl
