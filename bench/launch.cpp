// The runtime's own costs, against the raw CUDA driver in the same run:
// - the host-side cost of a launch of an empty kernel, 500 back to back
//   (the device drained between batches), for three parameter lists: six
//   scalars and pointers; the 34 of the attention decode kernel, the Arg
//   list built per call as its execute() builds it; three 128-byte TMA
//   descriptors and four u32 (a GEMM's). Module::launch by name and
//   PreparedLaunch, with their argument and configuration checks, against a
//   bare cuLaunchKernel of the same function with the same values (and
//   PreparedLaunch with the list reserve()d first, or built once: the
//   runtime's cost alone), then each step of the 34 timed alone;
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
#include <cstring>
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
#include "warpforge/runtime/launch_check.hpp"
#include "warpforge/runtime/module.hpp"

namespace wf = warpforge;
namespace rt = warpforge::runtime;
namespace cu = warpforge::runtime::cuda;
using Clock = std::chrono::steady_clock;

namespace {

wf::ptx::Variable param(wf::ptx::Type type, std::string name) {
  return {.space = wf::ptx::Space::param, .type = type, .name = std::move(name)};
}

wf::ptx::Variable pointer_param(std::string name) {
  wf::ptx::Variable p = param(wf::ptx::Type::u64, std::move(name));
  p.ptr = true;
  p.ptr_space = wf::ptx::Space::global;
  p.ptr_align = 16;
  return p;
}

// .entry <name>(<params>) { ret; }
wf::ptx::Module empty_kernel(wf::ptx::Target target, const std::string& name, std::vector<wf::ptx::Variable> params) {
  wf::ptx::Module m;
  const auto v = wf::ptx::ptx_version(target);
  m.version_major = v.major;
  m.version_minor = v.minor;
  m.target = {std::string(wf::ptx::name(target))};
  wf::ptx::Function f;
  f.name = name;
  f.params = std::move(params);
  f.body = wf::ptx::Block{{wf::ptx::Instruction::parse_opcode("ret")}};
  m.items.push_back(f);
  return m;
}

// Four aligned pointers, .u32 n, .f32 alpha.
std::vector<wf::ptx::Variable> six_params() {
  std::vector<wf::ptx::Variable> p;
  for (const char* name : {"a", "b", "c", "d"}) p.push_back(pointer_param(name));
  p.push_back(param(wf::ptx::Type::u32, "n"));
  p.push_back(param(wf::ptx::Type::f32, "alpha"));
  return p;
}

// The attention decode kernel's list: eight pointers, twenty-one u64 (the
// strides and the block table's row), three u32, an f32 and an s32.
std::vector<wf::ptx::Variable> decode_params() {
  std::vector<wf::ptx::Variable> p;
  for (int i = 0; i < 8; ++i) p.push_back(pointer_param("p" + std::to_string(i)));
  for (int i = 0; i < 21; ++i) p.push_back(param(wf::ptx::Type::u64, "s" + std::to_string(i)));
  for (int i = 0; i < 3; ++i) p.push_back(param(wf::ptx::Type::u32, "n" + std::to_string(i)));
  p.push_back(param(wf::ptx::Type::f32, "scale"));
  p.push_back(param(wf::ptx::Type::s32, "window"));
  return p;
}

// A TMA GEMM's list: three .align 64 .b8 [128] descriptors and four u32.
std::vector<wf::ptx::Variable> tensor_map_params() {
  std::vector<wf::ptx::Variable> p;
  for (const char* name : {"map_a", "map_b", "map_d"}) {
    wf::ptx::Variable map = param(wf::ptx::Type::b8, name);
    map.align = 64;
    map.dims = {128};
    p.push_back(map);
  }
  for (const char* name : {"m", "n", "k", "tiles"}) p.push_back(param(wf::ptx::Type::u32, name));
  return p;
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
  const int kJits = 7, kLoads = 25;
  // The device's primary context current on this thread, as a framework
  // leaves it (the runtime then switches no context), for the driver's calls.
  cu::CUdevice cu_device;
  cu::CUcontext context;
  check(d.cuDeviceGet(&cu_device, 0), "cuDeviceGet");
  check(d.cuDevicePrimaryCtxRetain(&context, cu_device), "cuDevicePrimaryCtxRetain");
  check(d.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  const auto& p = device.properties();
  std::printf("warpforge runtime costs on %s (compute capability %d.%d, target %s, driver %d)\n\n", p.name.c_str(),
              p.compute_capability_major, p.compute_capability_minor, std::string(wf::ptx::name(device.target())).c_str(),
              backend.driver_version());
  std::printf("| %-34s | %13s | %-32s | %13s | %6s |\n", "warpforge", "ours", "peer (raw CUDA driver)", "peer", "ratio");
  std::printf("|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(15, '-').c_str(),
              std::string(34, '-').c_str(), std::string(15, '-').c_str(), std::string(8, '-').c_str());
  std::fflush(stdout);

  // Host cost of a launch: kBatches batches of kBatch launches back to back,
  // the device drained between batches (so that the launch queue never
  // fills), the median batch's time per launch.
  const int kBatches = 40, kBatch = 500;
  auto per_launch_us = [&](const std::function<void()>& launch) {
    std::vector<double> t;
    for (int i = 0; i <= kBatches; ++i) {
      device.synchronize();
      const auto start = Clock::now();
      for (int j = 0; j < kBatch; ++j) launch();
      if (i > 0) t.push_back(elapsed_us(start, Clock::now()) / kBatch);  // batch 0 warms up
    }
    device.synchronize();
    return median(t);
  };
  // The peer's function: the same PTX loaded by the driver itself.
  cu::CUjit_option target_option[] = {cu::CU_JIT_TARGET};
  void* target_value[] = {reinterpret_cast<void*>(
      static_cast<std::uintptr_t>(cu::CU_COMPUTE_ACCELERATED_TARGET_BASE + wf::ptx::sm_number(device.target())))};
  const unsigned target_options = wf::ptx::arch_specific(device.target()) ? 1 : 0;
  std::vector<cu::CUmodule> peer_modules;
  auto peer_function = [&](const wf::ptx::Module& ir) {
    cu::CUmodule m;
    cu::CUfunction f;
    const std::string text = wf::ptx::emit(ir);
    check(d.cuModuleLoadDataEx(&m, text.c_str(), target_options, target_option, target_value), "cuModuleLoadDataEx(PTX)");
    check(d.cuModuleGetFunction(&f, m, ir.entries().front()->name.c_str()), "cuModuleGetFunction");
    peer_modules.push_back(m);
    return f;
  };
  const rt::LaunchConfig config{.grid = {1}, .block = {32}};
  auto peer_launch = [&](cu::CUfunction f, void** params) {
    check(d.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
  };
  std::vector<rt::Buffer> buffers;
  for (int i = 0; i < 8; ++i) buffers.emplace_back(device, 256);

  {  // six parameters, a braced list
    const wf::ptx::Module ir = empty_kernel(device.target(), "launch6", six_params());
    rt::Module module(device, ir);
    const cu::CUfunction f = peer_function(ir);
    const rt::Buffer &a = buffers[0], &b = buffers[1], &c = buffers[2], &e = buffers[3];
    const double ours = per_launch_us([&] { module.launch("launch6", config, {a, b, c, e, std::uint32_t{1024}, 1.0f}); });
    const double peer = per_launch_us([&] {
      cu::CUdeviceptr pa = a.address(), pb = b.address(), pc = c.address(), pe = e.address();
      std::uint32_t n = 1024;
      float alpha = 1.0f;
      void* params[] = {&pa, &pb, &pc, &pe, &n, &alpha};
      peer_launch(f, params);
    });
    row("Module::launch, 6 params", "cuLaunchKernel", ours, peer, "us", 1.0);
    std::fflush(stdout);
  }
  {  // the decode kernel's 34, the Arg list built per call as its execute() does
    const wf::ptx::Module ir = empty_kernel(device.target(), "launch34", decode_params());
    rt::Module module(device, ir);
    const rt::PreparedLaunch prepared = module.prepare("launch34");
    const cu::CUfunction f = peer_function(ir);
    std::uint64_t strides[21];
    for (int i = 0; i < 21; ++i) strides[i] = 1000u + i;
    auto args = [&](std::size_t reserve = 0) {
      std::vector<rt::Arg> a;
      a.reserve(reserve);
      for (const rt::Buffer& b : buffers) a.emplace_back(b);
      for (std::uint64_t s : strides) a.emplace_back(s);
      for (std::uint32_t n : {1u, 256u, 32u}) a.emplace_back(n);
      a.emplace_back(0.125f);
      a.emplace_back(std::int32_t{-1});
      return a;
    };
    const double by_name = per_launch_us([&] { module.launch("launch34", config, args()); });
    const double by_handle = per_launch_us([&] { prepared.launch(config, args()); });
    const double by_handle_reserved = per_launch_us([&] { prepared.launch(config, args(34)); });
    const std::vector<rt::Arg> kept = args();  // the runtime's own cost alone
    const double by_handle_kept = per_launch_us([&] { prepared.launch(config, kept); });
    const double peer = per_launch_us([&] {
      cu::CUdeviceptr pointers[8];
      std::uint64_t s[21];
      std::uint32_t n[3] = {1, 256, 32};
      float scale = 0.125f;
      std::int32_t window = -1;
      void* params[34];
      for (int i = 0; i < 8; ++i) params[i] = &(pointers[i] = buffers[i].address());
      for (int i = 0; i < 21; ++i) params[8 + i] = &(s[i] = strides[i]);
      for (int i = 0; i < 3; ++i) params[29 + i] = &n[i];
      params[32] = &scale;
      params[33] = &window;
      peer_launch(f, params);
    });
    row("Module::launch, 34 params (decode)", "cuLaunchKernel", by_name, peer, "us", 1.0);
    row("PreparedLaunch, 34 params (decode)", "cuLaunchKernel", by_handle, peer, "us", 1.0);
    row("the same, the list reserve()d", "cuLaunchKernel", by_handle_reserved, peer, "us", 1.0);
    row("the same, its Arg list built once", "cuLaunchKernel", by_handle_kept, peer, "us", 1.0);
    std::fflush(stdout);

    // Where the time beyond the driver's goes, each step alone, timed as the
    // launches are: the backend's launch of packed parameters (its context
    // scope, handle and shared-memory check around cuLaunchKernel), the
    // argument checks and packing, the configuration checks, and the caller
    // building its std::vector<Arg>.
    auto loaded = device.backend().load(ir);
    auto handle = device.backend().prepare(*loaded, "launch34");
    const wf::ptx::Function& kernel = *ir.entries().front();
    const rt::ParamLayout layout = rt::param_layout(kernel);
    std::vector<std::byte> block(layout.bytes);
    std::vector<void*> pointers;
    for (std::uint32_t offset : layout.offsets) pointers.push_back(block.data() + offset);
    rt::pack_arguments(kernel, layout, kept, block.data());
    volatile std::size_t sink = 0;  // keeps the steps that launch nothing from being optimized away
    const double backend_only =
        per_launch_us([&] { device.backend().launch_prepared(*handle, config, pointers.data(), nullptr); });
    const double packing = per_launch_us([&] {
      rt::pack_arguments(kernel, layout, kept, block.data());
      sink = sink + static_cast<std::size_t>(block[0]);
    });
    const double checking = per_launch_us([&] {
      rt::check_launch_config(kernel, 0, config, device.properties());
      sink = sink + 1;
    });
    const double building = per_launch_us([&] { sink = sink + args().size(); });
    std::printf("| 34 params, each step alone: CudaBackend::launch_prepared %.2f us (cuLaunchKernel %.2f), "
                "pack_arguments %.3f, check_launch_config %.3f, building the std::vector<Arg> %.3f |\n",
                backend_only, peer, packing, checking, building);
    std::fflush(stdout);
  }
  {  // three 128-byte descriptors and four u32 (a TMA GEMM's)
    const wf::ptx::Module ir = empty_kernel(device.target(), "launch_maps", tensor_map_params());
    rt::Module module(device, ir);
    const cu::CUfunction f = peer_function(ir);
    struct alignas(64) Map {
      std::byte bytes[128];
    };
    Map maps[3];
    for (int i = 0; i < 3; ++i) std::memset(maps[i].bytes, i + 1, sizeof maps[i].bytes);
    const double ours = per_launch_us([&] {
      module.launch("launch_maps", config,
                    {rt::Arg::bytes_of(maps[0]), rt::Arg::bytes_of(maps[1]), rt::Arg::bytes_of(maps[2]),
                     std::uint32_t{4096}, std::uint32_t{4096}, std::uint32_t{4096}, std::uint32_t{132}});
    });
    const double peer = per_launch_us([&] {
      std::uint32_t n[4] = {4096, 4096, 4096, 132};
      void* params[] = {&maps[0], &maps[1], &maps[2], &n[0], &n[1], &n[2], &n[3]};
      peer_launch(f, params);
    });
    row("Module::launch, 3 tensor maps + 4", "cuLaunchKernel", ours, peer, "us", 1.0);
    std::fflush(stdout);
  }
  for (cu::CUmodule m : peer_modules) d.cuModuleUnload(m);

  // First JIT: a kernel of a new name each time, so nothing is cached.
  const std::string run_tag = std::to_string(::getpid());
  std::vector<wf::ptx::Module> modules;
  for (int i = 0; i < kJits; ++i)
    modules.push_back(empty_kernel(device.target(), "empty6_" + run_tag + "_" + std::to_string(i), six_params()));
  const double ours_jit = time_median(kJits, [&](int i) { rt::Module m(device, modules[i]); });
  std::vector<std::string> ptx_texts;
  for (int i = 0; i < kJits; ++i)
    ptx_texts.push_back(
        wf::ptx::emit(empty_kernel(device.target(), "peer_" + run_tag + "_" + std::to_string(i), six_params())));
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
  row("first JIT: Module(device, ir)", "cuModuleLoadDataEx(PTX)", ours_jit, peer_jit, "ms", 1000.0);
  row("load from the disk cache", "cuModuleLoadDataEx(cubin)", ours_disk, peer_load, "ms", 1000.0);
  row("load from the memory cache", "cuModuleLoadDataEx(cubin)", ours_memory, peer_load, "ms", 1000.0);
  std::printf("\nlaunch: per launch, the median of %d batches of %d back to back; JIT: median of %d kernels; "
              "loads: median of %d. ratio = ours / peer (lower is better).\n",
              kBatches, kBatch, kJits, kLoads);

  d.cuDevicePrimaryCtxRelease(cu_device);
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
