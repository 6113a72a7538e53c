#include "difftest/mma_inputs.hpp"

#include "warpforge/error.hpp"

namespace warpforge::difftest {

MmaWarpInputs mma_warp_inputs(Rng& rng) {
  static constexpr int kSpreads[] = {1, 3, 6, 12};
  return {kSpreads[rng.below(4)], rng.below(8) == 0};
}

const FloatFormat& element_format(std::string_view type) {
  if (type == "e4m3") return kE4M3;
  if (type == "e5m2") return kE5M2;
  if (type == "f16") return kF16;
  if (type == "bf16") return kBF16;
  throw Error("mma inputs: no element format '" + std::string(type) +
              "' (accepted: e4m3, e5m2, f16, bf16)");
}

std::uint64_t matrix_element(Rng& rng, const FloatFormat& f, const MmaWarpInputs& warp,
                             int spread) {
  const std::uint64_t r = rng.below(1000);
  if (warp.specials && r < 15) return float_edge(rng, f);
  if (r < 60)
    return rng.percent(50)
               ? 0
               : (rng.bits() & f.mantissa_mask()) | (rng.percent(50) ? f.sign_bit() : 0);
  const int limit = f.bias() - 1;  // keep e4m3's and e5m2's exponents in range
  return float_moderate(rng, f, spread < limit ? spread : limit);
}

std::uint32_t packed_elements(Rng& rng, const FloatFormat& f, const MmaWarpInputs& warp,
                              int spread) {
  const int width = f.width();
  std::uint32_t v = 0;
  for (int i = 0; i < 32 / width; ++i)
    v |= static_cast<std::uint32_t>(matrix_element(rng, f, warp, spread < 0 ? warp.spread : spread))
         << (width * i);
  return v;
}

std::uint64_t accumulator_value(Rng& rng, const FloatFormat& f, const MmaWarpInputs& warp) {
  if (rng.percent(15)) return 0;
  return matrix_element(rng, f, warp, 2 * warp.spread + 2);
}

}  // namespace warpforge::difftest
