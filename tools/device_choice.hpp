// --device cuda|sim and --target, shared by the commands that run kernels:
// the device they run on. --target sets the GPU the simulator stands for
// (sim::SimOptions::target): its compute capability, shared memory, and so
// the kernels the ops choose; a GPU's target is its own, so --target is
// refused unless --device sim is given.
#pragma once

#include <optional>
#include <string>

#include "arguments.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/device.hpp"

namespace warpforge::cli {

struct DeviceChoice {
  std::string device;  // "cuda", "sim", or empty: cuda when a GPU is present, else sim
  std::optional<ptx::Target> sim_target;  // --target (with --device sim only)
};

// Reads --device and --target from `args`.
DeviceChoice parse_device_choice(Arguments& args);
runtime::Device open_device(const DeviceChoice& choice);

// The help lines of the two flags, aligned to `width` columns.
std::string device_choice_help(int width);

}  // namespace warpforge::cli
