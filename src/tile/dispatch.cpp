#include "warpforge/tile/dispatch.hpp"

#include "warpforge/error.hpp"

namespace warpforge::tile {

std::string dispatch(const std::string& primitive, const std::vector<Candidate>& candidates) {
  std::string report;
  for (const auto& c : candidates) {
    auto reasons = c.refusals();
    if (reasons.empty()) {
      c.emit();
      return c.name;
    }
    report += "\n  " + c.name + ":";
    for (const auto& r : reasons) report += "\n    - " + r;
  }
  throw TileError(primitive + ": no candidate fits the operands:" + report);
}

}  // namespace warpforge::tile
