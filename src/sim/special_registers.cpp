// PTX ISA 10 "Special Registers".
#include "execute.hpp"

namespace warpforge::sim {

std::uint64_t read_sreg(const Warp& w, SReg r, int lane) {
  const Cta& cta = *w.cta;
  const auto& cfg = cta.launch->config;
  const runtime::Dim3& b = cfg.block;
  const runtime::Dim3& g = cfg.grid;
  const runtime::Dim3 c = cfg.cluster;
  const std::uint32_t linear = w.index * 32 + static_cast<std::uint32_t>(lane);
  const std::uint32_t lane_bit = 1u << lane;
  switch (r) {
    case SReg::tid_x:
      return linear % b.x;
    case SReg::tid_y:
      return linear / b.x % b.y;
    case SReg::tid_z:
      return linear / (b.x * b.y);
    case SReg::ntid_x:
      return b.x;
    case SReg::ntid_y:
      return b.y;
    case SReg::ntid_z:
      return b.z;
    case SReg::ctaid_x:
      return cta.ctaid.x;
    case SReg::ctaid_y:
      return cta.ctaid.y;
    case SReg::ctaid_z:
      return cta.ctaid.z;
    case SReg::nctaid_x:
      return g.x;
    case SReg::nctaid_y:
      return g.y;
    case SReg::nctaid_z:
      return g.z;
    case SReg::laneid:
      return static_cast<std::uint64_t>(lane);
    case SReg::warpid:
      return w.index;
    case SReg::nwarpid:
      return cta.warps.size();
    case SReg::smid:
      return (cta.ctaid.x + g.x * (cta.ctaid.y + std::uint64_t{g.y} * cta.ctaid.z)) %
             cta.launch->sm_count;
    case SReg::nsmid:
      return static_cast<std::uint64_t>(cta.launch->sm_count);
    case SReg::gridid:
      return 0;
    // A counter: each warp's clock advances by one per instruction it issues.
    case SReg::clock:
      return w.clock & 0xFFFFFFFFu;
    case SReg::clock64:
    case SReg::globaltimer:
      return w.clock;
    case SReg::lanemask_eq:
      return lane_bit;
    case SReg::lanemask_lt:
      return lane_bit - 1;
    case SReg::lanemask_le:
      return (lane_bit - 1) | lane_bit;
    case SReg::lanemask_gt:
      return ~((lane_bit - 1) | lane_bit) & 0xFFFFFFFFu;
    case SReg::lanemask_ge:
      return ~(lane_bit - 1) & 0xFFFFFFFFu;
    case SReg::dynamic_smem_size:
      return cfg.dynamic_shared_bytes;
    case SReg::total_smem_size:
      return cta.shared.size();
    // Without a cluster launch every CTA is a cluster of one (PTX ISA 10.11).
    case SReg::clusterid_x:
      return cta.ctaid.x / c.x;
    case SReg::clusterid_y:
      return cta.ctaid.y / c.y;
    case SReg::clusterid_z:
      return cta.ctaid.z / c.z;
    case SReg::nclusterid_x:
      return g.x / c.x;
    case SReg::nclusterid_y:
      return g.y / c.y;
    case SReg::nclusterid_z:
      return g.z / c.z;
    case SReg::cluster_ctaid_x:
      return cta.ctaid.x % c.x;
    case SReg::cluster_ctaid_y:
      return cta.ctaid.y % c.y;
    case SReg::cluster_ctaid_z:
      return cta.ctaid.z % c.z;
    case SReg::cluster_nctaid_x:
      return c.x;
    case SReg::cluster_nctaid_y:
      return c.y;
    case SReg::cluster_nctaid_z:
      return c.z;
    case SReg::cluster_ctarank:
      return cta.ctaid.x % c.x + c.x * (cta.ctaid.y % c.y + c.y * (cta.ctaid.z % c.z));
    case SReg::cluster_nctarank:
      return c.count();
    case SReg::is_explicit_cluster:
      return c.count() > 1 ? 1 : 0;
  }
  return 0;
}

}  // namespace warpforge::sim
