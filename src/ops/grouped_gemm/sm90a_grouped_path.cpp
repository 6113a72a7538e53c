// The sm90a path of GroupedGemm: the warp-specialized designs of
// sm90a_grouped_kernel.hpp and (packed weights) sm90a_grouped_rs.hpp,
// their configuration, tensor maps and launch.
#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include "../gemm/tma_operands.hpp"
#include "grouped_gemm_path.hpp"
#include "sm90a_grouped_kernel.hpp"
#include "sm90a_grouped_rs.hpp"
#include "sm90a_grouped_weights.hpp"
#include "warpforge/ptx/target.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"
#include "warpforge/runtime/tensor_map.hpp"

namespace warpforge::ops {
namespace {

// 128 x 256 tiles where N has four of them or more (each A tile serves 256
// columns), else 128 x 128; as many stages as fit beside them.
GroupedSm90aConfig sm90a_config(const GroupedGemmProblem& p) {
  GroupedSm90aConfig c;
  c.tile_n = p.n >= 1024 ? 256 : 128;
  for (c.stages = 8; c.stages > 2 && sm90a_grouped_shared_bytes(p, c) > 220 * 1024;) --c.stages;
  return c;
}

std::int64_t sm_count(const runtime::Device& device) { return std::max(device.properties().sm_count, 1); }

// What a launch runs: the bf16 design, or the RS design of packed weights;
// its work items, the tokens a TMA box of A brings, its workspace (the RS
// design's K splits).
struct Sm90aKernel {
  const char* name;
  ptx::Module module;
  std::int64_t items;
  std::uint32_t shared_bytes, a_rows;
  std::size_t workspace_bytes;
  int consumers, weight_rows;  // consumer warpgroups; the RS design's weight rows a CTA
};
Sm90aKernel sm90a_kernel(const GroupedGemmProblem& p, const runtime::Device& device) {
  if (sm90a_grouped_rs_takes(p)) {
    const GroupedRsConfig c = sm90a_grouped_rs_config(p, sm_count(device));
    return {kSm90aGroupedRsKernel, build_sm90a_grouped_rs(p, c),
            max_group_units(sm90a_grouped_rs_schedule(p, c), group_extent(p)) * c.splits,
            sm90a_grouped_rs_shared_bytes(p, c), static_cast<std::uint32_t>(c.tokens),
            sm90a_grouped_rs_workspace_bytes(p, c), c.consumers, c.rows()};
  }
  const GroupedSm90aConfig c = sm90a_config(p);
  return {kSm90aGroupedKernel, build_sm90a_grouped(p, c),
          max_group_units(sm90a_grouped_schedule(p, c), group_extent(p)), sm90a_grouped_shared_bytes(p, c),
          GroupedSm90aConfig::kTileM, 0, 2, 0};
}

class Sm90aLaunch final : public GroupedGemmLaunch {
 public:
  Sm90aLaunch(const GroupedGemmProblem& p, const runtime::Device& device, bool own_workspace)
      : p_(p), c_(sm90a_config(p)), kernel_(sm90a_kernel(p, device)), device_(device),
        module_(device, kernel_.module), offsets_(device, p) {
    if (own_workspace && kernel_.workspace_bytes > 0) {
      own_.emplace(device, kernel_.workspace_bytes);
      own_->fill(0);  // the split counters at 0; every launch leaves them so
    }
    // Persistent: one CTA an SM (its stages take the shared memory), no more than there can be items.
    config_.grid = {static_cast<std::uint32_t>(std::clamp<std::int64_t>(kernel_.items, 1, sm_count(device)))};
    config_.block = {static_cast<std::uint32_t>(128 * (kernel_.consumers + 1))};  // the consumers and the producer
    config_.dynamic_shared_bytes = kernel_.shared_bytes;
    config_.overlap_previous = true;  // the kernel waits (griddepcontrol.wait) before it reads memory
  }

  void run(const GroupedGemmTensors& t, const runtime::TensorView* workspace, runtime::Stream* stream) override {
    std::vector<runtime::Arg> args;
    {
      // The maps hold the addresses: encoded again (on the host) only when one changes.
      std::lock_guard lock(mutex_);
      const runtime::DevicePtr sfb = t.sfb ? t.sfb->address() : 0;
      if (t.a.address() != a_ || t.b.address() != b_ || sfb != sfb_ ||
          (sm90a_grouped_tma_d(p_) && t.d.address() != d_))
        encode(t);
      for (const runtime::TensorMap& map : maps_) args.push_back(runtime::Arg::bytes_of(map));
    }
    args.emplace_back(t.d);
    args.emplace_back(offsets_.view(t, p_.groups));
    args.emplace_back(static_cast<std::uint32_t>(group_extent(p_)));
    if (kernel_.workspace_bytes > 0)
      args.emplace_back(runtime::TensorView(device_, workspace ? workspace->address() : own_->address(), runtime::DType::u8,
                                            {static_cast<std::int64_t>(kernel_.workspace_bytes)}));
    module_.launch(kernel_.name, config_, args, stream);
  }

 private:
  // A (M, K): K-major as (K, M) in boxes of 64 K x 128 rows, M-major as
  // (M, K) in boxes of 64 x 64 K (the RS design: 64 K x T tokens). B (G, K, N) (ragged K: (K, N)): K-major
  // as (K, N, G) in boxes of 64 K x tile_n columns, N-major as (N, K, G)
  // in boxes of 64 x 64 K (tma_operands.hpp). Packed B: its codes' and
  // scales' maps (GroupedWeightTiles). D's where it leaves by TMA store.
  void encode(const GroupedGemmTensors& t) {
    constexpr std::uint32_t kk = GroupedSm90aConfig::kTileK;
    const MatrixLayout a{.row_major = p_.a.cols_contiguous, .ld = p_.a.ld, .batch_stride = 0};
    const std::int64_t b_groups = p_.form == GroupedForm::ragged_m ? p_.groups : 1;
    const MatrixLayout b{.row_major = p_.b.cols_contiguous, .ld = p_.b.ld, .batch_stride = p_.b.batch};
    maps_ = {runtime::make_tensor_map(
        device_, p_.a.cols_contiguous
                     ? matrix_map(p_.a_dtype, t.a.address(), p_.k, p_.m, 1, a, kk, kernel_.a_rows)
                     : matrix_map(p_.a_dtype, t.a.address(), p_.m, p_.k, 1, a, 64, kk))};
    if (p_.packed_b) {
      const GroupedWeightTiles weights(p_, kernel_.weight_rows);
      maps_.push_back(runtime::make_tensor_map(device_, weights.codes_map(t.b.address())));
      maps_.push_back(runtime::make_tensor_map(device_, weights.scales_map(t.sfb->address())));
      sfb_ = t.sfb->address();
    } else {
      maps_.push_back(runtime::make_tensor_map(
          device_, p_.b.cols_contiguous ? matrix_map(p_.b_dtype, t.b.address(), p_.n, p_.k, b_groups, b, 64, kk)
                                        : matrix_map(p_.b_dtype, t.b.address(), p_.k, p_.n, b_groups, b, kk,
                                                     static_cast<std::uint32_t>(c_.tile_n))));
    }
    if (sm90a_grouped_tma_d(p_)) {  // D (G, M, N) as (N, M, G), boxes of 128 bytes x 64 rows
      const MatrixLayout d{.row_major = true, .ld = p_.d.ld, .batch_stride = p_.d.batch};
      maps_.push_back(runtime::make_tensor_map(
          device_, matrix_map(p_.d_dtype, t.d.address(), p_.n, p_.m, p_.groups, d,
                              static_cast<std::uint32_t>(1024 / runtime::bits(p_.d_dtype)), 64)));
      d_ = t.d.address();
    }
    a_ = t.a.address();
    b_ = t.b.address();
  }

  GroupedGemmProblem p_;
  GroupedSm90aConfig c_;
  Sm90aKernel kernel_;
  runtime::Device device_;
  runtime::Module module_;
  LaunchOffsets offsets_;
  std::optional<runtime::Buffer> own_;
  runtime::LaunchConfig config_;
  std::mutex mutex_;
  runtime::DevicePtr a_ = 0, b_ = 0, sfb_ = 0, d_ = 0;
  std::vector<runtime::TensorMap> maps_;  // A's, B's (packed: the codes' and the scales'), D's (tma_d)
};

class Sm90aPath final : public GroupedGemmPath {
 public:
  std::string_view name() const override { return "sm90a"; }

  std::vector<std::string> refusals(const GroupedGemmProblem& p, const runtime::Device& device) const override {
    std::vector<std::string> why = sm90a_grouped_refusals(p);
    if (device.target() != ptx::Target::sm_90a)
      why.push_back("device '" + device.properties().name + "' has target " + std::string(ptx::name(device.target())) +
                    "; the sm90a grouped kernel needs sm_90a (wgmma, TMA)");
    if (p.groups > kMaxGroups)
      why.push_back("G " + std::to_string(p.groups) + ": the group table holds up to " + std::to_string(kMaxGroups) +
                    " groups");
    if (p.form == GroupedForm::ragged_m && p.m * p.n >= (std::int64_t{1} << 32))
      why.push_back("M x N = " + std::to_string(p.m * p.n) +
                    ": the sm90a grouped kernel counts the zeroed rows' elements in 32 bits");
    return why;
  }

  std::string configuration(const GroupedGemmProblem& p, const runtime::Device& device) const override {
    if (sm90a_grouped_rs_takes(p))
      return "RS form, " + sm90a_grouped_rs_config(p, sm_count(device)).describe() +
             ": the packed weights converted into wgmma's register A, the tokens its N, D stored transposed, "
             "warp-specialized, persistent over the groups' tiles";
    return "tile " + sm90a_config(p).describe() +
           ", warp-specialized (TMA producer, two wgmma consumer warpgroups), persistent over the groups' tiles" +
           (sm90a_grouped_tma_d(p) ? ", D stored by TMA" : "");
  }

  std::size_t workspace_bytes(const GroupedGemmProblem& p, const runtime::Device& device) const override {
    if (!sm90a_grouped_rs_takes(p)) return 0;
    return sm90a_grouped_rs_workspace_bytes(p, sm90a_grouped_rs_config(p, sm_count(device)));
  }

  std::unique_ptr<GroupedGemmLaunch> compile(const GroupedGemmProblem& p, const runtime::Device& device,
                                             bool own_workspace) const override {
    return std::make_unique<Sm90aLaunch>(p, device, own_workspace);
  }
};

}  // namespace

const GroupedGemmPath& sm90a_grouped_gemm_path() {
  static const Sm90aPath path;
  return path;
}

}  // namespace warpforge::ops
