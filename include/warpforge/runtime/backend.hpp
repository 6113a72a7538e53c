// The device interface every execution backend implements: the CUDA driver
// (runtime/) and the CPU simulator (sim/). Device, Buffer, Module and launch
// in runtime/ are written against this interface only, so a kernel runs on
// either backend through one API. Backends see the PTX IR, never the DSL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::runtime {

// A device address. On CUDA it is the CUdeviceptr; on the simulator an
// address in the simulated global address space. 0 is never a valid buffer.
using DevicePtr = std::uint64_t;

struct TensorMapDesc;  // tensor_map.hpp
struct TensorMap;

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  std::uint64_t count() const { return std::uint64_t{x} * y * z; }
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  Dim3 cluster;                       // {1,1,1}: no cluster launch
  std::uint32_t dynamic_shared_bytes = 0;
  // Programmatic dependent launch (compute capability 9.0): the kernel may
  // begin while the stream's previous kernel runs, once every CTA of that
  // kernel has executed griddepcontrol.launch_dependents or exited; its
  // griddepcontrol.wait then waits for the previous kernel's completion
  // and memory. So everything it reads from that kernel, and everything it
  // writes that the kernel may still read, must come after its wait.
  // $WARPFORGE_SERIAL_LAUNCHES=1 turns it off process-wide (every kernel
  // then starts after the previous one has completed, and the wait returns
  // at once): for measuring what the overlap is worth, or ruling it out.
  bool overlap_previous = false;
};

// One kernel argument: the bytes of the value, laid out as the kernel's
// .param declares it (a pointer is its 8 address bytes; a byte-array param
// such as a 128-byte TMA descriptor is those bytes).
struct KernelArg {
  std::vector<std::byte> bytes;
};

// The launch checks (launch_check.hpp) hold every launch to these limits, so
// a backend fills them all: max_threads_per_block (0 reads as 1024), the
// shared memory limits and the compute capability (clusters need 9.0).
struct DeviceProperties {
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  std::size_t shared_bytes_per_block = 0;         // default limit (48 KB on NVIDIA)
  std::size_t shared_bytes_per_block_optin = 0;   // opt-in maximum
  std::size_t shared_bytes_per_sm = 0;
  std::size_t global_bytes = 0;
  int max_threads_per_block = 0;
  int warp_size = 32;
  int ordinal = 0;  // the device's index among its backend's devices (CUDA device ordinal)
};

// A module made ready to launch on one backend (a loaded cubin, or the
// simulator's pre-decoded IR).
class LoadedModule {
 public:
  virtual ~LoadedModule() = default;
  virtual const ptx::Module& ir() const = 0;
};

// A kernel of a loaded module resolved once (DeviceBackend::prepare), so
// that launches by it look nothing up by name.
class PreparedKernel {
 public:
  virtual ~PreparedKernel() = default;
};

// An ordering of work on a device; backends that run synchronously (the
// simulator) may implement every stream as the null stream.
class StreamHandle {
 public:
  virtual ~StreamHandle() = default;
};

// A point in a stream's work, for timing and waiting.
class EventHandle {
 public:
  virtual ~EventHandle() = default;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual const DeviceProperties& properties() const = 0;
  virtual ptx::Target target() const = 0;  // what kernels for this device are built for
  virtual bool is_simulator() const = 0;

  // The bytes an allocation can take now: the default is the device's whole
  // memory; the CUDA backend asks the driver, the simulator its limit and the
  // host. Buffer refuses a larger allocation before asking for it.
  virtual std::size_t free_bytes();
  virtual DevicePtr allocate(std::size_t bytes) = 0;
  virtual void free(DevicePtr ptr) = 0;
  virtual void copy_to_device(DevicePtr dst, const void* src, std::size_t bytes, StreamHandle* stream) = 0;
  virtual void copy_to_host(void* dst, DevicePtr src, std::size_t bytes, StreamHandle* stream) = 0;
  virtual void copy_device_to_device(DevicePtr dst, DevicePtr src, std::size_t bytes, StreamHandle* stream) = 0;
  virtual void fill(DevicePtr dst, std::uint8_t byte, std::size_t bytes, StreamHandle* stream) = 0;

  virtual std::unique_ptr<StreamHandle> create_stream() = 0;
  virtual void synchronize(StreamHandle* stream) = 0;  // nullptr: the whole device

  // Resources made by someone else (a framework calling warpforge): defaults
  // in src/runtime/foreign_resources.cpp refuse, naming the device.
  // A stream created elsewhere, by its native handle (a CUstream: the one of
  // torch.cuda.current_stream(), or the stream an XLA FFI call runs on); work
  // queued on it is ordered with the owner's, and destroying the handle
  // leaves the stream alone. 0 is the legacy default stream.
  virtual std::unique_ptr<StreamHandle> borrow_stream(std::uintptr_t native);
  // `bytes` of host memory at `host` made addressable by kernels without a
  // copy (how the simulator runs on NumPy arrays); the caller keeps the memory
  // alive until unmap_host() of the address returned.
  virtual DevicePtr map_host(void* host, std::size_t bytes);
  // The same at the host address itself, so that addresses the host wrote
  // into memory (a table of pointers to tensors) are valid in kernels too;
  // unmapped by unmap_host().
  virtual DevicePtr map_host_in_place(void* host, std::size_t bytes);
  virtual void unmap_host(DevicePtr address);

  // Events. The defaults (src/runtime/host_event.cpp) synchronize the stream
  // at record() and take the host's steady clock, which is exact for a backend
  // that runs work as it is issued (the simulator); the CUDA backend overrides
  // them with CUevents.
  virtual std::unique_ptr<EventHandle> create_event();
  virtual void record(EventHandle& event, StreamHandle* stream);
  virtual void synchronize_event(EventHandle& event);
  // Milliseconds from `start` to `end`, both recorded.
  virtual float elapsed_ms(EventHandle& start, EventHandle& end);

  // Encodes a TMA tensor map that make_tensor_map (tensor_map.hpp) has
  // already checked. The default refuses (RuntimeError naming the device).
  virtual TensorMap encode_tensor_map(const TensorMapDesc& desc);

  virtual std::unique_ptr<LoadedModule> load(const ptx::Module& module) = 0;
  // Arguments have already been checked against the kernel's parameter list.
  virtual void launch(LoadedModule& module, const std::string& kernel, const LaunchConfig& config,
                      const std::vector<KernelArg>& args, StreamHandle* stream) = 0;
  // The path runtime::Module takes: `kernel` of `module` resolved once (the
  // CUDA backend: its CUfunction), then launched with params[i] pointing to
  // the bytes of parameter i (cuLaunchKernel's kernelParams), already
  // checked against the parameter list. The defaults
  // (src/runtime/prepared_kernel.cpp) keep the kernel's name and parameter
  // sizes and copy the bytes into KernelArgs for launch() above.
  virtual std::unique_ptr<PreparedKernel> prepare(LoadedModule& module, const std::string& kernel);
  virtual void launch_prepared(PreparedKernel& kernel, const LaunchConfig& config, void* const* params,
                               StreamHandle* stream);

  // How many clusters of config.cluster (with the block and dynamic shared
  // memory of `config`) can be resident on the device at once: the size of a
  // persistent grid. The default, for a backend that runs every CTA of a
  // launch whatever its size (the simulator), is one cluster per
  // cluster-sized group of SMs, at least 1.
  virtual int max_active_clusters(LoadedModule& module, const std::string& kernel, const LaunchConfig& config);
};

}  // namespace warpforge::runtime
