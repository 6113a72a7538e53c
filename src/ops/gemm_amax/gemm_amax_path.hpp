// The block-scaled GEMM + amax kernel family behind ops::GemmAmax: what each
// kernel refuses and how it compiles into something that runs. In the order
// GemmAmax tries them: skinny (small M, B streamed through registers), sm90a
// (TMA + wgmma), sm80 (mma.sync, in-kernel dequantization), which runs
// everything the rules allow.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gemm_amax_problem.hpp"
#include "skinny_gemm_amax_kernel.hpp"
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
  // The configuration it would run (tile, splits, scheme), for describe().
  virtual std::string configuration(const GemmAmaxProblem& problem, const runtime::Device& device) const = 0;
  // Global workspace the launch allocates beside the tensors.
  virtual std::size_t workspace_bytes(const GemmAmaxProblem& problem, const runtime::Device& device) const = 0;
  virtual std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& problem,
                                                  const runtime::Device& device) const = 0;
};

const GemmAmaxPath& skinny_gemm_amax_path();
const GemmAmaxPath& sm90a_gemm_amax_path();
const GemmAmaxPath& sm80_gemm_amax_path();

// The skinny path's configuration (warps, row tiles, splits) for a problem on a device.
SkinnyGemmAmaxTiling skinny_gemm_amax_tiling(const GemmAmaxProblem& problem, const runtime::Device& device);

// The sm90a path's kernel configuration (tile, split-K, stages) for a
// problem on a device.
Sm90aGemmAmaxTiling sm90a_gemm_amax_tiling(const GemmAmaxProblem& problem, const runtime::Device& device);

}  // namespace warpforge::ops
