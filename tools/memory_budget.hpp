// What a command will allocate, added up from its arguments with overflow
// checks and compared with what the device and the host have free, before
// anything is allocated: a problem too large is refused saying so, instead
// of ending in std::bad_alloc or a driver error half-way through.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "warpforge/runtime/device.hpp"

namespace warpforge::cli {

class MemoryBudget {
 public:
  // `problem` names the request in refusals ("GEMM 99999999999x8x8 L1").
  explicit MemoryBudget(std::string problem) : problem_(std::move(problem)) {}

  // Adds the product of `factors` (element counts, bytes per element) to
  // the device's or the host's bytes; refuses a product or sum past 2^63.
  void device(std::initializer_list<std::uint64_t> factors);
  void host(std::initializer_list<std::uint64_t> factors);

  // Refuses (warpforge::Error) when either sum exceeds what is free: the
  // device's free_bytes(), the host's available memory.
  void require(const runtime::Device& device) const;

 private:
  std::uint64_t product(std::initializer_list<std::uint64_t> factors) const;
  void add(std::uint64_t& sum, std::uint64_t bytes) const;

  std::string problem_;
  std::uint64_t device_ = 0, host_ = 0;
};

}  // namespace warpforge::cli
