// The parts of the extension module warpforge._warpforge, each binding one
// area of the C++ API; module.cpp calls them in this order.
#pragma once

#include <nanobind/nanobind.h>

#include <exception>

namespace warpforge::python {

void bind_errors(nanobind::module_& m);
void bind_runtime(nanobind::module_& m);
void bind_ops(nanobind::module_& m);
void bind_attention(nanobind::module_& m);  // attention_bindings.cpp
// The grouped GEMM of mixture-of-experts layers (grouped_gemm_bindings.cpp).
void bind_grouped_gemm(nanobind::module_& m);
void bind_dsl(nanobind::module_& m);
// The row ops: normalizations, softmax, SwiGLU, cross-entropy, norm + quantize (row_ops.hpp).
void bind_row_ops(nanobind::module_& m);
// PTX text loaded and launched with packed parameters (warpforge.triton).
void bind_triton(nanobind::module_& m);
void bind_ptx(nanobind::module_& m);   // the PTX vocabulary: warpforge._warpforge.ptx
void bind_tile(nanobind::module_& m);  // tile/ and layout/: warpforge._warpforge.tile, .layout
// The XLA FFI handlers, where the build found JAX's headers (WARPFORGE_JAX_FFI).
void bind_jax(nanobind::module_& m);
void bind_attention_jax(nanobind::module_& m);  // jax/attention_jax_ffi.cpp, after bind_jax
void bind_jax_row_ops(nanobind::module_& m);  // the row ops' handler (jax/row_ops_ffi.cpp)
// The capsule the torch extension reaches this module through (torch_bridge.hpp).
void bind_torch_bridge(nanobind::module_& m);

// Sets the Python error for a C++ exception as the module's translator does
// (a warpforge::Error as its warpforge.* class; others as RuntimeError).
// Needs the GIL.
void set_python_error(const std::exception_ptr& p);

}  // namespace warpforge::python
