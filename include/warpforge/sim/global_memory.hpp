// The simulated global address space: every allocation lives at its own
// address with an unmapped gap after it, so that running off the end of one
// buffer never lands in the next and is always reported.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>

namespace warpforge::sim {

class GlobalMemory {
 public:
  // Where allocations start, and the unmapped bytes left after each one.
  static constexpr std::uint64_t kBase = 0x0000'0100'0000'0000ull;
  static constexpr std::uint64_t kGap = 1u << 16;
  static constexpr std::uint64_t kAlign = 256;  // cudaMalloc's alignment guarantee

  // Throws SimError when the host cannot give the bytes.
  std::uint64_t allocate(std::size_t bytes);
  std::size_t live_bytes() const;  // held by live allocations (not mappings)
  // Makes `bytes` of host memory at `host` addressable by kernels without a
  // copy (a NumPy array given to the simulator): the address returned has the
  // host pointer's offset modulo kAlign, so the alignment a kernel sees is the
  // host memory's own. The caller keeps the memory alive until free().
  std::uint64_t map(std::byte* host, std::size_t bytes);
  // The same at the host address itself (a host pointer stored in memory is
  // then a valid address); SimError when the range overlaps an allocation
  // or another mapping.
  std::uint64_t map_in_place(std::byte* host, std::size_t bytes);
  void free(std::uint64_t address);  // an allocation or a mapping

  // The host bytes behind [address, address + bytes), or nullptr when that
  // range is not inside one allocation (after asking the miss handler).
  std::byte* find(std::uint64_t address, std::size_t bytes);

  // Called with a range outside every allocation before find() gives up: it
  // may map host memory that holds it (map_in_place) and return true to
  // have the lookup tried again. Calls are serialized; they come from the
  // threads that run kernels. An empty function removes it.
  using MissHandler = std::function<bool(std::uint64_t address, std::size_t bytes)>;
  void set_miss_handler(MissHandler handler);
  // The host bytes, or a SimError naming `what` (a copy, a fill) and the range.
  std::byte* require(std::uint64_t address, std::size_t bytes, const std::string& what);

  // "allocation [0x..., 0x...) of N bytes, A bytes past its end" for the
  // allocation nearest to `address`, or that there are none.
  std::string describe_nearest(std::uint64_t address) const;

 private:
  struct Allocation {
    std::size_t size;
    std::byte* bytes;                      // the host bytes behind the range
    std::unique_ptr<std::byte[]> storage;  // null for a mapping
  };
  std::uint64_t insert(std::size_t offset, std::size_t bytes, std::byte* host,
                       std::unique_ptr<std::byte[]> storage);
  std::byte* lookup(std::uint64_t address, std::size_t bytes);
  // Written by allocation, mapping and free; read by lookups that miss their
  // thread's cache. Host threads allocate and map while other threads'
  // launches look addresses up (several threads on one device, as XLA's
  // host devices share the simulator).
  mutable std::shared_mutex mutex_;
  std::map<std::uint64_t, Allocation> allocations_;
  std::uint64_t next_ = kBase;
  std::size_t live_bytes_ = 0;
  MissHandler miss_handler_;  // guarded by mutex_; called under miss_mutex_
  std::mutex miss_mutex_;
  // A host thread's cached last-found allocation is valid only for the space
  // (identified by a number never reused, unlike an address) and the
  // generation (bumped by free()) it was found in.
  static std::atomic<std::uint64_t> spaces_;
  const std::uint64_t id_ = ++spaces_;
  std::atomic<std::uint64_t> generation_{0};
};

std::string hex(std::uint64_t v);

}  // namespace warpforge::sim
