#include "memory_budget.hpp"

#include <limits>

#include "warpforge/error.hpp"
#include "warpforge/runtime/host_memory.hpp"

namespace warpforge::cli {
namespace {

constexpr std::uint64_t kLimit = std::numeric_limits<std::int64_t>::max();

}  // namespace

std::uint64_t MemoryBudget::product(std::initializer_list<std::uint64_t> factors) const {
  std::uint64_t p = 1;
  for (std::uint64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p) || p > kLimit)
      throw Error(problem_ + " is too large: its sizes multiply past 2^63 bytes");
  return p;
}

void MemoryBudget::add(std::uint64_t& sum, std::uint64_t bytes) const {
  if (__builtin_add_overflow(sum, bytes, &sum) || sum > kLimit)
    throw Error(problem_ + " is too large: its buffers add up past 2^63 bytes");
}

void MemoryBudget::device(std::initializer_list<std::uint64_t> factors) {
  add(device_, product(factors));
}

void MemoryBudget::host(std::initializer_list<std::uint64_t> factors) {
  add(host_, product(factors));
}

void MemoryBudget::require(const runtime::Device& device) const {
  const std::size_t device_free = device.backend().free_bytes();
  if (device_ > device_free)
    throw Error(problem_ + " needs " + runtime::describe_bytes(device_) + " of device memory; " +
                device.properties().name + " has " + runtime::describe_bytes(device_free) +
                " free");
  // The simulator's device memory is host memory too.
  const std::uint64_t host = host_ + (device.is_simulator() ? device_ : 0);
  const std::size_t host_free = runtime::host_available_bytes();
  if (host > host_free)
    throw Error(problem_ + " needs " + runtime::describe_bytes(host) +
                " of host memory (operands, their copies and the reference); the host has " +
                runtime::describe_bytes(host_free) + " available");
}

}  // namespace warpforge::cli
