// The MFMA of a wave: gathers A, B and C from the lanes by AMD's operand
// layouts (mfma_semantics), multiplies, and scatters D back.
#include <vector>

#include "../float_format.hpp"
#include "mfma_semantics.hpp"
#include "wave.hpp"

namespace warpforge::sim::amdgpu {

void Wave::mfma(const Inst& in) {
  const Mfma m = static_cast<Mfma>(in.imm);
  const MfmaInfo& mi = info(m);
  // The whole wave computes one MFMA: its operands come from all 64 lanes.
  if (exec_ != ~0ull)
    fail(in, 0, "MFMA with a partial exec mask: the instruction reads and writes all 64 lanes");
  const FloatFormat& input = mi.bf16 ? kBF16 : kF16;
  auto element = [&](const Operand& o, LaneSlot at) {
    std::uint32_t word = words(o.reg, at.lane)[at.slot / 2];
    return decode_float((word >> (16 * (at.slot % 2))) & 0xFFFFu, input);
  };
  std::vector<double> a(static_cast<std::size_t>(mi.m * mi.k)),
      b(static_cast<std::size_t>(mi.k * mi.n));
  for (int i = 0; i < mi.m; ++i)
    for (int k = 0; k < mi.k; ++k) a[i * mi.k + k] = element(in.args[0], mfma_a(m, i, k));
  for (int k = 0; k < mi.k; ++k)
    for (int j = 0; j < mi.n; ++j) b[k * mi.n + j] = element(in.args[1], mfma_b(m, k, j));
  std::vector<float> d(static_cast<std::size_t>(mi.m * mi.n));
  for (int i = 0; i < mi.m; ++i)
    for (int j = 0; j < mi.n; ++j) {
      LaneSlot c = mfma_c(m, i, j);
      // Products of bf16 or f16 values are exact in double, and so is their
      // sum here; one rounding to f32 (hardware may round within its adder
      // tree, so results can differ from it in the last bit).
      double sum = f32_of(words(in.args[2].reg, c.lane)[c.slot]);
      for (int k = 0; k < mi.k; ++k) sum += a[i * mi.k + k] * b[k * mi.n + j];
      d[i * mi.n + j] = static_cast<float>(sum);
    }
  for (int i = 0; i < mi.m; ++i)
    for (int j = 0; j < mi.n; ++j) {
      LaneSlot c = mfma_c(m, i, j);
      words(in.dst, c.lane)[c.slot] = static_cast<std::uint32_t>(bits_of(d[i * mi.n + j]));
    }
}

}  // namespace warpforge::sim::amdgpu
