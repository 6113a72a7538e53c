// Resolution and checking of every load and store: state space (generic
// addresses included), bounds and alignment.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cta.hpp"

namespace warpforge::sim {

// Generic-address windows of the shared and local spaces (PTX ISA 6.4.1
// "Generic Addressing"): a generic address inside one of them is that space's
// address plus the window base; any other generic address is global.
constexpr std::uint64_t kSharedWindow = 0x0000'7E00'0000'0000ull;
constexpr std::uint64_t kLocalWindow = 0x0000'7D00'0000'0000ull;
constexpr std::uint64_t kParamWindow = 0x0000'7C00'0000'0000ull;  // cvta.param (PTX ISA 9.7.9.17)
constexpr std::uint64_t kWindowSize = 1ull << 32;

// Shared-memory addresses of the cluster (PTX ISA 5.1.5 ".shared::cluster"):
// the offset in CTA `rank` of the cluster is (rank + 1) * 2^24 + offset,
// which is what mapa gives and, in a cluster launch, what a CTA's own shared
// variables' addresses are (Cta::shared_tag); a bare offset below 2^24 names
// the CTA's own shared memory. Generic addresses add the shared window.
constexpr int kRankShift = 24;
constexpr std::uint64_t kOffsetMask = (1ull << kRankShift) - 1;
inline std::uint64_t cluster_shared_address(std::uint32_t rank, std::uint64_t offset) {
  return (std::uint64_t{rank} + 1) << kRankShift | (offset & kOffsetMask);
}

// The shared-memory swizzle of TMA and wgmma with a span of 32, 64 or 128
// bytes (0: none): the 16-byte chunk index within each 128-byte line XORed
// with that line's index bits, i.e. address bits [4, 4+b) ^= [7, 7+b) for
// b = 1, 2, 3 (PTX ISA 9.7.15.5.1.2.2 and 5.5.7 "Tensor swizzling modes").
inline std::uint64_t swizzle_address(std::uint64_t address, std::uint32_t span) {
  if (span == 0) return address;
  const std::uint64_t mask = span / 16 - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

// The CTA whose shared memory a shared::cluster address names (the
// executing one for a plain offset); throws AccessFault naming the rank when
// the cluster has no such CTA.
Cta& shared_owner(Warp& w, int lane, std::uint64_t address, bool write, std::uint32_t size);

// Host bytes for `size` bytes at `address` in `space` for `lane`; throws
// AccessFault when out of bounds, misaligned (`align` bytes) or not writable.
std::byte* access(Warp& w, int lane, Space space, std::uint64_t address, std::uint32_t size,
                  std::uint32_t align, bool write);

// Shared-memory race checking (shared_races.hpp), in launches that ask for
// it: an access through `p` (from access(), before a write changes it) by
// `lane`, counted when `p` is in the CTA's own shared memory; a write's new
// bytes `data` where known; throws AccessFault for a race. Synchronization
// through `object` (a Barrier, an mbarrier's bytes): release, acquire, and
// forget (a new object at its place).
void record_shared_access(Warp& w, int lane, const std::byte* p, std::size_t size, bool write,
                          const std::byte* data);
// A retiring wgmma's read, by warp `w`'s part of it, of the CTA's shared
// bytes [offset, offset + size): throws AccessFault for a write not ordered
// before its issue (SharedRaces::async_read).
void record_wgmma_read(Warp& w, const PendingWgmma& p, std::size_t offset, std::size_t size);
inline void note_shared_access(Warp& w, int lane, const std::byte* p, std::size_t size, bool write,
                               const std::byte* data = nullptr) {
  if (w.cta->races) record_shared_access(w, lane, p, size, write, data);
}
inline void note_release(Warp& w, const void* object) {
  if (w.cta->races) w.cta->races->release(w.index, object);
}
inline void note_acquire(Warp& w, const void* object) {
  if (w.cta->races) w.cta->races->acquire(w.index, object);
}
inline void note_new_object(Warp& w, const void* object) {
  if (w.cta->races) w.cta->races->forget(object);
}

std::uint64_t load_bytes(const std::byte* p, std::uint32_t size);
void store_bytes(std::byte* p, std::uint32_t size, std::uint64_t value);

}  // namespace warpforge::sim
