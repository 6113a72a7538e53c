#include "warpforge/dsl/availability.hpp"

namespace warpforge::dsl {

bool Availability::has(ptx::Target t) const {
  int sm = ptx::sm_number(t);
  return sm >= min_sm && sm <= max_sm && (!needs_arch_specific || ptx::arch_specific(t));
}

std::string Availability::targets() const {
  std::string out;
  for (ptx::Target t : ptx::all_targets()) {
    if (!has(t)) continue;
    if (!out.empty()) out += ", ";
    out += ptx::name(t);
  }
  return out.empty() ? "none of warpforge's targets" : out;
}

}  // namespace warpforge::dsl
