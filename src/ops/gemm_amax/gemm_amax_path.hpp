// The block-scaled GEMM + amax kernel family behind ops::GemmAmax: what each
// kernel refuses and how it compiles into something that runs. In the order
// GemmAmax tries them: stream (decode: the grouped GEMM's stream kernel),
// skinny (small M, B streamed through registers),
// prepass (large M: bf16 copies of A and B, then the bf16 GEMM), swapped
// (between: B's codes converted into wgmma's register fragments, A by a
// pre-pass), sm90a (TMA + wgmma, in-kernel conversion of both), sm80
// (mma.sync, in-kernel dequantization), which runs everything the rules allow.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gemm_amax_problem.hpp"
#include "skinny_gemm_amax_kernel.hpp"
#include "sm90a_gemm_amax_kernel.hpp"
#include "swapped_gemm_amax_kernel.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/stream.hpp"
#include "warpforge/runtime/tensor.hpp"

namespace warpforge::ops {

// The data of one execution (the views match the compiled problem);
// workspace: the caller's, or null for the launch's own.
struct GemmAmaxOperands {
  const runtime::TensorView &a, &b, &sfa, &sfb, &c, &amax;
  const runtime::TensorView* workspace = nullptr;
};

// A split-K kernel's workspace (partial sums, counters): the caller's when
// an execution brings one, else the launch's own, allocated and zero-filled
// when it is compiled (owned) — never during an execution, so that one can
// be captured in a CUDA graph. Every launch leaves its counters at zero again.
class SplitKWorkspace {
 public:
  SplitKWorkspace(const runtime::Device& device, std::size_t bytes, bool owned);
  // Appends the kernel's workspace argument (none when it needs no workspace).
  void append_arg(std::vector<runtime::Arg>& args, const GemmAmaxOperands& operands) const;
  // The workspace's address for this execution.
  runtime::DevicePtr address(const GemmAmaxOperands& operands) const;

 private:
  std::size_t bytes_;
  std::optional<runtime::Buffer> owned_;
};

// describe()'s words for a K split: "K split 4 ways (a cluster of the
// splits adds their sums in shared memory)", or through the workspace.
std::string describe_k_split(int splits, bool cluster);

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
  // Why automatic selection passes this path over although it could run
  // the problem (another is faster there); nullopt where it takes it.
  virtual std::optional<std::string> passed_over(const GemmAmaxProblem&, const runtime::Device&) const {
    return std::nullopt;
  }
  // The configuration it would run (tile, splits, scheme), for describe().
  virtual std::string configuration(const GemmAmaxProblem& problem, const runtime::Device& device) const = 0;
  // Global workspace the launch needs beside the tensors.
  virtual std::size_t workspace_bytes(const GemmAmaxProblem& problem, const runtime::Device& device) const = 0;
  // own_workspace: allocate the workspace (else every execution brings one).
  virtual std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& problem, const runtime::Device& device,
                                                  bool own_workspace) const = 0;
};

// Decode on the grouped GEMM's stream kernel (one group, B as GemmAmax takes it).
const GemmAmaxPath& stream_gemm_amax_path();
const GemmAmaxPath& skinny_gemm_amax_path();
const GemmAmaxPath& prepass_gemm_amax_path();
const GemmAmaxPath& swapped_gemm_amax_path();
const GemmAmaxPath& sm90a_gemm_amax_path();
const GemmAmaxPath& sm80_gemm_amax_path();
// Blackwell's tcgen05 kernel: experimental; automatic tries it first on
// sm_100a devices and takes it only on the simulator.
const GemmAmaxPath& sm100a_gemm_amax_path();

// The largest M that automatic selection gives the skinny kernel (0: none,
// FP8 data going to the swapped kernel); the swapped kernel takes it past that.
std::int64_t skinny_auto_max_m(const GemmAmaxProblem& problem);

// The skinny path's configuration (warps, row tiles, splits) for a problem on a device.
SkinnyGemmAmaxTiling skinny_gemm_amax_tiling(const GemmAmaxProblem& problem, const runtime::Device& device);

// The swapped path's configuration (tokens per CTA, splits, stages).
SwappedGemmAmaxTiling swapped_gemm_amax_tiling(const GemmAmaxProblem& problem, const runtime::Device& device);

// The sm90a path's kernel configuration (tile, split-K, stages) for a
// problem on a device.
Sm90aGemmAmaxTiling sm90a_gemm_amax_tiling(const GemmAmaxProblem& problem, const runtime::Device& device);

}  // namespace warpforge::ops
