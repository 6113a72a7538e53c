// The skinny path of GemmAmax: the small-M kernel of
// skinny_gemm_amax_kernel.hpp, what it refuses, its tiling and its launch.
#include <algorithm>
#include <limits>
#include <optional>

#include "gemm_amax_path.hpp"
#include "skinny_gemm_amax_kernel.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {

// Automatic selection takes the skinny kernel for E2M1 data up to M = 16,
// and FP8 data only where the swapped kernel refuses it. Measured on an
// H100 at N = K = 8192 (docs/PERFORMANCE.md, block-scaled family), against
// cuBLAS bf16 in the same runs: at M = 1 / 16 MXFP8 ran 1.45-1.47 /
// 1.40-1.41x on the skinny kernel and 1.49 / 1.46-1.48x on the swapped one
// (2026-11-26, both alternated twice); NVFP4 1.86-1.90 / 1.78-1.79x against
// 1.81-1.83 / 1.81x. At M = 32 the swapped kernel wins every format (MXFP8
// 1.32-1.34x against 1.23x): every skinny CTA converts all of A's tokens
// for its rows of B, so A's conversion grows with M; the swapped kernel
// converts A once.
constexpr std::int64_t kSkinnyAutoMaxM = 16;
std::int64_t skinny_auto_max_m(const GemmAmaxProblem& p) {
  return p.ab_dtype == runtime::DType::e2m1 ? kSkinnyAutoMaxM : 0;
}

namespace {

using runtime::DType;

std::int64_t row_tiles(const GemmAmaxProblem& p, const SkinnyGemmAmaxTiling& t) {
  const std::int64_t rows = skinny_gemm_amax_cta_rows(t);
  return (p.n + rows - 1) / rows;
}

class SkinnyLaunch final : public GemmAmaxLaunch {
 public:
  SkinnyLaunch(const GemmAmaxProblem& p, const SkinnyGemmAmaxTiling& t, const runtime::Device& device,
               bool own_workspace)
      : module_(device, build_skinny_gemm_amax(p, t)),
        workspace_(device, skinny_gemm_amax_workspace_bytes(p, t), own_workspace) {
    config_.grid = {static_cast<std::uint32_t>(row_tiles(p, t)), static_cast<std::uint32_t>(t.splits),
                    static_cast<std::uint32_t>(p.l)};
    config_.block = {static_cast<std::uint32_t>(32 * t.warps)};
  }

  void run(const GemmAmaxOperands& o, runtime::Stream* stream) override {
    std::vector<runtime::Arg> args{o.a, o.b, o.sfa, o.sfb, o.c, o.amax};
    workspace_.append_arg(args, o);
    module_.launch(kSkinnyGemmAmaxKernel, config_, args, stream);
  }

 private:
  runtime::Module module_;
  runtime::LaunchConfig config_;
  // Split-K's partial sums and counters: one launch at a time uses it
  // (launches on one stream, as GemmAmax's execute documents).
  SplitKWorkspace workspace_;
};

// The largest byte (or element) offset a (rows, cols, batches) matrix reaches.
std::int64_t span(std::int64_t row, std::int64_t col, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                  std::int64_t batches) {
  return (rows - 1) * row + (cols - 1) * col + (batches - 1) * batch + 1;
}

class SkinnyPath final : public GemmAmaxPath {
 public:
  std::string_view name() const override { return "skinny"; }

  std::vector<std::string> refusals(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    std::vector<std::string> why;
    // mul.bf16x2 (the conversions' exact multiply) needs sm_90 (PTX ISA
    // 9.7.4.2); the kernel is built for sm_90a.
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " + std::string(ptx::name(device.target())) +
                    "; the skinny kernel needs sm_90a (compute capability 9.0)");
    if (p.m > kSkinnyGemmAmaxMaxM)
      why.push_back("M " + std::to_string(p.m) + ": the skinny kernel takes M <= " + std::to_string(kSkinnyGemmAmaxMaxM));
    const std::int64_t chunk = skinny_gemm_amax_chunk_codes(p);
    if (p.k % chunk != 0)
      why.push_back("K " + std::to_string(p.k) + ": the skinny kernel takes K a multiple of " + std::to_string(chunk) +
                    " (its chunk of a row)");
    if (p.ab_dtype != DType::e4m3 && p.ab_dtype != DType::e5m2 && p.ab_dtype != DType::e2m1)
      why.push_back("A and B are " + std::string(runtime::name(p.ab_dtype)) +
                    "; the skinny kernel takes FP8 (e4m3, e5m2) or FP4 (e2m1) data");
    if (p.c_dtype != DType::f32 && p.c_dtype != DType::bf16 && p.c_dtype != DType::f16)
      why.push_back("C is " + std::string(runtime::name(p.c_dtype)) + "; the skinny kernel writes f32, bf16 or f16 C");
    const KMajorOperandRule rule{.kernel = "the skinny kernel", .loads = "16-byte loads"};
    check_k_major_operand(why, "A", p.ab_dtype, p.a, p.l, rule);
    check_k_major_operand(why, "B", p.ab_dtype, p.b, p.l, rule);
    if (p.tile)
      why.push_back("mma tile " + std::to_string(p.tile->m) + "x" + std::to_string(p.tile->n) +
                    ": the skinny kernel has no mma tile option (it spans M whole)");
    if (p.cluster && (p.cluster->m != 1 || p.cluster->n != 1))
      why.push_back("cluster shape " + std::to_string(p.cluster->m) + "x" + std::to_string(p.cluster->n) +
                    ": the skinny kernel runs without clusters");
    // 32-bit offsets: bytes of A and B, elements of C, scale bytes.
    const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    const bool sized = p.m > 0 && p.n > 0 && p.k > 0 && p.l > 0 && p.vec > 0;
    if (sized) {
      const std::int64_t a = span(code_bytes(p.ab_dtype, p.a.row), 1, code_bytes(p.ab_dtype, p.a.batch), p.m,
                                  code_bytes(p.ab_dtype, p.k), p.l);
      const std::int64_t b = span(code_bytes(p.ab_dtype, p.b.row), 1, code_bytes(p.ab_dtype, p.b.batch), p.n,
                                  code_bytes(p.ab_dtype, p.k), p.l);
      const std::int64_t c = span(p.c.row, p.c.col, p.c.batch, p.m, p.n, p.l);
      const std::int64_t sf = std::max(ScaleFactorLayout{p.m, p.k, p.l, p.vec}.bytes(),
                                       ScaleFactorLayout{p.n, p.k, p.l, p.vec}.bytes());
      if (std::max({a, b, c, sf}) > limit || p.n > limit)
        why.push_back("problem " + p.describe() +
                      ": the skinny kernel addresses A, B and the scales in bytes and C in elements with 32-bit "
                      "offsets (at most 2^31 - 1)");
    }
    if (p.l > 65535)
      why.push_back("L " + std::to_string(p.l) + ": the skinny kernel puts L on grid z (at most 65535)");
    return why;
  }

  std::optional<std::string> passed_over(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    if (p.m > kSkinnyAutoMaxM)
      return "M " + std::to_string(p.m) + ": automatic selection takes the skinny kernel up to M = " +
             std::to_string(kSkinnyAutoMaxM) + " (docs/PERFORMANCE.md)";
    // FP8 data: the swapped kernel is faster wherever it runs the problem.
    if (p.m > skinny_auto_max_m(p) && swapped_gemm_amax_path().refusals(p, device).empty())
      return std::string(runtime::name(p.ab_dtype)) +
             " data: automatic selection takes the swapped kernel, faster at M = 1 and 16 (docs/PERFORMANCE.md)";
    return std::nullopt;
  }

  std::string configuration(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    const SkinnyGemmAmaxTiling t = skinny_gemm_amax_tiling(p, device);
    return std::to_string(skinny_gemm_amax_cta_rows(t)) + " rows of B x " + std::to_string(skinny_gemm_amax_tokens(p)) +
           " tokens per CTA (" + std::to_string(t.warps) + " warps x " + std::to_string(t.row_tiles) +
           " row tiles), " + describe_k_split(t.splits, false) + ", " + std::to_string(t.prefetch) +
           " chunks in flight";
  }

  std::size_t workspace_bytes(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    return skinny_gemm_amax_workspace_bytes(p, skinny_gemm_amax_tiling(p, device));
  }

  std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& p, const runtime::Device& device,
                                          bool own_workspace) const override {
    return std::make_unique<SkinnyLaunch>(p, skinny_gemm_amax_tiling(p, device), device, own_workspace);
  }
};

}  // namespace

// Four warps; K split so that the CTAs are at most two per SM (ptxas gives
// the kernel 170-255 registers, so two or three fit), each split at least 8
// chunks long. Measured on an H100 at N = K = 8192 (docs/PERFORMANCE.md,
// v3): FP8 two 16-row tiles a warp up to 16 tokens (past that their 32-byte
// pieces spill), one above; E2M1 two, one chunk ahead (198 TFLOP/s at M =
// 64 against 186 two ahead); 4 splits beat 8 (fewer partial sums), and 4
// beat 5 (the rounded-up count: a fraction of a wave more CTAs than fit).
// The splits add their sums through the workspace: as one cluster (the
// swapped kernel's way) they ran 26-29% slower at M = 1-16 (MXFP8; NVFP4 at
// 16; docs/PERFORMANCE.md, skinny kernel).
SkinnyGemmAmaxTiling skinny_gemm_amax_tiling(const GemmAmaxProblem& p, const runtime::Device& device) {
  SkinnyGemmAmaxTiling t;
  if (p.ab_dtype == DType::e2m1)
    t.prefetch = 1;
  else if (skinny_gemm_amax_tokens(p) > 16)
    t.row_tiles = 1;
  const std::int64_t sms = std::max(device.properties().sm_count, 1);
  const std::int64_t ctas = std::max<std::int64_t>(row_tiles(p, t) * p.l, 1);
  const std::int64_t chunks = std::max<std::int64_t>(p.k / skinny_gemm_amax_chunk_codes(p), 1);
  std::int64_t splits = std::clamp<std::int64_t>(2 * sms / ctas, 1, std::max<std::int64_t>(chunks / 8, 1));
  // Every split needs a chunk: (splits - 1) full ranges must leave one.
  while (splits > 1 && (splits - 1) * ((chunks + splits - 1) / splits) >= chunks) --splits;
  t.splits = static_cast<int>(splits);
  return t;
}

const GemmAmaxPath& skinny_gemm_amax_path() {
  static const SkinnyPath path;
  return path;
}

}  // namespace warpforge::ops
