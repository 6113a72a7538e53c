// One attention kernel family behind ops::Attention and
// ops::AttentionBackward: what it refuses, how it describes its choice, and
// how it compiles into something that runs.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attention_problem.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::ops {

// The forward's operands' data addresses, in Attention::execute_at's order
// (Q, K, V, O, lse, cu_seqlens_q, cu_seqlens_k; 0: not given).
using AttentionAddresses = std::array<runtime::DevicePtr, 7>;

// A compiled forward: the problem is fixed, a run gives only the data's
// addresses. Runs may come from several threads.
class AttentionLaunch {
 public:
  virtual ~AttentionLaunch() = default;
  virtual void run(const AttentionAddresses& at, runtime::Stream* stream) = 0;
};

class AttentionBackwardLaunch {
 public:
  virtual ~AttentionBackwardLaunch() = default;
  // workspace: workspace_bytes() or more, 16-byte aligned.
  virtual void run(const AttentionBackwardTensors& t, runtime::DevicePtr workspace,
                   runtime::Stream* stream) = 0;
};

template <class Launch>
class AttentionPathOf {
 public:
  virtual ~AttentionPathOf() = default;
  virtual AttentionKernel kind() const = 0;
  // Every reason it cannot run the problem on the device (empty: it can).
  virtual std::vector<std::string> refusals(const AttentionProblem& p, const runtime::Device& device) const = 0;
  // The configuration it would run ("64x64 blocks, 4 warps").
  virtual std::string configuration(const AttentionProblem& p, const runtime::Device& device) const = 0;
  virtual std::size_t workspace_bytes(const AttentionProblem& /*p*/) const { return 0; }
  virtual std::unique_ptr<Launch> compile(const AttentionProblem& p, const runtime::Device& device) const = 0;
};

using AttentionPath = AttentionPathOf<AttentionLaunch>;
using AttentionBackwardPath = AttentionPathOf<AttentionBackwardLaunch>;

// The families, defined beside their kernels.
const AttentionPath& sm90a_attention_path();
const AttentionPath& sm80_attention_path();
const AttentionBackwardPath& sm90a_attention_backward_path();
const AttentionBackwardPath& sm80_attention_backward_path();

// The families, most preferred first (attention_paths.cpp): automatic takes
// the first that accepts the problem.
const std::vector<const AttentionPath*>& attention_paths();
const std::vector<const AttentionBackwardPath*>& attention_backward_paths();

}  // namespace warpforge::ops
