// The ops' kernels as `warpforge ptx` prints them. Each op specialises its
// kernel on the problem (shapes, dtypes, majorness), so each entry builds
// one kernel for one sample problem, named in its description. Today these
// are the experimental sm_100a kernels, which no GPU here can run but
// anyone can read and assemble.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "warpforge/ptx/module.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::ops {

struct KernelSample {
  std::string name;
  std::string description;  // the kernel and its sample problem
  ptx::Target target;       // the only target it is built for
  std::function<ptx::Module()> build;
};

const std::vector<KernelSample>& kernel_samples();

}  // namespace warpforge::ops
