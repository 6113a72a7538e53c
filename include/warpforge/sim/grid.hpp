// Runs a launch: every cluster of the grid (every CTA, without clusters),
// spread over a pool of host threads. Clusters share nothing but global
// memory, so running them in parallel changes no result a race-free kernel
// can observe; atomics use host atomics.
#pragma once

#include <cstdint>

#include "warpforge/sim/cta.hpp"

namespace warpforge::sim {

struct GridStats {
  std::uint64_t thread_instructions = 0;
};

// Throws SimError for an invalid configuration or the first fault of any CTA.
GridStats run_grid(const LaunchState& launch, unsigned worker_threads);

}  // namespace warpforge::sim
