#include "device_choice.hpp"

#include "warpforge/error.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::cli {

DeviceChoice parse_device_choice(Arguments& args) {
  DeviceChoice c;
  if (const auto v = args.value("--device")) c.device = one_of("--device", *v, {"cuda", "sim"});
  if (const auto v = args.value("--target")) {
    std::vector<std::string> names;
    for (ptx::Target t : ptx::all_targets()) names.emplace_back(ptx::name(t));
    c.sim_target = ptx::parse_target(one_of("--target", *v, names));
    if (c.device != "sim")
      throw Error("--target " + *v +
                  " without --device sim: it sets the GPU the simulator stands for (a GPU's "
                  "target is its own); add --device sim");
  }
  return c;
}

void require_target(DeviceChoice& c, const std::string& kernel, ptx::Target needed) {
  if (c.sim_target && *c.sim_target != needed)
    throw Error(kernel + " refused with --target " + std::string(ptx::name(*c.sim_target)) +
                ": its instructions exist on " + std::string(ptx::name(needed)) +
                " only; give --target " + std::string(ptx::name(needed)) +
                " or leave --target out (the simulator then stands for " +
                std::string(ptx::name(needed)) + ")");
  c.sim_target = needed;
}

runtime::Device open_device(const DeviceChoice& c) {
  const auto simulator = [&] {
    return runtime::Device(sim::make_backend({.target = c.sim_target.value_or(ptx::Target::sm_90a)}));
  };
  if (c.device == "sim") return simulator();
  if (c.device == "cuda") return runtime::Device::cuda(0);
  return runtime::Device::cuda_count() > 0 ? runtime::Device::cuda(0) : simulator();
}

std::string device_choice_help(int width) {
  const std::string pad(static_cast<std::size_t>(width), ' ');
  auto flag = [&](std::string name) {
    return name + std::string(static_cast<std::size_t>(width) - name.size(), ' ');
  };
  return flag("--device") + "cuda or sim (default: cuda when a GPU is present, else sim)\n" +
         flag("--target") +
         "with --device sim: the GPU it stands for (sm_80, sm_89, sm_90a (default) or\n" + pad +
         "sm_100a): its compute capability and shared memory, and so the kernels chosen\n";
}

}  // namespace warpforge::cli
