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

bool ProgressLine::due() const {
  if (!enabled_) return false;
  const Clock::time_point now = Clock::now();
  return seconds(now - start_) > quiet_seconds_ &&
         seconds(now - Clock::time_point(Clock::duration(last_.load(std::memory_order_relaxed)))) >=
             kRefreshSeconds;
}

void ProgressLine::show(std::uint64_t done) { draw(done, nullptr); }

void ProgressLine::show(std::uint64_t done, const std::string& detail) { draw(done, &detail); }

void ProgressLine::draw(std::uint64_t done, const std::string* detail) {
  if (!due()) return;
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock || !due()) return;
  const Clock::time_point now = Clock::now();
  last_ = now.time_since_epoch().count();
  const double elapsed = seconds(now - start_);
  char line[512];
  int n = std::snprintf(line, sizeof line, "\r\033[K%s: %llu/%llu %s, %.1f s", label_.c_str(),
                        static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
                        unit_.c_str(), elapsed);
  if (n > 0 && n < static_cast<int>(sizeof line)) {
    if (detail)
      std::snprintf(line + n, sizeof line - n, ", %s", detail->c_str());
    else if (done > 0 && done <= total_)
      std::snprintf(line + n, sizeof line - n, ", about %.0f s left",
                    elapsed / static_cast<double>(done) * static_cast<double>(total_ - done));
  }
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
