#include "warpforge/runtime/module.hpp"

#include <map>
#include <mutex>

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

// A prepared kernel: what the checks need, found once, and the backend's
// handle. Module's table owns it; PreparedLaunch points to it.
struct PreparedKernelInfo {
  std::string name;
  const ptx::Function* function;
  std::int64_t static_shared;
  ParamLayout layout;
  DeviceBackend* backend;
  const DeviceProperties* properties;
  std::unique_ptr<PreparedKernel> handle;
};

struct Module::KernelTable {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<PreparedKernelInfo>, std::less<>> entries;
};

Module::Module(const Device& device, ptx::Module ir) : device_(device), kernels_(std::make_unique<KernelTable>()) {
  check_target(ir, device_);
  loaded_ = device_.backend().load(ir);
}

Module::~Module() = default;
Module::Module(Module&&) noexcept = default;
Module& Module::operator=(Module&&) noexcept = default;

PreparedLaunch Module::prepare(const std::string& kernel) {
  std::lock_guard lock(kernels_->mutex);
  if (auto it = kernels_->entries.find(kernel); it != kernels_->entries.end()) return PreparedLaunch(*it->second);
  const ptx::Function& f = find_kernel(loaded_->ir(), kernel);
  DeviceBackend& backend = device_.backend();
  auto entry = std::make_unique<PreparedKernelInfo>(PreparedKernelInfo{
      kernel, &f, static_shared_bytes(loaded_->ir(), f), param_layout(f), &backend, &backend.properties(),
      backend.prepare(*loaded_, kernel)});
  return PreparedLaunch(*kernels_->entries.emplace(kernel, std::move(entry)).first->second);
}

void Module::launch(const std::string& kernel, const LaunchConfig& config, const std::vector<Arg>& args,
                    Stream* stream) {
  prepare(kernel).launch(config, args, stream);
}

int Module::max_active_clusters(const std::string& kernel, const LaunchConfig& config) {
  const PreparedKernelInfo& info = *prepare(kernel).info_;
  check_launch_config(*info.function, info.static_shared, config, *info.properties);
  return device_.backend().max_active_clusters(*loaded_, kernel, config);
}

const std::string& PreparedLaunch::kernel() const { return info_->name; }

void PreparedLaunch::launch(const LaunchConfig& config, std::span<const Arg> args, Stream* stream) const {
  const PreparedKernelInfo& k = *info_;
  check_launch_config(*k.function, k.static_shared, config, *k.properties);
  if (stream && &stream->device().backend() != k.backend)
    throw RuntimeError("kernel '" + k.name + "' launched on a stream of another device");
  // The parameters' bytes, and cuLaunchKernel's pointer to each: on the
  // stack for kernels of up to kInlineParams parameters and kInlineBytes
  // bytes (every kernel warpforge builds), on the heap beyond.
  constexpr std::size_t kInlineParams = 64, kInlineBytes = 1024;
  alignas(64) std::byte inline_bytes[kInlineBytes];
  void* inline_params[kInlineParams];
  std::vector<std::byte> heap_bytes;
  std::vector<void*> heap_params;
  std::byte* bytes = inline_bytes;
  void** params = inline_params;
  if (k.layout.bytes > kInlineBytes) {
    heap_bytes.resize(k.layout.bytes);
    bytes = heap_bytes.data();
  }
  if (k.layout.offsets.size() > kInlineParams) {
    heap_params.resize(k.layout.offsets.size());
    params = heap_params.data();
  }
  pack_arguments(*k.function, k.layout, args, bytes);
  for (std::size_t i = 0; i < k.layout.offsets.size(); ++i) params[i] = bytes + k.layout.offsets[i];
  k.backend->launch_prepared(*k.handle, config, params, stream ? stream->handle() : nullptr);
}

}  // namespace warpforge::runtime
