// A kernel launch's configuration from the (x, y, z) tuples Python passes
// (warpforge.Module.launch, warpforge.triton's PtxModule.launch);
// overlap_previous: programmatic dependent launch (runtime::LaunchConfig).
#pragma once

#include <cstdint>
#include <tuple>

#include "warpforge/runtime/backend.hpp"

namespace warpforge::python {

using Dim3Tuple = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>;

inline runtime::LaunchConfig launch_config(const Dim3Tuple& grid, const Dim3Tuple& block,
                                           const Dim3Tuple& cluster,
                                           std::uint32_t dynamic_shared_bytes,
                                           bool overlap_previous = false) {
  const auto dim = [](const Dim3Tuple& t) { return runtime::Dim3{std::get<0>(t), std::get<1>(t), std::get<2>(t)}; };
  return {.grid = dim(grid),
          .block = dim(block),
          .cluster = dim(cluster),
          .dynamic_shared_bytes = dynamic_shared_bytes,
          .overlap_previous = overlap_previous};
}

}  // namespace warpforge::python
