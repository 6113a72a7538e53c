// A CUDA context made current on the calling thread for a scope, the thread's
// previous context restored at its end. warpforge shares its threads with the
// framework that calls it: the CUDA runtime (torch, JAX, CuPy) takes the
// primary context current on a thread as that thread's current device (CUDA
// Runtime API, "Interactions with the CUDA Driver API"), so an op on GPU 1
// that left GPU 1's context current would move the caller's later
// allocations and launches there.
#pragma once

#include "driver.hpp"

namespace warpforge::runtime::cuda {

class ContextScope {
 public:
  // Never throws (destructors use it too); result() says whether `context`
  // became current.
  explicit ContextScope(CUcontext context) noexcept {
    const Driver& d = driver();
    if (d.cuCtxGetCurrent(&previous_) != CUDA_SUCCESS) previous_ = nullptr;
    if (previous_ == context) return;
    result_ = d.cuCtxSetCurrent(context);
    switched_ = result_ == CUDA_SUCCESS;
  }
  ~ContextScope() {
    if (switched_) driver().cuCtxSetCurrent(previous_);
  }
  ContextScope(ContextScope&& other) noexcept
      : previous_(other.previous_), result_(other.result_), switched_(other.switched_) {
    other.switched_ = false;
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  ContextScope& operator=(ContextScope&&) = delete;

  CUresult result() const { return result_; }

 private:
  CUcontext previous_ = nullptr;
  CUresult result_ = CUDA_SUCCESS;
  bool switched_ = false;
};

}  // namespace warpforge::runtime::cuda
