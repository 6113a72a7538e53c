// warpforge._warpforge: the C++ library as a Python extension module. The
// Python package (python/warpforge) marshals framework tensors into it.
#include "bindings.hpp"

NB_MODULE(_warpforge, m) {
  m.doc() = "warpforge's C++ library (the warpforge package wraps it; use that)";
  warpforge::python::bind_errors(m);
  warpforge::python::bind_runtime(m);
  warpforge::python::bind_ops(m);
  warpforge::python::bind_attention(m);
  warpforge::python::bind_grouped_gemm(m);
  warpforge::python::bind_dsl(m);
  warpforge::python::bind_row_ops(m);
  warpforge::python::bind_triton(m);
  warpforge::python::bind_ptx(m);
  warpforge::python::bind_tile(m);
  warpforge::python::bind_torch_bridge(m);
  // torch's operator registry keeps the Python functions registered with it
  // (and through them our ops and kernels) until after the interpreter has
  // shut down, so nanobind's count of live instances at exit is never zero
  // once warpforge.torch has registered operators: it turns its report off.
  m.def(
      "keep_instances_past_exit", [] { nanobind::set_leak_warnings(false); },
      "Silences nanobind's report of instances alive at exit (warpforge.torch calls it).");
#ifdef WARPFORGE_JAX_FFI
  warpforge::python::bind_jax(m);
  warpforge::python::bind_attention_jax(m);
  warpforge::python::bind_jax_row_ops(m);
#endif
}
