// The GemmAmax object the extension hands out: ops::GemmAmax with the
// description its samples fixed, run from views (Python tensors), from bare
// data addresses (the torch operator's fast path) or from XLA FFI buffers.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
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
  // run() on other data of the samples' description: six data addresses
  // (the torch operators' path, which passes data pointers only).
  void run_at(const std::array<std::uint64_t, 6>& addresses, runtime::Stream* stream,
              bool zero_amax);

 private:
  Views samples_;  // descriptions only: the samples' memory is not kept
  ops::GemmAmax op_;
  // One run at a time: the op's workspace (split-K sums, the swapped
  // kernel's copy of A) is one per op, and the package shares an op among
  // every caller of its description (op_cache.hpp): XLA's host devices call
  // it from several threads at once on one simulator, where a run executes
  // in the calling thread. (On a GPU a run only enqueues on the stream it
  // is given: one op's launches belong on one stream, as GemmAmax::execute
  // documents.)
  std::mutex run_mutex_;
};

// The options from the values the package's callers pass (the cuDNN
// frontend's names): c_major "m" or "n", precision "exact" or "fast", kernel
// "auto", "skinny", ...; OpsError naming the value for others.
ops::GemmAmaxOptions gemm_amax_options(runtime::DType c_dtype, std::string_view c_major,
                                       runtime::DType acc_dtype,
                                       std::optional<ops::GemmAmaxTile> mma_tile,
                                       std::optional<ops::GemmAmaxTile> cluster, int sf_vec_size,
                                       std::string_view precision, std::string_view kernel);
ops::CMajor c_major_named(std::string_view c_major);

// gemm_amax's C as the cuDNN frontend allocates it: (rows, cols, batches), or
// (rows, ceil(cols / 2), batches) bytes for FP4; strides in elements.
struct CLayout {
  std::array<std::int64_t, 3> shape, strides;
};
CLayout gemm_amax_c_layout(std::int64_t rows, std::int64_t cols, std::int64_t batches,
                           ops::CMajor c_major, runtime::DType c_dtype);

// The compiled op for this description, made once and kept.
std::shared_ptr<GemmAmaxOp> cached_gemm_amax_op(const GemmAmaxOp::Views& views,
                                                const ops::GemmAmaxOptions& options);

}  // namespace warpforge::python
