#include "difftest/known_departures.hpp"

#include <string_view>
#include <vector>

namespace warpforge::difftest {

namespace {

// Why each unit departs: the rule of the H100 the simulator does not follow yet.
constexpr std::string_view kSinCos =
    "sin/cos.approx: the H100's range reduction and absolute error near zeros are not modelled";
constexpr std::string_view kWgmmaFp8Half =
    "FP8 wgmma into f16 accumulators: a few results near f16 overflow differ from the rule";
constexpr std::string_view kDivApprox =
    "div.approx: the H100 algorithm (reciprocal then product, flushing near overflow) is not "
    "modelled";
constexpr std::string_view kF64Approx =
    "f64 .approx: the H100 computes about 20 significand bits (the low word zero for rcp); not "
    "modelled";

const std::vector<KnownDeparture>& table() {
  static const std::vector<KnownDeparture> all = {
      {"float_approx", "div.approx.f32", 259, kDivApprox},
      {"float_approx", "sin.approx.f32", 971, kSinCos},
      {"float_approx", "cos.approx.f32", 881, kSinCos},
      {"float_approx", "div.approx.ftz.f32", 266, kDivApprox},
      {"float_approx", "sin.approx.ftz.f32", 946, kSinCos},
      {"float_approx", "cos.approx.ftz.f32", 863, kSinCos},
      {"float_approx", "rcp.approx.ftz.f64", 895, kF64Approx},
      {"float_approx", "rsqrt.approx.f64", 121, kF64Approx},
      {"wgmma", "wgmma.mma_async.sync.aligned.m64n128k32.f16.e4m3.e5m2", 9, kWgmmaFp8Half},
  };
  return all;
}

}  // namespace

const KnownDeparture* known_departure(std::string_view family, std::string_view unit) {
  for (const KnownDeparture& d : table())
    if (d.family == family && d.unit == unit) return &d;
  return nullptr;
}

}  // namespace warpforge::difftest
