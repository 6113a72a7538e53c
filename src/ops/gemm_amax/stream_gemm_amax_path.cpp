// The stream path of GemmAmax: decode (a few tokens), where the GEMM is
// bound by reading B once, on the grouped GEMM's stream kernel
// (grouped_gemm/stream_grouped_kernel.hpp) as one group. B's codes and SFB
// are read as GemmAmax takes them (NativeWeights: k-major rows, the 128x4
// scale layout) into the same stage layout, conversion and mma loop as the
// grouped GEMM's packed weights; A goes to bf16 by GemmAmax's pre-pass
// first (dequantize_kernel.hpp; for FP4 in the order the codes' conversion
// pairs them). Only the A side differs from the weight-only grouped GEMM.
#include <limits>

#include "../grouped_gemm/grouped_gemm_path.hpp"
#include "gemm_amax_path.hpp"
#include "warpforge/ptx/target.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// Automatic selection takes the stream kernel up to this M (the issue's
// decode sizes, M = 1 to 64 at N = K = 8192: docs/PERFORMANCE.md).
constexpr std::int64_t kStreamAutoMaxM = 64;

// The one-group grouped problem that is this GEMM: A (M, K) codes with SFA,
// B (N, K) codes as they lie with SFB, D = C (M, N) n-major, amax.
GroupedGemmProblem grouped_problem(const GemmAmaxProblem& p) {
  GroupedGemmProblem g;
  g.m = p.m, g.n = p.n, g.k = p.k, g.groups = 1;
  g.a_dtype = g.b_dtype = p.ab_dtype;
  g.d_dtype = p.c_dtype, g.sf_dtype = p.sf_dtype, g.vec = p.vec;
  g.scaled_a = g.packed_b = g.native_b = g.amax = true;
  g.has_offsets = false;
  g.a = {true, p.a.row, 0};
  g.b = {false, p.b.row, 0};  // (K x N) with K contiguous: rows of B p.b.row apart
  g.d = {true, p.c.row, 0};
  return g;
}

class StreamAmaxLaunch final : public GemmAmaxLaunch {
 public:
  explicit StreamAmaxLaunch(std::unique_ptr<GroupedGemmLaunch> launch) : launch_(std::move(launch)) {}

  void run(const GemmAmaxOperands& o, runtime::Stream* stream) override {
    launch_->run({o.a, o.b, nullptr, o.c, &o.sfa, &o.sfb, &o.amax}, o.workspace, stream);
  }

 private:
  std::unique_ptr<GroupedGemmLaunch> launch_;
};

class StreamAmaxPath final : public GemmAmaxPath {
 public:
  std::string_view name() const override { return "stream"; }

  std::vector<std::string> refusals(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    std::vector<std::string> why;
    // mul.bf16x2 (the conversions' exact multiply) needs sm_90 (PTX ISA 9.7.4.2).
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " + std::string(ptx::name(device.target())) +
                    "; the stream kernel needs sm_90a (compute capability 9.0)");
    if (p.l != 1)
      why.push_back("L " + std::to_string(p.l) + ": the stream kernel runs one batch (L = 1)");
    if (p.k % 64 != 0)
      why.push_back("K " + std::to_string(p.k) + ": the stream kernel takes K a multiple of 64 (a lane's piece of a row)");
    if (p.ab_dtype != DType::e4m3 && p.ab_dtype != DType::e5m2 && p.ab_dtype != DType::e2m1)
      why.push_back("A and B are " + std::string(runtime::name(p.ab_dtype)) +
                    "; the stream kernel takes FP8 (e4m3, e5m2) or FP4 (e2m1) data");
    if (p.c_dtype != DType::f32 && p.c_dtype != DType::bf16 && p.c_dtype != DType::f16)
      why.push_back("C is " + std::string(runtime::name(p.c_dtype)) + "; the stream kernel writes f32, bf16 or f16 C");
    if (p.c.col != 1 && p.n > 1)
      why.push_back("C is m-major: the stream kernel writes n-major C (c_major n)");
    const KMajorOperandRule rule{.kernel = "the stream kernel", .loads = "16-byte copies"};
    check_k_major_operand(why, "A", p.ab_dtype, p.a, p.l, rule);
    check_k_major_operand(why, "B", p.ab_dtype, p.b, p.l, rule);
    if (p.tile)
      why.push_back("mma tile " + std::to_string(p.tile->m) + "x" + std::to_string(p.tile->n) +
                    ": the stream kernel has no mma tile option");
    if (p.cluster && (p.cluster->m != 1 || p.cluster->n != 1))
      why.push_back("cluster shape " + std::to_string(p.cluster->m) + "x" + std::to_string(p.cluster->n) +
                    ": the stream kernel runs without clusters");
    const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    if (p.m > limit || p.n > limit || p.k > limit)
      why.push_back("M, N or K above 2^31 - 1: the stream kernel indexes them with 32-bit registers");
    return why;
  }

  std::optional<std::string> passed_over(const GemmAmaxProblem& p, const runtime::Device&) const override {
    if (p.m <= kStreamAutoMaxM) return std::nullopt;
    return "M " + std::to_string(p.m) + ": automatic selection takes the stream kernel up to M = " +
           std::to_string(kStreamAutoMaxM) + " (decode)";
  }

  std::string configuration(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    return stream_grouped_gemm_path().configuration(grouped_problem(p), device);
  }

  std::size_t workspace_bytes(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    return stream_grouped_gemm_path().workspace_bytes(grouped_problem(p), device);
  }

  std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& p, const runtime::Device& device,
                                          bool own_workspace) const override {
    return std::make_unique<StreamAmaxLaunch>(
        stream_grouped_gemm_path().compile(grouped_problem(p), device, own_workspace));
  }
};

}  // namespace

const GemmAmaxPath& stream_gemm_amax_path() {
  static const StreamAmaxPath path;
  return path;
}

}  // namespace warpforge::ops
