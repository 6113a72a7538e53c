// One .entry or .func with a body, as a C++ function that builds it with the
// DSL: `ptx::Function kernel_name() { Kernel k(...); ...; return fn; }`.
#pragma once

#include <string>

#include "warpforge/ptx/function.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::transpiler {

struct FunctionSource {
  std::string text;         // the C++ function definition
  bool uses_slice = false;  // whether it calls the generated file's slice() helper
  bool uses_loc = false;    // whether it calls the generated file's loc() helper
};

// The loc() helper's definition, written once into a file that uses it.
extern const char* const kLocHelper;

// `dsl_target` is the target the Kernel is built for; `cpp_name` the C++
// function's name.
FunctionSource write_function(const ptx::Function& f, ptx::Target dsl_target, const std::string& cpp_name);

}  // namespace warpforge::transpiler
