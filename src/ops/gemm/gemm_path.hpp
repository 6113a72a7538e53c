// One GEMM kernel family (sm80, sm90a, sm100a) behind ops::Gemm: what it refuses,
// which configuration it would pick, which it would try when autotuning, and
// how it compiles into something that runs.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gemm_problem.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// The data of one execution (the views match the compiled problem).
struct GemmOperands {
  const runtime::TensorView& a;
  const runtime::TensorView& b;
  const runtime::TensorView* c;  // nullptr when the problem has no C
  const runtime::TensorView& d;
  float alpha = 1.0f, beta = 0.0f;
  const runtime::TensorView* amax = nullptr;  // an f32, when the problem has amax
};

// A compiled kernel for one problem and configuration.
class GemmLaunch {
 public:
  virtual ~GemmLaunch() = default;
  virtual void run(const GemmOperands& operands, runtime::Stream* stream) = 0;
};

class GemmPath {
 public:
  virtual ~GemmPath() = default;
  virtual GemmKernel kind() const = 0;
  // Whether `automatic` may choose it; false: it runs only when named (an
  // experimental kernel, such as sm100a before it has run on its GPU).
  virtual bool chosen_automatically() const { return true; }
  // Every reason this path cannot run the problem on the device (empty: it can).
  virtual std::vector<std::string> refusals(const GemmProblem& problem, const runtime::Device& device) const = 0;
  // Every reason this configuration is invalid for the path and problem.
  virtual std::vector<std::string> config_refusals(const GemmConfig& config, const GemmProblem& problem,
                                                   const runtime::Device& device) const = 0;
  virtual GemmConfig heuristic(const GemmProblem& problem, const runtime::Device& device) const = 0;
  virtual std::vector<GemmConfig> candidates(const GemmProblem& problem, const runtime::Device& device) const = 0;
  virtual std::unique_ptr<GemmLaunch> compile(const GemmProblem& problem, const GemmConfig& config,
                                              const runtime::Device& device) const = 0;
};

// The paths, defined beside their kernels.
const GemmPath& sm80_gemm_path();
const GemmPath& sm90a_gemm_path();
const GemmPath& sm100a_gemm_path();

// The paths ops::Gemm chooses among, most preferred first (gemm_paths.cpp):
// `automatic` takes the first that accepts the problem among those
// chosen_automatically(). A new path is one more entry there.
const std::vector<const GemmPath*>& gemm_paths();

}  // namespace warpforge::ops
