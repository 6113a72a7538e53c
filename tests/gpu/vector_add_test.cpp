#include <iostream>
#include <numeric>

#include "gpu_fixture.hpp"
#include "kernels.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/dlpack.hpp"
#include "warpforge/runtime/event.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::runtime::gpu_testing {
namespace {

using VectorAdd = GpuTest;

std::vector<float> iota_floats(std::size_t n, float start) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST_F(VectorAdd, ReportsTheDevice) {
  Device d = Device::cuda(0);
  const DeviceProperties& p = d.properties();
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.compute_capability_major, 8);
  EXPECT_GT(p.sm_count, 0);
  EXPECT_EQ(p.shared_bytes_per_block, 48u * 1024);
  EXPECT_GT(p.shared_bytes_per_block_optin, p.shared_bytes_per_block);
  EXPECT_EQ(p.max_threads_per_block, 1024);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_EQ(d.target(), target_for(p));
  EXPECT_EQ(Device::cuda(0), d);  // one backend per ordinal
  std::cout << "[ device   ] " << p.name << ", compute capability " << p.compute_capability_major << "."
            << p.compute_capability_minor << ", " << p.sm_count << " SMs, target " << ptx::name(d.target())
            << ", driver " << dynamic_cast<CudaBackend&>(d.backend()).driver_version() << "\n";
}

TEST_F(VectorAdd, RefusesADeviceOrdinalOutOfRange) {
  const int count = Device::cuda_count();
  try {
    Device::cuda(count);
    ADD_FAILURE() << "Device::cuda(" << count << ") succeeded";
  } catch (const RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "CUDA device " + std::to_string(count) + " requested; this machine has " +
                                         std::to_string(count) +
                                         (count == 1 ? " device (ordinal 0)" : " devices"));
  }
}

TEST_F(VectorAdd, AddsVectors) {
  Device d = Device::cuda(0);
  const std::uint32_t n = 1000;  // not a multiple of the block: the guard matters
  const auto a = iota_floats(n, 0.0f), b = iota_floats(n, 0.5f);
  Buffer da(d, n * 4), db(d, n * 4), dc(d, n * 4);
  da.upload(std::span<const float>(a));
  db.upload(std::span<const float>(b));
  dc.fill(0xFF);
  Module m(d, vector_add(d.target()));
  m.launch("vadd", {.grid = {(n + 255) / 256}, .block = {256}}, {da, db, dc, n});
  const auto c = dc.download<float>(n);
  for (std::uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
  EXPECT_EQ(cache_stats(d).builds, 1);
}

TEST_F(VectorAdd, RunsOnAStreamWithAsyncCopiesAndTimesItWithEvents) {
  Device d = Device::cuda(0);
  const std::uint32_t n = 1 << 20;
  const auto a = iota_floats(n, 1.0f), b = iota_floats(n, -1.0f);
  std::vector<float> c(n, -7.0f);
  Buffer da(d, n * 4), db(d, n * 4), dc(d, n * 4);
  Stream stream = d.create_stream();
  Event start = d.create_event(), end = d.create_event();
  Module m(d, vector_add(d.target()));
  start.record(&stream);
  da.copy_from_host(a.data(), n * 4, 0, &stream);
  db.copy_from_host(b.data(), n * 4, 0, &stream);
  m.launch("vadd", {.grid = {n / 256}, .block = {256}}, {da, db, dc, n}, &stream);
  dc.copy_to_host(c.data(), n * 4, 0, &stream);
  end.record(&stream);
  stream.synchronize();
  for (std::uint32_t i = 0; i < n; i += 997) ASSERT_EQ(c[i], 2.0f * i) << "element " << i;
  const float ms = Event::elapsed_ms(start, end);
  EXPECT_GT(ms, 0.0f);
  EXPECT_LT(ms, 10000.0f);
}

TEST_F(VectorAdd, LaunchesOnTensorsAndExportsThem) {
  Device d = Device::cuda(0);
  Tensor a = Tensor::empty(d, DType::f32, {4, 64}), b = Tensor::empty(d, DType::f32, {4, 64}),
         c = Tensor::empty(d, DType::f32, {4, 64});
  const auto ha = iota_floats(256, 3.0f), hb = iota_floats(256, 4.0f);
  a.copy_from_host(ha.data(), 1024);
  b.copy_from_host(hb.data(), 1024);
  Module m(d, vector_add(d.target()));
  m.launch("vadd", {.grid = {1}, .block = {256}}, {a, b, c, std::uint32_t{256}});
  std::vector<float> hc(256);
  c.copy_to_host(hc.data(), 1024);
  EXPECT_EQ(hc[255], ha[255] + hb[255]);

  DLManagedTensor* exported = to_dlpack(c);
  EXPECT_EQ(exported->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(exported->dl_tensor.device.device_id, 0);
  Tensor back = from_dlpack(exported);  // kDLCUDA: finds Device::cuda(0)
  EXPECT_EQ(back.device(), d);
  std::vector<float> again(256);
  back.copy_to_host(again.data(), 1024);
  EXPECT_EQ(again, hc);
}

TEST_F(VectorAdd, RefusesArgumentsBeforeTheDriverSeesThem) {
  Device d = Device::cuda(0);
  Buffer buf(d, 1024);
  Module m(d, vector_add(d.target()));
  try {
    m.launch("vadd", {.grid = {1}, .block = {32}}, {buf, buf, Arg::pointer(buf.address() + 2), std::uint32_t{8}});
    ADD_FAILURE() << "a misaligned pointer was launched";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'vadd': parameter 2 'C' (.param .u64 .ptr .global .align 4 C) "
                                         "needs a pointer aligned to 4 bytes"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace warpforge::runtime::gpu_testing
