#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {

Stream::Stream(const Device& device) : device_(device), handle_(device.backend().create_stream()) {}

Stream::Stream(const Device& device, std::unique_ptr<StreamHandle> handle)
    : device_(device), handle_(std::move(handle)) {}

Stream Stream::borrow(const Device& device, std::uintptr_t native) {
  return Stream(device, device.backend().borrow_stream(native));
}

void Stream::synchronize() const { device_.backend().synchronize(handle_.get()); }

}  // namespace warpforge::runtime
