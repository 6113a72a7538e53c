// The state of a running CTA: its warps, each with per-thread PCs and a
// register file laid out slot-major (32 lanes of one register side by side, so
// one instruction sweeps contiguous memory), its shared memory and its named
// barriers; and what all CTAs of a launch share.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "warpforge/runtime/backend.hpp"
#include "warpforge/sim/global_memory.hpp"
#include "warpforge/sim/program.hpp"

namespace warpforge::sim {

struct LaunchState {
  const Kernel& kernel;
  runtime::LaunchConfig config;
  std::vector<std::byte> params;
  GlobalMemory& global;
  const std::vector<std::byte>& const_bank;
  int sm_count = 1;
};

enum class LaneState : std::uint8_t { ready, exited, at_barrier, at_collective };

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

struct Cta;

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
  std::uint32_t awaited_members = 0;       // member mask of the collective lanes wait at
  std::uint64_t clock = 0;

  std::uint64_t& reg(std::uint32_t slot, int lane) { return regs[slot * 32 + lane]; }
};

struct Barrier {
  std::uint32_t arrived = 0;
  std::uint32_t expected = 0;
};

struct Cta {
  const LaunchState* launch = nullptr;
  runtime::Dim3 ctaid;
  std::uint32_t threads = 0;
  std::vector<std::byte> shared;
  std::vector<Warp> warps;
  std::array<Barrier, 16> barriers{};
  std::uint64_t instructions = 0;  // thread-instructions executed
};

// A memory access that must stop the launch; the scheduler adds the kernel,
// line, block and thread.
struct AccessFault {
  int lane;
  std::string message;
};

// Runs one CTA to completion; throws SimError on a fault or a deadlock.
void run_cta(Cta& cta);

}  // namespace warpforge::sim
