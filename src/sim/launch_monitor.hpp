// Watches one launch while its clusters run on the worker threads: the
// watchdog (an instruction budget and a wall-clock limit, so that a kernel
// spinning on a flag nobody sets stops with a report instead of running
// forever), cancellation of the other workers once one has failed, and the
// progress line a long launch shows on a terminal.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "warpforge/runtime/progress_line.hpp"

namespace warpforge::sim {

struct Cluster;

struct WatchdogLimits {
  std::uint64_t max_thread_instructions;
  double time_limit_seconds;
};

class LaunchMonitor {
 public:
  // `unit` names what the launch counts in `clusters` ("blocks", or "clusters"
  // for a cluster launch); `progress` allows the progress line (shown only
  // when stderr is a terminal, after `progress_after_seconds`).
  LaunchMonitor(std::string kernel, WatchdogLimits limits, std::uint64_t clusters, const char* unit,
                bool progress, double progress_after_seconds);
  LaunchMonitor(const LaunchMonitor&) = delete;
  LaunchMonitor& operator=(const LaunchMonitor&) = delete;

  // Called by run_cluster between scheduling rounds with the thread-
  // instructions the cluster ran since its last call. Throws SimError (naming
  // the kernel, where each warp of the cluster is and how to raise the limit)
  // past a limit, and a Cancelled once another worker has failed.
  void tick(const Cluster& cluster, std::uint64_t instructions);
  // A cluster finished, having run `instructions` thread-instructions (for
  // the progress line's estimate).
  void cluster_done(std::uint64_t instructions);
  // Another worker failed: the rest stop at their next tick.
  void cancel() { cancelled_ = true; }

  struct Cancelled {};

 private:
  [[noreturn]] void trip(const Cluster& cluster, const std::string& limit);

  const std::string kernel_;
  const WatchdogLimits limits_;
  const std::uint64_t clusters_;
  const char* const unit_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<std::uint64_t> executed_{0}, done_{0}, done_instructions_{0};
  std::atomic<bool> cancelled_{false};
  runtime::ProgressLine progress_;
};

// The progress line's words after the count and time: the thread-instructions
// run and their rate, and once `done` of the `units` have finished, their
// average extrapolated to all units and what is left at that rate ("2.4 G of
// about 5.1 G thread-instructions at 41 M/s, about 65 s left"). Before the
// first unit ends there is nothing to extrapolate from (a persistent kernel's
// few long blocks end together, at the end): the count and the rate move, and
// the line says so.
std::string progress_detail(std::uint64_t executed, double elapsed_seconds, std::uint64_t done,
                            std::uint64_t done_instructions, std::uint64_t units, const char* unit);

}  // namespace warpforge::sim
