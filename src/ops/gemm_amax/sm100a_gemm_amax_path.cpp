// The sm100a path of GemmAmax: the tcgen05 kernel of sm100a_gemm_amax_kernel.hpp,
// its refusals, and its launch. It has run on the simulator only, whose
// tcgen05 follows the PTX ISA's text, never on a Blackwell GPU: automatic
// takes it on a simulator standing for sm_100a (sim::SimOptions::target), and
// on a GPU only when asked for (GemmAmaxKernel::sm100a).
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "block_scaled_maps.hpp"
#include "gemm_amax_path.hpp"
#include "sm100a_gemm_amax_kernel.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

// The TMA pipeline where A and B allow it (k-major, 16-byte rows): four
// stages, two on the simulator (enough to overlap a step's loads with the
// MMAs of the one before); else the staged kernel (any strides).
int stages_for(const GemmAmaxProblem& p, const runtime::Device& device) {
  std::vector<std::string> why;
  const KMajorOperandRule rule{
      .kernel = "the sm100a kernel's pipeline", .loads = "TMA loads", .nonzero_batch = true};
  check_k_major_operand(why, "A", p.ab_dtype, p.a, p.l, rule);
  check_k_major_operand(why, "B", p.ab_dtype, p.b, p.l, rule);
  if (!why.empty()) return 0;
  return device.is_simulator() ? 2 : 4;
}

// CTA pairs (one M = 256 MMA over two CTAs, .cta_group::2) on the pipeline
// when asked for (cluster 2x1) or, unasked, where M spans more than one tile.
bool pair_for(const GemmAmaxProblem& p, int stages) {
  if (stages == 0) return false;
  if (p.cluster) return p.cluster->m == 2;
  return p.m > kSm100aGemmAmaxTile.m;
}

class Sm100aLaunch final : public GemmAmaxLaunch {
 public:
  Sm100aLaunch(const GemmAmaxProblem& p, const runtime::Device& device)
      : p_(p),
        device_(device),
        stages_(stages_for(p, device)),
        pair_(pair_for(p, stages_)),
        module_(device, build_sm100a_gemm_amax(p, stages_, pair_)) {
    const GemmAmaxTile t = kSm100aGemmAmaxTile;
    const std::int64_t ctas = pair_ ? 2 : 1;  // a pair's CTAs take consecutive tiles along M
    config_.grid = {static_cast<std::uint32_t>((p.m + ctas * t.m - 1) / (ctas * t.m) * ctas),
                    static_cast<std::uint32_t>((p.n + t.n - 1) / t.n),
                    static_cast<std::uint32_t>(p.l)};
    config_.cluster = {static_cast<std::uint32_t>(ctas), 1, 1};
    config_.block = {128};
    config_.dynamic_shared_bytes = sm100a_gemm_amax_shared_bytes(p, stages_);
  }

  void run(const GemmAmaxOperands& o, runtime::Stream* stream) override {
    if (stages_ == 0) {
      module_.launch(kSm100aGemmAmaxKernel, config_, {o.a, o.b, o.sfa, o.sfb, o.c, o.amax}, stream);
      return;
    }
    // Each step's box: 128 rows by the step's bytes (4 scale blocks of codes),
    // swizzled with that span (sm100a_gemm_amax_kernel.hpp).
    const auto step_bytes = static_cast<std::uint32_t>(code_bytes(p_.ab_dtype, 4 * p_.vec));
    const auto swizzle = step_bytes == 128  ? runtime::TensorMapSwizzle::b128
                         : step_bytes == 64 ? runtime::TensorMapSwizzle::b64
                                            : runtime::TensorMapSwizzle::b32;
    const auto rows = static_cast<std::uint32_t>(kSm100aGemmAmaxTile.m);
    const std::uint32_t b_rows = pair_ ? rows / 2 : rows;  // a pair's CTA loads half of B's
    const std::array<runtime::TensorMap, 4> maps = {
        runtime::make_tensor_map(device_, code_map(p_.ab_dtype, o.a.address(), p_.m, p_.k, p_.l,
                                                   p_.a, step_bytes, rows, swizzle)),
        runtime::make_tensor_map(device_, code_map(p_.ab_dtype, o.b.address(), p_.n, p_.k, p_.l,
                                                   p_.b, step_bytes, b_rows, swizzle)),
        runtime::make_tensor_map(
            device_, scale_map(o.sfa.address(), ScaleFactorLayout{p_.m, p_.k, p_.l, p_.vec})),
        runtime::make_tensor_map(
            device_, scale_map(o.sfb.address(), ScaleFactorLayout{p_.n, p_.k, p_.l, p_.vec}))};
    std::vector<runtime::Arg> args;
    for (const runtime::TensorMap& map : maps) args.push_back(runtime::Arg::bytes_of(map));
    args.emplace_back(o.c);
    args.emplace_back(o.amax);
    module_.launch(kSm100aGemmAmaxKernel, config_, args, stream);
  }

 private:
  GemmAmaxProblem p_;
  runtime::Device device_;
  int stages_;
  bool pair_;
  runtime::Module module_;
  runtime::LaunchConfig config_;
};

class Sm100aPath final : public GemmAmaxPath {
 public:
  std::string_view name() const override { return "sm100a"; }

  std::vector<std::string> refusals(const GemmAmaxProblem& p,
                                    const runtime::Device& device) const override {
    std::vector<std::string> why;
    // tcgen05 exists on the architecture-specific Blackwell targets only (PTX
    // ISA 9.7.16). The simulator runs it whatever target it stands for.
    if (!device.is_simulator() && device.target() != ptx::Target::sm_100a)
      why.push_back("device '" + device.properties().name + "' has target " +
                    std::string(ptx::name(device.target())) +
                    "; the sm100a kernel needs sm_100a (compute capability 10.0) or the simulator");
    const GemmAmaxTile tile = kSm100aGemmAmaxTile;
    if (p.tile && *p.tile != tile)
      why.push_back("mma tile " + std::to_string(p.tile->m) + "x" + std::to_string(p.tile->n) +
                    ": the sm100a kernel takes 128x128 (one M = 128 tcgen05.mma accumulator)");
    if (p.cluster && ((p.cluster->m != 1 && p.cluster->m != 2) || p.cluster->n != 1))
      why.push_back("cluster shape " + std::to_string(p.cluster->m) + "x" +
                    std::to_string(p.cluster->n) +
                    ": the sm100a kernel runs without clusters (1x1, .cta_group::1) or on CTA "
                    "pairs along M (2x1, .cta_group::2)");
    if (p.cluster && p.cluster->m == 2 && stages_for(p, device) == 0)
      why.push_back(
          "cluster shape 2x1: the sm100a kernel runs CTA pairs on its TMA pipeline only, which "
          "needs k-major A and B with 16-byte rows");
    // The block-scaled kinds' scale formats (PTX ISA 9.7.16, tcgen05.mma): ue8m0 per 32 (MXFP8,
    // MXFP4) or ue4m3 per 16 (NVFP4); ue8m0 per 16 has no kind in PTX 8.7.
    if (p.ab_dtype == DType::e2m1 && p.sf_dtype == DType::e8m0 && p.vec == 16)
      why.push_back(
          "e2m1 data with e8m0 scales per 16: the sm100a kernel runs MXFP8 and MXFP4 (e8m0 per 32) "
          "and "
          "NVFP4 (e4m3 per 16)");
    check_offsets_and_batches(why, p, "the sm100a kernel");
    return why;
  }

  // Automatic tries it only on sm_100a devices (gemm_amax.cpp).
  std::optional<std::string> passed_over(const GemmAmaxProblem&,
                                         const runtime::Device& device) const override {
    if (device.is_simulator()) return std::nullopt;
    return "experimental: it has never run on a Blackwell GPU, so automatic takes it only on the "
           "simulator; ask "
           "for it by name (kernel sm100a) to run it here";
  }

  std::string configuration(const GemmAmaxProblem& p,
                            const runtime::Device& device) const override {
    const int stages = stages_for(p, device);
    return std::string(pair_for(p, stages) ? "256x128 tiles over CTA pairs (.cta_group::2)"
                                           : "128x128 tiles") +
           ", tcgen05 block-scaled MMA into tensor memory, " +
           (stages
                ? "a TMA ring of " + std::to_string(stages) + " stages (producer and MMA threads)"
                : std::string("one step at a time staged by plain loads (A or B not k-major with "
                              "16-byte rows)")) +
           "; experimental: run on the simulator (which follows the PTX ISA's text) but never on a "
           "Blackwell GPU, "
           "so automatic picks it only on a simulator standing for sm_100a";
  }

  std::size_t workspace_bytes(const GemmAmaxProblem&, const runtime::Device&) const override {
    return 0;
  }

  std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& p, const runtime::Device& device,
                                          bool /*own_workspace: it needs none*/) const override {
    return std::make_unique<Sm100aLaunch>(p, device);
  }
};

}  // namespace

const GemmAmaxPath& sm100a_gemm_amax_path() {
  static const Sm100aPath path;
  return path;
}

}  // namespace warpforge::ops
