// The row ops' kernels at the benchmark's row lengths assemble for sm_90a as
// the driver compiles them, without spilling registers (a row's values live
// in registers: a spill would put them back in memory).
#include <gtest/gtest.h>

#include "../../src/ops/norm/norm_kernel.hpp"
#include "../../src/ops/norm/norm_quantize_kernel.hpp"
#include "warpforge/ops/norm_quantize.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "../../src/ops/softmax/softmax_kernel.hpp"
#include "../../src/ops/cross_entropy/cross_entropy_kernel.hpp"
#include "../../src/ops/swiglu/swiglu_kernel.hpp"
#include "warpforge/ops/cross_entropy.hpp"
#include "warpforge/ops/swiglu.hpp"
#include "driver_ptxas.hpp"
#include "row_ops_support.hpp"

namespace warpforge::ops::testing {
namespace {

using runtime::DType;
using runtime::TensorView;

constexpr std::int64_t kRows = 4096;

TEST(RowOpsPtxas, NormsAssembleWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  runtime::Device device = runtime::Device::sim();
  runtime::Buffer scratch(device, 16);
  auto view = [&](DType dtype, std::vector<std::int64_t> shape) {
    return TensorView(device, scratch.address(), dtype, std::move(shape));
  };
  for (DType dt : {DType::bf16, DType::f32})
    for (NormKind kind : {NormKind::rms, NormKind::layer})
      for (bool with_residual : {false, true})
        for (std::int64_t n : {2048, 4096, 8192, 32768}) {
          const std::string what = std::string(name(kind)) + " " + std::string(runtime::name(dt)) + " n " +
                                   std::to_string(n) + (with_residual ? ", residual" : "");
          const TensorView x = view(dt, {kRows, n}), w = view(dt, {n}), stat = view(DType::f32, {kRows});
          const std::optional<TensorView> bias = kind == NormKind::layer ? std::optional<TensorView>(w) : std::nullopt;
          const std::optional<TensorView> mean =
              kind == NormKind::layer ? std::optional<TensorView>(stat) : std::nullopt;
          const std::optional<TensorView> residual = with_residual ? std::optional<TensorView>(x) : std::nullopt;
          std::vector<std::string> why;
          const NormOptions o{.kind = kind};
          NormProblem fwd = describe_norm({.x = x, .residual = residual, .weight = w, .bias = bias, .y = x,
                                           .residual_out = residual, .mean = mean, .rstd = stat},
                                          o, device, why);
          ASSERT_TRUE(why.empty()) << what << rows::join(why);
          expect_fast_assembly(build_norm_kernel(fwd, ptx::Target::sm_90a).to_ptx(),
                               what + " forward, " + fwd.shape.describe());
          if (with_residual) continue;  // the backward takes no residual (dresidual_out is its own case)
          NormBackwardProblem back = describe_norm_backward({.dy = x, .x = x, .weight = w, .mean = mean, .rstd = stat,
                                                             .dx = x, .dweight = w, .dbias = bias},
                                                            o, device, why);
          ASSERT_TRUE(why.empty()) << what << rows::join(why);
          expect_fast_assembly(build_norm_backward_kernel(back, ptx::Target::sm_90a).to_ptx(),
                               what + " backward, " + back.shape.describe());
        }
  expect_fast_assembly(build_column_sum_kernel(DType::bf16, DType::f32, ptx::Target::sm_90a).to_ptx(), "column sums");
}

}  // namespace
}  // namespace warpforge::ops::testing

namespace warpforge::ops::testing {
namespace {

TEST(RowOpsPtxas, SoftmaxAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  runtime::Device device = runtime::Device::sim();
  for (DType dt : {DType::bf16, DType::f32})
    for (std::int64_t n : {2048, 131072}) {
      const int bytes = runtime::bits(dt) / 8;
      for (bool backward : {false, true}) {
        SoftmaxProblem p;
        p.backward = backward;
        p.rows = kRows, p.n = n;
        p.x = p.y = p.out = {.dtype = dt, .rows = kRows, .n = n, .row_stride = n};
        std::vector<std::string> why;
        auto shape = rows::row_shape(rows::row_request(n, 16 / bytes, backward ? 2 : 1, 4, 8, true), why);
        ASSERT_TRUE(shape.has_value()) << n;
        p.shape = *shape;
        expect_fast_assembly(build_softmax_kernel(p, ptx::Target::sm_90a).to_ptx(),
                             std::string(backward ? "softmax backward " : "softmax ") +
                                 std::string(runtime::name(dt)) + " n " + std::to_string(n) + " " + p.shape.describe());
      }
    }
}

}  // namespace
}  // namespace warpforge::ops::testing

namespace warpforge::ops::testing {
namespace {

TEST(RowOpsPtxas, SwigluAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  runtime::Device device = runtime::Device::sim();
  runtime::Buffer scratch(device, 16);
  for (DType dt : {DType::bf16, DType::f32})
    for (bool interleaved : {false, true}) {
      const std::int64_t n = 8192;
      const TensorView half(device, scratch.address(), dt, {kRows, n}), whole(device, scratch.address(), dt, {kRows, 2 * n});
      SwigluBackwardTensors t{.dout = half};
      if (interleaved)
        t.x = whole, t.dx = whole;
      else
        t.gate = t.up = t.dgate = t.dup = half;
      SwigluBackward op(t);
      ASSERT_TRUE(op.check_support().empty()) << op.describe();
      SwigluProblem p;
      p.backward = true, p.interleaved = interleaved, p.rows = kRows, p.n = n;
      p.gate = p.up = p.out = p.dgate = p.dup = {.dtype = dt, .rows = kRows, .n = n, .row_stride = n};
      p.x = p.dx = {.dtype = dt, .rows = kRows, .n = 2 * n, .row_stride = 2 * n};
      std::vector<std::string> why;
      p.shape = *rows::row_shape(rows::row_request(n, 16 / (runtime::bits(dt) / 8), 3, 4, 1, true), why);
      expect_fast_assembly(build_swiglu_kernel(p, ptx::Target::sm_90a).to_ptx(),
                           std::string("swiglu backward ") + std::string(runtime::name(dt)) +
                               (interleaved ? " interleaved" : ""));
      p.backward = false;
      expect_fast_assembly(build_swiglu_kernel(p, ptx::Target::sm_90a).to_ptx(),
                           std::string("swiglu ") + std::string(runtime::name(dt)) + (interleaved ? " interleaved" : ""));
    }
}

}  // namespace
}  // namespace warpforge::ops::testing

namespace warpforge::ops::testing {
namespace {

TEST(RowOpsPtxas, CrossEntropyAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  runtime::Device device = runtime::Device::sim();
  runtime::Buffer scratch(device, 16);
  for (DType dt : {DType::bf16, DType::f32})
    for (std::int64_t v : {32768, 131072, 262144})
      for (float eps : {0.0f, 0.1f}) {
        const TensorView logits(device, scratch.address(), dt, {kRows, v}),
            labels(device, scratch.address(), DType::i64, {kRows}), loss(device, scratch.address(), DType::f32, {1});
        CrossEntropy op({.logits = logits, .labels = labels, .loss = loss, .dlogits = logits}, {.label_smoothing = eps});
        ASSERT_TRUE(op.check_support().empty()) << op.describe();
        CrossEntropyProblem p;
        p.options.label_smoothing = eps;
        p.rows = kRows, p.v = v, p.logits = {.dtype = dt, .rows = kRows, .n = v, .row_stride = v};
        p.dlogits = p.logits;
        std::vector<std::string> why;
        // As describe_cross_entropy chooses on an H100/H200: 16-bit rows without
        // smoothing at 8 vectors a thread, 512 threads resident an SM.
        const bool eight = eps == 0.0f && dt != DType::f32;
        p.shape = *rows::row_shape(rows::row_request(v, 16 / (runtime::bits(dt) / 8), eight ? 1 : 2, eight ? 8 : 4, 8,
                                                     true, eight ? 512 : 1024),
                                   why);
        expect_fast_assembly(build_cross_entropy_kernel(p, ptx::Target::sm_90a).to_ptx(),
                             "cross_entropy " + std::string(runtime::name(dt)) + " V " + std::to_string(v) +
                                 " eps " + std::to_string(eps) + " " + p.shape.describe());
      }
}

}  // namespace
}  // namespace warpforge::ops::testing

namespace warpforge::ops::testing {
namespace {

TEST(RowOpsPtxas, NormQuantizeAssemblesWithoutSpills) {
  if (!ptx::find_ptxas()) GTEST_SKIP() << "ptxas is not installed";
  runtime::Device device = runtime::Device::sim();
  runtime::Buffer scratch(device, 16);
  for (const BlockScaledFormat& f : {kMxfp8E4m3, kMxfp4, kNvfp4})
    for (std::int64_t k : {2048, 4096, 8192, 32768}) {
      const bool fp4 = f.data == DType::e2m1;
      const TensorView x(device, scratch.address(), DType::bf16, {kRows, k}), w(device, scratch.address(), DType::bf16, {k}),
          data(device, scratch.address(), fp4 ? DType::u8 : f.data, {kRows, fp4 ? k / 2 : k}),
          scales(device, scratch.address(), f.scale, {ScaleFactorLayout{kRows, k, 1, f.vec}.bytes()});
      std::vector<std::string> why;
      NormQuantizeProblem p;
      p.options.format = f;
      p.norm = describe_norm({.x = x, .residual = x, .weight = w, .y = x, .residual_out = x}, {}, device, why);
      ASSERT_TRUE(why.empty()) << rows::join(why);
      p.data_row_stride = fp4 ? k / 2 : k;
      choose_norm_quantize_shape(p, device);  // 4096 rows: 8 vectors a thread
      RmsNormQuantize op({.x = x, .residual = x, .weight = w, .data = data, .scales = scales, .residual_out = x}, {.format = f});
      ASSERT_TRUE(op.check_support().empty()) << op.describe();
      expect_fast_assembly(build_norm_quantize_kernel(p, ptx::Target::sm_90a).to_ptx(), p.describe());
    }
}

}  // namespace
}  // namespace warpforge::ops::testing
