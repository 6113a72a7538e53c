// Tensors and streams arriving from Python: DLPack capsules of any producer
// (torch, JAX, CuPy: CUDA memory; NumPy: host memory, which the simulator
// maps without a copy), and the native stream handles of the caller.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::python {

// The one simulator the package runs host memory on (every NumPy array is
// mapped into its address space), and the CUDA devices, kept for the
// module's lifetime so that their contexts and compiled modules stay.
runtime::Device simulator();
runtime::Device cuda_device(int ordinal);

// The stream work goes on: the caller's native handle (a CUstream as an
// integer) borrowed on a GPU; none (the null stream) when absent, and none on
// the simulator, which runs each launch as it is issued.
std::optional<runtime::Stream> caller_stream(const runtime::Device& device,
                                             std::optional<std::uintptr_t> handle);
inline runtime::Stream* pointer(std::optional<runtime::Stream>& s) {
  return s ? &*s : nullptr;
}

// Addresses on `device` for memory a caller hands over for one call: on the
// simulator, host memory mapped into its address space until this goes; on
// a GPU, the CUDA address itself.
class CallMappings {
 public:
  explicit CallMappings(runtime::Device device) : device_(std::move(device)) {}
  CallMappings(const CallMappings&) = delete;
  CallMappings& operator=(const CallMappings&) = delete;
  ~CallMappings() {
    for (runtime::DevicePtr p : mapped_) device_.backend().unmap_host(p);
  }
  const runtime::Device& device() const { return device_; }
  runtime::DevicePtr map(std::uint64_t address, std::size_t bytes) {
    if (!device_.is_simulator()) return address;
    mapped_.push_back(device_.backend().map_host(
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), bytes));
    return mapped_.back();
  }

 private:
  runtime::Device device_;
  std::vector<runtime::DevicePtr> mapped_;
};

// A TMA tensor map of a tensor, passed to a kernel's `.param .align 64 .b8
// name[128]` as its 128 bytes; it keeps the tensor (and on the simulator its
// mapping, whose address the map holds) alive.
struct TensorMapArg {
  runtime::Tensor tensor;
  runtime::TensorMap map;
};

}  // namespace warpforge::python
