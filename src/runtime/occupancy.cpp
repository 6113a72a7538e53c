// The default occupancy answer of DeviceBackend (see backend.hpp), for
// backends that run every CTA of a launch whatever the grid's size.
#include <algorithm>

#include "warpforge/runtime/backend.hpp"

namespace warpforge::runtime {

int DeviceBackend::max_active_clusters(LoadedModule&, const std::string&, const LaunchConfig& config) {
  const auto per_cluster = static_cast<int>(std::max<std::uint64_t>(config.cluster.count(), 1));
  return std::max(1, properties().sm_count / per_cluster);
}

}  // namespace warpforge::runtime
