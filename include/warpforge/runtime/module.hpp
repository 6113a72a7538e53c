// A PTX module made ready to run on one device, and the launch of its kernels:
//
//   runtime::Module m(device, ir);                // JIT (or cache) for device's target
//   m.launch("vadd", {.grid = {n / 256}, .block = {256}}, {a, b, c, std::uint32_t(n)});
//   m.launch("vadd", config, args, &stream);      // queued on a stream
//
// Every launch is checked against the kernel's parameter list and the
// device's limits (launch_check.hpp) before it reaches the backend.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/kernel_arg.hpp"

namespace warpforge::runtime {

class Stream;

class Module {
 public:
  // Loads `ir` on `device`. Throws RuntimeError when the module's .target is
  // one the device cannot run (the simulator runs every target), and the
  // backend's error when compilation fails (for CUDA a CudaError quoting the
  // PTX line ptxas refused).
  Module(const Device& device, ptx::Module ir);

  const Device& device() const { return device_; }
  const ptx::Module& ir() const { return loaded_->ir(); }

  void launch(const std::string& kernel, const LaunchConfig& config, const std::vector<Arg>& args,
              Stream* stream = nullptr);

  // Clusters of config.cluster that fit on the device at once with this
  // kernel's block and shared memory (CUDA: cuOccupancyMaxActiveClusters):
  // a persistent kernel launches no more, or the rest wait for a whole
  // cluster's worth of SMs to finish. `config` is checked as a launch's is;
  // its grid only has to be legal.
  int max_active_clusters(const std::string& kernel, const LaunchConfig& config);

 private:
  // What the checks need of a kernel, found once per kernel.
  struct KernelInfo {
    const ptx::Function* function;
    std::int64_t static_shared;
  };
  struct KernelTable {  // behind a pointer, so that Module stays movable
    std::mutex mutex;
    std::map<std::string, KernelInfo> entries;
  };
  const KernelInfo& kernel_info(const std::string& kernel);

  Device device_;
  std::unique_ptr<LoadedModule> loaded_;
  std::unique_ptr<KernelTable> kernels_ = std::make_unique<KernelTable>();
};

}  // namespace warpforge::runtime
