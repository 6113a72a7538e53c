// warpforge._warpforge: the C++ library as a Python extension module. The
// Python package (python/warpforge) marshals framework tensors into it.
#include "bindings.hpp"

NB_MODULE(_warpforge, m) {
  m.doc() = "warpforge's C++ library (the warpforge package wraps it; use that)";
  warpforge::python::bind_errors(m);
  warpforge::python::bind_runtime(m);
  warpforge::python::bind_ops(m);
  warpforge::python::bind_dsl(m);
#ifdef WARPFORGE_JAX_FFI
  warpforge::python::bind_jax(m);
#endif
}
