// An XLA FFI call's device, stream and buffers as warpforge's (shared by the
// FFI handlers: jax_ffi.cpp, row_ops_ffi.cpp). XLA buffers are dense
// row-major; on the simulator each host buffer is mapped into the simulated
// address space until the call returns.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "../tensors.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/dtype.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"
#include "xla/ffi/api/ffi.h"

namespace warpforge::python {

inline runtime::DType dtype_of(xla::ffi::DataType t, const char* role) {
  switch (t) {
    case xla::ffi::DataType::F32:
      return runtime::DType::f32;
    case xla::ffi::DataType::F16:
      return runtime::DType::f16;
    case xla::ffi::DataType::BF16:
      return runtime::DType::bf16;
    case xla::ffi::DataType::F8E4M3FN:
      return runtime::DType::e4m3;
    case xla::ffi::DataType::F8E5M2:
      return runtime::DType::e5m2;
    case xla::ffi::DataType::F8E8M0FNU:
      return runtime::DType::e8m0;
    case xla::ffi::DataType::U8:
      return runtime::DType::u8;
    case xla::ffi::DataType::S8:
      return runtime::DType::i8;
    case xla::ffi::DataType::S32:
      return runtime::DType::i32;
    case xla::ffi::DataType::S64:
      return runtime::DType::i64;
    default:
      throw RuntimeError(
          std::string(role) + ": XLA dtype " + std::to_string(static_cast<int>(t)) +
          " has no warpforge dtype; accepted: float32, float16, bfloat16, float8_e4m3fn, "
          "float8_e5m2, float8_e8m0fnu, uint8 (packed FP4), int8, int32, int64");
  }
}

// The call's buffers as views on its device. On the simulator each host
// buffer is mapped into the simulated address space until the call returns.
class CallBuffers {
 public:
  explicit CallBuffers(runtime::Device device) : mappings_(std::move(device)) {}

  runtime::TensorView view(void* data, std::size_t bytes, runtime::DType dtype, std::vector<std::int64_t> shape,
                  std::vector<std::int64_t> strides = {}) {
    const runtime::DevicePtr address = mappings_.map(reinterpret_cast<runtime::DevicePtr>(data), bytes);
    return runtime::TensorView(mappings_.device(), address, dtype, std::move(shape), std::move(strides));
  }
  template <class Buffer>
  runtime::TensorView flat(const Buffer& b, const char* role) {
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                {static_cast<std::int64_t>(b.element_count())});
  }
  // A physical (L, R, C) buffer as the logical (R, C, L) matrix of row stride C.
  template <class Buffer>
  runtime::TensorView rows_cols_batch(const Buffer& b, const char* role) {
    auto d = b.dimensions();
    if (d.size() != 3)
      throw RuntimeError(std::string(role) + ": expected 3 dimensions (L, rows, cols), got " +
                         std::to_string(d.size()));
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                {d[1], d[2], d[0]}, {d[2], 1, d[1] * d[2]});
  }
  // A physical (L, N, M) buffer as the logical m-major (M, N, L).
  template <class Buffer>
  runtime::TensorView m_major(const Buffer& b, const char* role) {
    auto d = b.dimensions();
    if (d.size() != 3)
      throw RuntimeError(std::string(role) + ": expected 3 dimensions (L, N, M), got " +
                         std::to_string(d.size()));
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                {d[2], d[1], d[0]}, {1, d[2], d[1] * d[2]});
  }
  template <class Buffer>
  runtime::TensorView dense(const Buffer& b, const char* role) {
    auto d = b.dimensions();
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                std::vector<std::int64_t>(d.begin(), d.end()));
  }

 private:
  CallMappings mappings_;
};

// Runs `body` with the call's CUDA device and XLA's stream (borrowed).
template <class Body>
xla::ffi::Error on_xla_stream(void* stream, std::int32_t ordinal, Body body) {
  try {
    const runtime::Device device = cuda_device(ordinal);
    runtime::Stream s = runtime::Stream::borrow(device, reinterpret_cast<std::uintptr_t>(stream));
    return body(device, &s);
  } catch (const Error& e) {
    return xla::ffi::Error::Internal(e.what());
  }
}

}  // namespace warpforge::python
