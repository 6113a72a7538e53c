// A marker recorded into a stream, to wait for or to time the work between
// two of them (a CUevent on CUDA).
#pragma once

#include <memory>

#include "warpforge/runtime/device.hpp"

namespace warpforge::runtime {

class Stream;

class Event {
 public:
  explicit Event(const Device& device);

  // Records the event after the work queued so far on `stream` (nullptr: the
  // device's default stream).
  void record(Stream* stream = nullptr);
  void synchronize();  // waits until the recorded work is done
  // Milliseconds between two recorded events of one device, waiting for `end`.
  static float elapsed_ms(Event& start, Event& end);

  const Device& device() const { return device_; }

 private:
  Device device_;
  std::unique_ptr<EventHandle> handle_;
};

}  // namespace warpforge::runtime
