// The pre-pass path of GemmAmax, for large M: A and B converted to bf16 into
// a workspace by a memory-bound pre-pass (dequantize_kernel.hpp), exactly,
// then the bf16 sm90a GEMM (src/ops/gemm/sm90a_kernel.hpp) with its amax
// epilogue writes C and folds max |C| before C's conversion. Where M is
// large the GEMM's tensor-core time dwarfs the pre-pass's bytes, and the
// bf16 kernel runs at the bf16 rate, faster than converting codes inside the
// mainloop (the sm90a path's converting warpgroups).
#include <algorithm>
#include <limits>

#include "../gemm/gemm_path.hpp"
#include "dequantize_kernel.hpp"
#include "gemm_amax_path.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// Automatic selection takes this path from this many rows (M x L): below,
// the swapped kernel is faster (measured on an H100 at N = K = 8192 in one
// run, docs/PERFORMANCE.md, swapped kernel v5: MXFP8 M = 2048 0.82x cuBLAS
// bf16 here, 0.87x there; M = 3072 0.87x here, 0.85x there; M = 4096 0.90x
// here, 0.85x there).
constexpr std::int64_t kPrepassMinRows = 3072;

// B's copy starts on a 1 KB boundary after A's.
std::int64_t b_offset(const GemmAmaxProblem& p) {
  return (dequantized_bytes(p, BlockScaledOperand::a) + 1023) / 1024 * 1024;
}
std::size_t prepass_workspace_bytes(const GemmAmaxProblem& p) {
  return static_cast<std::size_t>(b_offset(p) + dequantized_bytes(p, BlockScaledOperand::b));
}

// The bf16 GEMM of the two copies: A' (M, K) row-major and B' (K, N)
// column-major, both with leading dimension K' and one copy per batch; D is
// GemmAmax's C, row-major (N-major).
GemmProblem bf16_problem(const GemmAmaxProblem& p) {
  const std::int64_t ld = dequantized_row(p);
  return {.m = p.m,
          .n = p.n,
          .k = p.k,
          .l = p.l,
          .ab_dtype = DType::bf16,
          .d_dtype = p.c_dtype,
          .a = {.row_major = true, .ld = ld, .batch_stride = p.m * ld},
          .b = {.row_major = false, .ld = ld, .batch_stride = p.n * ld},
          .d = {.row_major = true, .ld = p.c.row, .batch_stride = p.c.batch},
          .amax = true};
}

class PrepassLaunch final : public GemmAmaxLaunch {
 public:
  PrepassLaunch(const GemmAmaxProblem& p, const runtime::Device& device, bool own_workspace)
      : p_(p),
        device_(device),
        dequantize_a_(device, build_dequantize_kernel(p, BlockScaledOperand::a)),
        dequantize_b_(device, build_dequantize_kernel(p, BlockScaledOperand::b)),
        gemm_problem_(bf16_problem(p)),
        gemm_(sm90a_gemm_path().compile(gemm_problem_, sm90a_gemm_path().heuristic(gemm_problem_, device), device)),
        workspace_(device, prepass_workspace_bytes(p), own_workspace) {}

  void run(const GemmAmaxOperands& o, runtime::Stream* stream) override {
    const runtime::DevicePtr a_copy = workspace_.address(o), b_copy = a_copy + b_offset(p_);
    launch_dequantize(dequantize_a_, p_, BlockScaledOperand::a, DequantizedOrder::k, o.a, o.sfa, a_copy, stream);
    launch_dequantize(dequantize_b_, p_, BlockScaledOperand::b, DequantizedOrder::k, o.b, o.sfb, b_copy, stream);
    const std::int64_t ld = dequantized_row(p_);
    const runtime::TensorView a(device_, a_copy, DType::bf16, {p_.m, p_.k, p_.l}, {ld, 1, p_.m * ld});
    const runtime::TensorView b(device_, b_copy, DType::bf16, {p_.k, p_.n, p_.l}, {1, ld, p_.n * ld});
    gemm_->run({.a = a, .b = b, .c = nullptr, .d = o.c, .amax = &o.amax}, stream);
  }

 private:
  GemmAmaxProblem p_;
  runtime::Device device_;
  runtime::Module dequantize_a_, dequantize_b_;
  GemmProblem gemm_problem_;
  std::unique_ptr<GemmLaunch> gemm_;
  SplitKWorkspace workspace_;
};

class PrepassPath final : public GemmAmaxPath {
 public:
  std::string_view name() const override { return "prepass"; }

  std::vector<std::string> refusals(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    std::vector<std::string> why;
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " + std::string(ptx::name(device.target())) +
                    "; the prepass path's bf16 GEMM needs sm_90a (compute capability 9.0)");
    if (p.c_dtype != DType::f32 && p.c_dtype != DType::bf16 && p.c_dtype != DType::f16)
      why.push_back("C is " + std::string(runtime::name(p.c_dtype)) + "; the prepass path writes f32, bf16 or f16 C");
    if (p.c.col != 1)
      why.push_back("C is M-major; the prepass path's TMA store writes N-major C (the sm80 kernel takes M-major)");
    const KMajorOperandRule rule{.kernel = "the prepass path", .loads = "16-byte loads",
                                 .others = "the sm80 kernel takes the others"};
    check_k_major_operand(why, "A", p.ab_dtype, p.a, p.l, rule);
    check_k_major_operand(why, "B", p.ab_dtype, p.b, p.l, rule);
    if (p.tile || p.cluster)
      why.push_back("an mma tile or cluster shape was given; the prepass path's bf16 GEMM chooses its own");
    // The pre-pass puts batches on grid z (at most 65535) and counts rows,
    // scale bytes and TMA coordinates (PTX ISA 9.7.9.25.5.1) in 32 bits.
    const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    const std::int64_t scale_bytes =
        std::max(ScaleFactorLayout{p.m, p.k, p.l, p.vec}.bytes(), ScaleFactorLayout{p.n, p.k, p.l, p.vec}.bytes());
    if (p.m > limit || p.n > limit || p.k > limit || scale_bytes > limit || p.l > 65535)
      why.push_back("problem " + p.describe() +
                    ": the prepass path takes M, N, K and scale bytes up to 2^31 - 1 and L up to 65535");
    if (!why.empty()) return why;
    // What the bf16 GEMM of the copies refuses (C's strides, chiefly).
    for (const std::string& reason : sm90a_gemm_path().refusals(bf16_problem(p), device))
      why.push_back("its bf16 GEMM: " + reason);
    return why;
  }

  std::optional<std::string> passed_over(const GemmAmaxProblem& p, const runtime::Device&) const override {
    if (p.m * p.l >= kPrepassMinRows) return std::nullopt;
    return "M x L = " + std::to_string(p.m * p.l) + ": the prepass path is chosen from " +
           std::to_string(kPrepassMinRows) + " rows, where its bf16 GEMM's time outweighs the pre-pass's bytes";
  }

  std::string configuration(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    const GemmProblem g = bf16_problem(p);
    return "A and B to bf16 by a pre-pass, then the sm90a bf16 GEMM " +
           sm90a_gemm_path().heuristic(g, device).describe() + " with amax";
  }

  std::size_t workspace_bytes(const GemmAmaxProblem& p, const runtime::Device&) const override {
    return prepass_workspace_bytes(p);
  }

  std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& p, const runtime::Device& device,
                                          bool own_workspace) const override {
    return std::make_unique<PrepassLaunch>(p, device, own_workspace);
  }
};

}  // namespace

const GemmAmaxPath& prepass_gemm_amax_path() {
  static const PrepassPath path;
  return path;
}

}  // namespace warpforge::ops
