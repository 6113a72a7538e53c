// Device::sim(), declared by the runtime (device.hpp) and defined here: the
// simulator is one backend behind the runtime's device interface, and the
// runtime itself never names it.
#include "warpforge/runtime/device.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::runtime {

Device Device::sim() { return Device(sim::make_backend()); }

}  // namespace warpforge::runtime
