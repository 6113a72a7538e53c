// The built-in AMD (CDNA) example kernels, by name: what `warpforge amdgpu
// --list` shows.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "warpforge/amdgpu/ir.hpp"
#include "warpforge/amdgpu/target.hpp"

namespace warpforge::examples {

struct AmdExample {
  std::string name;
  std::string description;
  std::function<amdgpu::KernelIR(amdgpu::Target)> build;
};

const std::vector<AmdExample>& amd_examples();
const AmdExample* find_amd_example(const std::string& name);

}  // namespace warpforge::examples
