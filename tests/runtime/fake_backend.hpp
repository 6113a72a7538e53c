// A DeviceBackend test double: device memory is host memory, launches are
// recorded rather than run. It lets the runtime's backend-independent logic
// (buffers, tensors, argument and launch checks) be tested without a GPU.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "warpforge/runtime/backend.hpp"

namespace warpforge::runtime::testing {

struct RecordedLaunch {
  std::string kernel;
  LaunchConfig config;
  std::vector<KernelArg> args;
  StreamHandle* stream;
};

class FakeBackend : public DeviceBackend {
 public:
  // An H100-like device unless the test changes `props`.
  FakeBackend() {
    props.name = "Fake H100";
    props.compute_capability_major = 9;
    props.compute_capability_minor = 0;
    props.sm_count = 132;
    props.shared_bytes_per_block = 48 * 1024;
    props.shared_bytes_per_block_optin = 227 * 1024;
    props.shared_bytes_per_sm = 228 * 1024;
    props.global_bytes = 80ull << 30;
    props.max_threads_per_block = 1024;
  }

  DeviceProperties props;
  ptx::Target fake_target = ptx::Target::sm_90a;
  std::vector<RecordedLaunch> launches;
  std::map<DevicePtr, std::vector<std::uint8_t>> memory;
  int frees = 0;

  const DeviceProperties& properties() const override { return props; }
  ptx::Target target() const override { return fake_target; }
  bool is_simulator() const override { return false; }

  DevicePtr allocate(std::size_t bytes) override {
    const DevicePtr at = next_;
    next_ += (bytes + 255) / 256 * 256 + 256;  // 256-byte aligned, with a gap
    memory[at].resize(bytes);
    return at;
  }
  void free(DevicePtr ptr) override {
    if (!memory.erase(ptr)) throw std::logic_error("fake backend: free of an unknown address");
    ++frees;
  }
  void copy_to_device(DevicePtr dst, const void* src, std::size_t bytes, StreamHandle*) override {
    std::memcpy(at(dst, bytes), src, bytes);
  }
  void copy_to_host(void* dst, DevicePtr src, std::size_t bytes, StreamHandle*) override {
    std::memcpy(dst, at(src, bytes), bytes);
  }
  void copy_device_to_device(DevicePtr dst, DevicePtr src, std::size_t bytes, StreamHandle*) override {
    std::memmove(at(dst, bytes), at(src, bytes), bytes);
  }
  void fill(DevicePtr dst, std::uint8_t byte, std::size_t bytes, StreamHandle*) override {
    std::memset(at(dst, bytes), byte, bytes);
  }

  std::unique_ptr<StreamHandle> create_stream() override { return std::make_unique<StreamHandle>(); }
  void synchronize(StreamHandle*) override {}

  struct Loaded : LoadedModule {
    explicit Loaded(ptx::Module m) : module(std::move(m)) {}
    const ptx::Module& ir() const override { return module; }
    ptx::Module module;
  };
  std::unique_ptr<LoadedModule> load(const ptx::Module& module) override { return std::make_unique<Loaded>(module); }
  void launch(LoadedModule&, const std::string& kernel, const LaunchConfig& config,
              const std::vector<KernelArg>& args, StreamHandle* stream) override {
    launches.push_back({kernel, config, args, stream});
  }

 private:
  // The host address of [address, address + bytes), which must lie in one allocation.
  std::uint8_t* at(DevicePtr address, std::size_t bytes) {
    auto it = memory.upper_bound(address);
    if (it == memory.begin()) throw std::out_of_range("fake backend: address outside every allocation");
    --it;
    if (address + bytes > it->first + it->second.size())
      throw std::out_of_range("fake backend: access past the end of an allocation");
    return it->second.data() + (address - it->first);
  }

  DevicePtr next_ = 0x10000;
};

}  // namespace warpforge::runtime::testing
