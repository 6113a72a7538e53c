// The state of a running CTA: its warps, each with per-thread PCs and a
// register file laid out slot-major (32 lanes of one register side by side, so
// one instruction sweeps contiguous memory), its shared memory and its named
// barriers; and what all CTAs of a launch share.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "program.hpp"
#include "shared_races.hpp"
#include "tensor_memory.hpp"
#include "warpforge/runtime/backend.hpp"
#include "warpforge/sim/global_memory.hpp"

namespace warpforge::sim {

class LaunchMonitor;

class PrintfSink;

struct LaunchState {
  const Kernel& kernel;
  runtime::LaunchConfig config;
  std::vector<std::byte> params;
  GlobalMemory& global;
  const std::vector<std::byte>& const_bank;
  int sm_count = 1;
  LaunchMonitor* monitor = nullptr;  // the watchdog; none in unit tests of single CTAs
  PrintfSink* printf_sink = nullptr;  // where vprintf writes (printf.hpp); none: the host's stdout
  bool check_shared_races = false;    // SimOptions::check_shared_races, for launches without clusters
};

// at_mbarrier: blocked in mbarrier.try_wait until the phase completes;
// at_cluster_barrier: blocked in barrier.cluster.wait; at_peer_warp: blocked
// in a tcgen05 .cta_group::2 alloc, dealloc or relinquish_alloc_permit until
// a warp of the peer CTA performs it too (tcgen05.cpp).
enum class LaneState : std::uint8_t {
  ready,
  exited,
  at_barrier,
  at_collective,
  at_mbarrier,
  at_cluster_barrier,
  at_peer_warp
};

// One cp.async in flight: the source bytes were read at issue; they land in
// shared memory when a wait retires their group (PTX ISA 9.7.9.25.3).
struct AsyncCopy {
  std::uint64_t shared_address;
  std::uint8_t size;
  std::array<std::byte, 16> data;
};

struct LaneAsyncCopies {
  std::vector<AsyncCopy> open;                    // not yet committed
  std::vector<std::vector<AsyncCopy>> committed;  // oldest group first
};

// A lane's TMA stores and bulk reduces in flight (cp.async.bulk.tensor ...
// .bulk_group, cp.reduce.async.bulk ... .bulk_group): each reads shared
// memory and writes global memory when a cp.async.bulk.wait_group retires
// its group, or when the thread exits.
struct LaneBulkStores {
  std::vector<std::function<void()>> open;                    // not yet committed
  std::vector<std::vector<std::function<void()>>> committed;  // oldest group first
};

struct Cta;

// A wgmma.mma_async in flight: what it read from registers at issue (PTX ISA
// 9.7.15.5.2). It reads shared memory (and A's registers, when A is in
// registers) and updates its accumulators when a wgmma.wait_group retires
// its group.
struct PendingWgmma {
  const Inst* inst;
  int warp_in_group;
  std::uint64_t desc_a, desc_b;  // desc_a: 0 when A is in registers
  bool accumulate;               // scale-d
  SharedRaces::Clock issued{};   // the warp's clock at issue, where races are checked
};

// A register of a wgmma.mma_async in flight: the PTX line of that wgmma (0:
// none) and whether it holds part of A (read by the wgmma) or an accumulator
// (written by it).
struct WgmmaRegisterUse {
  int line = 0;
  bool a_fragment = false;
};

struct Warp {
  Cta* cta = nullptr;
  std::uint32_t index = 0;   // warp number in the CTA
  std::uint32_t exists = 0;  // lanes that are threads of the CTA
  std::uint32_t ready = 0;   // lanes that can run
  std::array<std::uint32_t, 32> pc{};
  std::array<LaneState, 32> state{};
  std::array<std::uint8_t, 32> barrier{};  // which barrier a lane waits at
  std::vector<std::uint64_t> regs;         // regs[slot * 32 + lane]
  std::vector<std::byte> local;            // local_bytes per lane, lane-major
  std::vector<LaneAsyncCopies> async;      // per lane, created on first cp.async
  std::vector<LaneBulkStores> bulk;        // per lane, created on first TMA store
  std::uint32_t awaited_members = 0;       // member mask of the collective lanes wait at
  std::uint64_t clock = 0;
  // Hopper state, after the fields every instruction touches.
  std::uint32_t blocked = 0;  // lanes at_mbarrier, at_cluster_barrier or at_peer_warp
  bool wgmma_busy = false;    // some wgmma_pending entry is set
  // barrier.cluster: 0 while the lane has no arrival pending a wait, else the
  // cluster barrier phase it arrived in, plus one.
  std::array<std::uint32_t, 32> cluster_arrival{};
  // wgmma.mma_async issued and not yet retired by wgmma.wait_group: those
  // since the last commit_group, and each committed group, oldest first; and
  // by register slot, the pending wgmma using it.
  std::vector<PendingWgmma> wgmma_open;
  std::vector<std::vector<PendingWgmma>> wgmma_groups;
  std::vector<WgmmaRegisterUse> wgmma_pending;

  std::uint64_t& reg(std::uint32_t slot, int lane) { return regs[slot * 32 + lane]; }
};

struct Barrier {
  std::uint32_t arrived = 0;
  std::uint32_t expected = 0;
};

struct Cluster;

struct Cta {
  const LaunchState* launch = nullptr;
  Cluster* cluster = nullptr;
  std::uint32_t rank = 0;  // %cluster_ctarank
  // Added to the addresses of shared variables: 0 without clusters; in a
  // cluster launch the CTA's own shared::cluster tag (rank + 1) << 24
  // (memory_access.hpp). The GPU's shared::cta addresses carry bits above
  // 2^18 in cluster launches too (seen on an H200), so code that takes them
  // for small offsets (a wgmma descriptor's unmasked start address) fails
  // here as it does there.
  std::uint64_t shared_tag = 0;
  runtime::Dim3 ctaid;
  std::uint32_t threads = 0;
  std::vector<std::byte> shared;
  std::vector<Warp> warps;
  std::array<Barrier, 16> barriers{};
  std::uint64_t instructions = 0;  // thread-instructions executed
  TensorMemory tmem;               // Blackwell; empty until a tcgen05.alloc
  std::unique_ptr<SharedRaces> races;  // where the launch checks for races (LaunchState)
};

// The CTAs of one cluster (PTX ISA 2.2.1 "Cluster of Cooperative Thread
// Arrays"): they run interleaved on one host thread, so each can reach the
// others' shared memory and barriers without host synchronization. A launch
// without clusters runs every CTA as a cluster of one.
struct Cluster {
  std::vector<Cta> ctas;           // by %cluster_ctarank
  std::uint32_t live_threads = 0;  // threads of all its CTAs not exited
  std::uint32_t arrived = 0;       // barrier.cluster arrivals in the current phase
  std::uint32_t phase = 0;         // completed barrier.cluster phases
};

// A memory access that must stop the launch; the scheduler adds the kernel,
// line, block and thread.
struct AccessFault {
  int lane;
  std::string message;
};

// Runs the CTAs of one cluster to completion, interleaving their warps;
// throws SimError on a fault or a deadlock.
void run_cluster(Cluster& cluster);

}  // namespace warpforge::sim
