#include "warpforge/sim/global_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <new>

#include "warpforge/error.hpp"

namespace warpforge::sim {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::atomic<std::uint64_t> GlobalMemory::spaces_{0};

std::uint64_t GlobalMemory::allocate(std::size_t bytes) {
  std::unique_ptr<std::byte[]> storage(new (std::nothrow) std::byte[bytes ? bytes : 1]);
  if (!storage)
    throw SimError("the host could not give the simulator " + std::to_string(bytes) +
                   " bytes for an allocation");
  std::memset(storage.get(), 0, bytes ? bytes : 1);
  std::byte* host = storage.get();
  return insert(0, bytes, host, std::move(storage));
}

std::uint64_t GlobalMemory::map(std::byte* host, std::size_t bytes) {
  return insert(reinterpret_cast<std::uintptr_t>(host) % kAlign, bytes, host, nullptr);
}

std::uint64_t GlobalMemory::map_in_place(std::byte* host, std::size_t bytes) {
  const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(host));
  std::unique_lock lock(mutex_);
  const auto after = allocations_.lower_bound(address);
  const bool overlaps_next = after != allocations_.end() && after->first < address + std::max<std::size_t>(bytes, 1);
  const bool overlaps_previous =
      after != allocations_.begin() && std::prev(after)->first + std::prev(after)->second.size > address;
  if (overlaps_next || overlaps_previous) {
    const auto& [start, other] = overlaps_next ? *after : *std::prev(after);
    throw SimError("host memory [" + hex(address) + ", " + hex(address + bytes) +
                   ") cannot be mapped at its own address: it overlaps [" + hex(start) + ", " +
                   hex(start + other.size) + "), already addressable");
  }
  allocations_.emplace(address, Allocation{bytes, host, nullptr});
  return address;
}

std::uint64_t GlobalMemory::insert(std::size_t offset, std::size_t bytes, std::byte* host,
                                   std::unique_ptr<std::byte[]> storage) {
  std::unique_lock lock(mutex_);
  const std::uint64_t address = next_ + offset;
  if (storage) live_bytes_ += bytes;
  allocations_.emplace(address, Allocation{bytes, host, std::move(storage)});
  next_ = (address + bytes + kGap + kAlign - 1) / kAlign * kAlign;
  return address;
}

void GlobalMemory::free(std::uint64_t address) {
  std::unique_lock lock(mutex_);
  ++generation_;
  const auto it = allocations_.find(address);
  if (it == allocations_.end())
    throw SimError("free of " + hex(address) + ", which is not the start of a live allocation");
  if (it->second.storage) live_bytes_ -= it->second.size;
  allocations_.erase(it);
}

std::size_t GlobalMemory::live_bytes() const {
  std::shared_lock lock(mutex_);
  return live_bytes_;
}

std::byte* GlobalMemory::find(std::uint64_t address, std::size_t bytes) {
  if (std::byte* p = lookup(address, bytes)) return p;
  MissHandler handler;
  {
    std::shared_lock lock(mutex_);
    handler = miss_handler_;
  }
  if (!handler) return nullptr;
  std::lock_guard serial(miss_mutex_);
  if (std::byte* p = lookup(address, bytes)) return p;  // another thread's call mapped it
  return handler(address, bytes) ? lookup(address, bytes) : nullptr;
}

void GlobalMemory::set_miss_handler(MissHandler handler) {
  std::unique_lock lock(mutex_);
  miss_handler_ = std::move(handler);
}

std::byte* GlobalMemory::lookup(std::uint64_t address, std::size_t bytes) {
  // Kernels touch a few buffers over and over: each host thread remembers
  // the allocation it found last.
  struct LastFound {
    std::uint64_t space = 0;
    std::uint64_t generation = 0, base = 0, size = 0;
    std::byte* bytes = nullptr;
  };
  thread_local LastFound last;
  const std::uint64_t generation = generation_.load(std::memory_order_relaxed);
  if (last.space != id_ || last.generation != generation || address - last.base >= last.size) {
    std::shared_lock lock(mutex_);
    auto it = allocations_.upper_bound(address);
    if (it == allocations_.begin()) return nullptr;
    --it;
    last = {id_, generation, it->first, it->second.size, it->second.bytes};
  }
  const std::uint64_t offset = address - last.base;
  if (offset > last.size || bytes > last.size - offset) return nullptr;
  return last.bytes + offset;
}

std::byte* GlobalMemory::require(std::uint64_t address, std::size_t bytes,
                                 const std::string& what) {
  std::byte* p = find(address, bytes);
  if (!p)
    throw SimError(what + " of " + std::to_string(bytes) + " bytes at " + hex(address) +
                   " is outside every allocation; nearest: " + describe_nearest(address));
  return p;
}

std::string GlobalMemory::describe_nearest(std::uint64_t address) const {
  std::shared_lock lock(mutex_);
  if (allocations_.empty()) return "no allocations";
  auto after = allocations_.upper_bound(address);
  auto best = after;
  std::uint64_t best_distance = ~0ull;
  if (after != allocations_.end()) {
    best_distance = after->first - address;
  }
  if (after != allocations_.begin()) {
    auto before = std::prev(after);
    const std::uint64_t end = before->first + before->second.size;
    const std::uint64_t d = address >= end ? address - end : 0;
    if (d <= best_distance) {
      best = before;
      best_distance = d;
    }
  }
  std::string out = "allocation [" + hex(best->first) + ", " +
                    hex(best->first + best->second.size) + ") of " +
                    std::to_string(best->second.size) + " bytes, ";
  if (address < best->first)
    return out + std::to_string(best->first - address) + " bytes before its start";
  const std::uint64_t end = best->first + best->second.size;
  if (address >= end) return out + std::to_string(address - end) + " bytes past its end";
  return out + "at offset " + std::to_string(address - best->first) +
         " (the access runs past its end)";
}

}  // namespace warpforge::sim
