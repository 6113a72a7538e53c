// Quantizing a float matrix into block-scaled (data, scales) pairs:
//
//   MXFP8  e4m3 or e5m2 data, one e8m0 scale per 32 elements along K
//   MXFP4  e2m1 data,         one e8m0 scale per 32
//   NVFP4  e2m1 data,         one e4m3 (ue4m3) scale per 16
//
// The block scale comes from the block's amax:
//  - e8m0 (OCP MX v1.0 section 6.3): X = 2^(floor(log2(amax)) - emax), emax the
//    exponent of the element format's largest normal (e4m3 8, e5m2 15, e2m1 2);
//    elements are x / X rounded (RNE) and saturated, so the block's largest
//    value lands in the element format's top binade (and may saturate).
//  - e4m3 (NVIDIA NVFP4): s = amax / 6 rounded to e4m3, elements x / s.
// A block whose amax is 0 gets the scale 1.0; a NaN in a block makes its
// scale NaN (e8m0 0xFF; e4m3 0x7F).
//
// Data is k-major: element (r, k) of batch l is element (l·rows + r)·K + k
// (e2m1 packed, low nibble first; K even). Scales are in the 128×4 layout.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/runtime/dtype.hpp"

namespace warpforge::ops {

struct BlockScaledFormat {
  runtime::DType data = runtime::DType::e4m3;   // e4m3, e5m2, e2m1
  runtime::DType scale = runtime::DType::e8m0;  // e8m0, e4m3
  int vec = 32;                                 // 16 or 32
};
inline constexpr BlockScaledFormat kMxfp8E4m3{runtime::DType::e4m3, runtime::DType::e8m0, 32};
inline constexpr BlockScaledFormat kMxfp8E5m2{runtime::DType::e5m2, runtime::DType::e8m0, 32};
inline constexpr BlockScaledFormat kMxfp4{runtime::DType::e2m1, runtime::DType::e8m0, 32};
inline constexpr BlockScaledFormat kNvfp4{runtime::DType::e2m1, runtime::DType::e4m3, 16};

struct QuantizedMatrix {
  BlockScaledFormat format;
  std::int64_t rows = 0, k = 0, batches = 1;
  std::vector<std::uint8_t> data;    // k-major bytes, see above
  std::vector<std::uint8_t> scales;  // ScaleFactorLayout bytes, padding 0

  ScaleFactorLayout scale_layout() const { return {rows, k, batches, format.vec}; }
  std::uint8_t code(std::int64_t r, std::int64_t kk,
                    std::int64_t l) const;  // the data code (a nibble for e2m1)
  float scale(std::int64_t r, std::int64_t kk,
              std::int64_t l) const;  // the scale of element (r, kk)
  float value(std::int64_t r, std::int64_t kk, std::int64_t l) const;  // decoded data × scale
};

// x holds rows × k × batches floats, k-major as the data. Throws OpsError for
// an unsupported format (data not e4m3/e5m2/e2m1, scale not e8m0/e4m3, vec not
// 16/32) or an odd K with e2m1 data.
QuantizedMatrix quantize(std::span<const float> x, std::int64_t rows, std::int64_t k,
                         std::int64_t batches, BlockScaledFormat format);

}  // namespace warpforge::ops
