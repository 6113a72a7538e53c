#include "difftest/known_departures.hpp"

#include <string_view>
#include <vector>

namespace warpforge::difftest {

namespace {

// Why each unit departs: the rule of the H100 the simulator does not follow yet.
constexpr std::string_view kWgmmaFp8Half =
    "FP8 wgmma into f16 accumulators: a few results near f16 overflow differ from the rule";

const std::vector<KnownDeparture>& table() {
  static const std::vector<KnownDeparture> all = {
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
