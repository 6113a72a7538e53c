// The sm90a path of GemmAmax: the TMA + wgmma kernel of
// sm90a_gemm_amax_kernel.hpp, what it refuses (the sm80 path takes the
// rest), and its launch.
#include <algorithm>
#include <array>
#include <mutex>
#include <limits>
#include <optional>
#include <vector>

#include "block_scaled_maps.hpp"
#include "gemm_amax_path.hpp"
#include "sm90a_gemm_amax_design.hpp"
#include "sm90a_gemm_amax_kernel.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

std::int64_t output_tiles(const GemmAmaxProblem& p, int tile_n) {
  return (p.m + kSm90aGemmAmaxTileM - 1) / kSm90aGemmAmaxTileM * ((p.n + tile_n - 1) / tile_n) * p.l;
}

// The raw bytes of a K-major operand with a box of one raw stage's bytes x
// box_rows: no swizzle for the dequantizer (each row of the box contiguous
// in shared memory), the 128-byte swizzle for fp8_mma's wgmma.
runtime::TensorMapDesc raw_map(DType ab, runtime::DevicePtr address, std::int64_t rows, std::int64_t k,
                               std::int64_t l, const MatrixStrides& s, std::uint32_t box_rows,
                               const Sm90aGemmAmaxTiling& t) {
  // fp8_mma: wgmma reads the codes themselves, K-major in 128-byte rows
  return code_map(ab, address, rows, k, l, s, sm90a_gemm_amax_raw_row_bytes(ab, t), box_rows,
                  t.fp8_mma ? runtime::TensorMapSwizzle::b128 : runtime::TensorMapSwizzle::none);
}

// The design a tiling runs (the kernel builder's dispatch).
const Sm90aGemmAmaxDesign& design_of(const Sm90aGemmAmaxTiling& t) {
  if (t.fp8_mma) return sm90a_amax::fp8_mma_design();
  return t.dequant_warpgroups ? sm90a_amax::dequantized_design() : sm90a_amax::converting_design();
}

// The mma tile and cluster the options ask for, against what the designs
// take: a width none runs, a width none runs for this data and precision
// (each such design's reason), a cluster the chosen design does not form.
void tile_refusals(std::vector<std::string>& why, const GemmAmaxProblem& p, const runtime::Device& device) {
  const auto& designs = sm90a_gemm_amax_designs();
  auto widths = [&](bool pairs_only) {
    std::string text;
    std::vector<int> seen;
    for (const Sm90aGemmAmaxDesign* d : designs)
      for (int w : d->widths)
        if ((!pairs_only || d->pairs) && std::find(seen.begin(), seen.end(), w) == seen.end()) {
          seen.push_back(w);
          text += std::string(text.empty() ? "" : ", ") + "128x" + std::to_string(w);
        }
    const std::size_t last = text.rfind(", ");
    return last == std::string::npos ? text : text.substr(0, last) + " or " + text.substr(last + 2);
  };
  auto has = [](const Sm90aGemmAmaxDesign* d, int w) {
    return std::find(d->widths.begin(), d->widths.end(), w) != d->widths.end();
  };
  if (p.tile) {
    std::vector<std::string> reasons;
    bool some_width = false, runs = false;
    for (const Sm90aGemmAmaxDesign* d : designs) {
      if (!has(d, static_cast<int>(p.tile->n))) continue;
      some_width = true;
      if (const auto reason = d->refuses(p))
        reasons.push_back(*reason);
      else
        runs = true;
    }
    const std::string tile = "mma tile " + std::to_string(p.tile->m) + "x" + std::to_string(p.tile->n);
    if (p.tile->m != 128 || !some_width) {
      why.push_back(tile + ": the sm90a kernel's CTA tile is " + widths(false));
    } else if (!runs) {
      std::string text = tile + " with " + (p.ab_dtype == DType::e2m1 ? "FP4" : "FP8") + " data: ";
      for (std::size_t i = 0; i < reasons.size(); ++i) text += (i ? "; " : "") + reasons[i];
      why.push_back(text);
    }
  }
  if (p.cluster && (p.cluster->m != 1 || p.cluster->n != 1)) {
    const Sm90aGemmAmaxTiling tiling = sm90a_gemm_amax_tiling(p, device);
    const bool pair = p.cluster->m == 2 && p.cluster->n == 1;
    if (!(pair && design_of(tiling).pairs)) {
      std::string pairing;
      for (const Sm90aGemmAmaxDesign* d : designs)
        if (d->pairs) pairing += std::string(pairing.empty() ? "" : ", ") + std::string(d->scheme);
      why.push_back("cluster shape " + std::to_string(p.cluster->m) + "x" + std::to_string(p.cluster->n) +
                    (pair ? " with 128x" + std::to_string(tiling.tile_n) + " tiles" : std::string()) +
                    ": the sm90a kernel runs 1x1, or 2x1 with " + widths(true) + " tiles (its " + pairing + ")");
    }
  }
}

class Sm90aLaunch final : public GemmAmaxLaunch {
 public:
  Sm90aLaunch(const GemmAmaxProblem& p, const runtime::Device& device, bool own_workspace)
      : p_(p),
        tiling_(sm90a_gemm_amax_tiling(p, device)),
        device_(device),
        module_(device, build_sm90a_gemm_amax(p, tiling_)),
        workspace_(device, tiling_.splits > 1 ? sm90a_gemm_amax_workspace_bytes(p, tiling_) : 0, own_workspace) {
    const int cluster = tiling_.cluster_m;
    const std::int64_t tiles_m = (p.m + kSm90aGemmAmaxTileM - 1) / kSm90aGemmAmaxTileM;
    const std::int64_t units = (tiles_m + cluster - 1) / cluster * ((p.n + tiling_.tile_n - 1) / tiling_.tile_n) *
                               p.l * tiling_.splits;
    config_.block = {static_cast<std::uint32_t>(sm90a_gemm_amax_threads(tiling_))};
    config_.dynamic_shared_bytes = sm90a_gemm_amax_smem_bytes(p.ab_dtype, tiling_);
    // Persistent: one CTA per SM at most (the shared memory allows no
    // more); in clusters, as many pairs as are resident at once (a cluster
    // lives inside one GPC, so fewer than SMs / 2 may fit).
    std::int64_t resident = std::max(device.properties().sm_count, 1);
    if (cluster > 1) {
      config_.cluster = {static_cast<std::uint32_t>(cluster)};
      config_.grid = {static_cast<std::uint32_t>(cluster)};  // one cluster, for the occupancy query
      resident = std::max<std::int64_t>(module_.max_active_clusters(sm90a_gemm_amax_name(p, tiling_), config_), 1);
    }
    config_.grid = {static_cast<std::uint32_t>(std::min(units, resident) * cluster)};
  }

  void run(const GemmAmaxOperands& o, runtime::Stream* stream) override {
    std::vector<runtime::Arg> args;
    {
      std::lock_guard lock(maps_mutex_);
      const std::array<runtime::DevicePtr, 4> addresses{o.a.address(), o.b.address(), o.sfa.address(),
                                                        o.sfb.address()};
      if (addresses != cached_addresses_) {
        cached_maps_ = encode_maps(o);
        cached_addresses_ = addresses;
      }
      for (const runtime::TensorMap& map : cached_maps_) args.push_back(runtime::Arg::bytes_of(map));
    }
    args.emplace_back(o.c);
    args.emplace_back(o.amax);
    workspace_.append_arg(args, o);
    module_.launch(sm90a_gemm_amax_name(p_, tiling_), config_, args, stream);
  }

 private:
  // The tensor maps hold the operands' addresses: they are encoded (on the
  // host) when an address changes, not every launch.
  std::array<runtime::TensorMap, 4> encode_maps(const GemmAmaxOperands& o) const {
    const auto map_a = raw_map(p_.ab_dtype, o.a.address(), p_.m, p_.k, p_.l, p_.a, kSm90aGemmAmaxTileM, tiling_);
    const auto map_b = raw_map(p_.ab_dtype, o.b.address(), p_.n, p_.k, p_.l, p_.b,
                               static_cast<std::uint32_t>(sm90a_gemm_amax_b_rows(tiling_)), tiling_);
    const auto map_sfa = scale_map(o.sfa.address(), ScaleFactorLayout{p_.m, p_.k, p_.l, p_.vec});
    const auto map_sfb = scale_map(o.sfb.address(), ScaleFactorLayout{p_.n, p_.k, p_.l, p_.vec});
    return {runtime::make_tensor_map(device_, map_a), runtime::make_tensor_map(device_, map_b),
            runtime::make_tensor_map(device_, map_sfa), runtime::make_tensor_map(device_, map_sfb)};
  }

  GemmAmaxProblem p_;
  Sm90aGemmAmaxTiling tiling_;
  runtime::Device device_;
  runtime::Module module_;
  runtime::LaunchConfig config_;
  // Split-K's sums and flags: one launch at a time uses it (launches on one
  // stream, as GemmAmax's execute documents).
  SplitKWorkspace workspace_;
  std::mutex maps_mutex_;
  std::array<runtime::DevicePtr, 4> cached_addresses_{};  // 0 is never a buffer: nothing cached yet
  std::array<runtime::TensorMap, 4> cached_maps_;
};

class Sm90aPath final : public GemmAmaxPath {
 public:
  std::string_view name() const override { return "sm90a"; }

  std::vector<std::string> refusals(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    std::vector<std::string> why;
    // wgmma and setmaxnreg exist only on sm_90a (PTX ISA 12, "Target ISA
    // notes"); the simulator stands for a GPU of its target
    // (sim::SimOptions::target, sm_90a by default).
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " + std::string(ptx::name(device.target())) +
                    "; the sm90a kernel needs sm_90a (compute capability 9.0)");
    // Every scale dtype and block size the rules allow (e8m0/32, e8m0/16 and
    // e4m3/16) is the kernel's.
    if (p.ab_dtype != DType::e4m3 && p.ab_dtype != DType::e5m2 && p.ab_dtype != DType::e2m1)
      why.push_back("A and B are " + std::string(runtime::name(p.ab_dtype)) +
                    "; the sm90a kernel takes FP8 (e4m3, e5m2) or FP4 (e2m1) data");
    if (p.c_dtype != DType::f32 && p.c_dtype != DType::bf16 && p.c_dtype != DType::f16)
      why.push_back("C is " + std::string(runtime::name(p.c_dtype)) + "; the sm90a kernel writes f32, bf16 or f16 C");
    // TMA (cuTensorMapEncodeTiled) takes strides of nonzero multiples of 16 bytes.
    const KMajorOperandRule rule{.kernel = "the sm90a kernel", .loads = "TMA loads",
                                 .others = "the sm80 kernel takes the others", .nonzero_batch = true};
    check_k_major_operand(why, "A", p.ab_dtype, p.a, p.l, rule);
    check_k_major_operand(why, "B", p.ab_dtype, p.b, p.l, rule);
    tile_refusals(why, p, device);
    // TMA coordinates are signed 32-bit (PTX ISA 9.7.9.25.5.1); the kernel
    // counts output tiles and addresses scale bytes with 32-bit integers.
    const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
    const std::int64_t tiles = output_tiles(p, 64);
    const std::int64_t scale_bytes = p.vec <= 0 ? 0 : std::max(ScaleFactorLayout{p.m, p.k, p.l, p.vec}.bytes(),
                                              ScaleFactorLayout{p.n, p.k, p.l, p.vec}.bytes());
    if (p.m > limit || p.n > limit || p.k > limit || tiles > limit || scale_bytes > limit)
      why.push_back("problem " + p.describe() +
                    ": the sm90a kernel takes M, N, K, output tiles and scale bytes up to 2^31 - 1");
    const std::size_t bytes = sm90a_gemm_amax_smem_bytes(p.ab_dtype, sm90a_gemm_amax_tiling(p, device));
    const std::size_t optin = device.properties().shared_bytes_per_block_optin;
    if (optin && bytes > optin)
      why.push_back(std::to_string(bytes) + " bytes of shared memory; device '" + device.properties().name +
                    "' allows " + std::to_string(optin) + " per block");
    return why;
  }

  std::string configuration(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    const Sm90aGemmAmaxTiling t = sm90a_gemm_amax_tiling(p, device);
    return "128x" + std::to_string(t.tile_n) + " tiles, " + std::string(design_of(t).scheme) + ", K split " +
           std::to_string(t.splits) + " ways, cluster " + std::to_string(t.cluster_m) + "x1";
  }

  std::size_t workspace_bytes(const GemmAmaxProblem& p, const runtime::Device& device) const override {
    const Sm90aGemmAmaxTiling t = sm90a_gemm_amax_tiling(p, device);
    return t.splits > 1 ? sm90a_gemm_amax_workspace_bytes(p, t) : 0;
  }

  std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& p, const runtime::Device& device,
                                          bool own_workspace) const override {
    return std::make_unique<Sm90aLaunch>(p, device, own_workspace);
  }
};

}  // namespace

// The designs that run the problem's data at its precision offer their
// tile widths (or the mma tile the options ask for); the widest where that
// gives at least as many tiles as SMs is taken, or, where its design
// splits K, one that gives at most half as many: then K split in two or
// four (the decode shape M = 128: 64 tiles, 128 units on 132 SMs); else
// the next narrower. The design at that width sets the rest (its account).
Sm90aGemmAmaxTiling sm90a_gemm_amax_tiling(const GemmAmaxProblem& p, const runtime::Device& device) {
  std::vector<std::pair<int, const Sm90aGemmAmaxDesign*>> offers;
  for (const Sm90aGemmAmaxDesign* d : sm90a_gemm_amax_designs())
    for (int w : d->widths)
      if (!d->refuses(p) && (!p.tile || w == p.tile->n)) offers.push_back({w, d});
  std::stable_sort(offers.begin(), offers.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (offers.empty()) {  // an mma tile no design runs for this data (refusals say so): the first with the width
    const int w = p.tile ? static_cast<int>(p.tile->n) : 256;
    for (const Sm90aGemmAmaxDesign* d : sm90a_gemm_amax_designs())
      if (std::find(d->widths.begin(), d->widths.end(), w) != d->widths.end()) offers.push_back({w, d});
    if (offers.empty()) offers.push_back({w, sm90a_gemm_amax_designs().front()});
  }
  const std::int64_t sms = std::max(device.properties().sm_count, 1);
  for (std::size_t i = 0; i < offers.size(); ++i) {
    const auto [w, design] = offers[i];
    const std::int64_t tiles = output_tiles(p, w);
    if (!(tiles >= sms || (design->splits && 2 * tiles <= sms) || i + 1 == offers.size())) continue;
    Sm90aGemmAmaxTiling t = design->tiling(p, w);
    const std::int64_t kblocks = (p.k + sm90a_gemm_amax_codes(t) - 1) / sm90a_gemm_amax_codes(t);
    for (int splits : {4, 2})  // each split needs a K block: (splits - 1) ranges leave one
      if (design->splits && splits * tiles <= sms && (splits - 1) * ((kblocks + splits - 1) / splits) < kblocks) {
        t.splits = splits;
        break;
      }
    return t;
  }
  return {};  // unreachable: the last offer is taken
}

const GemmAmaxPath& sm90a_gemm_amax_path() {
  static const Sm90aPath path;
  return path;
}

}  // namespace warpforge::ops
