// The simulated address space used from several host threads at once: one
// thread's kernel looks its buffers up while others allocate, map and free
// (threads of one process sharing a simulator, as XLA's host devices do).
// Lookups that miss a thread's cache read the allocation table under a
// shared lock; without it they race with the writers and lose buffers.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "warpforge/sim/global_memory.hpp"

namespace warpforge::sim {
namespace {

TEST(GlobalMemory, LookupsHoldWhileOtherThreadsAllocateAndFree) {
  GlobalMemory memory;
  std::vector<std::uint64_t> mine;
  for (int i = 0; i < 8; ++i) mine.push_back(memory.allocate(4096));
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w)
    writers.emplace_back([&] {
      std::vector<std::byte> host(512);
      while (!done) {
        const std::uint64_t a = memory.allocate(256), b = memory.map(host.data(), host.size());
        memory.free(a);
        memory.free(b);
      }
    });
  std::uint64_t misses = 0;
  for (int round = 0; round < 200000; ++round) {
    // Alternate between buffers so that the thread's one-entry cache misses.
    const std::uint64_t base = mine[static_cast<std::size_t>(round) % mine.size()];
    if (!memory.find(base + 4000, 8)) ++misses;
  }
  done = true;
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(misses, 0u);
  EXPECT_EQ(memory.find(mine[0] + 4090, 8), nullptr);  // past the end still refused
  EXPECT_EQ(memory.live_bytes(), 8u * 4096);
}

}  // namespace
}  // namespace warpforge::sim
