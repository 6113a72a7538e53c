// The root of warpforge's exception hierarchy. Every refusal the library makes
// is one of these, and its message says what was wrong, with which values, and
// what would have been accepted.
#pragma once

#include <stdexcept>
#include <string>

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

// A tile primitive that no candidate instruction sequence can implement for
// the given operands; the message lists every candidate and why it refused.
class TileError : public Error {
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

}  // namespace warpforge
