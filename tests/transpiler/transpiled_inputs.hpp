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
  int raw_calls;  // k.inst(...) and k.emit(...) calls left in its C++: instructions no typed
                  // wrapper wrote
};

const std::vector<TranspiledInput>& transpiled_inputs();
