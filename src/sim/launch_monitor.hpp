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
  // when stderr is a terminal).
  LaunchMonitor(std::string kernel, WatchdogLimits limits, std::uint64_t clusters, const char* unit,
                bool progress);
  ~LaunchMonitor();  // clears the progress line
  LaunchMonitor(const LaunchMonitor&) = delete;
  LaunchMonitor& operator=(const LaunchMonitor&) = delete;

  // Called by run_cluster between scheduling rounds with the thread-
  // instructions the cluster ran since its last call. Throws SimError (naming
  // the kernel, where each warp of the cluster is and how to raise the limit)
  // past a limit, and a Cancelled once another worker has failed.
  void tick(const Cluster& cluster, std::uint64_t instructions);
  // A cluster finished (for the progress line).
  void cluster_done();
  // Another worker failed: the rest stop at their next tick.
  void cancel() { cancelled_ = true; }

  struct Cancelled {};

 private:
  [[noreturn]] void trip(const Cluster& cluster, const std::string& limit);
  void show_progress(std::chrono::steady_clock::time_point now);

  const std::string kernel_;
  const WatchdogLimits limits_;
  const std::uint64_t clusters_;
  const char* const unit_;
  const bool progress_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<std::uint64_t> executed_{0}, done_{0};
  std::atomic<bool> cancelled_{false};
  std::mutex print_mutex_;
  std::chrono::steady_clock::time_point last_print_{};
  bool printed_ = false;
};

}  // namespace warpforge::sim
