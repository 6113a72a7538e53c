#include "warpforge/dsl/isa/cluster.hpp"

#include "../type_names.hpp"

namespace warpforge::dsl {

using detail::M;
using detail::O;
using ptx::kHopper;

namespace {

// barrier.cluster.arrive.release[.aligned] / barrier.cluster.wait.acquire[.aligned]
ptx::Instruction cluster_barrier(M action, M order, bool aligned) {
  ptx::Instruction form{O::barrier, {M::cluster, action, order}};
  if (aligned) form.modifiers.push_back(M::aligned);
  return form;
}
}  // namespace

void ClusterOps::mapa_shared(const Reg& d, const Src& a, const Src& rank) {
  const ptx::Instruction opcode{O::mapa, {M::shared_cluster, ptx::mod(Type::u32)}};
  require(opcode, kHopper);
  expect_type(opcode, d, Type::u32, "destination");
  expect_type(opcode, a, Type::u32, "shared address");
  expect_type(opcode, rank, Type::u32, "CTA rank");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(rank)});
}

void ClusterOps::barrier_cluster_arrive(bool aligned) {
  const ptx::Instruction opcode = cluster_barrier(M::arrive, M::release, aligned);
  require(opcode, kHopper);
  emit(opcode, {});
}

void ClusterOps::barrier_cluster_wait(bool aligned) {
  const ptx::Instruction opcode = cluster_barrier(M::wait, M::acquire, aligned);
  require(opcode, kHopper);
  emit(opcode, {});
}

}  // namespace warpforge::dsl
