// nvcc's own PTX for tests/corpus/hopper_wgmma.cu run on the simulator: a
// 2-CTA cluster that initializes an mbarrier, meets at barrier.cluster, loads
// a box with TMA (the tensor map in global memory, its address a kernel
// parameter, read through the parameter's .param address as nvcc writes it),
// spins on mbarrier.try_wait.parity and runs one wgmma m64n8k16 from shared
// memory. Skips when the build found no recorded PTX (tests/corpus/ptx).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hopper_harness.hpp"

namespace warpforge::sim::testing {
namespace {

TEST_F(HopperTest, NvccHopperCorpusKernelRuns) {
  // The optimized variants; the unoptimized -G one is not checked here.
  for (const char* variant : {"O3", "lineinfo", "rdc"}) {
    const std::filesystem::path file =
        std::filesystem::path(WARPFORGE_PTX_CORPUS_DIR) / ("hopper_wgmma.sm_90a." + std::string(variant) + ".ptx");
    if (!std::filesystem::exists(file))
      GTEST_SKIP() << file << " is not in the build (recorded in tests/corpus/ptx)";
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    SCOPED_TRACE(file.string());

    // A 128 x 64 bf16 row-major tensor; CTA b loads the 32 x 64 box at row 64b.
    const auto t = random_bf16(128 * 64);
    runtime::KernelArg map = tensor_map_arg({.dtype = runtime::DType::bf16,
                                             .address = upload(t),
                                             .dims = {64, 128},
                                             .strides_bytes = {128},
                                             .box = {64, 32}});
    const auto map_in_global = upload(std::vector<std::byte>(map.bytes.begin(), map.bytes.end()));
    // K-major core matrices over the loaded rows: A's K chunks one 128-byte
    // row apart (LBO 128), its 8-row groups two rows apart (SBO 256); B 2048
    // bytes further. The box lands at `smem`, the dynamic shared memory,
    // which the simulator places after the 8-byte static `bar` at the next
    // 1024-byte boundary: descriptors hold shared addresses.
    const std::uint64_t smem = 1024;
    const auto desc = [&](std::uint64_t offset) {
      return (smem + offset) >> 4 | (128ull >> 4) << 16 | (256ull >> 4) << 32;
    };
    auto out = upload(std::vector<float>(2 * 128 * 4, std::nanf("")));
    run_ptx(text.str(), "_Z10wgmma_tilePKmPfmm",
            {.grid = {2}, .block = {128}, .cluster = {2, 1, 1}, .dynamic_shared_bytes = 4096},
            {arg_u64(map_in_global), arg_u64(out), arg_u64(desc(0)), arg_u64(desc(2048))});
    const auto got = download<float>(out, 2 * 128 * 4);
    for (int b = 0; b < 2; ++b) {
      // element (row, k) of an operand at byte `start + offset` of CTA b's box
      const auto value = [&](std::uint64_t start, int row, int k) {
        const std::uint64_t byte = start + row / 8 * 256 + k / 8 * 128 + row % 8 * 16 + k % 8 * 2;
        return double{bf16_value(t[(64 * b + byte / 128) * 64 + byte % 128 / 2])};
      };
      for (int tid = 0; tid < 128; ++tid)
        for (int i = 0; i < 4; ++i) {
          const int row = 16 * (tid / 32) + tid % 32 / 4 + 8 * (i / 2), col = 2 * (tid % 4) + i % 2;
          double want = 0;
          for (int k = 0; k < 16; ++k) want += value(0, row, k) * value(2048, col, k);
          ASSERT_NEAR(got[(b * 128 + tid) * 4 + i], want, 1e-5 * (1 + std::abs(want)))
              << "CTA " << b << " thread " << tid << " element " << i;
        }
    }
  }
}

}  // namespace
}  // namespace warpforge::sim::testing
