#include "warpforge/runtime/module.hpp"

#include "warpforge/error.hpp"
#include "warpforge/runtime/launch_check.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::runtime {
namespace {

// A module for target T runs on a device whose target is T, or, when T is
// not arch-specific, on any device of an equal or newer architecture (PTX ISA
// 12 "Target ISA notes": sm_90a code runs only on 9.0, sm_80 code on 8.0 and
// later).
void check_target(const ptx::Module& ir, const Device& device) {
  if (device.is_simulator() || ir.target.empty()) return;
  const auto wanted = ptx::parse_target(ir.target.front());
  const ptx::Target have = device.target();
  if (!wanted) return;  // a target warpforge does not name; the JIT judges it
  const bool runs = *wanted == have || (!ptx::arch_specific(*wanted) && ptx::sm_number(*wanted) <= ptx::sm_number(have));
  if (!runs)
    throw RuntimeError("module for " + ir.target.front() + " cannot run on device '" + device.properties().name +
                       "' (target " + std::string(ptx::name(have)) + ")");
}

}  // namespace

Module::Module(const Device& device, ptx::Module ir) : device_(device) {
  check_target(ir, device_);
  loaded_ = device_.backend().load(ir);
}

const Module::KernelInfo& Module::kernel_info(const std::string& kernel) {
  std::lock_guard lock(kernels_->mutex);
  if (auto it = kernels_->entries.find(kernel); it != kernels_->entries.end()) return it->second;
  const ptx::Function& f = find_kernel(loaded_->ir(), kernel);
  return kernels_->entries.emplace(kernel, KernelInfo{&f, static_shared_bytes(loaded_->ir(), f)}).first->second;
}

void Module::launch(const std::string& kernel, const LaunchConfig& config, const std::vector<Arg>& args,
                    Stream* stream) {
  const KernelInfo& info = kernel_info(kernel);
  check_launch_config(*info.function, info.static_shared, config, device_.properties());
  std::vector<KernelArg> packed = pack_arguments(*info.function, args);
  if (stream && !(stream->device() == device_))
    throw RuntimeError("kernel '" + kernel + "' launched on a stream of another device");
  device_.backend().launch(*loaded_, kernel, config, packed, stream ? stream->handle() : nullptr);
}

int Module::max_active_clusters(const std::string& kernel, const LaunchConfig& config) {
  const KernelInfo& info = kernel_info(kernel);
  check_launch_config(*info.function, info.static_shared, config, device_.properties());
  return device_.backend().max_active_clusters(*loaded_, kernel, config);
}

}  // namespace warpforge::runtime
