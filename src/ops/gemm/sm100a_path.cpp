// The sm100a GEMM path: the TMA + tcgen05 kernel of sm100a_kernel.hpp behind
// the GemmPath interface. Experimental: it has run on the simulator only,
// whose tcgen05 follows the PTX ISA's text, never on a Blackwell GPU, so
// automatic never chooses it; it runs when named (GemmKernel::sm100a).
#include <array>
#include <mutex>

#include "gemm_path.hpp"
#include "sm100a_kernel.hpp"
#include "tma_operands.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

using runtime::Device;

constexpr const char* kKernel = "the sm100a kernel";

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

Sm100aSpec spec_of(const GemmProblem& p, const GemmConfig& c) {
  return {.ab = p.ab_dtype,
          .d = p.d_dtype,
          .a_k_major = p.a.row_major,
          .b_k_major = !p.b.row_major,
          .stages = c.stages,
          .has_c = p.has_c,
          .pair = c.cluster_m == 2};
}

class Sm100aLaunch final : public GemmLaunch {
 public:
  Sm100aLaunch(const Device& device, const GemmProblem& problem, const Sm100aSpec& spec)
      : device_(device), p_(problem), spec_(spec), module_(device, build_sm100a_gemm(spec)) {}

  void run(const GemmOperands& o, runtime::Stream* stream) override {
    std::vector<runtime::Arg> args;
    {
      std::lock_guard lock(maps_mutex_);
      if (o.a.address() != cached_.a || o.b.address() != cached_.b) cached_ = encode_maps(o);
      for (const runtime::TensorMap& map : cached_.maps)
        args.push_back(runtime::Arg::bytes_of(map));
    }
    const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const auto u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    // A matrix's (row, column, batch) strides in elements.
    const auto strides = [&](const runtime::TensorView& view, const MatrixLayout& l) {
      args.emplace_back(view);
      args.emplace_back(u64(l.row_major ? l.ld : 1));
      args.emplace_back(u64(l.row_major ? 1 : l.ld));
      args.emplace_back(u64(l.batch_stride));
    };
    strides(o.d, p_.d);
    if (p_.has_c) strides(*o.c, p_.c);
    for (std::int64_t v : {p_.m, p_.n, p_.k}) args.emplace_back(u32(v));
    args.emplace_back(o.alpha);
    if (p_.has_c) args.emplace_back(o.beta);
    // A pair's two CTAs take consecutive 128-row tiles along grid.x.
    const std::uint32_t ctas = spec_.pair ? 2 : 1;
    const runtime::LaunchConfig config{.grid = {u32(ceil_div(p_.m, ctas * kSm100aTileM) * ctas),
                                                u32(ceil_div(p_.n, kSm100aTileN)), u32(p_.l)},
                                       .block = {static_cast<std::uint32_t>(kSm100aThreads)},
                                       .cluster = {ctas, 1, 1},
                                       .dynamic_shared_bytes = sm100a_shared_bytes(spec_)};
    module_.launch(spec_.name(), config, args, stream);
  }

 private:
  // The tensor maps hold the operands' addresses: encoded when one changes.
  struct Maps {
    runtime::DevicePtr a = 0, b = 0;
    std::array<runtime::TensorMap, 2> maps;
  };

  // A: (M, K), K-major as (K, M) in one 64 x 128 box; M-major as (M, K) in
  // 64 x 64 boxes. B: (K, N), K-major as (K, N) in one 64 x 128 box (64 x 64
  // in a pair: each CTA loads half the columns); N-major as (N, K) in 64 x 64
  // boxes (sm100a_kernel.cpp, load_tile).
  Maps encode_maps(const GemmOperands& o) const {
    const auto rows = static_cast<std::uint32_t>(kSm100aTileM);
    const std::uint32_t b_rows = spec_.pair ? rows / 2 : rows;
    auto map_a = p_.a.row_major
                     ? matrix_map(p_.ab_dtype, o.a.address(), p_.k, p_.m, p_.l, p_.a, 64, rows)
                     : matrix_map(p_.ab_dtype, o.a.address(), p_.m, p_.k, p_.l, p_.a, 64, 64);
    auto map_b = !p_.b.row_major
                     ? matrix_map(p_.ab_dtype, o.b.address(), p_.k, p_.n, p_.l, p_.b, 64, b_rows)
                     : matrix_map(p_.ab_dtype, o.b.address(), p_.n, p_.k, p_.l, p_.b, 64, 64);
    return {o.a.address(),
            o.b.address(),
            {runtime::make_tensor_map(device_, map_a), runtime::make_tensor_map(device_, map_b)}};
  }

  Device device_;
  GemmProblem p_;
  Sm100aSpec spec_;
  runtime::Module module_;
  std::mutex maps_mutex_;
  Maps cached_;
};

class Sm100aPath final : public GemmPath {
 public:
  GemmKernel kind() const override { return GemmKernel::sm100a; }
  bool chosen_automatically() const override { return false; }

  std::vector<std::string> refusals(const GemmProblem& p, const Device& device) const override {
    std::vector<std::string> why;
    // tcgen05 exists on the architecture-specific Blackwell targets only (PTX
    // ISA 9.7.16). The simulator runs it whatever target it stands for.
    if (!device.is_simulator() && device.target() != ptx::Target::sm_100a)
      why.push_back("device '" + device.properties().name + "' has target " +
                    std::string(ptx::name(device.target())) +
                    "; the sm100a kernel needs sm_100a (compute capability 10.0) or the simulator");
    if (p.ab_dtype != runtime::DType::bf16 && p.ab_dtype != runtime::DType::f16)
      why.push_back("A and B are " + std::string(runtime::name(p.ab_dtype)) +
                    "; the sm100a kernel takes bf16 or f16");
    if (p.amax)
      why.push_back("amax: the sm100a kernel's epilogue folds no amax (the sm90a kernel's does)");
    check_tma_operand(why, kKernel, "A", p.a, p.ab_dtype, p.l);
    check_tma_operand(why, kKernel, "B", p.b, p.ab_dtype, p.l);
    check_tma_extents(why, p);
    // Tiles run along grid.y and batches along grid.z (at most 65535 each,
    // CUDA driver API cuLaunchKernel).
    if (ceil_div(p.n, kSm100aTileN) > 65535)
      why.push_back("N = " + std::to_string(p.n) +
                    "; the sm100a kernel runs at most 65535 tiles of 128 along N");
    if (p.l > 65535)
      why.push_back("L = " + std::to_string(p.l) +
                    " batches; the sm100a kernel runs at most 65535 (grid.z)");
    return why;
  }

  std::vector<std::string> config_refusals(const GemmConfig& c, const GemmProblem& p,
                                           const Device& device) const override {
    std::vector<std::string> why;
    if (c.tile_m != kSm100aTileM || c.tile_n != kSm100aTileN || c.tile_k != kSm100aTileK)
      why.push_back("tile " + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + "x" +
                    std::to_string(c.tile_k) +
                    "; the sm100a kernel runs 128x128x64 (one M = 128, N = 128 "
                    "accumulator in tensor memory, K 64 per 128-byte swizzled row)");
    if (c.stages < 1 || c.stages > 8)
      why.push_back("stages " + std::to_string(c.stages) + "; 1..8");
    if (c.warps_m != 1 || c.warps_n != 1)
      why.push_back("warps " + std::to_string(c.warps_m) + "x" + std::to_string(c.warps_n) +
                    "; the sm100a kernel's four warps have fixed roles (w1x1)");
    if ((c.cluster_m != 1 && c.cluster_m != 2) || c.cluster_n != 1)
      why.push_back("cluster " + std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n) +
                    "; the sm100a kernel runs without clusters (1x1, .cta_group::1) or on CTA "
                    "pairs along M (2x1, .cta_group::2)");
    if (c.pingpong)
      why.push_back("pingpong; the sm100a kernel has one accumulator (no ping-pong schedule)");
    if (c.stream_k) why.push_back("streamk; the sm100a kernel gives each CTA a whole tile");
    if (!why.empty()) return why;
    const std::size_t limit = device.properties().shared_bytes_per_block_optin;
    const std::size_t bytes = sm100a_shared_bytes(spec_of(p, c));
    if (limit && bytes > limit)
      why.push_back(std::to_string(bytes) + " bytes of shared memory; device '" +
                    device.properties().name + "' allows " + std::to_string(limit) + " per block");
    return why;
  }

  // Four stages (128 KiB) keep TMA ahead of the MMAs; the simulator takes
  // two, enough to overlap a load with the MMAs of the slot before. A CTA
  // pair (one M = 256 MMA over both) where M spans more than one tile.
  GemmConfig heuristic(const GemmProblem& p, const Device& device) const override {
    return config(device.is_simulator() ? 2 : 4, p.m > kSm100aTileM ? 2 : 1);
  }

  std::vector<GemmConfig> candidates(const GemmProblem& p, const Device& device) const override {
    std::vector<GemmConfig> usable;
    for (int cluster_m : {1, 2})
      for (int stages : {2, 3, 4, 5, 6})
        if (config_refusals(config(stages, cluster_m), p, device).empty())
          usable.push_back(config(stages, cluster_m));
    return usable;
  }

  std::unique_ptr<GemmLaunch> compile(const GemmProblem& p, const GemmConfig& c,
                                      const Device& device) const override {
    return std::make_unique<Sm100aLaunch>(device, p, spec_of(p, c));
  }

 private:
  static GemmConfig config(int stages, int cluster_m) {
    return {.tile_m = kSm100aTileM,
            .tile_n = kSm100aTileN,
            .tile_k = kSm100aTileK,
            .stages = stages,
            .warps_m = 1,
            .warps_n = 1,
            .cluster_m = cluster_m};
  }
};

}  // namespace

const GemmPath& sm100a_gemm_path() {
  static const Sm100aPath path;
  return path;
}

}  // namespace warpforge::ops
