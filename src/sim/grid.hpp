// Runs a launch: every cluster of the grid (every CTA, without clusters),
// spread over a pool of host threads. Clusters share nothing but global
// memory, so running them in parallel changes no result a race-free kernel
// can observe; atomics use host atomics.
#pragma once

#include <cstdint>

#include "cta.hpp"

namespace warpforge::sim {

struct GridStats {
  std::uint64_t thread_instructions = 0;
};

struct SimOptions;

// Throws SimError for an invalid configuration, the first fault of any CTA,
// or a launch past the watchdog's limits of `options` (which hold the worker
// thread count, limits and progress setting already resolved).
GridStats run_grid(LaunchState& launch, const SimOptions& options);

}  // namespace warpforge::sim
