// The CUDA driver backend behind Device::cuda(i). PTX is compiled to a cubin
// by the driver's JIT (cuLink*, so the cubin can be kept), through the
// BinaryCache keyed by PTX text, target and driver version; launches raise a
// kernel's dynamic shared memory limit themselves when they need more than
// the default 48 KB, and use cuLaunchKernelEx for cluster launches.
// Every call makes the device's primary context current on the calling thread
// for its duration (the thread's own context restored after), so a Device may
// be used from any thread, beside a framework's own use of the GPUs.
#pragma once

#include <memory>

#include "warpforge/runtime/backend.hpp"
#include "warpforge/runtime/binary_cache.hpp"

namespace warpforge::runtime {

namespace cuda {
class ContextScope;
}

class CudaBackend final : public DeviceBackend {
 public:
  // Retains the primary context of device `ordinal`. Throws CudaError without
  // a driver or with an ordinal out of range, RuntimeError below sm_80.
  explicit CudaBackend(int ordinal);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  const DeviceProperties& properties() const override { return properties_; }
  ptx::Target target() const override { return target_; }
  bool is_simulator() const override { return false; }

  std::size_t free_bytes() override;  // cuMemGetInfo
  DevicePtr allocate(std::size_t bytes) override;
  void free(DevicePtr ptr) override;
  void copy_to_device(DevicePtr dst, const void* src, std::size_t bytes, StreamHandle* stream) override;
  void copy_to_host(void* dst, DevicePtr src, std::size_t bytes, StreamHandle* stream) override;
  void copy_device_to_device(DevicePtr dst, DevicePtr src, std::size_t bytes, StreamHandle* stream) override;
  void fill(DevicePtr dst, std::uint8_t byte, std::size_t bytes, StreamHandle* stream) override;

  std::unique_ptr<StreamHandle> create_stream() override;
  std::unique_ptr<StreamHandle> borrow_stream(std::uintptr_t native) override;
  void synchronize(StreamHandle* stream) override;

  std::unique_ptr<EventHandle> create_event() override;
  void record(EventHandle& event, StreamHandle* stream) override;
  void synchronize_event(EventHandle& event) override;
  float elapsed_ms(EventHandle& start, EventHandle& end) override;

  // cuTensorMapEncodeTiled (src/runtime/cuda/tensor_map_encode.cpp).
  TensorMap encode_tensor_map(const TensorMapDesc& desc) override;

  std::unique_ptr<LoadedModule> load(const ptx::Module& module) override;
  void launch(LoadedModule& module, const std::string& kernel, const LaunchConfig& config,
              const std::vector<KernelArg>& args, StreamHandle* stream) override;
  // The kernel's CUfunction found once; its launches look nothing up.
  std::unique_ptr<PreparedKernel> prepare(LoadedModule& module, const std::string& kernel) override;
  void launch_prepared(PreparedKernel& kernel, const LaunchConfig& config, void* const* params,
                       StreamHandle* stream) override;
  // cuOccupancyMaxActiveClusters, after raising the kernel's dynamic shared
  // memory limit to config's as a launch would.
  int max_active_clusters(LoadedModule& module, const std::string& kernel, const LaunchConfig& config) override;

  int driver_version() const;
  // The compiled-module cache (directory: BinaryCache::default_directory()
  // when the backend was created).
  BinaryCache& binary_cache() { return cache_; }

 private:
  struct Context;  // the driver handles, kept out of this header
  cuda::ContextScope enter() const;  // this device's context, current until the scope ends

  std::unique_ptr<Context> context_;
  DeviceProperties properties_;
  ptx::Target target_;
  BinaryCache cache_;
};

}  // namespace warpforge::runtime
