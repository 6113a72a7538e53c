// The defaults of DeviceBackend's hooks for streams and memory made outside
// warpforge: a backend that does not override them cannot use them.
#include "warpforge/error.hpp"
#include "warpforge/runtime/backend.hpp"

namespace warpforge::runtime {

std::unique_ptr<StreamHandle> DeviceBackend::borrow_stream(std::uintptr_t) {
  throw RuntimeError("device '" + properties().name +
                     "' cannot run on a stream created outside warpforge");
}

DevicePtr DeviceBackend::map_host(void*, std::size_t bytes) {
  throw RuntimeError(
      "device '" + properties().name + "' cannot address " + std::to_string(bytes) +
      " bytes of host memory; only the simulator runs on host memory (NumPy arrays)");
}

DevicePtr DeviceBackend::map_host_in_place(void* host, std::size_t bytes) {
  return map_host(host, bytes);  // refuses, as above
}

void DeviceBackend::unmap_host(DevicePtr) {
  throw RuntimeError("device '" + properties().name + "' maps no host memory");
}

}  // namespace warpforge::runtime
