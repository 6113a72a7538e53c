// The GroupedGemm object the extension hands out: ops::GroupedGemm with the
// description its samples fixed, run from views (Python tensors, XLA FFI
// buffers), and the one cache of compiled GroupedGemms that
// warpforge.grouped_mm, torch.ops.warpforge.grouped_mm and the XLA FFI
// handler of warpforge.jax.ragged_dot share.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "warpforge/ops/grouped_gemm.hpp"

namespace warpforge::python {

class GroupedGemmOp {
 public:
  // Views in the order A, B, offsets, D, SFA, SFB, amax (absent ones empty).
  using Views = std::array<std::optional<runtime::TensorView>, 7>;

  GroupedGemmOp(const Views& samples, const ops::GroupedGemmOptions& options);

  std::vector<std::string> check_support() const { return op_.check_support(); }
  std::string kernel_name() const { return std::string(op_.kernel_name()); }
  std::string describe() const { return op_.describe(); }
  std::size_t workspace_bytes() const { return op_.workspace_bytes(); }
  void compile() { op_.compile(); }
  // One run at a time: the op's workspace (the split-K sums) is one per op,
  // and every caller of a description shares the op.
  void run(const Views& views, runtime::Stream* stream);
  // run() on other data of the samples' description (A, B, offsets, D:
  // torch's bf16 operator, which has no scales or amax): their data
  // addresses, the offsets' ignored where the samples had none.
  void run_at(const std::array<std::uint64_t, 4>& addresses, runtime::Stream* stream);
  // Bytes from each of those samples' first element to the end of its last
  // (0 where absent): what the simulator maps for run_at.
  std::array<std::uint64_t, 4> extents() const;
  // The samples' device (where run_at's addresses live).
  const runtime::Device& device() const { return samples_[0]->device(); }

 private:
  Views samples_;  // descriptions only: the samples' memory is not kept
  ops::GroupedGemm op_;
  std::mutex run_mutex_;
};

// The tensors of `views` as the op takes them (A, B, D present).
ops::GroupedGemmTensors grouped_tensors(const GroupedGemmOp::Views& views);

// The options from the package's spellings: out_dtype a warpforge dtype
// name, kernel "auto", "stream" or "sm80"; OpsError naming the value for others.
ops::GroupedGemmOptions grouped_gemm_options(std::string_view out_dtype, int sf_vec_size, std::string_view kernel);

// The compiled op for this description, made once and kept.
std::shared_ptr<GroupedGemmOp> cached_grouped_gemm_op(const GroupedGemmOp::Views& views,
                                                      const ops::GroupedGemmOptions& options);

}  // namespace warpforge::python
