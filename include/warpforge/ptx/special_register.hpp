// Special registers (PTX ISA 10 "Special Registers"): each with the type it
// is read as and the targets that have it.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "warpforge/ptx/availability.hpp"
#include "warpforge/ptx/types.hpp"

namespace warpforge::ptx {

enum class SReg {
  tid_x,
  tid_y,
  tid_z,
  ntid_x,
  ntid_y,
  ntid_z,
  ctaid_x,
  ctaid_y,
  ctaid_z,
  nctaid_x,
  nctaid_y,
  nctaid_z,
  laneid,
  warpid,
  nwarpid,
  smid,
  nsmid,
  gridid,
  lanemask_eq,
  lanemask_lt,
  lanemask_le,
  lanemask_gt,
  lanemask_ge,
  clock,
  clock64,
  globaltimer,
  dynamic_smem_size,
  total_smem_size,
  clusterid_x,
  clusterid_y,
  clusterid_z,
  nclusterid_x,
  nclusterid_y,
  nclusterid_z,
  cluster_ctaid_x,
  cluster_ctaid_y,
  cluster_ctaid_z,
  cluster_nctaid_x,
  cluster_nctaid_y,
  cluster_nctaid_z,
  cluster_ctarank,
  cluster_nctarank,
  is_explicit_cluster,
};

struct SRegInfo {
  SReg reg;
  std::string_view name;  // PTX spelling, "%tid.x"
  Type type;              // u32 or u64
  Availability availability;
};

const SRegInfo& info(SReg r);
std::optional<SReg> parse_sreg(std::string_view name);  // "%tid.x" or "tid.x"
const std::vector<SRegInfo>& all_sregs();

}  // namespace warpforge::ptx
