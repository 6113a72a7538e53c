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

#include "warpforge/error.hpp"
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

// Host memory mapped at its own address (warpforge.triton's tensors, whose
// addresses the host writes into tables of pointers): found there, refused
// where it overlaps what is already addressable.
TEST(GlobalMemory, MapsHostMemoryInPlace) {
  GlobalMemory memory;
  std::vector<std::byte> host(4096);
  const auto at = reinterpret_cast<std::uint64_t>(host.data());
  EXPECT_EQ(memory.map_in_place(host.data() + 256, 1024), at + 256);
  EXPECT_EQ(memory.find(at + 256 + 1000, 24), host.data() + 256 + 1000);
  EXPECT_EQ(memory.find(at + 256 + 1000, 25), nullptr);
  EXPECT_EQ(memory.find(at + 255, 1), nullptr);
  try {
    memory.map_in_place(host.data(), 512);
    ADD_FAILURE() << "an overlapping mapping was accepted";
  } catch (const SimError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be mapped at its own address: it overlaps [" + hex(at + 256) + ", " +
                                         hex(at + 1280) + "), already addressable"),
              std::string::npos)
        << e.what();
  }
  memory.map_in_place(host.data() + 1280, 256);  // adjacent: accepted
  memory.free(at + 256);
  EXPECT_EQ(memory.find(at + 300, 4), nullptr);
}

// A range outside every allocation goes to the miss handler, which may map
// it; a range it does not map stays refused.
TEST(GlobalMemory, MissHandlerMapsOnDemand) {
  GlobalMemory memory;
  std::vector<std::byte> host(512);
  const auto at = reinterpret_cast<std::uint64_t>(host.data());
  int calls = 0;
  memory.set_miss_handler([&](std::uint64_t address, std::size_t bytes) {
    ++calls;
    if (address < at || address + bytes > at + host.size()) return false;
    memory.map_in_place(host.data(), host.size());
    return true;
  });
  EXPECT_EQ(memory.find(at + 8, 8), host.data() + 8);
  EXPECT_EQ(memory.find(at + 16, 8), host.data() + 16);  // mapped now: no second call
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(memory.find(at + 510, 8), nullptr);
  EXPECT_EQ(calls, 2);
  memory.set_miss_handler({});
  memory.free(at);
  EXPECT_EQ(memory.find(at + 8, 8), nullptr);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace warpforge::sim
