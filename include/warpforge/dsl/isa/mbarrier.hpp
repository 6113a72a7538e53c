// mbarrier objects in shared memory (PTX ISA 9.7.13.15 "mbarrier"): a phase
// completes when its expected arrivals have arrived and its transaction bytes
// (from TMA copies, "complete_tx") have landed; waiters test the parity of
// the phase they wait for. init/arrive exist since sm_80; transaction counts,
// try_wait.parity and arrivals on another CTA of the cluster since sm_90.
#pragma once

#include "warpforge/dsl/isa/sync.hpp"
#include "warpforge/dsl/kernel_core.hpp"

namespace warpforge::dsl {

class MbarrierOps : public virtual KernelCore {
 public:
  // mbarrier.init.shared.b64 [bar], count: `count` arrivals per phase.
  void mbarrier_init(const Addr& bar, const Src& count);
  // mbarrier.arrive.shared.b64 state, [bar] (the state in a scratch register)
  void mbarrier_arrive(const Addr& bar);
  // mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes: arrive and
  // expect `bytes` more transaction bytes in this phase.
  void mbarrier_arrive_expect_tx(const Addr& bar, const Src& bytes);
  // mbarrier.arrive.release.<scope>.shared::cluster.b64 _, [bar]: arrive on
  // the barrier at a shared::cluster address (from mapa), possibly in another
  // CTA of the cluster. The release orders this thread's earlier memory
  // accesses for observers in `scope`, cta or cluster (PTX ISA 9.7.13.15.13).
  void mbarrier_arrive_cluster(const Reg& cluster_bar, Scope scope = Scope::cluster);
  // mbarrier.try_wait.parity.shared::cta.b64 ready, [bar], parity: ready is
  // true once the phase with this parity has completed (may time out false).
  void mbarrier_try_wait_parity(const Pred& ready, const Addr& bar, const Src& parity);
  // Helper, three instructions: a label, try_wait.parity, and a branch back
  // while not ready: returns when the phase of `parity` has completed.
  void mbarrier_wait_parity(const Addr& bar, const Src& parity);
  // fence.mbarrier_init.release.cluster: makes initialisations visible to the
  // cluster (to TMA multicast and remote arrivals) before they are used.
  void fence_mbarrier_init();
};

}  // namespace warpforge::dsl
