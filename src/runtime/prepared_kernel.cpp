// The default prepared launch of DeviceBackend (see backend.hpp), for
// backends whose launch takes the kernel by name (the simulator, test
// doubles): the handle keeps the name and the parameters' sizes, and the
// launch copies each parameter's bytes into a KernelArg.
#include "warpforge/error.hpp"
#include "warpforge/runtime/backend.hpp"
#include "warpforge/runtime/launch_check.hpp"

namespace warpforge::runtime {
namespace {

struct NamedKernel final : PreparedKernel {
  NamedKernel(DeviceBackend& backend, LoadedModule& module, std::string name, std::vector<std::uint32_t> sizes)
      : backend(backend), module(module), name(std::move(name)), sizes(std::move(sizes)) {}
  DeviceBackend& backend;
  LoadedModule& module;
  std::string name;
  std::vector<std::uint32_t> sizes;
};

}  // namespace

std::unique_ptr<PreparedKernel> DeviceBackend::prepare(LoadedModule& module, const std::string& kernel) {
  return std::make_unique<NamedKernel>(*this, module, kernel,
                                       param_layout(find_kernel(module.ir(), kernel)).sizes);
}

void DeviceBackend::launch_prepared(PreparedKernel& kernel, const LaunchConfig& config, void* const* params,
                                    StreamHandle* stream) {
  auto* named = dynamic_cast<NamedKernel*>(&kernel);
  if (!named || &named->backend != this) throw RuntimeError("a kernel prepared by another device was launched");
  std::vector<KernelArg> args(named->sizes.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto* bytes = static_cast<const std::byte*>(params[i]);
    args[i].bytes.assign(bytes, bytes + named->sizes[i]);
  }
  launch(named->module, named->name, config, args, stream);
}

}  // namespace warpforge::runtime
