// A progress line for long work, on a terminal only: "<label>: 3/9 <unit>,
// 4.2 s, about 8 s left", redrawn in place on stderr at most four times a
// second once the work has run past `quiet_seconds`, and cleared when the
// object goes (or clear() is called, before other output). Where stderr is
// not a terminal (a log, CI) it prints nothing. Safe to call from several
// threads (a drawing in progress makes the others skip).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace warpforge::runtime {

class ProgressLine {
 public:
  // `enabled` false (or stderr not a terminal) makes every call a no-op.
  ProgressLine(std::string label, std::uint64_t total, std::string unit, bool enabled = true,
               double quiet_seconds = 2.0);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // `done` of the total are finished.
  void show(std::uint64_t done);
  // Erases the line, if one is drawn, so that other output starts clean.
  void clear();

 private:
  using Clock = std::chrono::steady_clock;
  const std::string label_, unit_;
  const std::uint64_t total_;
  const bool enabled_;
  const double quiet_seconds_;
  const Clock::time_point start_ = Clock::now();
  std::mutex mutex_;
  Clock::time_point last_{};
  bool drawn_ = false;
};

}  // namespace warpforge::runtime
