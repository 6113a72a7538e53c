// The runtime's own costs, against the raw CUDA driver in the same run:
// - the host-side cost of one launch of an empty kernel with six parameters
//   (Module::launch, with its argument and configuration checks, against a
//   bare cuLaunchKernel of the same function);
// - the first JIT of a kernel (cuLink* to a cubin, written to the disk cache,
//   then loaded; against cuModuleLoadDataEx of the PTX);
// - loading from the disk cache and from the memory cache (against
//   cuModuleLoadDataEx of a cubin already in memory).
// Needs a GPU; without one it says so and exits 0.
#include <algorithm>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include "runtime/cuda/driver.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/cuda_backend.hpp"
#include "warpforge/runtime/module.hpp"

namespace wf = warpforge;
namespace rt = warpforge::runtime;
namespace cu = warpforge::runtime::cuda;
using Clock = std::chrono::steady_clock;

namespace {

// .entry <name>(four aligned pointers, .u32 n, .f32 alpha) { ret; }
wf::ptx::Module empty_kernel(wf::ptx::Target target, const std::string& name) {
  wf::ptx::Module m;
  const auto v = wf::ptx::ptx_version(target);
  m.version_major = v.major;
  m.version_minor = v.minor;
  m.target = {std::string(wf::ptx::name(target))};
  wf::ptx::Function f;
  f.name = name;
  for (const char* p : {"a", "b", "c", "d"}) {
    wf::ptx::Variable ptr{.space = wf::ptx::Space::param, .type = wf::ptx::Type::u64, .name = p};
    ptr.ptr = true;
    ptr.ptr_space = wf::ptx::Space::global;
    ptr.ptr_align = 16;
    f.params.push_back(ptr);
  }
  f.params.push_back({.space = wf::ptx::Space::param, .type = wf::ptx::Type::u32, .name = "n"});
  f.params.push_back({.space = wf::ptx::Space::param, .type = wf::ptx::Type::f32, .name = "alpha"});
  f.body = wf::ptx::Block{{wf::ptx::Instruction::parse_opcode("ret")}};
  m.items.push_back(f);
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double elapsed_us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// Median of `runs` timings of `body`, in microseconds.
double time_median(int runs, const std::function<void(int)>& body) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    body(i);
    t.push_back(elapsed_us(start, Clock::now()));
  }
  return median(t);
}

void row(const char* what, const char* peer, double ours, double theirs, const char* unit, double scale) {
  std::printf("| %-34s | %10.2f %s | %-32s | %10.2f %s | %6.2f |\n", what, ours / scale, unit, peer, theirs / scale,
              unit, ours / theirs);
}

void check(cu::CUresult r, const char* call) { cu::check(r, call); }

}  // namespace

int run() {
  if (rt::Device::cuda_count() == 0) {
    std::string why = "no CUDA driver or GPU";
    try {
      rt::Device::cuda(0);
    } catch (const wf::Error& e) {
      why = e.what();
    }
    std::fprintf(stderr, "bench_launch needs a CUDA GPU; nothing measured: %s\n", why.c_str());
    return 1;
  }

  // A private cache directory, so that the first JIT really is the first.
  char dir_template[] = "/tmp/warpforge-bench-XXXXXX";
  if (!::mkdtemp(dir_template)) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::filesystem::path cache_dir = dir_template;
  ::setenv("WARPFORGE_CACHE_DIR", cache_dir.c_str(), 1);

  rt::Device device = rt::Device::cuda(0);
  auto& backend = dynamic_cast<rt::CudaBackend&>(device.backend());
  const cu::Driver& d = cu::driver();
  const int kJits = 7, kLoads = 25, kLaunches = 20000;

  // First JIT: a kernel of a new name each time, so nothing is cached.
  const std::string run_tag = std::to_string(::getpid());
  std::vector<wf::ptx::Module> modules;
  for (int i = 0; i < kJits; ++i) modules.push_back(empty_kernel(device.target(), "empty6_" + run_tag + "_" + std::to_string(i)));
  const double ours_jit = time_median(kJits, [&](int i) { rt::Module m(device, modules[i]); });
  std::vector<std::string> ptx_texts;
  for (int i = 0; i < kJits; ++i) ptx_texts.push_back(wf::ptx::emit(empty_kernel(device.target(), "peer_" + run_tag + "_" + std::to_string(i))));
  // Arch-specific PTX (sm_90a) needs its JIT target named, as the runtime does.
  cu::CUjit_option target_option[] = {cu::CU_JIT_TARGET};
  void* target_value[] = {reinterpret_cast<void*>(
      static_cast<std::uintptr_t>(cu::CU_COMPUTE_ACCELERATED_TARGET_BASE + wf::ptx::sm_number(device.target())))};
  const unsigned target_options = wf::ptx::arch_specific(device.target()) ? 1 : 0;
  const double peer_jit = time_median(kJits, [&](int i) {
    cu::CUmodule m;
    check(d.cuModuleLoadDataEx(&m, ptx_texts[i].c_str(), target_options, target_option, target_value),
          "cuModuleLoadDataEx(PTX)");
    d.cuModuleUnload(m);
  });

  // Loads of an already compiled kernel: from disk (memory cache cleared
  // first), from memory, and the driver loading the cubin from memory.
  const wf::ptx::Module& ir = modules[0];
  const double ours_disk = time_median(kLoads, [&](int) {
    backend.binary_cache().clear_memory();
    rt::Module m(device, ir);
  });
  const double ours_memory = time_median(kLoads, [&](int) { rt::Module m(device, ir); });
  const auto cubin = backend.binary_cache().get_or_build(
      rt::CacheKey::compute(wf::ptx::emit(ir), wf::ptx::name(device.target()), backend.driver_version()),
      [] { return rt::BinaryCache::Bytes{}; });
  const double peer_load = time_median(kLoads, [&](int) {
    cu::CUmodule m;
    check(d.cuModuleLoadDataEx(&m, cubin->data(), 0, nullptr, nullptr), "cuModuleLoadDataEx(cubin)");
    d.cuModuleUnload(m);
  });

  // Host cost of one launch, each call timed alone; the device is drained
  // every 1000 launches so that the launch queue never fills.
  rt::Module module(device, ir);
  const std::string kernel = ir.entries().front()->name;
  rt::Buffer a(device, 256), b(device, 256), c(device, 256), e(device, 256);
  const rt::LaunchConfig config{.grid = {1}, .block = {32}};
  auto timed_launches = [&](const std::function<void()>& launch) {
    std::vector<double> t;
    t.reserve(kLaunches);
    for (int i = 0; i < kLaunches; ++i) {
      if (i % 1000 == 0) device.synchronize();
      const auto start = Clock::now();
      launch();
      t.push_back(elapsed_us(start, Clock::now()));
    }
    device.synchronize();
    return median(t);
  };
  const double ours_launch = timed_launches([&] {
    module.launch(kernel, config, {a, b, c, e, std::uint32_t{1024}, 1.0f});
  });
  cu::CUmodule peer_module;
  cu::CUfunction peer_function;
  check(d.cuModuleLoadDataEx(&peer_module, cubin->data(), 0, nullptr, nullptr), "cuModuleLoadDataEx(cubin)");
  check(d.cuModuleGetFunction(&peer_function, peer_module, kernel.c_str()), "cuModuleGetFunction");
  const double peer_launch = timed_launches([&] {
    cu::CUdeviceptr pa = a.address(), pb = b.address(), pc = c.address(), pe = e.address();
    std::uint32_t n = 1024;
    float alpha = 1.0f;
    void* params[] = {&pa, &pb, &pc, &pe, &n, &alpha};
    check(d.cuLaunchKernel(peer_function, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
  });
  d.cuModuleUnload(peer_module);

  const auto& p = device.properties();
  std::printf("warpforge runtime costs on %s (compute capability %d.%d, target %s, driver %d)\n\n", p.name.c_str(),
              p.compute_capability_major, p.compute_capability_minor, std::string(wf::ptx::name(device.target())).c_str(),
              backend.driver_version());
  std::printf("| %-34s | %13s | %-32s | %13s | %6s |\n", "warpforge", "ours", "peer (raw CUDA driver)", "peer", "ratio");
  std::printf("|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(15, '-').c_str(),
              std::string(34, '-').c_str(), std::string(15, '-').c_str(), std::string(8, '-').c_str());
  row("Module::launch, 6 params (median)", "cuLaunchKernel", ours_launch, peer_launch, "us", 1.0);
  row("first JIT: Module(device, ir)", "cuModuleLoadDataEx(PTX)", ours_jit, peer_jit, "ms", 1000.0);
  row("load from the disk cache", "cuModuleLoadDataEx(cubin)", ours_disk, peer_load, "ms", 1000.0);
  row("load from the memory cache", "cuModuleLoadDataEx(cubin)", ours_memory, peer_load, "ms", 1000.0);
  std::printf("\nlaunch: median of %d launches; JIT: median of %d kernels; loads: median of %d. "
              "ratio = ours / peer (lower is better).\n",
              kLaunches, kJits, kLoads);

  std::filesystem::remove_all(cache_dir);
  return 0;
}

int main() {
  try {
    return run();
  } catch (const wf::Error& e) {
    std::fprintf(stderr, "bench_launch: %s\n", e.what());
    return 1;
  }
}
