// Cross-entropy on a GPU: the simulator's cases (tests/ops/cross_entropy_checks.hpp),
// then the benchmark's vocabularies (32k, 128k, 256k: rows held by clusters).
#include "gpu_fixture.hpp"
#include "ops/cross_entropy_checks.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::gpu_testing::GpuTest;

class CrossEntropyGpu : public GpuTest {
 protected:
  runtime::Device gpu() { return runtime::Device::cuda(0); }
};

TEST_F(CrossEntropyGpu, TheSimulatorsCases) {
  std::uint32_t seed = 10;
  for (DType logits : {DType::bf16, DType::f16, DType::f32})
    for (LossReduction r : {LossReduction::none, LossReduction::mean, LossReduction::sum})
      check_cross_entropy(gpu(), {.logits = logits, .labels = seed % 2 ? DType::i32 : DType::i64, .reduction = r,
                                  .label_smoothing = seed % 3 == 0 ? 0.1f : 0.0f},
                          seed++);
  check_cross_entropy(gpu(), {.in_place = true}, 20);
  check_cross_entropy(gpu(), {.rows = 9, .v = 256}, 30, "warp");
  check_cross_entropy(gpu(), {.rows = 3, .v = 5000, .label_smoothing = 0.1f}, 31, "cta");
  check_cross_entropy(gpu(), {.rows = 2, .v = 40000, .label_smoothing = 0.1f, .in_place = true}, 32, "cluster");
  check_cross_entropy(gpu(), {.rows = 10, .v = 40000, .in_place = true}, 35, "cluster");
  check_cross_entropy_special_rows(gpu());
}

TEST_F(CrossEntropyGpu, TheBenchmarksVocabularies) {
  std::uint32_t seed = 100;
  for (std::int64_t v : {32768, 131072, 262144}) {
    // 32768 bf16 logits without smoothing are what one CTA of 512 threads holds at 8 vectors of 8 a
    // thread (128 registers, 512 threads resident an SM); wider rows take a cluster.
    check_cross_entropy(gpu(), {.rows = 67, .v = v, .in_place = true}, seed++, v == 32768 ? "cta" : "cluster");
    check_cross_entropy(gpu(), {.logits = DType::f32, .rows = 13, .v = v, .label_smoothing = 0.1f}, seed++);
  }
  // Past 262144 (bf16) a row is read twice.
  check_cross_entropy(gpu(), {.rows = 5, .v = 300000, .in_place = true}, seed++, "cluster");
}

}  // namespace
}  // namespace warpforge::ops::testing
