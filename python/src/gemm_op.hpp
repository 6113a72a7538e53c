// The Gemm object the extension hands out: ops::Gemm with the description its
// samples fixed, run from views (Python tensors, XLA FFI buffers) or from
// bare data addresses (the torch operator's path), and the one cache of
// compiled Gemms that warpforge.gemm, torch.ops.warpforge.gemm and the XLA
// FFI handler share.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/ops/gemm.hpp"

namespace warpforge::python {

class GemmOp {
 public:
  GemmOp(const runtime::TensorView& a, const runtime::TensorView& b, const runtime::TensorView* c,
         const runtime::TensorView& d, const ops::GemmOptions& options);

  std::vector<std::string> check_support() const { return op_.check_support(); }
  void compile() { op_.compile(); }
  std::string kernel_name() const { return std::string(ops::name(op_.kernel())); }
  std::string config() const { return op_.config().describe(); }
  // The samples' device (where run_at's addresses live).
  const runtime::Device& device() const { return a_.device(); }
  void run(const runtime::TensorView& a, const runtime::TensorView& b, const runtime::TensorView* c,
           const runtime::TensorView& d, runtime::Stream* stream);
  // run() on other data of the samples' description: the data addresses of
  // A, B, C (ignored where the samples had no C) and D.
  void run_at(const std::array<std::uint64_t, 4>& addresses, runtime::Stream* stream);
  // Bytes from each sample's first element to the end of its last (A, B, C
  // (0 without one), D): what the simulator maps for run_at.
  std::array<std::uint64_t, 4> extents() const;

 private:
  runtime::TensorView a_, b_;  // descriptions only: the samples' memory is not kept
  std::optional<runtime::TensorView> c_;
  runtime::TensorView d_;
  ops::Gemm op_;
  // One run at a time: every caller of a description shares its op
  // (cached_gemm_op), and a stream-K configuration's workspace is one per
  // op (ops::Gemm::execute); on the simulator a run executes in the calling
  // thread.
  std::mutex run_mutex_;
};

// The options from the values the package's callers pass: kernel "auto",
// "sm80", "sm90a", "sm100a"; config as GemmConfig::describe() writes it.
// OpsError naming the value for others.
ops::GemmOptions gemm_options(float alpha, float beta, std::string_view kernel,
                              const std::optional<std::string>& config);

// The compiled Gemm (automatic kernel and configuration) for this
// description and alpha, beta: made once and kept.
std::shared_ptr<GemmOp> cached_gemm_op(const runtime::TensorView& a, const runtime::TensorView& b,
                                       const runtime::TensorView* c, const runtime::TensorView& d,
                                       float alpha, float beta);

}  // namespace warpforge::python
