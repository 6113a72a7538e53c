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
// For a kernel only `needed` has (`kernel` names it, "--kernel sm100a"): the
// simulator stands for `needed` when --target is not given, and a --target
// without the kernel's instructions is refused (a simulator standing for an
// A100 runs no tcgen05). A GPU's own target is the op's to judge.
void require_target(DeviceChoice& choice, const std::string& kernel, ptx::Target needed);
runtime::Device open_device(const DeviceChoice& choice);

// The help lines of the two flags, aligned to `width` columns.
std::string device_choice_help(int width);

}  // namespace warpforge::cli
