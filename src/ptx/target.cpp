#include "warpforge/ptx/target.hpp"

namespace warpforge::ptx {

std::string_view name(Target t) {
  switch (t) {
    case Target::sm_80: return "sm_80";
    case Target::sm_89: return "sm_89";
    case Target::sm_90a: return "sm_90a";
    case Target::sm_100a: return "sm_100a";
  }
  return "";
}

std::optional<Target> parse_target(std::string_view s) {
  for (Target t : all_targets())
    if (name(t) == s) return t;
  return std::nullopt;
}

int sm_number(Target t) {
  switch (t) {
    case Target::sm_80: return 80;
    case Target::sm_89: return 89;
    case Target::sm_90a: return 90;
    case Target::sm_100a: return 100;
  }
  return 0;
}

bool arch_specific(Target t) { return t == Target::sm_90a || t == Target::sm_100a; }

PtxVersion ptx_version(Target t) {
  switch (t) {
    case Target::sm_80: return {7, 0};    // sm_80, cp.async, ldmatrix, bf16 mma: PTX 7.0
    case Target::sm_89: return {8, 4};    // mma.sync with .e4m3/.e5m2 on sm_89: PTX 8.4
    case Target::sm_90a: return {8, 4};   // sm_90a needs 8.0; fp8 mma.sync needs 8.4
    case Target::sm_100a: return {8, 7};  // sm_100a: 8.6; tcgen05 .kind::mxf4nvf4 and .scale_vec::4X: 8.7
  }
  return {0, 0};
}

const std::vector<Target>& all_targets() {
  static const std::vector<Target> kAll = {Target::sm_80, Target::sm_89, Target::sm_90a,
                                           Target::sm_100a};
  return kAll;
}

}  // namespace warpforge::ptx
