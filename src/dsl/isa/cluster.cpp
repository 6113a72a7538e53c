#include "warpforge/dsl/isa/cluster.hpp"

namespace warpforge::dsl {

namespace {
const Availability kHopper = Availability::since(90);
}

void ClusterOps::mapa_shared(const Reg& d, const Src& a, const Src& rank) {
  const char* opcode = "mapa.shared::cluster.u32";
  require(opcode, kHopper);
  expect_type(opcode, d, Type::u32, "destination");
  expect_type(opcode, a, Type::u32, "shared address");
  expect_type(opcode, rank, Type::u32, "CTA rank");
  emit(opcode, {operand_of(d), operand_of(a), operand_of(rank)});
}

void ClusterOps::barrier_cluster_arrive(bool aligned) {
  const std::string opcode = std::string("barrier.cluster.arrive.release") + (aligned ? ".aligned" : "");
  require(opcode, kHopper);
  emit(opcode, {});
}

void ClusterOps::barrier_cluster_wait(bool aligned) {
  const std::string opcode = std::string("barrier.cluster.wait.acquire") + (aligned ? ".aligned" : "");
  require(opcode, kHopper);
  emit(opcode, {});
}

}  // namespace warpforge::dsl
