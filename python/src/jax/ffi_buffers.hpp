// What the XLA FFI handlers share (jax_ffi.cpp, attention_jax_ffi.cpp, row_ops_ffi.cpp): XLA
// dtypes as warpforge's, a call's buffers as views on its device (on the
// simulator each host buffer mapped for the call), the run of a handler
// body on XLA's stream, a refusal as XLA's error, the CUDA platform's
// binding, a signature's buffers by count and a handler as the capsule JAX
// registers.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../tensors.hpp"
#include "warpforge/error.hpp"
#include "xla/ffi/api/ffi.h"

namespace warpforge::python {

namespace ffi = xla::ffi;
using runtime::Device;
using runtime::DevicePtr;
using runtime::DType;
using runtime::Stream;
using runtime::TensorView;

inline DType dtype_of(ffi::DataType t, const char* role) {
  switch (t) {
    case ffi::DataType::F32:
      return DType::f32;
    case ffi::DataType::F16:
      return DType::f16;
    case ffi::DataType::BF16:
      return DType::bf16;
    case ffi::DataType::F8E4M3FN:
      return DType::e4m3;
    case ffi::DataType::F8E5M2:
      return DType::e5m2;
    case ffi::DataType::F8E8M0FNU:
      return DType::e8m0;
    case ffi::DataType::U8:
      return DType::u8;
    case ffi::DataType::S8:
      return DType::i8;
    case ffi::DataType::S32:
      return DType::i32;
    case ffi::DataType::S64:
      return DType::i64;
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
  explicit CallBuffers(Device device) : mappings_(std::move(device)) {}

  TensorView view(void* data, std::size_t bytes, DType dtype, std::vector<std::int64_t> shape,
                  std::vector<std::int64_t> strides = {}) {
    const DevicePtr address = mappings_.map(reinterpret_cast<DevicePtr>(data), bytes);
    return TensorView(mappings_.device(), address, dtype, std::move(shape), std::move(strides));
  }
  template <class Buffer>
  TensorView flat(const Buffer& b, const char* role) {
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                {static_cast<std::int64_t>(b.element_count())});
  }
  // A physical (L, R, C) buffer as the logical (R, C, L) matrix of row stride C.
  template <class Buffer>
  TensorView rows_cols_batch(const Buffer& b, const char* role) {
    auto d = b.dimensions();
    if (d.size() != 3)
      throw RuntimeError(std::string(role) + ": expected 3 dimensions (L, rows, cols), got " +
                         std::to_string(d.size()));
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                {d[1], d[2], d[0]}, {d[2], 1, d[1] * d[2]});
  }
  // A physical (L, N, M) buffer as the logical m-major (M, N, L).
  template <class Buffer>
  TensorView m_major(const Buffer& b, const char* role) {
    auto d = b.dimensions();
    if (d.size() != 3)
      throw RuntimeError(std::string(role) + ": expected 3 dimensions (L, N, M), got " +
                         std::to_string(d.size()));
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                {d[2], d[1], d[0]}, {1, d[2], d[1] * d[2]});
  }
  template <class Buffer>
  TensorView dense(const Buffer& b, const char* role) {
    auto d = b.dimensions();
    return view(b.untyped_data(), b.size_bytes(), dtype_of(b.element_type(), role),
                std::vector<std::int64_t>(d.begin(), d.end()));
  }

 private:
  CallMappings mappings_;
};

// Runs a handler's body (returning nothing, or an ffi::Error of its own),
// a warpforge::Error it throws (a refused call) becoming XLA's
// InvalidArgument with the refusal's message.
template <class Body>
ffi::Error refusal_as_invalid_argument(Body body) {
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      return ffi::Error::Success();
    } else {
      return body();
    }
  } catch (const Error& e) {
    return ffi::Error::InvalidArgument(e.what());
  }
}

// A CUDA-platform handler's binding: XLA's stream and the call's device
// ordinal, before the op's own arguments and attributes.
inline auto bind_on_cuda() {
  return ffi::Ffi::Bind().Ctx<ffi::PlatformStream<void*>>().Ctx<ffi::DeviceOrdinal>();
}

// A handler as jax.ffi.register_ffi_target takes it.
inline nanobind::capsule handler_capsule(XLA_FFI_Handler* handler) {
  return nanobind::capsule(reinterpret_cast<void*>(handler));
}

// Runs `body` with the call's CUDA device and XLA's stream (borrowed).
template <class Body>
ffi::Error on_xla_stream(void* stream, std::int32_t ordinal, Body body) {
  try {
    const Device device = cuda_device(ordinal);
    Stream s = Stream::borrow(device, reinterpret_cast<std::uintptr_t>(stream));
    return body(device, &s);
  } catch (const Error& e) {
    return ffi::Error::Internal(e.what());
  }
}

// A handler binding with `args` buffer arguments, then `rets` buffer results
// appended (XLA FFI's Arg/Ret, one a buffer): the handlers' signatures name
// their counts, not a run of identical calls.
template <int args, int rets, class Binding>
auto with_buffers(Binding&& binding) {  // by reference: XLA's Binding cannot be moved
  static_assert(args >= 0 && rets >= 0 && args + rets > 0);
  if constexpr (args + rets == 1) {
    if constexpr (args == 1)
      return std::move(binding).template Arg<ffi::AnyBuffer>();
    else
      return std::move(binding).template Ret<ffi::AnyBuffer>();
  } else if constexpr (args > 0) {
    return with_buffers<args - 1, rets>(std::move(binding).template Arg<ffi::AnyBuffer>());
  } else {
    return with_buffers<0, rets - 1>(std::move(binding).template Ret<ffi::AnyBuffer>());
  }
}

}  // namespace warpforge::python
