// The inputs the build transpiled for the round-trip test (transpiler.cmake):
// each with the function the generated C++ defines.
#pragma once

#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"

struct TranspiledInput {
  std::string name;      // built-in kernel name, or the corpus file's label
  std::string ptx_file;  // the PTX file transpiled; empty for a built-in kernel
  warpforge::ptx::Module (*build)();
};

const std::vector<TranspiledInput>& transpiled_inputs();
