// Fragment: how one operand of a matrix instruction is spread over threads
// and registers. Its NamedLayout maps (lane[, warp], value) to (row, col) of the
// operand's tile; `value` is the slot in the instruction's operand list (a0,
// a1, ... in the PTX ISA), and slots are packed low to high into .b32
// registers, 32 / element_bits per register (PTX ISA 9.7.14.5: "Elements (low
// to high)").
#pragma once

#include <cstdint>

#include "warpforge/layout/named_layout.hpp"

namespace warpforge::layout {

struct RegisterSlot {
  int64_t reg;   // which .b32 register of the operand vector
  int64_t part;  // which element within it, from the low bits
};

struct Fragment {
  NamedLayout layout;
  int element_bits;

  int64_t values_per_register() const { return element_bits >= 32 ? 1 : 32 / element_bits; }
  int64_t registers() const { return layout.extent(Axis::value) / values_per_register(); }
  RegisterSlot slot(int64_t value) const {
    return {value / values_per_register(), value % values_per_register()};
  }
};

}  // namespace warpforge::layout
