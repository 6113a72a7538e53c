// One block-scaled GEMM + amax kernel family behind ops::GemmAmax: what it
// refuses and how it compiles into something that runs. The sm80 path
// (mma.sync, in-kernel dequantization) runs everything; the sm90a path (TMA +
// wgmma) runs what it accepts, ahead of sm80.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gemm_amax_problem.hpp"
#include "sm90a_gemm_amax_kernel.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// The data of one execution (the views match the compiled problem).
struct GemmAmaxOperands {
  const runtime::TensorView &a, &b, &sfa, &sfb, &c, &amax;
};

class GemmAmaxLaunch {
 public:
  virtual ~GemmAmaxLaunch() = default;
  virtual void run(const GemmAmaxOperands& operands, runtime::Stream* stream) = 0;
};

class GemmAmaxPath {
 public:
  virtual ~GemmAmaxPath() = default;
  virtual std::string_view name() const = 0;
  // Every reason this path cannot run the problem on the device. Called on
  // every problem, also one describe_gemm_amax refused (then partly filled).
  virtual std::vector<std::string> refusals(const GemmAmaxProblem& problem,
                                            const runtime::Device& device) const = 0;
  virtual std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& problem,
                                                  const runtime::Device& device) const = 0;
};

const GemmAmaxPath& sm80_gemm_amax_path();
const GemmAmaxPath& sm90a_gemm_amax_path();

// The sm90a path's kernel configuration (tile, split-K, stages) for a
// problem on a device.
Sm90aGemmAmaxTiling sm90a_gemm_amax_tiling(const GemmAmaxProblem& problem, const runtime::Device& device);

}  // namespace warpforge::ops
