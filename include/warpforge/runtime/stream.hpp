// An ordered queue of work on one device (a CUstream on CUDA).
#pragma once

#include <cstdint>
#include <memory>

#include "warpforge/runtime/device.hpp"

namespace warpforge::runtime {

class Stream {
 public:
  explicit Stream(const Device& device);
  // A stream owned elsewhere, by its native handle (DeviceBackend::borrow_stream).
  static Stream borrow(const Device& device, std::uintptr_t native);

  const Device& device() const { return device_; }
  StreamHandle* handle() const { return handle_.get(); }
  void synchronize() const;  // waits until all work queued so far is done

 private:
  Stream(const Device& device, std::unique_ptr<StreamHandle> handle);

  Device device_;
  std::unique_ptr<StreamHandle> handle_;
};

}  // namespace warpforge::runtime
