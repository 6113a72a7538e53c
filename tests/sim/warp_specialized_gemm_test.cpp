// A warp-specialized Hopper GEMM as PTX, run end to end on the simulator:
// warpgroup 0 produces (setmaxnreg.dec, elect.sync, TMA loads of 128x64 A
// and B tiles into a 2-stage ring of 128B-swizzled buffers with full/empty
// mbarriers), warpgroups 1 and 2 consume (setmaxnreg.inc, four
// m64n128k16 wgmma per stage from descriptors into the same swizzle, then an
// arrive on the stage's empty barrier); D = A * B^T is written from the
// accumulator fragments. K = 256 wraps the ring twice, so both barrier
// parities and the producer's wait on a freed slot are exercised.
#include <chrono>
#include <cmath>

#include "hopper_harness.hpp"
#include "hopper_kernels.hpp"

namespace warpforge::sim::testing {
namespace {


TEST_F(HopperTest, WarpSpecializedGemmWithTmaPipelineAndWgmma) {
  const std::uint64_t m = 128, n = 128, k = 256;
  const auto a = random_bf16(m * k), b = random_bf16(n * k);  // A (M,K), B as (N,K): both K-major
  const auto map = [&](const std::vector<std::uint16_t>& x, std::uint64_t rows) {
    return tensor_map_arg({.dtype = runtime::DType::bf16,
                           .address = upload(x),
                           .dims = {k, rows},
                           .strides_bytes = {k * 2},
                           .box = {64, 128},
                           .swizzle = runtime::TensorMapSwizzle::b128});
  };
  auto d = upload(std::vector<float>(m * n, std::nanf("")));
  const std::string text = ws_gemm_kernel();
  const auto start = std::chrono::steady_clock::now();
  run_ptx(text, "gemm", {.grid = {1}, .block = {384}, .dynamic_shared_bytes = kWsGemmSharedBytes},
          {map(a, m), map(b, n), arg_u64(d), arg_u32(static_cast<std::uint32_t>(k / 64))});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto got = download<float>(d, m * n);
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::uint64_t x = 0; x < k; ++x)
        want += double{bf16_value(a[i * k + x])} * double{bf16_value(b[j * k + x])};
      ASSERT_NEAR(got[i * n + j], want, 1e-4 * (1 + std::abs(want))) << "D[" << i << "][" << j << "]";
    }
  RecordProperty("simulated_seconds", std::to_string(seconds));
}

}  // namespace
}  // namespace warpforge::sim::testing
