// The simulator as a device: a simulated global address space, modules whose
// kernels are decoded at their first launch, and launches run on a pool of
// host threads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "printf.hpp"
#include "program.hpp"
#include "warpforge/runtime/backend.hpp"
#include "warpforge/sim/global_memory.hpp"
#include "warpforge/sim/simulator.hpp"

namespace warpforge::sim {

// A module ready to launch: its IR, its constant bank, its module-scope
// .global variables (allocated in the device's space) and the kernels
// decoded so far.
class SimModule : public runtime::LoadedModule {
 public:
  SimModule(ptx::Module ir, std::shared_ptr<GlobalMemory> global);
  ~SimModule() override;
  SimModule(const SimModule&) = delete;
  SimModule& operator=(const SimModule&) = delete;

  const ptx::Module& ir() const override { return ir_; }
  // The entry `name`, decoded on its first launch: a construct the simulator
  // lacks refuses only the kernels that use it (SimError naming the kernel
  // and the PTX line), and the module's other kernels still run.
  const Kernel& kernel(const std::string& name);
  const std::vector<std::byte>& const_bank() const { return const_bank_; }

 private:
  ptx::Module ir_;
  std::shared_ptr<GlobalMemory> global_;
  std::map<std::string, SymbolInfo> symbols_;  // module-scope variables, for the decoder
  std::mutex decoding_;                        // launches from several host threads
  std::map<std::string, Kernel> kernels_;
  std::vector<std::byte> const_bank_;
  std::vector<std::uint64_t> global_variables_;
};

class SimBackend : public runtime::DeviceBackend {
 public:
  explicit SimBackend(SimOptions options = {});

  const runtime::DeviceProperties& properties() const override { return properties_; }
  ptx::Target target() const override { return options_.target; }
  bool is_simulator() const override { return true; }

  std::size_t free_bytes() override;  // SimOptions::memory_bytes, and the host's
  runtime::DevicePtr allocate(std::size_t bytes) override;
  void free(runtime::DevicePtr ptr) override;
  void copy_to_device(runtime::DevicePtr dst, const void* src, std::size_t bytes,
                      runtime::StreamHandle*) override;
  void copy_to_host(void* dst, runtime::DevicePtr src, std::size_t bytes,
                    runtime::StreamHandle*) override;
  void copy_device_to_device(runtime::DevicePtr dst, runtime::DevicePtr src, std::size_t bytes,
                             runtime::StreamHandle*) override;
  void fill(runtime::DevicePtr dst, std::uint8_t byte, std::size_t bytes,
            runtime::StreamHandle*) override;

  std::unique_ptr<runtime::StreamHandle> create_stream() override;
  // Launches run as they are issued, so any handle orders them.
  std::unique_ptr<runtime::StreamHandle> borrow_stream(std::uintptr_t) override {
    return create_stream();
  }
  runtime::DevicePtr map_host(void* host, std::size_t bytes) override;
  runtime::DevicePtr map_host_in_place(void* host, std::size_t bytes) override;
  void unmap_host(runtime::DevicePtr address) override { global_->free(address); }
  void synchronize(runtime::StreamHandle*) override {
  }  // launches and copies complete before returning

  // The simulator's own format (sim/tensor_map_encoding.hpp).
  runtime::TensorMap encode_tensor_map(const runtime::TensorMapDesc& desc) override;

  std::unique_ptr<runtime::LoadedModule> load(const ptx::Module& module) override;
  void launch(runtime::LoadedModule& module, const std::string& kernel,
              const runtime::LaunchConfig& config, const std::vector<runtime::KernelArg>& args,
              runtime::StreamHandle* stream) override;

  // Thread-instructions (one instruction executed by one thread) of the
  // last launch: the simulator's unit of work.
  std::uint64_t last_launch_thread_instructions() const { return last_thread_instructions_; }

  GlobalMemory& global_memory() { return *global_; }

 private:
  SimOptions options_;
  runtime::DeviceProperties properties_;
  std::shared_ptr<GlobalMemory> global_;
  std::uint64_t last_thread_instructions_ = 0;
  std::unique_ptr<PrintfSink> printf_sink_;
};

}  // namespace warpforge::sim
