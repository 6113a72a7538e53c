// A device that runs kernels: a CUDA GPU or the CPU simulator, behind the one
// DeviceBackend interface. Device is a cheap value type; copies share the
// backend.
#pragma once

#include <memory>
#include <string>

#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/backend.hpp"

namespace warpforge::runtime {

class Buffer;
class Stream;
class Event;

class Device {
 public:
  explicit Device(std::shared_ptr<DeviceBackend> backend);

  // The CUDA GPU with this ordinal. Loads the driver on first use; throws
  // CudaError when there is no driver or no such device, RuntimeError when
  // the GPU is older than sm_80. Devices of one ordinal share one backend
  // (one primary context, one compiled-module cache) while any is alive.
  static Device cuda(int index = 0);
  // The number of CUDA GPUs; 0 when there is no driver. Never throws.
  static int cuda_count();
  // A new CPU simulator (defined in src/sim/): each call makes another
  // device, with its own memory and modules, numbered in creation order, so
  // that one process can stand for a machine of several GPUs.
  static Device sim();

  const DeviceProperties& properties() const { return backend_->properties(); }
  ptx::Target target() const { return backend_->target(); }
  bool is_simulator() const { return backend_->is_simulator(); }
  DeviceBackend& backend() const { return *backend_; }
  // "GPU 1 'NVIDIA H100 80GB HBM3'" or "simulator 2": names the device among
  // others of the same model, for messages.
  std::string describe() const;

  Buffer allocate(std::size_t bytes) const;
  Stream create_stream() const;
  Event create_event() const;
  void synchronize() const;  // waits for all work on the device

  friend bool operator==(const Device& a, const Device& b) { return a.backend_ == b.backend_; }

 private:
  std::shared_ptr<DeviceBackend> backend_;
};

// The target kernels for a device of these properties are built for: sm_80
// for 8.0 to 8.7, sm_89 for 8.9, sm_90a for 9.0, sm_100a for 10.0. The 'a'
// targets (which wgmma and tcgen05 need) run only on that exact compute
// capability (PTX ISA 12 "Target ISA notes"), so any other, newer device gets
// sm_89, the newest of warpforge's targets whose code every later GPU runs.
// Throws RuntimeError below compute capability 8.0.
ptx::Target target_for(const DeviceProperties& properties);

}  // namespace warpforge::runtime
