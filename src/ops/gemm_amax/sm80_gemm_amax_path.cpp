// The sm80 path of GemmAmax: the kernel of sm80_gemm_amax_kernel.hpp, its
// refusals, and its launch.
#include <string>

#include "gemm_amax_path.hpp"
#include "sm80_gemm_amax_kernel.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

constexpr GemmAmaxTile kDefaultTile{64, 64};

bool supported_extent(int v) {
  return v == 32 || v == 64 || v == 128;
}

class Sm80Launch final : public GemmAmaxLaunch {
 public:
  Sm80Launch(const GemmAmaxProblem& p, GemmAmaxTile tile, const runtime::Device& device)
      : module_(device, build_sm80_gemm_amax(p, tile)), tables_(device, 512 * sizeof(float)) {
    tables_.upload(sm80_gemm_amax_tables(p));
    config_.grid = {static_cast<std::uint32_t>((p.m + tile.m - 1) / tile.m),
                    static_cast<std::uint32_t>((p.n + tile.n - 1) / tile.n),
                    static_cast<std::uint32_t>(p.l)};
    config_.block = {static_cast<std::uint32_t>(tile.m / 32 * (tile.n / 32) * 32)};
  }

  void run(const GemmAmaxOperands& o, runtime::Stream* stream) override {
    module_.launch(kSm80GemmAmaxKernel, config_, {o.a, o.b, o.sfa, o.sfb, o.c, o.amax, tables_},
                   stream);
  }

 private:
  runtime::Module module_;
  runtime::Buffer tables_;
  runtime::LaunchConfig config_;
};

class Sm80Path final : public GemmAmaxPath {
 public:
  std::string_view name() const override { return "sm80"; }

  std::vector<std::string> refusals(const GemmAmaxProblem& p,
                                    const runtime::Device&) const override {
    std::vector<std::string> why;
    const GemmAmaxTile tile = p.tile.value_or(kDefaultTile);
    if (!supported_extent(tile.m) || !supported_extent(tile.n))
      why.push_back("mma tile " + std::to_string(tile.m) + "x" + std::to_string(tile.n) +
                    ": the sm80 kernel takes tile M and N each in {32, 64, 128}");
    if (p.cluster && (p.cluster->m != 1 || p.cluster->n != 1))
      why.push_back("cluster shape " + std::to_string(p.cluster->m) + "x" +
                    std::to_string(p.cluster->n) +
                    ": the sm80 kernel runs without clusters (1x1 only; 2x1 runs on the sm90a kernel, "
                    "with 128x256 tiles of k-major A and B on sm_90a)");
    check_offsets_and_batches(why, p, "the sm80 kernel");
    return why;
  }

  std::string configuration(const GemmAmaxProblem& p, const runtime::Device&) const override {
    const GemmAmaxTile tile = p.tile.value_or(kDefaultTile);
    return std::to_string(tile.m) + "x" + std::to_string(tile.n) + " tiles";
  }

  std::size_t workspace_bytes(const GemmAmaxProblem&, const runtime::Device&) const override { return 0; }

  std::unique_ptr<GemmAmaxLaunch> compile(const GemmAmaxProblem& p, const runtime::Device& device,
                                          bool /*own_workspace: it needs none*/) const override {
    return std::make_unique<Sm80Launch>(p, p.tile.value_or(kDefaultTile), device);
  }
};

}  // namespace

const GemmAmaxPath& sm80_gemm_amax_path() {
  static const Sm80Path path;
  return path;
}

}  // namespace warpforge::ops
