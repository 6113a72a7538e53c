#include "launch_monitor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cta.hpp"
#include "warpforge/error.hpp"

namespace warpforge::sim {
namespace {

using Clock = std::chrono::steady_clock;

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

// 2.4 G, 41 M, 950 k, 12: three significant digits at most.
std::string si(double x) {
  static constexpr const char* kPrefixes[] = {"", " k", " M", " G", " T", " P"};
  int p = 0;
  while (x >= 999.5 && p < 5) {
    x /= 1000;
    ++p;
  }
  char text[32];
  std::snprintf(text, sizeof text, x < 9.95 && p > 0 ? "%.1f%s" : "%.0f%s", x, kPrefixes[p]);
  return text;
}

}  // namespace

std::string progress_detail(std::uint64_t executed, double elapsed_seconds, std::uint64_t done,
                            std::uint64_t done_instructions, std::uint64_t units, const char* unit) {
  const double rate = elapsed_seconds > 0 ? static_cast<double>(executed) / elapsed_seconds : 0;
  const std::string at = " thread-instructions at " + si(rate) + "/s";
  if (units == 1) {
    const std::string one(unit, std::string_view(unit).size() - 1);  // "blocks" -> "block"
    return si(static_cast<double>(executed)) + at + ", no estimate: the launch is one " + one;
  }
  if (done == 0)
    return si(static_cast<double>(executed)) + at + ", an estimate once one of the " +
           std::to_string(units) + " " + unit + " finishes";
  const double total = static_cast<double>(done_instructions) / static_cast<double>(done) *
                       static_cast<double>(units);
  const double left = std::max(total - static_cast<double>(executed), 0.0);
  std::string out = si(static_cast<double>(executed)) + " of about " + si(total) + at;
  if (rate > 0) out += ", about " + std::to_string(std::llround(left / rate)) + " s left";
  return out;
}

LaunchMonitor::LaunchMonitor(std::string kernel, WatchdogLimits limits, std::uint64_t clusters,
                             const char* unit, bool progress, double progress_after_seconds)
    : kernel_(std::move(kernel)),
      limits_(limits),
      clusters_(clusters),
      unit_(unit),
      progress_("simulator: kernel '" + kernel_.substr(0, 60) + "'", clusters, unit, progress,
                progress_after_seconds) {}

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
  if (progress_.due())
    progress_.show(done_.load(), progress_detail(total, elapsed, done_.load(), done_instructions_.load(),
                                                 clusters_, unit_));
}

void LaunchMonitor::cluster_done(std::uint64_t instructions) {
  done_instructions_ += instructions;
  ++done_;
}

void LaunchMonitor::trip(const Cluster& cluster, const std::string& limit) {
  cancel();
  throw SimError("the simulator's watchdog stopped kernel '" + kernel_ + "' after " + limit + ";" +
                 describe_warps(cluster) +
                 " a kernel that waits on a flag nobody sets never ends; if this one only needs "
                 "longer, raise the limit");
}

}  // namespace warpforge::sim
