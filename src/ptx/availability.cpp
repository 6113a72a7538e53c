#include "warpforge/ptx/availability.hpp"

namespace warpforge::ptx {

bool Availability::has(Target t) const {
  int sm = sm_number(t);
  return sm >= min_sm && sm <= max_sm && (!needs_arch_specific || ptx::arch_specific(t));
}

std::string Availability::targets() const {
  std::string out;
  for (Target t : all_targets()) {
    if (!has(t)) continue;
    if (!out.empty()) out += ", ";
    out += name(t);
  }
  return out.empty() ? "none of warpforge's targets" : out;
}

}  // namespace warpforge::ptx
