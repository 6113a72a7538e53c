// The root of warpforge's exception hierarchy. Every refusal the library makes
// is one of these, and its message says what was wrong, with which values, and
// what would have been accepted.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace warpforge {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Misuse of the DSL: wrong operand count or type, foreign register, unknown name.
class DslError : public Error {
 public:
  using Error::Error;
};

// An instruction used on a target that does not have it.
class TargetError : public DslError {
 public:
  using DslError::DslError;
};

// A PTX module that is structurally invalid (emitter or verifier refusal).
class PtxError : public Error {
 public:
  using Error::Error;
};

// A layout-algebra refusal: an incongruent or out-of-range coordinate, or
// operands that violate an operation's divisibility conditions.
class LayoutError : public Error {
 public:
  using Error::Error;
};

// A refusal of the runtime layer: a launch whose arguments or configuration do
// not fit the kernel or the device, a tensor whose strides leave its storage,
// a corrupt or unusable cache directory.
class RuntimeError : public Error {
 public:
  using Error::Error;
};

// A tile primitive that no candidate instruction sequence can implement for
// the given operands; the message lists every candidate and why it refused.
class TileError : public Error {
 public:
  using Error::Error;
};

// A CUDA driver call that failed, or a driver that could not be loaded. Carries
// the call as written ("cuMemAlloc_v2(1048576 bytes)"), the CUresult's name
// ("CUDA_ERROR_OUT_OF_MEMORY", from cuGetErrorName) and its description (from
// cuGetErrorString); `code` is the CUresult, or -1 when no driver call was made.
class CudaError : public Error {
 public:
  CudaError(std::string call, int code, std::string error_name, std::string description)
      : Error(call + " failed: " + error_name + " (" + description + ")"),
        call_(std::move(call)),
        code_(code),
        error_name_(std::move(error_name)),
        description_(std::move(description)) {}

  const std::string& call() const { return call_; }
  int code() const { return code_; }
  const std::string& error_name() const { return error_name_; }
  const std::string& description() const { return description_; }

 private:
  std::string call_;
  int code_;
  std::string error_name_;
  std::string description_;
};

// A kernel that the CPU simulator refused to load (an instruction it does not
// execute) or stopped while running (an out-of-bounds or misaligned access, a
// barrier deadlock). The message names the kernel, the PTX line, and where it
// applies the block and thread coordinates.
class SimError : public Error {
 public:
  using Error::Error;
};

}  // namespace warpforge
