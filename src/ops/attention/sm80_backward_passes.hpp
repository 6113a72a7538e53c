// What every attention backward runs around its dK/dV kernel: the sm80
// rows kernel before it (D = rowsum(dO ∘ O) into the workspace, and the
// zeroed dq_accum in fast mode), and after it the finish kernel (dQ =
// scale·dq_accum, fast mode) or the dq kernel (deterministic mode); and the
// parameter list the backward kernels share (sm80_backward_kernels.hpp).
// The sm80 and sm90a dK/dV kernels both run between these passes.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "attention_problem.hpp"
#include "sm80_backward_kernels.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {

// A run's arguments: the varlen offsets (Q where dense: unread) and the
// workspace's parts; common() appends, after a kernel's pointers, the
// parameters every backward kernel takes (seq_q .. window_right).
struct BackwardArgs {
  BackwardArgs(const AttentionProblem& p, const AttentionBackwardTensors& t, runtime::DevicePtr workspace);
  std::vector<runtime::Arg> common(std::vector<runtime::Arg> args,
                                   std::initializer_list<const AttentionStrides*> strides) const;
  runtime::Arg cu_q, cu_k, delta, dq_accum;

 private:
  const AttentionProblem& p_;
};

class Sm80BackwardPasses {
 public:
  Sm80BackwardPasses(const runtime::Device& device, const AttentionProblem& p);
  void before(const AttentionBackwardTensors& t, runtime::DevicePtr workspace, runtime::Stream* stream);
  void after(const AttentionBackwardTensors& t, runtime::DevicePtr workspace, runtime::Stream* stream);
  // Every reason the passes cannot run the problem on the device.
  static std::vector<std::string> refusals(const AttentionProblem& p, const runtime::Device& device);

 private:
  runtime::LaunchConfig rows_config() const;
  AttentionProblem p_;
  Sm80BackwardSpec spec_;
  runtime::Module rows_, dq_;
};

}  // namespace warpforge::ops
