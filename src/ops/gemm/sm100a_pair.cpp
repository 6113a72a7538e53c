#include "sm100a_pair.hpp"

namespace warpforge::ops {

using namespace dsl;

Reg descriptor_start(Kernel& k, const Reg& address) {
  Reg start = k.reg(u64);
  k.cvt(start, (address >> 4u) & 0x3FFFu);
  return start;
}

Src full_arrivals(bool pair, const Reg& rank) {
  if (!pair) return 1u;
  return (rank ^ 1u) + 1u;
}

void relay_full_slots(Kernel& k, const tile::MbarrierPipeline& pipe, const Src& steps) {
  tile::PipelineState state(k, pipe.stages());
  k.for_range(0u, steps, 1u, [&](Reg) {
    pipe.wait(state);
    Reg remote = k.reg(u32);
    k.mapa_shared(remote, pipe.full_barrier(state), 0);
    k.mbarrier_arrive_cluster(remote, Scope::cluster);
    ++state;
  });
}

void commit_mmas(Kernel& k, bool pair, const Reg& bar) {
  if (pair)
    k.tcgen05_commit_multicast(CtaGroup::two, bar, k.mov(u16, 3u));
  else
    k.tcgen05_commit(CtaGroup::one, bar);
}

}  // namespace warpforge::ops
