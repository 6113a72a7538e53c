// A progress line for long work, on a terminal only: "<label>: 3/9 <unit>,
// 4.2 s, about 8 s left", redrawn in place on stderr at most four times a
// second once the work has run past `quiet_seconds`, and cleared when the
// object goes (or clear() is called, before other output). Where stderr is
// not a terminal (a log, CI) it prints nothing. Safe to call from several
// threads (a drawing in progress makes the others skip). A caller that knows
// more than the count (the simulator: instructions run, a rate, a better
// estimate) passes it as `detail`, composed only when due() says it is drawn.
#pragma once

#include <atomic>
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
  // The same with `detail` after the count and time instead of the estimate
  // from the time per item.
  void show(std::uint64_t done, const std::string& detail);
  // Whether show() draws now: enabled, past the quiet time and a refresh
  // interval after the last drawing.
  bool due() const;
  // Erases the line, if one is drawn, so that other output starts clean.
  void clear();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::uint64_t done, const std::string* detail);

  const std::string label_, unit_;
  const std::uint64_t total_;
  const bool enabled_;
  const double quiet_seconds_;
  const Clock::time_point start_ = Clock::now();
  std::mutex mutex_;
  std::atomic<Clock::rep> last_{0};  // time_since_epoch of the last drawing
  bool drawn_ = false;
};

}  // namespace warpforge::runtime
