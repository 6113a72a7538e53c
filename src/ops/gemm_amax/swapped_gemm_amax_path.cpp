// The swapped path of GemmAmax: A converted to bf16 by a pre-pass (in the
// swapped kernel's fragment order), then the kernel of
// swapped_gemm_amax_kernel.hpp; what it refuses, its tiling and its launch.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>

#include "block_scaled_maps.hpp"
#include "dequantize_kernel.hpp"
#include "gemm_amax_path.hpp"
#include "swapped_gemm_amax_kernel.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// The workspace: A's bf16 copy, then (from a 1 KB boundary) split-K's sums and counters.
std::int64_t split_offset(const GemmAmaxProblem& p) {
  return (dequantized_bytes(p, BlockScaledOperand::a) + 1023) / 1024 * 1024;
}
std::size_t workspace(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t) {
  return static_cast<std::size_t>(split_offset(p)) + swapped_gemm_amax_split_bytes(p, t);
}

class SwappedLaunch final : public GemmAmaxLaunch {
 public:
  SwappedLaunch(const GemmAmaxProblem& p, const SwappedGemmAmaxTiling& t, const runtime::Device& device,
                bool own_workspace)
      : p_(p),
        device_(device),
        dequantize_a_(device, build_dequantize_kernel(p, BlockScaledOperand::a, DequantizedOrder::fragments,
                                                      DependentsStart::at_start)),
        module_(device, build_swapped_gemm_amax(p, t)),
        workspace_(device, workspace(p, t), own_workspace),
        workspace_splits_(t.splits > 1 && !t.cluster) {
    config_.grid = {static_cast<std::uint32_t>(swapped_gemm_amax_tiles(p, t) * t.splits)};
    if (t.cluster) config_.cluster = {static_cast<std::uint32_t>(t.splits)};
    config_.block = {static_cast<std::uint32_t>(swapped_gemm_amax_threads())};
    config_.dynamic_shared_bytes = swapped_gemm_amax_smem_bytes(p, t);
    // The kernel starts while the pre-pass converts A (its loader waits
    // for the pre-pass before A's first tile, streaming B before it).
    config_.overlap_previous = true;
    box_tokens_ = static_cast<std::uint32_t>(t.tokens);
    blocks_ = t.blocks;
    b_swizzle_ = swapped_gemm_amax_b_swizzle(p, t);
  }

  void run(const GemmAmaxOperands& o, runtime::Stream* stream) override {
    const runtime::DevicePtr a_copy = workspace_.address(o);
    launch_dequantize(dequantize_a_, p_, BlockScaledOperand::a, DequantizedOrder::fragments, o.a, o.sfa, a_copy, stream);
    std::vector<runtime::Arg> args;
    {
      std::lock_guard lock(maps_mutex_);
      const std::array<runtime::DevicePtr, 3> addresses{a_copy, o.b.address(), o.sfb.address()};
      if (addresses != cached_addresses_) {
        cached_maps_ = encode_maps(addresses);
        cached_addresses_ = addresses;
      }
      for (const runtime::TensorMap& map : cached_maps_) args.push_back(runtime::Arg::bytes_of(map));
    }
    args.emplace_back(o.c);
    args.emplace_back(o.amax);
    if (workspace_splits_) args.emplace_back(static_cast<std::uint64_t>(a_copy + split_offset(p_)));
    module_.launch(kSwappedGemmAmaxKernel, config_, args, stream);
  }

 private:
  // A's copy (K x M x L bf16, rows of K) in boxes of 64 values x T tokens,
  // swizzled for wgmma; B's codes in boxes of one K block x 128 rows.
  std::array<runtime::TensorMap, 3> encode_maps(const std::array<runtime::DevicePtr, 3>& at) const {
    const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    const runtime::TensorMapDesc map_a{.dtype = DType::bf16,
                                       .address = at[0],
                                       .dims = {u64(p_.k), u64(p_.m), u64(p_.l)},
                                       .strides_bytes = {u64(2 * p_.k), u64(2 * p_.k * p_.m)},
                                       .box = {kSwappedBlock, box_tokens_, 1},
                                       .swizzle = runtime::TensorMapSwizzle::b128};
    const auto code_box = static_cast<std::uint32_t>(code_bytes(p_.ab_dtype, kSwappedBlock * blocks_));
    const auto map_b = code_map(p_.ab_dtype, at[1], p_.n, p_.k, p_.l, p_.b, code_box, kSwappedRows,
                                b_swizzle_ ? runtime::TensorMapSwizzle::b128 : runtime::TensorMapSwizzle::none);
    const auto map_sfb = scale_map(at[2], ScaleFactorLayout{p_.n, p_.k, p_.l, p_.vec});
    return {runtime::make_tensor_map(device_, map_a), runtime::make_tensor_map(device_, map_b),
            runtime::make_tensor_map(device_, map_sfb)};
  }

  GemmAmaxProblem p_;
  runtime::Device device_;
  runtime::Module dequantize_a_, module_;
  runtime::LaunchConfig config_;
  // A's copy and split-K's sums: one launch at a time uses them (launches
  // on one stream, as GemmAmax's execute documents).
  SplitKWorkspace workspace_;
  bool workspace_splits_;  // split K through the workspace (not a cluster)
  std::uint32_t box_tokens_ = 0;
  int blocks_ = 1;  // K blocks a stage: B's box is that many blocks' codes wide
  std::uint32_t b_swizzle_ = 0;  // B's box swizzle span in bytes (0: none)
  std::mutex maps_mutex_;
  std::array<runtime::DevicePtr, 3> cached_addresses_{};  // 0 is never a buffer: nothing cached yet
  std::array<runtime::TensorMap, 3> cached_maps_;
};

// The most K splits that run as one cluster: two (the splits at N = K =
// 8192, docs/PERFORMANCE.md v10). Four, as a cluster, ran 16 x 4096 x 4096
// NVFP4 in 19.7 us where the workspace took 13.3 us (H200, session 8, "GemmAmax's
// decode on the swapped kernel"); more keep the workspace too (a cluster of
// one CTA a SM needs that many SMs of one GPC free at once).
constexpr int kClusterSplitsUpTo = 2;

class SwappedPath final : public GemmAmaxPath {
 public:
  std::string_view name() const override { return "swapped"; }

  std::vector<std::string> refusals(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    std::vector<std::string> why;
    // wgmma exists only on sm_90a (PTX ISA 9.7.15), and the pre-pass's
    // exact multiply (mul.bf16x2) needs sm_90.
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " + std::string(ptx::name(device.target())) +
                    "; the swapped kernel needs sm_90a (compute capability 9.0)");
    if (p.ab_dtype != DType::e4m3 && p.ab_dtype != DType::e5m2 && p.ab_dtype != DType::e2m1)
      why.push_back("A and B are " + std::string(runtime::name(p.ab_dtype)) +
                    "; the swapped kernel takes FP8 (e4m3, e5m2) or FP4 (e2m1) data");
    if (p.c_dtype != DType::f32 && p.c_dtype != DType::bf16 && p.c_dtype != DType::f16)
      why.push_back("C is " + std::string(runtime::name(p.c_dtype)) + "; the swapped kernel writes f32, bf16 or f16 C");
    if (p.k % kSwappedBlock != 0)
      why.push_back("K " + std::to_string(p.k) + ": the swapped kernel takes K a multiple of " +
                    std::to_string(kSwappedBlock) + " (the block its K permutation stays inside)");
    check_k_major_operand(why, "A", p.ab_dtype, p.a, p.l,
                          {.kernel = "the swapped kernel's pre-pass", .loads = "16-byte loads",
                           .others = "the sm80 kernel takes the others"});
    check_k_major_operand(why, "B", p.ab_dtype, p.b, p.l,
                          {.kernel = "the swapped kernel", .loads = "TMA loads",
                           .others = "the sm80 kernel takes the others", .nonzero_batch = true});
    // Its output tile is T tokens (M) x 128 rows of B (N).
    if (p.tile && (p.tile->n != kSwappedRows || p.tile->m < 8 || p.tile->m > kSwappedMaxTokens || p.tile->m % 8 != 0))
      why.push_back("mma tile " + std::to_string(p.tile->m) + "x" + std::to_string(p.tile->n) +
                    ": the swapped kernel's output tile is T x 128 (T tokens of M, a multiple of 8 up to " +
                    std::to_string(kSwappedMaxTokens) + ", x 128 rows of B)");
    if (p.cluster && (p.cluster->m != 1 || p.cluster->n != 1))
      why.push_back("cluster shape " + std::to_string(p.cluster->m) + "x" + std::to_string(p.cluster->n) +
                    ": the swapped kernel runs without clusters");
    // TMA coordinates are signed 32-bit (PTX ISA 9.7.9.25.5.1); C's element
    // offsets, scale bytes and the grid are 32-bit too.
    const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    const bool sized = p.m > 0 && p.n > 0 && p.k > 0 && p.l > 0 && p.vec > 0;
    if (sized) {
      const std::int64_t c = (p.m - 1) * p.c.row + (p.n - 1) * p.c.col + (p.l - 1) * p.c.batch + 1;
      const std::int64_t sf = std::max(ScaleFactorLayout{p.m, p.k, p.l, p.vec}.bytes(),
                                       ScaleFactorLayout{p.n, p.k, p.l, p.vec}.bytes());
      const SwappedGemmAmaxTiling t = swapped_gemm_amax_tiling(p, device);
      if (std::max({p.m, p.n, p.k, c, sf, swapped_gemm_amax_tiles(p, t) * t.splits}) > limit || p.l > 65535)
        why.push_back("problem " + p.describe() +
                      ": the swapped kernel takes M, N, K, C's offsets, scale bytes and CTAs up to 2^31 - 1 "
                      "and L up to 65535");
      const std::size_t bytes = swapped_gemm_amax_smem_bytes(p, t);
      const std::size_t optin = device.properties().shared_bytes_per_block_optin;
      if (optin && bytes > optin)
        why.push_back(std::to_string(bytes) + " bytes of shared memory; device '" + device.properties().name +
                      "' allows " + std::to_string(optin) + " per block");
    }
    return why;
  }

  // Automatic selection takes the swapped kernel past the skinny kernel's
  // range (skinny_auto_max_m) up to the prepass path's, M x L = 3072
  // (docs/PERFORMANCE.md, block-scaled swapped kernel).
  std::optional<std::string> passed_over(const GemmAmaxProblem& p, const runtime::Device&) const override {
    if (p.m > skinny_auto_max_m(p)) return std::nullopt;
    return "M " + std::to_string(p.m) + ": automatic selection takes the skinny kernel up to M = " +
           std::to_string(skinny_auto_max_m(p)) + " for " + std::string(runtime::name(p.ab_dtype)) + " data";
  }

  std::string configuration(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    const SwappedGemmAmaxTiling t = swapped_gemm_amax_tiling(p, device);
    return "A to bf16 by a pre-pass, B's codes to wgmma's register fragments; " +
           std::to_string(t.tokens) + " tokens x 128 rows of B per CTA, " + describe_k_split(t.splits, t.cluster) +
           ", " + std::to_string(t.stages) + " stages" +
           (t.blocks > 1 ? " of " + std::to_string(t.blocks) + " K blocks (" +
                               std::to_string(t.blocks * (p.ab_dtype == DType::e2m1 ? 32 : 64)) + " bytes a B row)"
                         : "") +
           (t.ctas_per_sm > 1 ? ", " + std::to_string(t.ctas_per_sm) + " CTAs an SM" : "");
  }

  std::size_t workspace_bytes(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    return workspace(p, swapped_gemm_amax_tiling(p, device));
  }

  std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& p, const runtime::Device& device,
                                          bool own_workspace) const override {
    return std::make_unique<SwappedLaunch>(p, swapped_gemm_amax_tiling(p, device), device, own_workspace);
  }
};

}  // namespace

// For experiments on a GPU (scripts/gpu-amax-decode.sh's one-cta step, TILING):
// WARPFORGE_SWAPPED_TILING=S[,K[,C[,B[,N]]]] sets the stages S of every
// swapped kernel compiled after it, its K split K (0: the default's),
// whether the splits form a cluster (C = 1) or add through the workspace
// (0), the K blocks B a stage and the CTAs N an SM; build_swapped_gemm_amax
// and the refusals (shared memory) check the result.
namespace {
void tiling_from_environment(SwappedGemmAmaxTiling& t) {
  const char* text = std::getenv("WARPFORGE_SWAPPED_TILING");
  if (!text || !*text) return;
  int stages = 0, splits = 0, cluster = 0, blocks = 0, ctas = 0;
  char end = 0;
  const int read = std::sscanf(text, "%d,%d,%d,%d,%d%c", &stages, &splits, &cluster, &blocks, &ctas, &end);
  if (read < 1 || read > 5 || splits < 0 || (read >= 3 && cluster != 0 && cluster != 1))
    throw OpsError(std::string("WARPFORGE_SWAPPED_TILING '") + text +
                   "': expected stages[,splits[,cluster[,blocks[,ctas_per_sm]]]] (one to five integers, splits 0 or "
                   "more, cluster 0 or 1, e.g. 12 or 8,2 or 8,4,0 or 6,0,1,4 or 4,4,1,4,2)");
  t.stages = stages;
  if (splits > 0) t.splits = splits;
  t.cluster = read >= 3 ? cluster == 1 : t.splits > 1 && t.splits <= kClusterSplitsUpTo;
  if (read >= 4) t.blocks = blocks;
  if (read == 5) t.ctas_per_sm = ctas;
}
}  // namespace

// Tokens: M in the fewest tiles of at most 256 (a conversion of B's codes
// feeds T tokens' products), evened out (M = 768: three of 256), or the mma
// tile asked for. Measured on an H100 at N = K = 8192 (docs/PERFORMANCE.md,
// swapped kernel v5): one 256-token tile ran MXFP8 M = 256 at 0.83x cuBLAS
// bf16 (two of 128: 0.78x), 256-token tiles M = 512-2048 at 0.88-0.91x.
// K split so that the CTAs about fill the SMs once, each split at least 8
// K blocks; up to kClusterSplitsUpTo splits form a cluster that adds their
// sums in shared memory (measured on an H100: docs/PERFORMANCE.md, swapped
// kernel v10), more add them through the workspace.
// Up to 64 tokens (where reading B bounds the call, and the consumers'
// conversion chains bound the kernel) two CTAs share an SM where the grid
// then fills both (each split at least kTwoCtaSplitBlocks K blocks), so
// that a scheduler has four consumer warps' chains to interleave, not two;
// their splits add through the workspace (no cluster). H200, NVFP4 16 x
// 8192^2: 24.4 us at two CTAs of 4 splits, 26.6 at one of 2 splits as a
// cluster (docs/PERFORMANCE.md, "GemmAmax's decode on the swapped kernel").
// Stages: as many as fit in the CTA's share of the SM, up to 8. Up to 64
// tokens a stage holds 128 bytes of each B row (2 K blocks of FP8, 4 of
// E2M1) where 4 stages of it fit, else fewer blocks: a stage of 64 or 32
// bytes a row streamed B at 2.1 and 1.37 TB/s where our bf16 GEMM's 128
// bytes a row streamed 2.71 (H100).
constexpr std::int64_t kTwoCtaSplitBlocks = 16;
SwappedGemmAmaxTiling swapped_gemm_amax_tiling(const GemmAmaxProblem& p, const runtime::Device& device) {
  SwappedGemmAmaxTiling t;
  const std::int64_t m = std::max<std::int64_t>(p.m, 1);
  const std::int64_t token_tiles = (m + kSwappedMaxTokens - 1) / kSwappedMaxTokens;
  t.tokens = static_cast<int>(((m + token_tiles - 1) / token_tiles + 7) / 8 * 8);
  if (p.tile) t.tokens = p.tile->m;
  const std::int64_t sms = std::max(device.properties().sm_count, 1);
  const std::int64_t tiles = std::max<std::int64_t>(swapped_gemm_amax_tiles(p, t), 1);
  const std::int64_t kblocks = std::max<std::int64_t>(p.k / kSwappedBlock, 1);
  const auto splits_for = [&](std::int64_t ctas, std::int64_t least_blocks) {
    return static_cast<int>(
        std::clamp<std::int64_t>(ctas * sms / tiles, 1, std::max<std::int64_t>(kblocks / least_blocks, 1)));
  };
  if (t.tokens <= 64 && tiles * splits_for(2, kTwoCtaSplitBlocks) > sms) t.ctas_per_sm = 2;
  // The CTA's shared memory: the opt-in limit, or its share of the SM's
  // (each CTA's 1 KB reserved by the driver comes out of the SM's too).
  const std::size_t optin = device.properties().shared_bytes_per_block_optin;
  const std::size_t per_sm = device.properties().shared_bytes_per_sm;
  const std::size_t limit =
      t.ctas_per_sm > 1 && per_sm ? std::min(optin ? optin : per_sm, per_sm / 2 - 1024) : optin;
  const auto fits = [&] { return !limit || swapped_gemm_amax_smem_bytes(p, t) <= limit; };
  if (t.tokens <= 64) {
    t.blocks = p.ab_dtype == DType::e2m1 ? 4 : 2;
    t.stages = 4;
    while (t.blocks > 1 && !fits()) t.blocks /= 2;
  }
  t.splits = t.ctas_per_sm > 1 ? splits_for(2, kTwoCtaSplitBlocks) : splits_for(1, 8);
  while (t.splits > 1 && (t.splits - 1) * swapped_gemm_amax_split_blocks(p, t) >= kblocks) --t.splits;
  t.cluster = t.ctas_per_sm == 1 && t.splits > 1 && t.splits <= kClusterSplitsUpTo;
  t.stages = 8;
  while (t.stages > 2 && !fits()) --t.stages;
  tiling_from_environment(t);
  return t;
}

const GemmAmaxPath& swapped_gemm_amax_path() {
  static const SwappedPath path;
  return path;
}

}  // namespace warpforge::ops
