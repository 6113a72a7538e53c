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

// An operation (ops/: gemm, gemm_amax) asked for something it does not
// support; the message lists every reason, each with the value and the rule.
class OpsError : public Error {
 public:
  using Error::Error;
};

// A kernel that the CPU simulator refused to load (an instruction it does not
// execute) or stopped while running (an out-of-bounds or misaligned access, a
// barrier deadlock). The message names the kernel, the PTX line, and where it
// applies the block and thread coordinates.
class SimError : public Error {
 public:
  using Error::Error;
};

// An external compiler the library runs (LLVM's opt, llc, ld.lld,
// llvm-objdump for the AMDGPU backend) that is missing or failed; the message
// says which, with its output, or how to install it.
class ToolchainError : public Error {
 public:
  using Error::Error;
};

// PTX text the parser cannot read. Carries where (1-based line and column of
// the offending token), what it found and what would have been accepted; the
// message says all of it as "file:line:column: expected X, found 'tok'".
class ParseError : public PtxError {
 public:
  ParseError(const std::string& file, int line, int column, std::string token, std::string expected)
      : PtxError(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": expected " + expected +
                 ", found " + (token.empty() ? std::string("end of input") : "'" + token + "'")),
        line_(line),
        column_(column),
        token_(std::move(token)),
        expected_(std::move(expected)) {}

  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& token() const { return token_; }  // empty at end of input
  const std::string& expected() const { return expected_; }

 private:
  int line_;
  int column_;
  std::string token_;
  std::string expected_;
};

}  // namespace warpforge
