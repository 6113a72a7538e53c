// An allocation of device memory, freed when the Buffer goes away (RAII,
// move-only). Copies take an optional Stream: without one they are
// synchronous (complete when the call returns); with one they are queued on
// that stream and the host memory must stay valid until it is synchronized.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "warpforge/runtime/device.hpp"

namespace warpforge::runtime {

class Stream;

class Buffer {
 public:
  // Allocates `bytes` on `device` (a zero-byte Buffer holds no allocation and
  // its address is 0).
  Buffer(const Device& device, std::size_t bytes);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  const Device& device() const { return device_; }
  DevicePtr address() const { return address_; }
  std::size_t size() const { return size_; }

  // Byte copies; `offset` is into this buffer. Each checks that the range
  // lies inside the buffer and throws RuntimeError naming it otherwise.
  void copy_from_host(const void* src, std::size_t bytes, std::size_t offset = 0, Stream* stream = nullptr);
  void copy_to_host(void* dst, std::size_t bytes, std::size_t offset = 0, Stream* stream = nullptr) const;
  void copy_from(const Buffer& src, std::size_t bytes, Stream* stream = nullptr);
  void fill(std::uint8_t byte, Stream* stream = nullptr);

  // Typed conveniences: the whole span to the start of the buffer, and the
  // buffer's first `count` elements back (synchronous).
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void upload(std::span<const T> values, Stream* stream = nullptr) {
    copy_from_host(values.data(), values.size_bytes(), 0, stream);
  }
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void upload(const std::vector<T>& values, Stream* stream = nullptr) {
    upload(std::span<const T>(values), stream);
  }
  template <class T>
    requires std::is_trivially_copyable_v<T>
  std::vector<T> download(std::size_t count) const {
    std::vector<T> out(count);
    copy_to_host(out.data(), count * sizeof(T));
    return out;
  }

 private:
  void check_range(const char* what, std::size_t offset, std::size_t bytes) const;
  void release() noexcept;

  Device device_;
  DevicePtr address_ = 0;
  std::size_t size_ = 0;
};

}  // namespace warpforge::runtime
