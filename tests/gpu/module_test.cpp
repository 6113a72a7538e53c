#include <fstream>
#include <iterator>
#include <sstream>

#include "gpu_fixture.hpp"
#include "kernels.hpp"
#include "warpforge/ptx/emitter.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

using GpuModule = GpuTest;

// Runs vadd on 64 elements and checks the sums.
void expect_vadd_works(const Device& d, Module& m) {
  std::vector<float> a(64), b(64);
  for (int i = 0; i < 64; ++i) a[i] = i, b[i] = 100.0f * i;
  Buffer da(d, 256), db(d, 256), dc(d, 256);
  da.upload(std::span<const float>(a));
  db.upload(std::span<const float>(b));
  m.launch("vadd", {.grid = {1}, .block = {64}}, {da, db, dc, std::uint32_t{64}});
  const auto c = dc.download<float>(64);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(c[i], 101.0f * i) << "element " << i;
}

TEST_F(GpuModule, ReusesCompiledModulesFromMemoryAndFromDisk) {
  {
    Device d = Device::cuda(0);
    Module first(d, vector_add(d.target()));
    Module second(d, vector_add(d.target()));
    const auto s = cache_stats(d);
    EXPECT_EQ(s.builds, 1);
    EXPECT_EQ(s.memory_hits, 1);
    expect_vadd_works(d, second);
  }
  // Every Device gone: a new backend starts with an empty memory cache and
  // finds the cubin on disk.
  Device d = Device::cuda(0);
  Module again(d, vector_add(d.target()));
  const auto s = cache_stats(d);
  EXPECT_EQ(s.disk_hits, 1);
  EXPECT_EQ(s.builds, 0);
  expect_vadd_works(d, again);
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(cache_dir_)) entries += e.path().extension() == ".bin";
  EXPECT_EQ(entries, 1);
}

TEST_F(GpuModule, RebuildsACorruptCacheEntry) {
  {
    Device d = Device::cuda(0);
    Module m(d, vector_add(d.target()));
  }
  std::filesystem::path entry;
  for (const auto& e : std::filesystem::directory_iterator(cache_dir_)) entry = e.path();
  ASSERT_FALSE(entry.empty());
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-100, std::ios::end);  // inside the cubin
    const char byte = static_cast<char>(f.get());
    f.seekp(-100, std::ios::end);
    f.put(static_cast<char>(byte ^ 0x5a));
  }
  Device d = Device::cuda(0);
  ::testing::internal::CaptureStderr();
  Module m(d, vector_add(d.target()));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("is corrupt (payload checksum mismatch); rebuilding it"), std::string::npos) << err;
  const auto s = cache_stats(d);
  EXPECT_EQ(s.rejected_entries, 1);
  EXPECT_EQ(s.builds, 1);
  expect_vadd_works(d, m);
}

TEST_F(GpuModule, ReportsAPtxErrorWithTheLineItNames) {
  Device d = Device::cuda(0);
  // add has no .pred form (PTX ISA 9.7.1.1): ptxas refuses the line.
  ptx::Module bad = vector_add(d.target(), {inst("add.pred", {r("%r6"), r("%r5"), r("%r5")})});
  const std::string text = ptx::emit(bad);
  std::istringstream lines(text);
  std::string line;
  int number = 0, bad_line = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find("add.pred") != std::string::npos) bad_line = number;
  }
  ASSERT_GT(bad_line, 0);
  try {
    Module m(d, bad);
    ADD_FAILURE() << "invalid PTX was compiled";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    // The JIT reports PTX errors when the PTX is added; accept the link step too.
    EXPECT_TRUE(e.call() == "cuLinkAddData_v2(PTX of the module with kernels vadd)" ||
                e.call() == "cuLinkComplete(the module with kernels vadd)")
        << e.call();
    EXPECT_NE(what.find("line " + std::to_string(bad_line)), std::string::npos) << what;
    EXPECT_NE(what.find("    " + std::to_string(bad_line) + " | add.pred %r6, %r5, %r5;"), std::string::npos) << what;
  }
  EXPECT_EQ(cache_stats(d).builds, 0);  // nothing was stored
}

TEST_F(GpuModule, RaisesTheDynamicSharedMemoryLimitPast48KB) {
  Device d = Device::cuda(0);
  const std::uint32_t offset = 96 * 1024, threads = 256;
  Module m(d, shared_echo(d.target(), offset));
  Buffer out(d, threads * 4);
  out.fill(0);
  m.launch("shared_echo", {.grid = {1}, .block = {threads}, .dynamic_shared_bytes = offset + 4 * threads}, {out});
  const auto v = out.download<std::uint32_t>(threads);
  for (std::uint32_t i = 0; i < threads; ++i) ASSERT_EQ(v[i], i) << "thread " << i;
}

TEST_F(GpuModule, RefusesMoreSharedMemoryThanTheDeviceHas) {
  Device d = Device::cuda(0);
  Module m(d, shared_echo(d.target(), 0));
  Buffer out(d, 1024);
  const auto limit = static_cast<std::uint32_t>(d.properties().shared_bytes_per_block_optin);
  try {
    m.launch("shared_echo", {.grid = {1}, .block = {32}, .dynamic_shared_bytes = limit + 1}, {out});
    ADD_FAILURE() << "a launch past the shared memory limit was accepted";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "kernel 'shared_echo': " + std::to_string(limit + 1) +
                                         " bytes of dynamic shared memory plus 0 static exceed the " +
                                         std::to_string(limit) + " bytes per block that device '" +
                                         d.properties().name + "' allows");
  }
}

TEST_F(GpuModule, LaunchesClusters) {
  Device d = Device::cuda(0);
  if (d.properties().compute_capability_major < 9)
    GTEST_SKIP() << "cluster launch needs compute capability 9.0; " << d.properties().name << " is "
                 << d.properties().compute_capability_major << "." << d.properties().compute_capability_minor;
  Module m(d, cluster_rank(d.target()));
  Buffer out(d, 8 * 4);
  out.fill(0xFF);
  m.launch("cluster_rank", {.grid = {8}, .block = {32}, .cluster = {4}}, {out});
  EXPECT_EQ(out.download<std::uint32_t>(8), (std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  // A cluster of 4 small CTAs fits at least once per GPC; never more often
  // than SMs / 4 times 32 CTAs per SM.
  const int fit = m.max_active_clusters("cluster_rank", {.grid = {4}, .block = {32}, .cluster = {4}});
  EXPECT_GE(fit, 1);
  EXPECT_LE(fit, d.properties().sm_count * 32 / 4);
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
