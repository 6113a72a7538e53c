// The CPU simulator behind Device::sim(): a runtime::DeviceBackend that runs
// the PTX IR warp-accurately on the host (see sim_backend.hpp).
#pragma once

#include <memory>

#include "warpforge/runtime/backend.hpp"

namespace warpforge::sim {

struct SimOptions {
  // Host threads that run CTAs in parallel; 0 means one per hardware thread.
  unsigned worker_threads = 0;
};

std::shared_ptr<runtime::DeviceBackend> make_backend(SimOptions options = {});

}  // namespace warpforge::sim
