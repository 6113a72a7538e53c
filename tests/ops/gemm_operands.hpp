// Test operands for the GEMM (header-only: tests/ops and tests/gpu share it): strided matrices in
// device memory filled with fresh random values (N(0,1) rounded to the dtype), every byte outside
// the logical elements (padding, offsets) poisoned with NaN so a kernel that reads or writes there
// shows it.
#pragma once

#include <algorithm>
#include <random>
#include <vector>

#include "warpforge/ops/gemm.hpp"
#include "warpforge/ops/gemm_reference.hpp"
#include "warpforge/runtime/buffer.hpp"

namespace warpforge::ops::testing {

struct MatrixShape {
  std::int64_t l = 0;  // 0: rank 2
  std::int64_t rows = 1, cols = 1;
  bool row_major = true;
  std::int64_t pad = 0;           // leading dimension = contiguous extent + pad
  std::uint64_t byte_offset = 0;  // first element this far into the buffer
};

struct DeviceMatrix {
  runtime::Buffer buffer;
  runtime::TensorView view;
  HostTensor host;  // what was uploaded
};

// Random values (or NaN everywhere when `poisoned`) in the given layout.
inline DeviceMatrix make_matrix(const runtime::Device& device, runtime::DType dtype,
                                const MatrixShape& s, std::mt19937& rng, bool poisoned = false) {
  const std::int64_t ld = (s.row_major ? s.cols : s.rows) + s.pad;
  const std::int64_t matrix = (s.row_major ? s.rows : s.cols) * ld;
  std::vector<std::int64_t> shape = {s.rows, s.cols};
  std::vector<std::int64_t> strides =
      s.row_major ? std::vector<std::int64_t>{ld, 1} : std::vector<std::int64_t>{1, ld};
  if (s.l > 0) {
    shape.insert(shape.begin(), s.l);
    strides.insert(strides.begin(), matrix);
  }
  const std::size_t element = static_cast<std::size_t>(runtime::bits(dtype) / 8);
  const std::size_t bytes =
      s.byte_offset + static_cast<std::size_t>(std::max<std::int64_t>(s.l, 1) * matrix) * element;
  runtime::Buffer buffer(device, bytes);
  buffer.fill(0xff);  // NaN in f32, f16 and bf16
  runtime::TensorView view(buffer, dtype, shape, strides, s.byte_offset);
  HostTensor host = HostTensor::download(view);
  if (!poisoned) {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::int64_t b = 0; b < std::max<std::int64_t>(s.l, 1); ++b)
      for (std::int64_t r = 0; r < s.rows; ++r)
        for (std::int64_t c = 0; c < s.cols; ++c) {
          std::vector<std::int64_t> index = {r, c};
          if (s.l > 0) index.insert(index.begin(), b);
          host.set(index, normal(rng));
        }
    host.upload(view);
  }
  return {std::move(buffer), view, std::move(host)};
}

}  // namespace warpforge::ops::testing
