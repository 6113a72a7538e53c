#include "warpforge/runtime/device.hpp"

#include <map>
#include <mutex>

#include "cuda/driver.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/cuda_backend.hpp"
#include "warpforge/runtime/event.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {

Device::Device(std::shared_ptr<DeviceBackend> backend) : backend_(std::move(backend)) {
  if (!backend_) throw RuntimeError("Device constructed from a null backend");
}

Device Device::cuda(int index) {
  // One backend per ordinal while any Device holds it, so that every Device
  // for a GPU shares its primary context and its compiled modules.
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<CudaBackend>> live;
  std::lock_guard lock(mutex);
  if (auto backend = live[index].lock()) return Device(backend);
  auto backend = std::make_shared<CudaBackend>(index);
  live[index] = backend;
  return Device(backend);
}

int Device::cuda_count() {
  if (!cuda::driver_available()) return 0;
  int count = 0;
  if (cuda::driver().cuDeviceGetCount(&count) != cuda::CUDA_SUCCESS) return 0;
  return count;
}

std::string Device::describe() const {
  const DeviceProperties& p = properties();
  if (is_simulator()) return "simulator " + std::to_string(p.ordinal);
  return "GPU " + std::to_string(p.ordinal) + " '" + p.name + "'";
}

Buffer Device::allocate(std::size_t bytes) const { return Buffer(*this, bytes); }
Stream Device::create_stream() const { return Stream(*this); }
Event Device::create_event() const { return Event(*this); }
void Device::synchronize() const { backend_->synchronize(nullptr); }

ptx::Target target_for(const DeviceProperties& p) {
  const int cc = p.compute_capability_major * 10 + p.compute_capability_minor;
  if (cc < 80) {
    throw RuntimeError("device '" + p.name + "' has compute capability " +
                       std::to_string(p.compute_capability_major) + "." +
                       std::to_string(p.compute_capability_minor) +
                       "; warpforge needs 8.0 (Ampere) or newer (targets sm_80, sm_89, sm_90a, sm_100a)");
  }
  if (cc == 90) return ptx::Target::sm_90a;
  if (cc == 100) return ptx::Target::sm_100a;
  if (cc < 89) return ptx::Target::sm_80;
  return ptx::Target::sm_89;
}

}  // namespace warpforge::runtime
