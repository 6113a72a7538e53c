// The default, host-clock events of DeviceBackend (see backend.hpp).
#include <chrono>
#include <optional>

#include "warpforge/error.hpp"
#include "warpforge/runtime/backend.hpp"

namespace warpforge::runtime {
namespace {

struct HostEvent : EventHandle {
  std::optional<std::chrono::steady_clock::time_point> when;  // unset until recorded
};

HostEvent& host_event(EventHandle& event) {
  auto* e = dynamic_cast<HostEvent*>(&event);
  if (!e) throw RuntimeError("event was not created by this device's backend");
  return *e;
}

}  // namespace

std::unique_ptr<EventHandle> DeviceBackend::create_event() { return std::make_unique<HostEvent>(); }

void DeviceBackend::record(EventHandle& event, StreamHandle* stream) {
  synchronize(stream);
  host_event(event).when = std::chrono::steady_clock::now();
}

// record() already waited for the stream, so a recorded event is complete;
// only its origin is checked.
void DeviceBackend::synchronize_event(EventHandle& event) { host_event(event); }

float DeviceBackend::elapsed_ms(EventHandle& start, EventHandle& end) {
  const HostEvent& a = host_event(start);
  const HostEvent& b = host_event(end);
  if (!a.when || !b.when) throw RuntimeError("elapsed time asked of an event that was never recorded");
  return std::chrono::duration<float, std::milli>(*b.when - *a.when).count();
}

}  // namespace warpforge::runtime
