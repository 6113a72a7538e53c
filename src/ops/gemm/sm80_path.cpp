// The sm80 GEMM path: the cp.async + ldmatrix + mma.sync kernel of
// sm80_kernel.cpp behind the GemmPath interface.
#include <limits>

#include "gemm_path.hpp"
#include "sm80_kernel.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::Device;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

class Sm80Launch final : public GemmLaunch {
 public:
  Sm80Launch(const Device& device, const GemmProblem& problem, const Sm80KernelSpec& spec)
      : problem_(problem),
        spec_(spec),
        module_(device, build_sm80_gemm(spec)),
        name_(spec.kernel_name()) {}

  void run(const GemmOperands& o, runtime::Stream* stream) override {
    const GemmProblem& p = problem_;
    const GemmConfig& c = spec_.config;
    const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    runtime::LaunchConfig launch{
        .grid = {u32(ceil_div(p.m, c.tile_m) * ceil_div(p.n, c.tile_n)), u32(p.l)},
        .block = {u32(spec_.threads())},
        .dynamic_shared_bytes = u32(spec_.shared_bytes()),
    };
    // Without C the kernel never reads its pointer; D's stands in.
    const runtime::TensorView& c_view = o.c && p.has_c ? *o.c : o.d;
    module_.launch(
        name_, launch,
        {o.a, o.b, c_view, o.d, u32(p.m), u32(p.n), u32(p.k), u32(p.a.ld), u32(p.b.ld),
         u32(p.has_c ? p.c.ld : p.d.ld), u32(p.d.ld), u64(p.a.batch_stride), u64(p.b.batch_stride),
         u64(p.has_c ? p.c.batch_stride : 0), u64(p.d.batch_stride), o.alpha, o.beta},
        stream);
  }

 private:
  GemmProblem problem_;
  Sm80KernelSpec spec_;
  runtime::Module module_;
  std::string name_;
};

class Sm80Path final : public GemmPath {
 public:
  GemmKernel kind() const override { return GemmKernel::sm80; }

  std::vector<std::string> refusals(const GemmProblem& p, const Device& /*device*/) const override {
    // Every device warpforge runs is sm_80 or newer, and sm_80 code runs on
    // all of them, sm_90a ones included (runtime::Module's target rule; PTX
    // ISA 12 "Target ISA notes"): the device refuses nothing here.
    std::vector<std::string> why;
    if (p.amax) why.push_back("amax: the sm80 kernel's epilogue folds no amax (the sm90a kernel's does)");
    // Batches run along grid.y (at most 65535 CTAs, CUDA driver API cuLaunchKernel).
    if (p.l > 65535)
      why.push_back("L = " + std::to_string(p.l) +
                    " batches; the sm80 kernel runs at most 65535 (one grid row each)");
    return why;
  }

  std::vector<std::string> config_refusals(const GemmConfig& config, const GemmProblem& p,
                                           const Device& device) const override {
    std::vector<std::string> why = sm80_config_refusals(config);
    if (config.cluster_m != 1 || config.cluster_n != 1)
      why.push_back("cluster " + std::to_string(config.cluster_m) + "x" +
                    std::to_string(config.cluster_n) + "; the sm80 kernel has no clusters (1x1)");
    if (config.pingpong) why.push_back("pingpong; the sm80 kernel's warps share every tile (no ping-pong schedule)");
    if (config.stream_k) why.push_back("streamk; the sm80 kernel gives each CTA whole tiles (stream-K is sm90a's)");
    if (!why.empty()) return why;
    const Sm80KernelSpec spec = sm80_spec(p, config);
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    if (limit && static_cast<std::size_t>(spec.shared_bytes()) > limit)
      why.push_back(std::to_string(config.stages) + " stages of " + std::to_string(config.tile_m) +
                    "x" + std::to_string(config.tile_k) + " A and " +
                    std::to_string(config.tile_k) + "x" + std::to_string(config.tile_n) +
                    " B tiles take " + std::to_string(spec.shared_bytes()) +
                    " bytes of shared memory; device '" + device.properties().name + "' allows " +
                    std::to_string(limit) + " per block");
    const std::int64_t tiles = ceil_div(p.m, config.tile_m) * ceil_div(p.n, config.tile_n);
    if (tiles > std::numeric_limits<std::int32_t>::max())
      why.push_back(std::to_string(tiles) +
                    " CTAs per batch; the sm80 kernel launches at most 2^31 - 1 (grid.x)");
    return why;
  }

  GemmConfig heuristic(const GemmProblem& p, const Device& device) const override {
    // 128x128 tiles (2x2 warps of 64x64) keep the tensor cores fed where the
    // problem fills the GPU with them; smaller problems take 64x64 tiles for
    // more CTAs. The simulator runs the small tile: it wastes less work on
    // the edges of the small problems it is given.
    const GemmConfig big{
        .tile_m = 128, .tile_n = 128, .tile_k = 32, .stages = 4, .warps_m = 2, .warps_n = 2};
    const GemmConfig small{
        .tile_m = 64, .tile_n = 64, .tile_k = 32, .stages = 3, .warps_m = 2, .warps_n = 2};
    if (device.is_simulator()) return small;
    const std::int64_t big_tiles = ceil_div(p.m, 128) * ceil_div(p.n, 128) * p.l;
    const int sms = device.properties().sm_count;
    if (big_tiles < sms) return small;
    if (!config_refusals(big, p, device).empty())
      return {.tile_m = 128, .tile_n = 128, .tile_k = 32, .stages = 3};
    return big;
  }

  std::vector<GemmConfig> candidates(const GemmProblem& p, const Device& device) const override {
    std::vector<GemmConfig> all = {
        {.tile_m = 128, .tile_n = 128, .tile_k = 32, .stages = 3, .warps_m = 2, .warps_n = 2},
        {.tile_m = 128, .tile_n = 128, .tile_k = 32, .stages = 4, .warps_m = 2, .warps_n = 2},
        {.tile_m = 128, .tile_n = 256, .tile_k = 32, .stages = 3, .warps_m = 2, .warps_n = 4},
        {.tile_m = 256, .tile_n = 128, .tile_k = 32, .stages = 3, .warps_m = 4, .warps_n = 2},
        {.tile_m = 128, .tile_n = 64, .tile_k = 32, .stages = 4, .warps_m = 2, .warps_n = 2},
        {.tile_m = 64, .tile_n = 128, .tile_k = 32, .stages = 4, .warps_m = 2, .warps_n = 2},
        {.tile_m = 64, .tile_n = 64, .tile_k = 32, .stages = 3, .warps_m = 2, .warps_n = 2},
        {.tile_m = 64, .tile_n = 64, .tile_k = 64, .stages = 3, .warps_m = 2, .warps_n = 2},
    };
    if (device.is_simulator())
      all = {all[6],
             {.tile_m = 32, .tile_n = 32, .tile_k = 32, .stages = 2, .warps_m = 1, .warps_n = 1}};
    std::vector<GemmConfig> usable;
    for (const GemmConfig& c : all)
      if (config_refusals(c, p, device).empty()) usable.push_back(c);
    return usable;
  }

  std::unique_ptr<GemmLaunch> compile(const GemmProblem& p, const GemmConfig& config,
                                      const Device& device) const override {
    return std::make_unique<Sm80Launch>(device, p, sm80_spec(p, config));
  }
};

}  // namespace

const GemmPath& sm80_gemm_path() {
  static const Sm80Path path;
  return path;
}

}  // namespace warpforge::ops
