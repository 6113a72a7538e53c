// Thread-block clusters, sm_90+ (PTX ISA 9.7.9.19 mapa, 9.7.13.2
// barrier.cluster): the CTAs of a cluster reach each other's shared memory
// through shared::cluster addresses and meet at the cluster barrier.
#pragma once

#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

class ClusterOps : public virtual KernelCore {
 public:
  // mapa.shared::cluster.u32 d, a, rank: the shared::cluster address of the
  // variable at shared address `a` in the CTA of cluster rank `rank`.
  void mapa_shared(const Reg& d, const Src& a, const Src& rank);
  // barrier.cluster.arrive.release[.aligned] / barrier.cluster.wait.acquire[.aligned]:
  // every thread of every CTA of the cluster arrives, then waits. `aligned`
  // promises that all threads of the warp execute the same instruction
  // (PTX ISA 9.7.13.3); without it the warp's threads may reach it apart.
  void barrier_cluster_arrive(bool aligned = true);
  void barrier_cluster_wait(bool aligned = true);
};

}  // namespace warpforge::dsl
