#include "warpforge/ptx/special_register.hpp"

namespace warpforge::ptx {

const std::vector<SRegInfo>& all_sregs() {
  // PTX ISA 10.x: %dynamic_smem_size and %total_smem_size need sm_20+ (PTX 4.1);
  // the cluster registers need sm_90 (10.12-10.19).
  const auto any = Availability::since(0);
  const auto hopper = Availability::since(90);
  static const std::vector<SRegInfo> kAll = {
      {SReg::tid_x, "%tid.x", Type::u32, any},
      {SReg::tid_y, "%tid.y", Type::u32, any},
      {SReg::tid_z, "%tid.z", Type::u32, any},
      {SReg::ntid_x, "%ntid.x", Type::u32, any},
      {SReg::ntid_y, "%ntid.y", Type::u32, any},
      {SReg::ntid_z, "%ntid.z", Type::u32, any},
      {SReg::ctaid_x, "%ctaid.x", Type::u32, any},
      {SReg::ctaid_y, "%ctaid.y", Type::u32, any},
      {SReg::ctaid_z, "%ctaid.z", Type::u32, any},
      {SReg::nctaid_x, "%nctaid.x", Type::u32, any},
      {SReg::nctaid_y, "%nctaid.y", Type::u32, any},
      {SReg::nctaid_z, "%nctaid.z", Type::u32, any},
      {SReg::laneid, "%laneid", Type::u32, any},
      {SReg::warpid, "%warpid", Type::u32, any},
      {SReg::nwarpid, "%nwarpid", Type::u32, any},
      {SReg::smid, "%smid", Type::u32, any},
      {SReg::nsmid, "%nsmid", Type::u32, any},
      {SReg::gridid, "%gridid", Type::u64, any},
      {SReg::lanemask_eq, "%lanemask_eq", Type::u32, any},
      {SReg::lanemask_lt, "%lanemask_lt", Type::u32, any},
      {SReg::lanemask_le, "%lanemask_le", Type::u32, any},
      {SReg::lanemask_gt, "%lanemask_gt", Type::u32, any},
      {SReg::lanemask_ge, "%lanemask_ge", Type::u32, any},
      {SReg::clock, "%clock", Type::u32, any},
      {SReg::clock64, "%clock64", Type::u64, any},
      {SReg::globaltimer, "%globaltimer", Type::u64, any},
      {SReg::dynamic_smem_size, "%dynamic_smem_size", Type::u32, any},
      {SReg::total_smem_size, "%total_smem_size", Type::u32, any},
      {SReg::clusterid_x, "%clusterid.x", Type::u32, hopper},
      {SReg::clusterid_y, "%clusterid.y", Type::u32, hopper},
      {SReg::clusterid_z, "%clusterid.z", Type::u32, hopper},
      {SReg::nclusterid_x, "%nclusterid.x", Type::u32, hopper},
      {SReg::nclusterid_y, "%nclusterid.y", Type::u32, hopper},
      {SReg::nclusterid_z, "%nclusterid.z", Type::u32, hopper},
      {SReg::cluster_ctaid_x, "%cluster_ctaid.x", Type::u32, hopper},
      {SReg::cluster_ctaid_y, "%cluster_ctaid.y", Type::u32, hopper},
      {SReg::cluster_ctaid_z, "%cluster_ctaid.z", Type::u32, hopper},
      {SReg::cluster_nctaid_x, "%cluster_nctaid.x", Type::u32, hopper},
      {SReg::cluster_nctaid_y, "%cluster_nctaid.y", Type::u32, hopper},
      {SReg::cluster_nctaid_z, "%cluster_nctaid.z", Type::u32, hopper},
      {SReg::cluster_ctarank, "%cluster_ctarank", Type::u32, hopper},
      {SReg::cluster_nctarank, "%cluster_nctarank", Type::u32, hopper},
      {SReg::is_explicit_cluster, "%is_explicit_cluster", Type::pred, hopper},
  };
  return kAll;
}

const SRegInfo& info(SReg r) {
  return all_sregs()[static_cast<std::size_t>(r)];
}

std::optional<SReg> parse_sreg(std::string_view name) {
  for (const auto& i : all_sregs())
    if (i.name == name || i.name.substr(1) == name) return i.reg;
  return std::nullopt;
}

}  // namespace warpforge::ptx
