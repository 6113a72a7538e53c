// A PTX module made ready to run on one device, and the launch of its kernels:
//
//   runtime::Module m(device, ir);                // JIT (or cache) for device's target
//   m.launch("vadd", {.grid = {n / 256}, .block = {256}}, {a, b, c, std::uint32_t(n)});
//   m.launch("vadd", config, args, &stream);      // queued on a stream
//
//   runtime::PreparedLaunch vadd = m.prepare("vadd");  // the kernel found once
//   vadd.launch(config, args, &stream);                // no look-up by name
//
// Every launch is checked against the kernel's parameter list and the
// device's limits (launch_check.hpp) before it reaches the backend.
#pragma once

#include <map>  // (kept: files that include this header use it)
#include <memory>
#include <mutex>  // (likewise)
#include <span>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/kernel_arg.hpp"

namespace warpforge::runtime {

class Stream;
struct PreparedKernelInfo;  // module.cpp

// One kernel of a Module, resolved once: its parameter list and layout, its
// static shared memory and the backend's handle (on CUDA the CUfunction).
// Launching through it looks nothing up by name and allocates nothing for
// up to 64 parameters of 1 KB in all. Valid while its Module lives (a moved
// Module keeps it valid); a cheap value, safe to launch from several threads.
class PreparedLaunch {
 public:
  // Checks `config` and `args` as Module::launch does, then launches.
  void launch(const LaunchConfig& config, std::span<const Arg> args, Stream* stream = nullptr) const;
  const std::string& kernel() const;

 private:
  friend class Module;
  explicit PreparedLaunch(const PreparedKernelInfo& info) : info_(&info) {}
  const PreparedKernelInfo* info_;
};

class Module {
 public:
  // Loads `ir` on `device`. Throws RuntimeError when the module's .target is
  // one the device cannot run (the simulator runs every target), and the
  // backend's error when compilation fails (for CUDA a CudaError quoting the
  // PTX line ptxas refused).
  Module(const Device& device, ptx::Module ir);
  ~Module();
  Module(Module&&) noexcept;
  Module& operator=(Module&&) noexcept;

  const Device& device() const { return device_; }
  const ptx::Module& ir() const { return loaded_->ir(); }

  // The kernel called `kernel`, found once (RuntimeError naming the
  // module's kernels when there is none).
  PreparedLaunch prepare(const std::string& kernel);
  // prepare(kernel).launch(config, args, stream).
  void launch(const std::string& kernel, const LaunchConfig& config, const std::vector<Arg>& args,
              Stream* stream = nullptr);

  // Clusters of config.cluster that fit on the device at once with this
  // kernel's block and shared memory (CUDA: cuOccupancyMaxActiveClusters):
  // a persistent kernel launches no more, or the rest wait for a whole
  // cluster's worth of SMs to finish. `config` is checked as a launch's is;
  // its grid only has to be legal.
  int max_active_clusters(const std::string& kernel, const LaunchConfig& config);

 private:
  struct KernelTable;  // module.cpp: the kernels prepared so far, by name

  Device device_;
  std::unique_ptr<LoadedModule> loaded_;
  std::unique_ptr<KernelTable> kernels_;
};

}  // namespace warpforge::runtime
