#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {

Stream::Stream(const Device& device) : device_(device), handle_(device.backend().create_stream()) {}

void Stream::synchronize() const { device_.backend().synchronize(handle_.get()); }

}  // namespace warpforge::runtime
