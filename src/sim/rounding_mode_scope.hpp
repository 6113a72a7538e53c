// Internal: sets the host FPU's rounding mode for one f64 operation and puts
// the previous mode back. Formats narrower than f64 are rounded in software
// (float_format.hpp); f64 results with a directed PTX rounding mode (.rz, .rm,
// .rp, PTX ISA 9.7.3) come from the host's own IEEE arithmetic in that mode.
#pragma once

#include <cfenv>

#include "float_format.hpp"

namespace warpforge::sim {

class RoundingModeScope {
 public:
  explicit RoundingModeScope(Rounding r) : saved_(std::fegetround()) {
    switch (r) {
      case Rounding::rz: std::fesetround(FE_TOWARDZERO); break;
      case Rounding::rm: std::fesetround(FE_DOWNWARD); break;
      case Rounding::rp: std::fesetround(FE_UPWARD); break;
      default: break;
    }
  }
  ~RoundingModeScope() { std::fesetround(saved_); }
  RoundingModeScope(const RoundingModeScope&) = delete;
  RoundingModeScope& operator=(const RoundingModeScope&) = delete;

 private:
  int saved_;
};

}  // namespace warpforge::sim
