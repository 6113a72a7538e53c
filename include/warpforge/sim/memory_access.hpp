// Resolution and checking of every load and store: state space (generic
// addresses included), bounds and alignment.
#pragma once

#include <cstddef>
#include <cstdint>

#include "warpforge/sim/cta.hpp"

namespace warpforge::sim {

// Generic-address windows of the shared and local spaces (PTX ISA 6.4.1
// "Generic Addressing"): a generic address inside one of them is that space's
// address plus the window base; any other generic address is global.
constexpr std::uint64_t kSharedWindow = 0x0000'7E00'0000'0000ull;
constexpr std::uint64_t kLocalWindow = 0x0000'7D00'0000'0000ull;
constexpr std::uint64_t kWindowSize = 1ull << 32;

// Host bytes for `size` bytes at `address` in `space` for `lane`; throws
// AccessFault when out of bounds, misaligned (`align` bytes) or not writable.
std::byte* access(Warp& w, int lane, MemSpace space, std::uint64_t address, std::uint32_t size,
                  std::uint32_t align, bool write);

std::uint64_t load_bytes(const std::byte* p, std::uint32_t size);
void store_bytes(std::byte* p, std::uint32_t size, std::uint64_t value);

}  // namespace warpforge::sim
