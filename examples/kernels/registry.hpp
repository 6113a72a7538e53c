// The built-in example kernels, by name: what `warpforge ptx --list` shows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::examples {

struct BuiltinKernel {
  std::string name;
  std::string description;
  ptx::Target default_target;
  std::function<ptx::Module(ptx::Target)> build;
};

const std::vector<BuiltinKernel>& builtin_kernels();
const BuiltinKernel* find_builtin(const std::string& name);

}  // namespace warpforge::examples
