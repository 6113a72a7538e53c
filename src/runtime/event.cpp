#include "warpforge/runtime/event.hpp"

#include "warpforge/error.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {

Event::Event(const Device& device) : device_(device), handle_(device.backend().create_event()) {}

void Event::record(Stream* stream) {
  if (stream && !(stream->device() == device_)) throw RuntimeError("event recorded on a stream of another device");
  device_.backend().record(*handle_, stream ? stream->handle() : nullptr);
}

void Event::synchronize() { device_.backend().synchronize_event(*handle_); }

float Event::elapsed_ms(Event& start, Event& end) {
  if (!(start.device_ == end.device_)) throw RuntimeError("elapsed time between events of two devices");
  return start.device_.backend().elapsed_ms(*start.handle_, *end.handle_);
}

}  // namespace warpforge::runtime
