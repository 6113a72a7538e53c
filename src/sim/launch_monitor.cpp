#include "launch_monitor.hpp"

#include <unistd.h>

#include <cstdio>

#include "cta.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using Clock = std::chrono::steady_clock;

// A launch shorter than this shows no progress line.
constexpr double kQuietSeconds = 2.0;
constexpr double kRefreshSeconds = 0.25;

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// "PTX line 12 (ld.global.u32 ...), in the loop of PTX lines 10-14": the
// innermost backward branch whose body holds `pc`.
std::string describe_pc(const Kernel& k, std::uint32_t pc) {
  std::string out = "PTX line " + std::to_string(k.code[pc].line) + " (" + k.code[pc].text + ")";
  std::uint32_t best_top = 0, best_bottom = 0;
  bool found = false;
  for (std::uint32_t i = pc; i < k.code.size(); ++i) {
    const Inst& in = k.code[i];
    if (in.op != Op::bra || in.target > pc) continue;
    if (!found || i - in.target < best_bottom - best_top) {
      best_top = in.target;
      best_bottom = i;
      found = true;
    }
  }
  if (found)
    out += ", in the loop of PTX lines " + std::to_string(k.code[best_top].line) + "-" +
           std::to_string(k.code[best_bottom].line);
  return out;
}

// Where each warp of the cluster is: the lowest PC of its lanes that have
// not exited (the instruction the warp issues next).
std::string describe_warps(const Cluster& cluster) {
  std::string out;
  for (const Cta& cta : cluster.ctas) {
    out += " block (" + std::to_string(cta.ctaid.x) + "," + std::to_string(cta.ctaid.y) + "," +
           std::to_string(cta.ctaid.z) + "):";
    for (const Warp& w : cta.warps) {
      std::uint32_t pc = ~0u;
      for (int l = 0; l < 32; ++l)
        if ((w.exists >> l & 1) && w.state[l] != LaneState::exited && w.pc[l] < pc) pc = w.pc[l];
      out += " warp " + std::to_string(w.index) +
             (pc == ~0u ? std::string(" exited") : " at " + describe_pc(cta.launch->kernel, pc)) +
             ";";
    }
  }
  return out;
}

}  // namespace

LaunchMonitor::LaunchMonitor(std::string kernel, WatchdogLimits limits, std::uint64_t clusters,
                             const char* unit, bool progress)
    : kernel_(std::move(kernel)),
      limits_(limits),
      clusters_(clusters),
      unit_(unit),
      progress_(progress && ::isatty(STDERR_FILENO)) {}

LaunchMonitor::~LaunchMonitor() {
  if (printed_) std::fprintf(stderr, "\r\033[K");
}

void LaunchMonitor::tick(const Cluster& cluster, std::uint64_t instructions) {
  if (cancelled_.load(std::memory_order_relaxed)) throw Cancelled{};
  const std::uint64_t total = executed_.fetch_add(instructions) + instructions;
  if (total > limits_.max_thread_instructions)
    trip(cluster, std::to_string(total) + " thread-instructions, past its budget of " +
                      std::to_string(limits_.max_thread_instructions) +
                      " (SimOptions::max_thread_instructions, or the environment variable "
                      "WARPFORGE_SIM_MAX_INSTRUCTIONS)");
  const Clock::time_point now = Clock::now();
  const double elapsed = seconds(now - start_);
  if (elapsed > limits_.time_limit_seconds)
    trip(cluster, "running " + std::to_string(static_cast<long long>(elapsed)) +
                      " s, past its time limit of " +
                      std::to_string(static_cast<long long>(limits_.time_limit_seconds)) +
                      " s (SimOptions::time_limit_seconds, or the environment variable "
                      "WARPFORGE_SIM_TIME_LIMIT in seconds)");
  if (progress_ && elapsed > kQuietSeconds) show_progress(now);
}

void LaunchMonitor::cluster_done() {
  ++done_;
  if (progress_) {
    const Clock::time_point now = Clock::now();
    if (seconds(now - start_) > kQuietSeconds) show_progress(now);
  }
}

void LaunchMonitor::trip(const Cluster& cluster, const std::string& limit) {
  cancel();
  throw SimError("the simulator's watchdog stopped kernel '" + kernel_ + "' after " + limit + ";" +
                 describe_warps(cluster) +
                 " a kernel that waits on a flag nobody sets never ends; if this one only needs "
                 "longer, raise the limit");
}

void LaunchMonitor::show_progress(Clock::time_point now) {
  std::unique_lock lock(print_mutex_, std::try_to_lock);
  if (!lock || seconds(now - last_print_) < kRefreshSeconds) return;
  last_print_ = now;
  const double elapsed = seconds(now - start_);
  const std::uint64_t done = done_.load();
  char line[200];
  int n =
      std::snprintf(line, sizeof line, "\r\033[Ksimulator: kernel '%.60s': %llu/%llu %s, %.1f s",
                    kernel_.c_str(), static_cast<unsigned long long>(done),
                    static_cast<unsigned long long>(clusters_), unit_, elapsed);
  if (done > 0 && n > 0 && n < static_cast<int>(sizeof line))
    std::snprintf(line + n, sizeof line - n, ", about %.0f s left",
                  elapsed / static_cast<double>(done) * static_cast<double>(clusters_ - done));
  std::fputs(line, stderr);
  std::fflush(stderr);
  printed_ = true;
}

}  // namespace warpforge::sim
