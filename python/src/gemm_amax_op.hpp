// The GemmAmax object the extension hands out: ops::GemmAmax with the
// description its samples fixed, run from views (Python tensors), from bare
// data addresses (the torch operator's fast path) or from XLA FFI buffers.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "warpforge/ops/gemm_amax.hpp"

namespace warpforge::python {

class GemmAmaxOp {
 public:
  // Views in the order A, B, SFA, SFB, C, amax.
  using Views = std::array<runtime::TensorView, 6>;

  GemmAmaxOp(const Views& samples, const ops::GemmAmaxOptions& options);

  std::vector<std::string> check_support() const { return op_.check_support(); }
  std::string kernel_name() const { return std::string(op_.kernel_name()); }
  std::string describe() const { return op_.describe(); }
  std::size_t workspace_bytes() const { return op_.workspace_bytes(); }
  void compile() { op_.compile(); }
  const Views& samples() const { return samples_; }
  // With zero_amax, amax is set to +0.0 on the stream first (one memset).
  void run(const Views& views, runtime::Stream* stream, bool zero_amax);

 private:
  Views samples_;  // descriptions only: the samples' memory is not kept
  ops::GemmAmax op_;
};

// Sets options.precision ("exact", "fast") and options.kernel ("auto",
// "skinny", "sm90a", "sm80") from their names; OpsError for others.
void set_gemm_amax_choices(ops::GemmAmaxOptions& options, const std::string& precision,
                           const std::string& kernel);

// The compiled op for this description, made once and kept.
std::shared_ptr<GemmAmaxOp> cached_gemm_amax_op(const GemmAmaxOp::Views& views,
                                                const ops::GemmAmaxOptions& options);

}  // namespace warpforge::python
