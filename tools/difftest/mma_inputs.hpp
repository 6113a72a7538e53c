// Inputs of the matrix instructions (mma.sync, wgmma): elements whose
// exponents spread over a per-warp range with random signs, so that the dot
// products cancel and the hardware's alignment and truncation of its sums
// show; zeros and subnormals throughout, infinities and NaNs in one warp
// (or warpgroup) in eight.
#pragma once

#include <cstdint>
#include <string_view>

#include "difftest/values.hpp"

namespace warpforge::difftest {

struct MmaWarpInputs {
  int spread;     // exponents in [-spread, spread]
  bool specials;  // infinities and NaNs allowed
};

MmaWarpInputs mma_warp_inputs(Rng& rng);
// e4m3, e5m2, f16, bf16 by PTX name.
const FloatFormat& element_format(std::string_view type);
// One element of format f.
std::uint64_t matrix_element(Rng& rng, const FloatFormat& f, const MmaWarpInputs& warp, int spread);
// A 32-bit register of elements of f (four 8-bit or two 16-bit), spread as
// the warp's (or as given).
std::uint32_t packed_elements(Rng& rng, const FloatFormat& f, const MmaWarpInputs& warp,
                              int spread = -1);
// An accumulator's first value: of the products' sums' size, or zero.
std::uint64_t accumulator_value(Rng& rng, const FloatFormat& f, const MmaWarpInputs& warp);

}  // namespace warpforge::difftest
