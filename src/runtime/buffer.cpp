#include "warpforge/runtime/buffer.hpp"

#include <string>
#include <utility>

#include "warpforge/error.hpp"
#include "warpforge/runtime/host_memory.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {
namespace {

StreamHandle* handle_of(Stream* stream, const Device& device) {
  if (!stream) return nullptr;
  if (!(stream->device() == device)) throw RuntimeError("a copy was queued on a stream of another device");
  return stream->handle();
}

}  // namespace

std::size_t DeviceBackend::free_bytes() { return properties().global_bytes; }

Buffer::Buffer(const Device& device, std::size_t bytes) : device_(device), size_(bytes) {
  if (bytes == 0) return;
  // Asking first turns a hopeless request into a refusal that says what is
  // free, rather than the driver's bare out-of-memory or the host's bad_alloc.
  const std::size_t free = device_.backend().free_bytes();
  if (bytes > free)
    throw RuntimeError("a buffer of " + describe_bytes(bytes) + " does not fit on " +
                       device_.properties().name + ": " + describe_bytes(free) + " free");
  address_ = device_.backend().allocate(bytes);
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(other.device_), address_(std::exchange(other.address_, 0)), size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    address_ = std::exchange(other.address_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() noexcept {
  if (address_ == 0) return;
  try {
    device_.backend().free(address_);
  } catch (...) {
    // A destructor cannot report; a failing free means the context is
    // already broken, and the error that broke it was reported where it arose.
  }
  address_ = 0;
  size_ = 0;
}

void Buffer::check_range(const char* what, std::size_t offset, std::size_t bytes) const {
  if (offset > size_ || bytes > size_ - offset) {
    throw RuntimeError(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " +
                       std::to_string(offset) + " does not fit in a buffer of " + std::to_string(size_) +
                       " bytes");
  }
}

void Buffer::copy_from_host(const void* src, std::size_t bytes, std::size_t offset, Stream* stream) {
  check_range("copy to the device", offset, bytes);
  if (bytes == 0) return;
  device_.backend().copy_to_device(address_ + offset, src, bytes, handle_of(stream, device_));
}

void Buffer::copy_to_host(void* dst, std::size_t bytes, std::size_t offset, Stream* stream) const {
  check_range("copy to the host", offset, bytes);
  if (bytes == 0) return;
  device_.backend().copy_to_host(dst, address_ + offset, bytes, handle_of(stream, device_));
}

void Buffer::copy_from(const Buffer& src, std::size_t bytes, Stream* stream) {
  check_range("device-to-device copy", 0, bytes);
  src.check_range("device-to-device copy", 0, bytes);
  if (!(src.device_ == device_)) throw RuntimeError("device-to-device copy between buffers of two devices");
  if (bytes == 0) return;
  device_.backend().copy_device_to_device(address_, src.address_, bytes, handle_of(stream, device_));
}

void Buffer::fill(std::uint8_t byte, Stream* stream) {
  if (size_ == 0) return;
  device_.backend().fill(address_, byte, size_, handle_of(stream, device_));
}

}  // namespace warpforge::runtime
