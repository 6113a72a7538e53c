// The normalizations on a GPU: every case of the simulator's tests
// (tests/ops/norm_sim_test.cpp, through tests/ops/norm_checks.hpp), then the
// benchmark's shapes (rows of 2048 to 16384, 32768 in a cluster, thousands of
// rows so that every SM loops over several), against the same fp64 references.
#include "gpu_fixture.hpp"
#include "ops/norm_checks.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::gpu_testing::GpuTest;

class NormGpu : public GpuTest {
 protected:
  runtime::Device gpu() { return runtime::Device::cuda(0); }
};

TEST_F(NormGpu, TheSimulatorsCases) {
  std::uint32_t seed = 100;
  for (NormKind kind : {NormKind::rms, NormKind::layer})
    for (DType dt : {DType::bf16, DType::f16, DType::f32}) {
      NormCase c{.kind = kind, .x = dt, .y = dt, .weight = dt};
      if (kind == NormKind::layer) c.bias = dt;
      check_norm(gpu(), c, seed++);
    }
  check_norm(gpu(), {.n = 200}, 200, "warp");
  check_norm(gpu(), {.rows = 3, .n = 4000}, 201, "cta");
  check_norm(gpu(), {.kind = NormKind::layer, .bias = DType::bf16, .rows = 2, .n = 40000}, 202, "cluster");
  check_norm(gpu(), {.kind = NormKind::layer, .bias = DType::bf16, .rows = 9, .n = 7}, 300);
  check_norm(gpu(), {.kind = NormKind::layer, .x = DType::f16, .y = DType::f32, .weight = DType::f32,
                     .bias = DType::f16, .rows = 6, .n = 1000, .stride = 1040},
             301);
  check_norm(gpu(), {.x = DType::bf16, .y = DType::bf16, .rows = 4, .n = 96, .stride = 98}, 303);
  check_norm(gpu(), {.residual = DType::bf16, .rows = 5, .n = 512}, 400);
  check_norm(gpu(), {.kind = NormKind::layer, .x = DType::bf16, .y = DType::bf16, .bias = DType::f32,
                     .residual = DType::f32, .rows = 3, .n = 264, .stride = 272},
             401);
  check_norm_one_element_rows(gpu());
  check_norm_all_equal_rows(gpu());
  check_norm_values_near_the_largest(gpu());
  check_norm_nan_and_infinity(gpu());
  check_norm_backward(gpu(), {}, 900, "warp");
  check_norm_backward(gpu(), {.kind = NormKind::layer, .dbias = true}, 901);
  check_norm_backward(gpu(), {.x = DType::f16, .dy = DType::f16, .dx = DType::f16, .weight = DType::f32,
                              .rows = 4, .n = 3000},
                      903, "cta");
  check_norm_backward(gpu(), {.weight = std::nullopt, .dweight = false, .dresidual = true, .rows = 9, .n = 128}, 910);
  check_norm_backward(gpu(), {.rows = 3, .n = 12000}, 920, "cluster");
  check_norm_backward(gpu(), {.kind = NormKind::layer, .dbias = true, .rows = 3, .n = 6000}, 921, "cta");
}

TEST_F(NormGpu, TheBenchmarksShapes) {
  std::uint32_t seed = 2000;
  for (std::int64_t n : {2048, 4096, 8192, 16384})
    for (NormKind kind : {NormKind::rms, NormKind::layer}) {
      NormCase c{.kind = kind, .residual = DType::bf16, .rows = 1031, .n = n};
      if (kind == NormKind::layer) c.bias = DType::bf16;
      check_norm(gpu(), c, seed++);
      check_norm_backward(gpu(), {.kind = kind, .dbias = kind == NormKind::layer, .rows = 1031, .n = n}, seed++);
    }
  check_norm(gpu(), {.rows = 64, .n = 32768}, seed++, "cluster");
  check_norm(gpu(), {.kind = NormKind::layer, .x = DType::f32, .y = DType::f32, .weight = DType::f32,
                     .rows = 64, .n = 32768},
             seed++, "cluster");
  check_norm_backward(gpu(), {.kind = NormKind::layer, .dbias = true, .rows = 300, .n = 32768}, seed++, "cluster");
}

}  // namespace
}  // namespace warpforge::ops::testing
