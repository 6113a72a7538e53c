// Which targets have an instruction (PTX ISA 9.7, each instruction's "Target
// ISA notes"). A wrapper states its availability; the kernel refuses the
// instruction at build time on a target outside it, naming the targets that
// have it.
#pragma once

#include <string>

#include "warpforge/ptx/target.hpp"

namespace warpforge::ptx {

struct Availability {
  int min_sm = 0;                    // first SM version that has it
  int max_sm = 1 << 30;              // last one (wgmma: sm_90a only)
  bool needs_arch_specific = false;  // only on the 'a' targets

  bool has(Target t) const;
  std::string targets() const;  // "sm_90a, sm_100a"

  static constexpr Availability since(int sm) { return {sm}; }
  static constexpr Availability arch_specific(int min_sm, int max_sm = 1 << 30) {
    return {min_sm, max_sm, true};
  }
};

// The generations most instructions start at.
inline constexpr Availability kAmpere = Availability::since(80);
inline constexpr Availability kHopper = Availability::since(90);

}  // namespace warpforge::ptx
