// An ordered queue of work on one device (a CUstream on CUDA).
#pragma once

#include <memory>

#include "warpforge/runtime/device.hpp"

namespace warpforge::runtime {

class Stream {
 public:
  explicit Stream(const Device& device);

  const Device& device() const { return device_; }
  StreamHandle* handle() const { return handle_.get(); }
  void synchronize() const;  // waits until all work queued so far is done

 private:
  Device device_;
  std::unique_ptr<StreamHandle> handle_;
};

}  // namespace warpforge::runtime
