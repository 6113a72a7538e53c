// RMSNorm fused with block-scaled quantization: a quantized linear layer's
// input normalized and quantized to MXFP8, MXFP4 or NVFP4 in one pass, in
// exactly the layouts GemmAmax takes (data k-major, scales in the 128x4
// layout: scale_factor_layout.hpp), with the scales picked and the values
// rounded as ops::quantize does (quantize.hpp):
//
//   y = rms_norm(x (+ residual)) · weight     (as ops::Norm computes it, bit for bit)
//   (data, scales) = quantize(y, format)       (as ops::quantize, bit for bit)
//
//   ops::RmsNormQuantize op({.x = x, .weight = w, .data = a, .scales = sfa}, {.format = kMxfp8E4m3});
//   op.execute({...}, &stream);   then ops::GemmAmax(a, b, sfa, sfb, ...)
//
// x, residual: (..., K) f32, f16 or bf16 rows (last dimension contiguous);
// weight (K); data: (rows, K) e4m3/e5m2, or FP4 as u8 (rows, K/2) (e2m1 of
// (rows, K) is read the same way), any row stride; scales: e8m0 (i8, u8
// accepted) or e4m3, 1-D of ScaleFactorLayout{rows, K, 1, vec}.bytes() bytes
// or 6-D (32, 4, RM, 4, RK, 1) with the layout's strides; padding rows are
// written 0. residual_out, rstd as for ops::Norm; y: optional, the values
// quantized (any float dtype: as f32, quantize(y) gives data and scales
// exactly). K a multiple of 4 · vec (so scale columns need no padding).
// normalize = false quantizes x (· weight) as it is: ops::quantize on the GPU.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/ops/quantize.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

struct NormQuantizeOptions {
  BlockScaledFormat format = kMxfp8E4m3;
  float eps = 1e-6f;
  bool normalize = true;
};

struct NormQuantizeTensors {
  runtime::TensorView x;
  std::optional<runtime::TensorView> residual, weight;
  runtime::TensorView data, scales;
  std::optional<runtime::TensorView> residual_out, rstd, y;
};

class RmsNormQuantize {
 public:
  RmsNormQuantize(const NormQuantizeTensors& tensors, NormQuantizeOptions options = {});
  ~RmsNormQuantize();
  RmsNormQuantize(RmsNormQuantize&&) noexcept;
  RmsNormQuantize& operator=(RmsNormQuantize&&) noexcept;

  std::vector<std::string> check_support() const;
  std::string_view kernel_name() const;  // "warp", "cta" or "cluster"
  std::string describe() const;
  std::size_t workspace_bytes() const { return 0; }
  void compile();
  void execute(const NormQuantizeTensors& tensors, runtime::Stream* stream = nullptr);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace warpforge::ops
