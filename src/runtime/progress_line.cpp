#include "warpforge/runtime/progress_line.hpp"

#include <unistd.h>

#include <cstdio>

namespace warpforge::runtime {
namespace {

constexpr double kRefreshSeconds = 0.25;

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

ProgressLine::ProgressLine(std::string label, std::uint64_t total, std::string unit, bool enabled,
                           double quiet_seconds)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      enabled_(enabled && ::isatty(STDERR_FILENO)),
      quiet_seconds_(quiet_seconds) {}

ProgressLine::~ProgressLine() { clear(); }

void ProgressLine::show(std::uint64_t done) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  const double elapsed = seconds(now - start_);
  if (elapsed <= quiet_seconds_) return;
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock || seconds(now - last_) < kRefreshSeconds) return;
  last_ = now;
  char line[256];
  int n = std::snprintf(line, sizeof line, "\r\033[K%s: %llu/%llu %s, %.1f s", label_.c_str(),
                        static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                        unit_.c_str(), elapsed);
  if (done > 0 && done <= total_ && n > 0 && n < static_cast<int>(sizeof line))
    std::snprintf(line + n, sizeof line - n, ", about %.0f s left",
                  elapsed / static_cast<double>(done) * static_cast<double>(total_ - done));
  std::fputs(line, stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::clear() {
  std::lock_guard lock(mutex_);
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace warpforge::runtime
