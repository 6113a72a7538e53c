// The stream path of GroupedGemm: the kernel of stream_grouped_kernel.hpp,
// its tiling, and for a block-scaled A the pre-pass that converts A to
// bf16 into the workspace first (GemmAmax's, dequantize_kernel.hpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

#include "../gemm_amax/dequantize_kernel.hpp"
#include "../gemm_amax/transposed_output.hpp"
#include "grouped_gemm_path.hpp"
#include "stream_grouped_kernel.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// The most tokens a group averages (M over the groups that can have any)
// for which automatic selection streams bf16 weights. Beside the sm80 kernel
// 32 (a prediction). Beside the sm90a design 16: on an H200 (docs/
// PERFORMANCE.md, 2026-11-29) it read qwen3's experts at 0.75 of the
// read-once floor with 64 tokens a group, where the stream kernel (before
// its row-contiguous copies) reached 0.25-0.37 at 8 to 32; but the dense
// 8192² GEMM at 16 tokens, one group, ran at 0.41 of the floor on it, where
// the stream kernel reads at 0.84-0.90 up to 8 tokens a group since.
constexpr std::int64_t kStreamBf16MaxAverageTokens = 32;
constexpr std::int64_t kStreamBf16MaxAverageTokensBesideSm90a = 16;
// Packed block-scaled weights beside the sm90a path's RS design: FP4 16,
// FP8 32. On an H200 (s10 gpu-w1, automatic and named kernels, RS at
// 64-token tiles): at 32 tokens a group MXFP4 mixtral 128 tokens RS 370.5
// us against the stream kernel's 416.3, gpt-oss 1024 864.5 against 967.2,
// deepseek 1024 3,112.1 against 3,269.5; MXFP8 a tie at 32 (mixtral 128
// 673.4 against 717.5, gpt-oss 1,551.1 against 1,565.5, deepseek 5,680.0
// against 5,297.1) and the stream kernel 10% faster at 24 (mixtral 96:
// 596.0 against 658.0). At 16 a group the stream kernel was faster in every
// format (session 10 before its window: MXFP4 mixtral 64 265 against 336,
// deepseek 512 2,103 against 2,750; MXFP8 by 1.5-2x).
constexpr std::int64_t kStreamFp4MaxAverageTokensBesideSm90a = 16;
constexpr std::int64_t kStreamFp8MaxAverageTokensBesideSm90a = 32;

// The block-scaled A as GemmAmax's pre-pass reads it: (M, K, 1), k-major.
GemmAmaxProblem a_problem(const GroupedGemmProblem& p) {
  GemmAmaxProblem g;
  g.m = p.m, g.n = p.n, g.k = p.k, g.l = 1;
  g.ab_dtype = p.a_dtype, g.sf_dtype = p.sf_dtype, g.c_dtype = DType::bf16, g.vec = p.vec;
  g.a = {p.a.ld, 1, p.m * p.a.ld};
  return g;
}

// The order of A's bf16 copy: K, or for GemmAmax's FP4 B (native, its
// codes in nibble order) K with each 8 paired as its conversion pairs them.
DequantizedOrder a_order(const GroupedGemmProblem& p) {
  return p.native_b && p.b_dtype == DType::e2m1 ? DequantizedOrder::nibble_pairs : DequantizedOrder::k;
}

// Where the bf16 copy of a block-scaled A ends in the workspace (the split
// sums follow, 1 KB aligned); 0 without one.
std::size_t a_copy_bytes(const GroupedGemmProblem& p) {
  if (!p.scaled_a) return 0;
  return static_cast<std::size_t>((dequantized_bytes(a_problem(p), BlockScaledOperand::a) + 1023) / 1024 * 1024);
}

// The K split of `units` units of `chunks` chunks over `ctas` persistent
// CTAs: the split whose busiest CTA streams the fewest chunks (its work
// items, ceil(units·splits / ctas), times a split's chunks), the fewest
// splits among equals, each item counted kItemOverheadChunks longer (its
// pipeline's fill and its partial sums); each split at least 4 chunks (1024 codes) long
// unless K has fewer, and every split given a chunk. Filling the CTAs
// alone is not enough: dense 8192² MXFP4 at one token (64 units, 32
// chunks, 396 CTAs) took 7 splits, 448 items, whose 52 past the first wave
// ran 5 chunks more nearly alone; 6 splits make one wave of 6 chunks.
constexpr std::int64_t kItemOverheadChunks = 2;
int splits_for(std::int64_t units, std::int64_t ctas, std::int64_t chunks) {
  const std::int64_t most = std::max<std::int64_t>(chunks / 4, 1);
  std::int64_t best = 1, best_cost = std::numeric_limits<std::int64_t>::max();
  for (std::int64_t s = 1; s <= most; ++s) {
    const std::int64_t per_split = (chunks + s - 1) / s;
    if ((s - 1) * per_split >= chunks) continue;  // a split with no chunk
    const std::int64_t cost = (units * s + ctas - 1) / ctas * (per_split + kItemOverheadChunks);
    if (cost < best_cost) best = s, best_cost = cost;
  }
  return static_cast<int>(best);
}

// For experiments on a GPU (scripts/gpu-moe.sh's sweep):
// WARPFORGE_STREAM_TILING=W,R,S[,K[,P]] sets the warps, row tiles a warp
// and stages of every stream kernel of packed weights compiled after it,
// with K its K split (0 or none: splits_for's), with P the CTAs an SM (the
// registers follow: .minnctapersm); WARPFORGE_STREAM_TILING_BF16 of bf16
// weights; build_stream_grouped refuses a tiling it cannot build. Returns
// the K split asked for, 0 where none. (The splits' sums in a cluster's
// shared memory measured slower on an H200, session 5: 62 clusters of 8
// fit at once where dense 8192² at one token needs 66; removed, see
// docs/experiments/2026-11-29-grouped-decode.md.)
int tiling_from_environment(StreamGroupedTiling& t, bool packed) {
  const char* name = packed ? "WARPFORGE_STREAM_TILING" : "WARPFORGE_STREAM_TILING_BF16";
  const char* text = std::getenv(name);
  if (!text || !*text) return 0;
  int warps = 0, row_tiles = 0, stages = 0, splits = 0, per_sm = 0;
  char end = 0;
  const int read = std::sscanf(text, "%d,%d,%d,%d,%d%c", &warps, &row_tiles, &stages, &splits, &per_sm, &end);
  if (read < 3 || read > 5 || splits < 0 || (read == 5 && (per_sm < 1 || per_sm > 32)))
    throw OpsError(std::string(name) + " '" + text +
                   "': expected warps,row_tiles,stages[,splits[,ctas_per_sm]] (three to five integers, splits "
                   "0 or more, CTAs an SM 1-32, e.g. 4,2,3 or 4,2,2,8 or 4,2,2,0,5)");
  t.warps = warps, t.row_tiles = row_tiles, t.stages = stages;
  if (read == 5) t.ctas_per_sm = per_sm;
  return read >= 4 ? splits : 0;
}

// The tiling: FP4 two 16-row tiles a warp (a warp's pieces are 32 bytes a
// row), FP8 and bf16 one; 4 warps, bf16 8 up to 16 tokens a unit (its
// 36 KB stages leave one CTA an SM: two warps a scheduler rather than one;
// three stages of 8 warps and 32 tokens would pass the 227 KB), packed
// weights 8 at 16 tokens (2 CTAs an SM, still 16 warps: a CTA's copies of
// A, a third of a chunk's bytes at 16 tokens, serve twice the rows, and
// L2 carries half as many; on an H200, session 9, dense 8192² at 16 tokens
// MXFP4 23.7 us against 26.2, MXFP8 30.1 against 39.2); tokens a unit from the
// tokens a group averages over the groups that can have any (M / min(G,
// M)); 3 stages (two chunks in flight beyond the one multiplied), or 2
// where that fits more CTAs an SM (FP4 and FP8 up to 16 tokens: 4 CTAs, 16
// warps, rather than 3). The profile found the loop latency-bound with 8-12
// warps an SM, and 4 CTAs with one chunk in flight each still hold ~70 KB
// of weights in flight, past the ~33 KB an SM needs to stream at 4.4 TB/s
// with ~1 us of latency (docs/PERFORMANCE.md "Decode at the read floor").
// The K split (splits_for).
StreamGroupedTiling stream_tiling(const GroupedGemmProblem& p, const runtime::Device& device) {
  StreamGroupedTiling t;
  t.row_tiles = p.packed_b && p.b_dtype == DType::e2m1 ? 2 : 1;
  const std::int64_t active = std::max<std::int64_t>(std::min(p.groups, p.m), 1);
  const std::int64_t average = (p.m + active - 1) / active;
  t.tokens = average <= 8 ? 8 : average <= 16 ? 16 : average <= 32 ? 32 : 64;
  t.warps = (!p.packed_b && t.tokens <= 16) || (p.packed_b && t.tokens == 16) ? 8 : 4;
  t.stages = 3;
  StreamGroupedTiling two = t;
  two.stages = 2;
  if (stream_grouped_ctas_per_sm(p, two) > stream_grouped_ctas_per_sm(p, t)) t.stages = 2;
  t.a_ld = p.scaled_a ? dequantized_row(a_problem(p)) : p.a.ld;
  const int splits = tiling_from_environment(t, p.packed_b);
  const std::int64_t ctas = stream_grouped_ctas_per_sm(p, t) * std::max(device.properties().sm_count, 1);
  const std::int64_t units =
      std::max(active, (p.m + t.tokens - 1) / t.tokens) * ((p.n + t.cta_rows() - 1) / t.cta_rows());
  t.splits = splits > 0 ? splits : splits_for(units, ctas, p.packed_layout().chunks());
  return t;
}

class StreamLaunch final : public GroupedGemmLaunch {
 public:
  StreamLaunch(const GroupedGemmProblem& p, const StreamGroupedTiling& t, const runtime::Device& device,
               bool own_workspace)
      : p_(p),
        module_(device, build_stream_grouped(p, t)),
        offsets_(device, p),
        a_copy_(a_copy_bytes(p)),
        split_bytes_(stream_grouped_split_bytes(p, t)) {
    if (p.scaled_a)
      dequantize_.emplace(device, build_dequantize_kernel(a_problem(p), BlockScaledOperand::a, a_order(p),
                                                          DependentsStart::at_start));
    if (own_workspace && a_copy_ + split_bytes_) {
      own_.emplace(device, a_copy_ + split_bytes_);
      own_->fill(0);  // the split counters at 0; every launch leaves them so
    }
    const std::int64_t shared = stream_grouped_shared_bytes(p, t);
    const std::int64_t ctas = stream_grouped_ctas_per_sm(p, t) * std::max(device.properties().sm_count, 1);
    const std::int64_t items = max_group_units(stream_grouped_schedule(p, t), p.m) * t.splits;
    config_.grid = {static_cast<std::uint32_t>(std::clamp<std::int64_t>(items, 1, ctas))};
    config_.block = {static_cast<std::uint32_t>(t.threads())};
    config_.dynamic_shared_bytes = static_cast<std::uint32_t>(shared);
    // With a block-scaled A the kernel starts while the pre-pass converts
    // it (streaming its first weights before it waits for the pre-pass).
    config_.overlap_previous = p.scaled_a;
  }

  void run(const GroupedGemmTensors& t, const runtime::TensorView* workspace, runtime::Stream* stream) override {
    const runtime::DevicePtr base = workspace ? workspace->address() : own_ ? own_->address() : 0;
    const runtime::Device& device = t.a.device();
    std::vector<runtime::Arg> args;
    if (p_.scaled_a) {
      launch_dequantize(*dequantize_, a_problem(p_), BlockScaledOperand::a, a_order(p_), t.a, *t.sfa, base, stream);
      args.emplace_back(runtime::TensorView(device, base, DType::u8, {static_cast<std::int64_t>(a_copy_)}));
    } else {
      args.emplace_back(t.a);
    }
    args.emplace_back(t.b);
    if (p_.packed_b) args.emplace_back(*t.sfb);
    args.emplace_back(offsets_.view(t, p_.groups));
    args.emplace_back(t.d);
    if (p_.amax) args.emplace_back(*t.amax);
    if (split_bytes_ > 0)
      args.emplace_back(runtime::TensorView(device, base + a_copy_, DType::u8, {static_cast<std::int64_t>(split_bytes_)}));
    args.emplace_back(static_cast<std::uint32_t>(p_.m));
    module_.launch(kStreamGroupedKernel, config_, args, stream);
  }

 private:
  GroupedGemmProblem p_;
  runtime::Module module_;
  std::optional<runtime::Module> dequantize_;
  LaunchOffsets offsets_;
  std::size_t a_copy_, split_bytes_;
  std::optional<runtime::Buffer> own_;
  runtime::LaunchConfig config_;
};

class StreamPath final : public GroupedGemmPath {
 public:
  std::string_view name() const override { return "stream"; }

  std::vector<std::string> refusals(const GroupedGemmProblem& p, const runtime::Device& device) const override {
    std::vector<std::string> why;
    const bool bf16_rows = p.b_dtype == DType::bf16 && p.a_dtype == DType::bf16 && p.form == GroupedForm::ragged_m;
    if (!p.packed_b && !bf16_rows)
      why.push_back("B is " + std::string(runtime::name(p.b_dtype)) + (p.form == GroupedForm::ragged_k ? " in ragged K" : "") +
                    ": the stream kernel reads packed block-scaled weights (prepack_weights), or bf16 ones against "
                    "bf16 A in ragged M");
    if (!p.packed_b && bf16_rows && p.b.cols_contiguous && p.n > 1 && p.k > 1)
      why.push_back("B's N is contiguous: the stream kernel reads bf16 weights whose K is contiguous (B (G, K, N) with "
                    "K of stride 1, as torch._grouped_mm takes it)");
    // mul.bf16x2 (the exact conversions' multiply) needs sm_90 (PTX ISA 9.7.4.2).
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " + std::string(ptx::name(device.target())) +
                    "; the stream kernel needs sm_90a (compute capability 9.0)");
    if (!p.a.cols_contiguous && p.m > 1 && p.k > 1)
      why.push_back("A is m-major: the stream kernel copies 16-byte pieces of A's rows (make K contiguous)");
    if (p.groups > kMaxGroups)
      why.push_back("G " + std::to_string(p.groups) + ": the group table holds up to " + std::to_string(kMaxGroups) +
                    " groups");
    const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    if (p.m > limit || p.n > limit || p.k > limit)
      why.push_back("M, N or K above 2^31 - 1: the stream kernel indexes them with 32-bit registers");
    return why;
  }

  // bf16 weights: past a few tokens a group on average the sm90a design's
  // or the sm80 kernel's 64- and 128-row tiles reuse each weight tile over
  // more tokens than the stream kernel's 8 to 64 (which re-reads an expert's
  // weights for every 64).
  std::optional<std::string> passed_over(const GroupedGemmProblem& p, const runtime::Device& device) const override {
    const bool sm90a = sm90a_grouped_gemm_path().refusals(p, device).empty();
    if (p.packed_b) return packed_passed_over(p, sm90a);
    const std::int64_t limit = sm90a ? kStreamBf16MaxAverageTokensBesideSm90a : kStreamBf16MaxAverageTokens;
    const std::int64_t active = std::max<std::int64_t>(std::min(p.groups, p.m), 1);
    if (p.m <= limit * active) return std::nullopt;
    return "bf16 weights with " + std::to_string((p.m + active - 1) / active) +
           " tokens a group on average: automatic selection takes the stream kernel up to " + std::to_string(limit) +
           " (past that the " + (sm90a ? "sm90a design" : "sm80 kernel") + " reuses each weight tile more)";
  }

  // Packed weight-only: past kStreamFp4/Fp8MaxAverageTokensBesideSm90a
  // tokens a group the sm90a path's RS design (sm90a_grouped_rs.hpp)
  // converts each weight once for up to 256 tokens, where this kernel does
  // for 8 to 64.
  static std::optional<std::string> packed_passed_over(const GroupedGemmProblem& p, bool sm90a) {
    const bool fp4 = p.b_dtype == DType::e2m1;
    const std::int64_t limit = fp4 ? kStreamFp4MaxAverageTokensBesideSm90a : kStreamFp8MaxAverageTokensBesideSm90a;
    const std::int64_t active = std::max<std::int64_t>(std::min(p.groups, p.m), 1);
    if (!sm90a || p.m <= limit * active) return std::nullopt;
    return std::string(fp4 ? "FP4" : "FP8") + " packed weights with " + std::to_string((p.m + active - 1) / active) +
           " tokens a group on average: automatic selection takes the stream kernel up to " + std::to_string(limit) +
           " (past that the sm90a design converts each weight once for up to 256 tokens)";
  }

  std::string configuration(const GroupedGemmProblem& p, const runtime::Device& device) const override {
    const StreamGroupedTiling t = stream_tiling(p, device);
    std::string s = t.describe() + ", " + std::to_string(stream_grouped_ctas_per_sm(p, t)) + " CTAs an SM, K split " +
                    std::to_string(t.splits) + " ways" +
                    (t.splits == 1 ? "" : " (their sums added through the workspace)");
    if (p.scaled_a) s += ", A converted to bf16 into the workspace by a pre-pass";
    return s;
  }

  std::size_t workspace_bytes(const GroupedGemmProblem& p, const runtime::Device& device) const override {
    return a_copy_bytes(p) + stream_grouped_split_bytes(p, stream_tiling(p, device));
  }

  std::unique_ptr<GroupedGemmLaunch> compile(const GroupedGemmProblem& p, const runtime::Device& device,
                                             bool own_workspace) const override {
    return std::make_unique<StreamLaunch>(p, stream_tiling(p, device), device, own_workspace);
  }
};

}  // namespace

const GroupedGemmPath& stream_grouped_gemm_path() {
  static const StreamPath path;
  return path;
}

}  // namespace warpforge::ops
