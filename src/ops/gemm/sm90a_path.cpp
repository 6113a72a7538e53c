// The sm90a GEMM path: the TMA + wgmma kernel of sm90a_kernel.cpp behind the
// GemmPath interface. It takes what TMA can describe (16-byte aligned bases
// and strides, row-major D) and leaves the rest to sm80.
#include <algorithm>
#include <array>
#include <limits>
#include <mutex>
#include <optional>

#include "gemm_path.hpp"
#include "sm90a_kernel.hpp"
#include "tma_operands.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {
namespace {

using runtime::Device;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

class Sm90aLaunch final : public GemmLaunch {
 public:
  Sm90aLaunch(const Device& device, const GemmProblem& problem, const Sm90aSpec& spec)
      : device_(device), p_(problem), spec_(spec), module_(device, build_sm90a_gemm(spec)) {
    const std::int64_t tile_m = spec.tile_m();
    const std::int64_t units = ceil_div(ceil_div(p_.m, tile_m), spec.cluster_m) *
                               ceil_div(ceil_div(p_.n, spec.tile_n), spec.cluster_n) * p_.l;
    // Persistent: as many clusters as are resident at once (one CTA per SM
    // at most: the shared memory allows no more). Clusters live inside one
    // GPC, so fewer pairs than SMs / 2 may fit; a launch of more would run
    // the rest only after whole pairs finish all their tiles.
    const std::int64_t resident =
        spec.cluster_size() == 1
            ? std::max(device.properties().sm_count, 1)
            : module_.max_active_clusters(spec.name(), launch_config(static_cast<std::uint32_t>(spec.cluster_size())));
    // Stream-K shares the last units' k-blocks among every resident CTA,
    // even when there are fewer units than CTAs.
    const std::int64_t clusters = std::max<std::int64_t>(resident, 1);
    ctas_ = static_cast<std::uint32_t>((spec.stream_k ? clusters : std::min(units, clusters)) * spec.cluster_size());
    if (spec.stream_k) {
      workspace_.emplace(device, sm90a_workspace_bytes(spec, ctas_));
      workspace_->fill(0);  // no partial sum waiting; each launch leaves it so
    }
  }

  void run(const GemmOperands& o, runtime::Stream* stream) override {
    std::vector<runtime::Arg> args;
    {
      std::lock_guard lock(maps_mutex_);
      if (o.a.address() != cached_.a || o.b.address() != cached_.b || o.d.address() != cached_.d)
        cached_ = encode_maps(o);
      for (const runtime::TensorMap& map : cached_.maps) args.push_back(runtime::Arg::bytes_of(map));
    }
    const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    if (p_.has_c) {
      args.emplace_back(*o.c);
      args.emplace_back(u64(p_.c.row_major ? p_.c.ld : 1));
      args.emplace_back(u64(p_.c.row_major ? 1 : p_.c.ld));
      args.emplace_back(u64(p_.c.batch_stride));
    }
    if (sm90a_tail_cols(spec_)) {  // row-major D (refusals)
      args.emplace_back(o.d);
      args.emplace_back(u64(p_.d.ld));
      args.emplace_back(u64(p_.d.batch_stride));
    }
    for (std::int64_t v : {p_.m, p_.n, p_.k, p_.l}) args.emplace_back(u32(v));
    args.emplace_back(o.alpha);
    if (p_.has_c) args.emplace_back(o.beta);
    if (p_.amax) args.emplace_back(*o.amax);
    if (workspace_) args.emplace_back(*workspace_);
    module_.launch(spec_.name(), launch_config(ctas_), args, stream);
  }

 private:
  runtime::LaunchConfig launch_config(std::uint32_t ctas) const {
    runtime::LaunchConfig c{.grid = {ctas},
                            .block = {static_cast<std::uint32_t>(sm90a_threads(spec_))},
                            .dynamic_shared_bytes = sm90a_smem(spec_).bytes,
                            // the kernel waits (griddepcontrol.wait) before it touches memory
                            .overlap_previous = true};
    if (spec_.cluster_size() > 1) c.cluster = {static_cast<std::uint32_t>(spec_.cluster_size())};
    return c;
  }

  // The tensor maps hold the operands' addresses: they are encoded (on the
  // host, cuTensorMapEncodeTiled) when an address changes, not every launch.
  struct Maps {
    runtime::DevicePtr a = 0, b = 0, d = 0;
    std::array<runtime::TensorMap, 3> maps;
  };

  Maps encode_maps(const GemmOperands& o) const {
    // A K-major tile is loaded by the CTAs sharing it in boxes of tile /
    // (CTAs sharing it) rows; MN-major tiles in boxes of 64 K rows, 64
    // columns wide (B: Sm90aSpec::b_box_cols, 32 in the 64-byte swizzle).
    const auto tile_m = static_cast<std::uint32_t>(spec_.a_load_rows() / spec_.cluster_n);
    const auto tile_n = static_cast<std::uint32_t>(spec_.tile_n / spec_.cluster_m);
    // A: (M, K), K-major as (K, M) with a 64 x tile_m box; M-major as (M, K) in 64 x 64 boxes.
    auto map_a = p_.a.row_major ? matrix_map(p_.ab_dtype, o.a.address(), p_.k, p_.m, p_.l, p_.a, 64, tile_m)
                                : matrix_map(p_.ab_dtype, o.a.address(), p_.m, p_.k, p_.l, p_.a, 64, 64);
    // B: (K, N), K-major as (K, N) with a 64 x tile_n box; N-major as (N, K) in b_box_cols x 64 boxes.
    const auto b_swizzle = spec_.b_swizzle() == layout::SmemSwizzle::b64 ? runtime::TensorMapSwizzle::b64
                                                                          : runtime::TensorMapSwizzle::b128;
    auto map_b = !p_.b.row_major ? matrix_map(p_.ab_dtype, o.b.address(), p_.k, p_.n, p_.l, p_.b, 64, tile_n)
                                 : matrix_map(p_.ab_dtype, o.b.address(), p_.n, p_.k, p_.l, p_.b,
                                              static_cast<std::uint32_t>(spec_.b_box_cols()), 64, b_swizzle);
    auto map_d = matrix_map(p_.d_dtype, o.d.address(), p_.n, p_.m, p_.l, p_.d,
                            static_cast<std::uint32_t>(sm90a_store_box_cols(spec_)), 64);
    return {o.a.address(), o.b.address(), o.d.address(),
            {runtime::make_tensor_map(device_, map_a), runtime::make_tensor_map(device_, map_b),
             runtime::make_tensor_map(device_, map_d)}};
  }

  Device device_;
  GemmProblem p_;
  Sm90aSpec spec_;
  runtime::Module module_;
  std::uint32_t ctas_ = 1;
  std::optional<runtime::Buffer> workspace_;
  std::mutex maps_mutex_;
  Maps cached_;
};

class Sm90aPath final : public GemmPath {
 public:
  GemmKernel kind() const override { return GemmKernel::sm90a; }

  std::vector<std::string> refusals(const GemmProblem& p, const Device& device) const override {
    std::vector<std::string> why;
    // wgmma and setmaxnreg exist only on sm_90a, which runs only on compute
    // capability 9.0 (PTX ISA 12, "Target ISA notes"); the simulator stands
    // for a GPU of its target (sim::SimOptions::target, sm_90a by default).
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " +
                    std::string(ptx::name(device.target())) + "; the sm90a kernel needs sm_90a (compute capability 9.0)");
    if (p.ab_dtype != runtime::DType::bf16 && p.ab_dtype != runtime::DType::f16)
      why.push_back("A and B are " + std::string(runtime::name(p.ab_dtype)) + "; the sm90a kernel takes bf16 or f16");
    if (!p.d.row_major)
      why.push_back("D is column-major; the sm90a kernel's TMA-store epilogue writes row-major D (sm80 takes column-major)");
    check_tma_operand(why, "the sm90a kernel", "A", p.a, p.ab_dtype, p.l);
    check_tma_operand(why, "the sm90a kernel", "B", p.b, p.ab_dtype, p.l);
    check_tma_operand(why, "the sm90a kernel", "D", p.d, p.d_dtype, p.l);
    check_tma_extents(why, p);
    return why;
  }

  std::vector<std::string> config_refusals(const GemmConfig& c, const GemmProblem& p,
                                           const Device& device) const override {
    std::vector<std::string> why;
    if (c.tile_m != 64 && c.tile_m != 128)
      why.push_back("tile_m " + std::to_string(c.tile_m) + "; the sm90a kernel has 1 or 2 consumer warpgroups of 64 rows (64 or 128)");
    // A ping-pong warpgroup holds the whole tile's accumulators: 128 f32
    // registers per thread at most besides what the rest needs (232 in all).
    if (c.pingpong && c.tile_m * c.tile_n > 128 * 128)
      why.push_back("pingpong with tile " + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) +
                    "; each warpgroup holds a whole tile in registers: tile_m * tile_n <= 16384 (128x128, 64x256)");
    if (c.tile_n < 64 || c.tile_n > 256 || c.tile_n % 32 != 0)
      why.push_back("tile_n " + std::to_string(c.tile_n) + "; a multiple of 32 in 64..256 (wgmma N up to 256)");
    if (c.tile_k != kSm90aTileK)
      why.push_back("tile_k " + std::to_string(c.tile_k) + "; the sm90a kernel stages K 64 at a time (one 128-byte swizzled row)");
    if (c.stages < 2 || c.stages > 8)
      why.push_back("stages " + std::to_string(c.stages) + "; 2..8");
    const std::string cluster = "cluster " + std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n);
    if (c.cluster_m < 1 || c.cluster_n < 1 || c.cluster_m * c.cluster_n > 2)
      why.push_back(cluster + "; the sm90a kernel takes 1x1, 2x1 (pairs along M sharing B) or 1x2 (along N sharing A)");
    // An MN-major tile is shared as whole boxes, as many to each CTA.
    if (c.cluster_m == 2 && p.b.row_major && c.tile_n % (2 * sm90a_mn_box_cols(c.tile_n)) != 0)
      why.push_back(cluster + " with tile_n " + std::to_string(c.tile_n) + ": N-major B is multicast in boxes of " +
                    std::to_string(sm90a_mn_box_cols(c.tile_n)) +
                    " columns, as many to each CTA of the pair; tile_n 128 or 256 is needed");
    if (c.cluster_n == 2 && !p.a.row_major && c.tile_m < 128)
      why.push_back(cluster + " with tile_m " + std::to_string(c.tile_m) +
                    ": M-major A is multicast in 64-row boxes, one per CTA of the pair; tile_m 128 is needed");
    if (c.stream_k && (c.pingpong || c.cluster_m * c.cluster_n > 1))
      why.push_back("streamk with" + std::string(c.pingpong ? " pingpong" : "") +
                    (c.cluster_m * c.cluster_n > 1 ? " " + cluster : "") +
                    "; stream-K takes the cooperative schedule without clusters");
    // The split k-blocks (fewer than 2 waves of units) are counted in 32 bits.
    const std::int64_t split_blocks = 2 * std::int64_t{std::max(1, device.properties().sm_count)} * ceil_div(p.k, kSm90aTileK);
    if (c.stream_k && split_blocks > std::numeric_limits<std::uint32_t>::max())
      why.push_back("streamk with K = " + std::to_string(p.k) + " on " + std::to_string(device.properties().sm_count) +
                    " SMs; the k-blocks split among the CTAs (2 x SMs x K/64) must stay below 2^32");
    // A run's first k-block c·T/G is computed as c·(T/G) + c·(T%G)/G in 32 bits.
    if (c.stream_k && device.properties().sm_count >= 65536)
      why.push_back("streamk on " + std::to_string(device.properties().sm_count) +
                    " SMs; the CTAs' shares are computed in 32 bits, which takes fewer than 65536 SMs");
    if (!why.empty()) return why;
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    const std::size_t bytes = sm90a_smem(sm90a_spec(p, c, limit)).bytes;
    if (limit && bytes > limit)
      why.push_back(std::to_string(bytes) + " bytes of shared memory; device '" + device.properties().name +
                    "' allows " + std::to_string(limit) + " per block");
    return why;
  }

  GemmConfig heuristic(const GemmProblem& p, const Device& device) const override {
    // The N tile with the least estimated time: the persistent grid's waves
    // times a tile's time, modeled as rows + 2 * tile_n (its loads, rows +
    // tile_n per k-block, plus its MMAs, proportional to tile_n), ties going
    // to the smaller tile. Fitted to an H100 over decoder shapes (docs/
    // PERFORMANCE.md, bf16 GEMM over decoder shapes: 256 x 10240 takes 108
    // tiles of 128 x 192 in one wave (1.05x cuBLAS), not 80 of 128 x 256
    // (0.82x) or 160 of 128 x 128 in 2; with K-major B, 512 x 10240 takes 256
    // of 128 x 160 in 2, 0.99x, not 216 of 128 x 192, 0.90x). N-major B keeps
    // to multiples of 64: its odd widths, 32-column boxes in the 64-byte
    // swizzle, ran 0.74x at 512 x 10240 and 1024 x 10240 where 192 and 128
    // ran 0.90x and 0.98x. Decode (M <= 64) has tiles of one
    // consumer warpgroup, 64 rows: reading B bounds it, and a deep ring
    // streamed it fastest (1.0-1.07x cuBLAS at M = 64 where 128 x 64 tiles
    // ran 0.63-0.86x), 64 or 128 columns wide by the same model (64 x 10240
    // takes 80 tiles of 64 x 128 in one wave, 1.02x, not 160 of 64 x 64 in
    // two, 0.86x). Then as many stages as shared memory holds.
    const std::int64_t sms = std::max(1, device.properties().sm_count);
    const bool decode = p.m <= 64;
    const int rows = decode ? 64 : 128;
    const std::int64_t tiles_m = ceil_div(p.m, rows);
    auto estimate = [&](int n_tile) {
      return ceil_div(tiles_m * ceil_div(p.n, n_tile) * p.l, sms) * (rows + 2 * n_tile);
    };
    // 224 runs four stages (its epilogue buffer holds the 192 columns the
    // TMA store reads): 256 x 28672 x 4096 takes 256 tiles of 128 x 224 in
    // two waves, 1.04x, not 224 of 128 x 256, 0.93x (at three stages it lost).
    std::vector<int> widths = decode ? std::vector<int>{128, 64} : std::vector<int>{256, 224, 192, 160, 128, 96, 64};
    if (p.b.row_major) std::erase_if(widths, [](int w) { return sm90a_mn_box_cols(w) != 64; });
    int tile_n = widths.front();
    for (int smaller : widths)
      if (estimate(smaller) <= estimate(tile_n)) tile_n = smaller;
    GemmConfig c{.tile_m = rows, .tile_n = tile_n, .tile_k = kSm90aTileK, .stages = 2, .warps_m = rows / 64, .warps_n = 1};
    // No stream-K: on an H200 it won nowhere (docs/PERFORMANCE.md, v6); it
    // stays a candidate for autotune. Stages as fit beside a whole-tile
    // epilogue buffer: a fourth stage bought
    // by storing 128 x 256 in two chunks measured no faster on an H200
    // (docs/PERFORMANCE.md). Three stages at least: with two, every k-block
    // waits on its load (f32 D at 128 x 256 fits only two, and ran at 0.62x
    // cuBLAS).
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    auto fits = [&] {
      return config_refusals(c, p, device).empty() && (!limit || sm90a_smem(sm90a_spec(p, c, 0)).bytes <= limit);
    };
    for (int stages = 8; stages >= 3; --stages) {
      c.stages = stages;
      if (fits()) return c;
    }
    c.tile_n = std::min(c.tile_n, 128);
    for (int stages = 8; stages >= 2; --stages) {
      c.stages = stages;
      if (fits()) return c;
    }
    return c;
  }

  std::vector<GemmConfig> candidates(const GemmProblem& p, const Device& device) const override {
    std::vector<GemmConfig> all;
    auto add = [&](GemmConfig c) {
      if (config_refusals(c, p, device).empty()) all.push_back(c);
    };
    for (int tile_n : {256, 192, 128, 64})
      for (int tile_m : {128, 64})
        for (int stages : {3, 4, 6})
          add({.tile_m = tile_m, .tile_n = tile_n, .tile_k = kSm90aTileK, .stages = stages,
               .warps_m = tile_m / 64, .warps_n = 1});
    // Widths that are odd multiples of 32, for the wave fill.
    for (int tile_n : {224, 160, 96})
      for (int stages : {3, 4})
        add({.tile_m = 128, .tile_n = tile_n, .tile_k = kSm90aTileK, .stages = stages, .warps_m = 2, .warps_n = 1});
    // Stream-K on the two-warpgroup tiles.
    for (int tile_n : {256, 128, 64})
      add({.tile_m = 128, .tile_n = tile_n, .tile_k = kSm90aTileK, .stages = tile_n == 256 ? 3 : 4, .warps_m = 2,
           .warps_n = 1, .stream_k = true});
    // Ping-pong tiles (a whole tile per warpgroup) and the biggest cooperative
    // tile in 2-CTA clusters.
    for (auto [tile_m, tile_n] : {std::pair{128, 128}, std::pair{64, 256}})
      for (int stages : {3, 4, 5})
        add({.tile_m = tile_m, .tile_n = tile_n, .tile_k = kSm90aTileK, .stages = stages, .warps_m = 1,
             .warps_n = 1, .pingpong = true});
    for (auto [cm, cn] : {std::pair{2, 1}, std::pair{1, 2}})
      add({.tile_m = 128, .tile_n = 256, .tile_k = kSm90aTileK, .stages = 3, .warps_m = 2, .warps_n = 1,
           .cluster_m = cm, .cluster_n = cn});
    return all;
  }

  std::unique_ptr<GemmLaunch> compile(const GemmProblem& p, const GemmConfig& config,
                                      const Device& device) const override {
    return std::make_unique<Sm90aLaunch>(device, p,
                                         sm90a_spec(p, config, device.properties().shared_bytes_per_block_optin));
  }
};

}  // namespace

// The epilogue's chunk narrows (down to one
// 64-column TMA box) until the stages fit `smem_limit`: room for a stage
// is worth more than storing the tile in one piece.
Sm90aSpec sm90a_spec(const GemmProblem& p, const GemmConfig& c, std::size_t smem_limit) {
  Sm90aSpec s{.ab = p.ab_dtype,
              .d = p.d_dtype,
              .a_k_major = p.a.row_major,
              .b_k_major = !p.b.row_major,
              .consumers = c.pingpong ? 2 : c.tile_m / 64,
              .pingpong = c.pingpong,
              .wg_rows = c.pingpong ? c.tile_m : 64,
              .tile_n = c.tile_n,
              .stages = c.stages,
              .cluster_m = c.cluster_m,
              .cluster_n = c.cluster_n,
              .stream_k = c.stream_k,
              .has_c = p.has_c,
              .amax = p.amax};
  // Fewer rows than a tile: load only those (Sm90aSpec::a_rows).
  if (p.a.row_major && c.cluster_n == 1 && p.m < s.tile_m()) s.a_rows = static_cast<int>(ceil_div(p.m, 8) * 8);
  while (smem_limit && sm90a_smem(s).bytes > smem_limit && s.epilogue_width() > 64 &&
         s.epilogue_width() % 128 == 0)
    s.epilogue_cols = s.epilogue_width() / 2;
  return s;
}

const GemmPath& sm90a_gemm_path() {
  static const Sm90aPath path;
  return path;
}

}  // namespace warpforge::ops
