// The CUDA backend against a stand-in driver (fake_driver/libcuda.cpp, found
// by this program's RPATH before the real libcuda.so.1): the calls it
// makes and the values it passes, checked without a GPU. tests/gpu runs the
// same paths on a real one.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "fake_driver_state.hpp"
#include "runtime/cuda/driver_api.hpp"
#include "gpu/kernels.hpp"
#include "runtime/mixed_params_kernel.hpp"
#include "warpforge/dsl.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/cuda_backend.hpp"
#include "warpforge/runtime/event.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::runtime {
namespace {

using fake_driver::State;
using gpu_testing::inst;
using gpu_testing::r;

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(Device::cuda_count(), 1) << "the fake driver was not loaded";
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(library, nullptr);
    auto* get = reinterpret_cast<State* (*)()>(dlsym(library, "fake_driver_state"));
    ASSERT_NE(get, nullptr) << "libcuda.so.1 is not the fake driver";
    state = get();
    *state = State{};
    cache_dir = std::filesystem::temp_directory_path() /
                ("warpforge-fake-driver-" + std::to_string(::getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(cache_dir);
    ::setenv("WARPFORGE_CACHE_DIR", cache_dir.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("WARPFORGE_CACHE_DIR");
    std::filesystem::remove_all(cache_dir);
  }

  State* state = nullptr;
  std::filesystem::path cache_dir;
};

TEST_F(CudaBackendTest, ReadsTheDeviceProperties) {
  Device d = Device::cuda(0);
  const DeviceProperties& p = d.properties();
  EXPECT_EQ(p.name, "Fake H100");
  EXPECT_EQ(p.compute_capability_major, 9);
  EXPECT_EQ(p.sm_count, 132);
  EXPECT_EQ(p.shared_bytes_per_block, 48u * 1024);
  EXPECT_EQ(p.shared_bytes_per_block_optin, 227u * 1024);
  EXPECT_EQ(p.shared_bytes_per_sm, 228u * 1024);
  EXPECT_EQ(p.global_bytes, 80ull << 30);
  EXPECT_EQ(p.max_threads_per_block, 1024);
  EXPECT_EQ(d.target(), ptx::Target::sm_90a);
  EXPECT_EQ(dynamic_cast<CudaBackend&>(d.backend()).driver_version(), 13000);
}

TEST_F(CudaBackendTest, CopiesSynchronouslyAndOnStreams) {
  Device d = Device::cuda(0);
  Buffer a(d, 16), b(d, 16);
  a.upload(std::vector<std::uint32_t>{1, 2, 3, 4});
  Stream s = d.create_stream();
  b.copy_from(a, 16, &s);
  std::uint32_t last = 0;
  b.copy_to_host(&last, 4, 12, &s);
  s.synchronize();
  EXPECT_EQ(last, 4u);
  b.fill(0, &s);
  EXPECT_EQ(b.download<std::uint32_t>(4), std::vector<std::uint32_t>(4, 0));
  Event e0 = d.create_event(), e1 = d.create_event();
  e0.record(&s);
  e1.record(&s);
  EXPECT_GE(Event::elapsed_ms(e0, e1), 0.0f);
}

TEST_F(CudaBackendTest, RunsOnABorrowedStreamAndLeavesItAlive) {
  Device d = Device::cuda(0);
  Buffer a(d, 16);
  a.upload(std::vector<std::uint32_t>{5, 6, 7, 8});
  // Not a stream the fake driver made: destroying it (cuStreamDestroy frees
  // the fake's handles) would be a bad free, which the test would report.
  int foreign = 0;
  {
    Stream s = Stream::borrow(d, reinterpret_cast<std::uintptr_t>(&foreign));
    std::uint32_t second = 0;
    a.copy_to_host(&second, 4, 4, &s);
    s.synchronize();
    EXPECT_EQ(second, 6u);
  }
  EXPECT_EQ(foreign, 0);
}

// A framework on the same thread (torch, JAX) takes the current context as
// its current device: each call switches to the device's context and back.
TEST_F(CudaBackendTest, LeavesTheCallersContextCurrent) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto* set_current = reinterpret_cast<cuda::CUresult (*)(cuda::CUcontext)>(dlsym(library, "cuCtxSetCurrent"));
  auto* get_current = reinterpret_cast<cuda::CUresult (*)(cuda::CUcontext*)>(dlsym(library, "cuCtxGetCurrent"));
  ASSERT_TRUE(set_current && get_current);
  int framework = 0;
  const auto framework_context = reinterpret_cast<cuda::CUcontext>(&framework);
  for (cuda::CUcontext callers : {framework_context, cuda::CUcontext{nullptr}}) {
    ASSERT_EQ(set_current(callers), 0);
    Device d = Device::cuda(0);
    {
      Buffer a(d, 16);  // the fake allocates only in the device's own context
      a.upload(std::vector<std::uint32_t>{1, 2, 3, 4});
      EXPECT_EQ(a.download<std::uint32_t>(4)[3], 4u);
      Stream s = d.create_stream();
      s.synchronize();
    }
    cuda::CUcontext now = nullptr;
    ASSERT_EQ(get_current(&now), 0);
    EXPECT_EQ(now, callers);
  }
  // Each thread has its own current context; a thread's work leaves it as found.
  Device d = Device::cuda(0);
  std::thread other([&] {
    Buffer b(d, 4);
    cuda::CUcontext now = framework_context;
    get_current(&now);
    EXPECT_EQ(now, nullptr);
  });
  other.join();
  EXPECT_GT(state->context_switches, 0);
}

TEST_F(CudaBackendTest, RefusesABufferLargerThanTheFreeMemory) {
  Device d = Device::cuda(0);
  try {
    Buffer huge(d, 1ull << 40);
    ADD_FAILURE() << "a 1 TiB allocation succeeded";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "a buffer of 1099511627776 bytes (1024.0 GiB) does not fit on Fake H100: 75161927680 "
                 "bytes (70.0 GiB) free");
  }
}

TEST_F(CudaBackendTest, NamesTheFailingCall) {
  Device d = Device::cuda(0);
  try {
    Buffer huge(d, 65ull << 30);
    ADD_FAILURE() << "a 65 GiB allocation succeeded";
  } catch (const CudaError& e) {
    EXPECT_STREQ(e.what(), "cuMemAlloc_v2(69793218560 bytes) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    EXPECT_EQ(e.code(), 2);
    EXPECT_EQ(e.error_name(), "CUDA_ERROR_OUT_OF_MEMORY");
  }
}

TEST_F(CudaBackendTest, CompilesOnceForTheArchSpecificTargetAndCaches) {
  {
    Device d = Device::cuda(0);
    Module first(d, gpu_testing::vector_add(d.target()));
    Module second(d, gpu_testing::vector_add(d.target()));
  }
  Device d = Device::cuda(0);  // a new backend: from disk
  Module third(d, gpu_testing::vector_add(d.target()));
  EXPECT_EQ(state->link_creates, 1);
  EXPECT_EQ(state->jit_targets, std::vector<int>{0x10000 + 90});  // CU_TARGET_COMPUTE_90A
  EXPECT_EQ(state->module_loads, 3);
  EXPECT_EQ(dynamic_cast<CudaBackend&>(d.backend()).binary_cache().stats().disk_hits, 1);
  // An sm_80 module on the sm_90a device: the JIT targets the context's device.
  Module portable(d, gpu_testing::vector_add(ptx::Target::sm_80));
  EXPECT_EQ(state->jit_targets.back(), -1);
}

// A kernel that moves registers between warpgroups (setmaxnreg) is compiled
// whole from its PTX, every time: the linker's relocatable compile would
// drop setmaxnreg, and no whole-program cubin comes back to cache.
TEST_F(CudaBackendTest, CompilesSetmaxnregKernelsWholeFromPtx) {
  Device d = Device::cuda(0);
  auto giving = [] {
    dsl::Kernel k("giving", dsl::Target::sm_90a);
    k.maxntid(256);
    k.setmaxnreg_dec(40);
    return k.module();
  };
  Module first(d, giving());
  Module second(d, giving());
  EXPECT_EQ(state->link_creates, 0);
  EXPECT_EQ(state->whole_program_targets, (std::vector<int>{0x10000 + 90, 0x10000 + 90}));  // CU_TARGET_COMPUTE_90A
  EXPECT_EQ(state->module_loads, 2);
  EXPECT_EQ(dynamic_cast<CudaBackend&>(d.backend()).binary_cache().stats().builds, 0);
}

TEST_F(CudaBackendTest, QuotesThePtxLineTheJitRefuses) {
  Device d = Device::cuda(0);
  const ptx::Module bad = gpu_testing::vector_add(d.target(), {inst("add.u16x2", {r("%r6"), r("%r5"), r("%r5")})});
  try {
    Module m(d, bad);
    ADD_FAILURE() << "the planted error was not reported";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.call(), "cuLinkAddData_v2(PTX of the module with kernels vadd)");
    EXPECT_NE(what.find("failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed; the JIT says:\n"
                        "ptxas application ptx input, line 27; error   : Instruction 'add.u16x2' requires .target sm_90 or higher\n"
                        "    27 | add.u16x2 %r6, %r5, %r5;\n"),
              std::string::npos)
        << what;
  }
}

TEST_F(CudaBackendTest, PassesParametersAndRaisesTheSharedMemoryLimitOnce) {
  Device d = Device::cuda(0);
  Module m(d, gpu_testing::vector_add(d.target()));
  Buffer a(d, 64), b(d, 64), c(d, 64);
  state->param_sizes = {8, 8, 8, 4};
  const LaunchConfig config{.grid = {3, 2}, .block = {128}, .dynamic_shared_bytes = 100 * 1024};
  Stream s = d.create_stream();
  m.launch("vadd", config, {a, b, c, std::uint32_t{77}}, &s);
  m.launch("vadd", config, {a, b, c, std::uint32_t{78}});
  ASSERT_EQ(state->launches.size(), 2u);
  const auto& l = state->launches[0];
  EXPECT_EQ(l.function, "vadd");
  EXPECT_EQ(l.grid, (std::array<unsigned, 3>{3, 2, 1}));
  EXPECT_EQ(l.block, (std::array<unsigned, 3>{128, 1, 1}));
  EXPECT_FALSE(l.ex);  // plain cuLaunchKernel
  EXPECT_EQ(l.shared_bytes, 100u * 1024);
  EXPECT_NE(l.stream, nullptr);
  EXPECT_EQ(state->launches[1].stream, nullptr);
  DevicePtr pc;
  std::uint32_t n;
  std::memcpy(&pc, l.params[2].data(), 8);
  std::memcpy(&n, l.params[3].data(), 4);
  EXPECT_EQ(pc, c.address());
  EXPECT_EQ(n, 77u);
  EXPECT_EQ(state->dynamic_shared_sets, (std::vector<std::pair<std::string, int>>{{"vadd", 100 * 1024}}));
}

// Every parameter size reaches cuLaunchKernel (and cuLaunchKernelEx) as its
// bytes, by name and through a PreparedLaunch.
TEST_F(CudaBackendTest, PassesParametersOfEverySizeByNameAndPrepared) {
  Device d = Device::cuda(0);
  Module m(d, testing::mixed_params_kernel(std::string(ptx::name(d.target()))));
  Buffer out(d, 64);
  state->param_sizes = {1, 4, 8, 4, 8, 128, 2, 8};
  testing::MixedParamsValues v;
  v.out = out.address();
  m.launch("mixed", {.grid = {1}, .block = {32}}, v.args());
  const PreparedLaunch mixed = m.prepare("mixed");
  testing::MixedParamsValues w = v;
  w.n = 5;
  w.map[127] = 0xEE;
  w.h = 77;
  mixed.launch({.grid = {2}, .block = {32}}, w.args());
  mixed.launch({.grid = {2}, .block = {32}, .cluster = {2}}, v.args());
  ASSERT_EQ(state->launches.size(), 3u);
  EXPECT_EQ(state->launches[0].params, v.expected());
  EXPECT_EQ(state->launches[1].params, w.expected());
  EXPECT_EQ(state->launches[2].params, v.expected());
  EXPECT_FALSE(state->launches[1].ex);
  EXPECT_TRUE(state->launches[2].ex);  // a cluster: cuLaunchKernelEx, the same parameters
  for (const auto& l : state->launches) EXPECT_EQ(l.function, "mixed");
}

// Programmatic dependent launch: the attribute alone, or beside a cluster's;
// $WARPFORGE_SERIAL_LAUNCHES=1 leaves it out (read once per process, so this
// test checks the variable unset, as the test runner leaves it).
TEST_F(CudaBackendTest, OverlapPreviousSetsProgrammaticStreamSerialization) {
  ASSERT_EQ(std::getenv("WARPFORGE_SERIAL_LAUNCHES"), nullptr);
  Device d = Device::cuda(0);
  Module m(d, gpu_testing::cluster_rank(d.target()));
  Buffer out(d, 64);
  state->param_sizes = {8};
  m.launch("cluster_rank", {.grid = {8}, .block = {32}, .overlap_previous = true}, {out});
  m.launch("cluster_rank", {.grid = {8}, .block = {32}, .cluster = {2}, .overlap_previous = true}, {out});
  m.launch("cluster_rank", {.grid = {8}, .block = {32}}, {out});
  ASSERT_EQ(state->launches.size(), 3u);
  EXPECT_TRUE(state->launches[0].ex);
  EXPECT_TRUE(state->launches[0].overlap_previous);
  EXPECT_EQ(state->launches[0].cluster, (std::array<unsigned, 3>{0, 0, 0}));
  EXPECT_TRUE(state->launches[1].overlap_previous);
  EXPECT_EQ(state->launches[1].cluster, (std::array<unsigned, 3>{2, 1, 1}));
  EXPECT_FALSE(state->launches[2].ex);
  EXPECT_FALSE(state->launches[2].overlap_previous);
}

TEST_F(CudaBackendTest, LaunchesClustersThroughLaunchKernelEx) {
  Device d = Device::cuda(0);
  Module m(d, gpu_testing::cluster_rank(d.target()));
  Buffer out(d, 64);
  state->param_sizes = {8};
  m.launch("cluster_rank", {.grid = {8, 2}, .block = {32}, .cluster = {4, 2}}, {out});
  ASSERT_EQ(state->launches.size(), 1u);
  EXPECT_EQ(state->launches[0].cluster, (std::array<unsigned, 3>{4, 2, 1}));
  EXPECT_EQ(state->launches[0].grid, (std::array<unsigned, 3>{8, 2, 1}));
  EXPECT_TRUE(state->dynamic_shared_sets.empty());
}

TEST_F(CudaBackendTest, AsksTheDriverHowManyClustersFit) {
  Device d = Device::cuda(0);
  Module m(d, gpu_testing::cluster_rank(d.target()));
  state->max_active_clusters = 61;
  EXPECT_EQ(m.max_active_clusters("cluster_rank", {.grid = {2}, .block = {32}, .cluster = {2}, .dynamic_shared_bytes = 64 * 1024}), 61);
  ASSERT_EQ(state->occupancy_queries.size(), 1u);
  EXPECT_EQ(state->occupancy_queries[0].cluster, (std::array<unsigned, 3>{2, 1, 1}));
  EXPECT_EQ(state->occupancy_queries[0].block, (std::array<unsigned, 3>{32, 1, 1}));
  EXPECT_EQ(state->occupancy_queries[0].shared_bytes, 64u * 1024);
  // The kernel's dynamic shared memory limit is raised first, as for a launch.
  EXPECT_EQ(state->dynamic_shared_sets, (std::vector<std::pair<std::string, int>>{{"cluster_rank", 64 * 1024}}));
  // The configuration is checked as a launch's is.
  EXPECT_THROW(m.max_active_clusters("cluster_rank", {.grid = {3}, .block = {32}, .cluster = {2}}), Error);
}

TEST_F(CudaBackendTest, EncodesTensorMapsThroughTheDriver) {
  Device d = Device::cuda(0);
  Buffer a(d, 1 << 16);
  const TensorMapDesc desc{.dtype = DType::bf16,
                           .address = a.address(),
                           .dims = {64, 100, 3},
                           .strides_bytes = {128, 12800},
                           .box = {64, 32, 1},
                           .swizzle = TensorMapSwizzle::b128};
  const TensorMap map = make_tensor_map(d, desc);
  ASSERT_EQ(state->tensor_map_encodes.size(), 1u);
  const auto& e = state->tensor_map_encodes[0];
  EXPECT_EQ(e.dtype, 9);  // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
  EXPECT_EQ(e.rank, 3u);
  EXPECT_EQ(e.address, a.address());
  EXPECT_EQ(e.dims, (std::vector<std::uint64_t>{64, 100, 3}));
  EXPECT_EQ(e.strides, (std::vector<std::uint64_t>{128, 12800}));
  EXPECT_EQ(e.box, (std::vector<unsigned>{64, 32, 1}));
  EXPECT_EQ(e.element_strides, (std::vector<unsigned>{1, 1, 1}));
  EXPECT_EQ(e.interleave, 0);  // CU_TENSOR_MAP_INTERLEAVE_NONE
  EXPECT_EQ(e.swizzle, 3);  // CU_TENSOR_MAP_SWIZZLE_128B
  EXPECT_EQ(e.l2_promotion, 3);  // CU_TENSOR_MAP_L2_PROMOTION_L2_256B
  EXPECT_EQ(e.oob_fill, 0);  // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
  for (std::size_t i = 0; i < map.bytes.size(); ++i) ASSERT_EQ(map.bytes[i], std::byte(i)) << i;

  // fp8 travels as UINT8, and element strides pass through.
  make_tensor_map(d, {.dtype = DType::e4m3,
                      .address = a.address(),
                      .dims = {128, 8},
                      .strides_bytes = {128},
                      .box = {64, 8},
                      .element_strides = {1, 2}});
  ASSERT_EQ(state->tensor_map_encodes.size(), 2u);
  EXPECT_EQ(state->tensor_map_encodes[1].dtype, 0);  // CU_TENSOR_MAP_DATA_TYPE_UINT8
  EXPECT_EQ(state->tensor_map_encodes[1].element_strides, (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(state->tensor_map_encodes[1].swizzle, 0);  // CU_TENSOR_MAP_SWIZZLE_NONE

  // An L2 promotion asked for passes through (attention decode's caches take 128 bytes).
  TensorMapDesc promoted = desc;
  for (auto [promotion, value] : {std::pair{TensorMapL2Promotion::none, 0}, {TensorMapL2Promotion::b64, 1},
                                  {TensorMapL2Promotion::b128, 2}}) {
    promoted.l2_promotion = promotion;
    make_tensor_map(d, promoted);
    EXPECT_EQ(state->tensor_map_encodes.back().l2_promotion, value);
  }
}

}  // namespace
}  // namespace warpforge::runtime
