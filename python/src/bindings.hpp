// The parts of the extension module warpforge._warpforge, each binding one
// area of the C++ API; module.cpp calls them in this order.
#pragma once

#include <nanobind/nanobind.h>

namespace warpforge::python {

void bind_errors(nanobind::module_& m);
void bind_runtime(nanobind::module_& m);
void bind_ops(nanobind::module_& m);
void bind_dsl(nanobind::module_& m);
// The XLA FFI handlers, where the build found JAX's headers (WARPFORGE_JAX_FFI).
void bind_jax(nanobind::module_& m);

}  // namespace warpforge::python
