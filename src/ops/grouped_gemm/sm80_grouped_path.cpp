// The sm80 path of GroupedGemm: the kernel of sm80_grouped_kernel.hpp, its
// configuration and its launch.
#include <algorithm>

#include "grouped_gemm_path.hpp"
#include "sm80_grouped_kernel.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {
namespace {

// 128 x 128 tiles (4 warps of 64 x 64) where the groups are tall; 64 rows
// where they average under 128 rows (ragged M: M / G), so that fewer rows
// of a tile are past its group's end.
GroupedSm80Config sm80_config(const GroupedGemmProblem& p) {
  GroupedSm80Config c;
  if (p.form == GroupedForm::ragged_m && p.m < 128 * p.groups) c.tile_m = 64, c.warps_m = 1;
  return c;
}

class Sm80Launch final : public GroupedGemmLaunch {
 public:
  Sm80Launch(const GroupedGemmProblem& p, const GroupedSm80Config& c, const runtime::Device& device)
      : module_(device, build_sm80_grouped(p, c)), offsets_(device, p), extent_(group_extent(p)), groups_(p.groups) {
    // Persistent: two CTAs an SM (two fit: 48 KB of stages each at the
    // default tile), no more than there can be units.
    const std::int64_t ctas = 2 * std::max(device.properties().sm_count, 1);
    const std::int64_t units = max_group_units(sm80_grouped_schedule(p, c), extent_);
    config_.grid = {static_cast<std::uint32_t>(std::clamp<std::int64_t>(units, 1, ctas))};
    config_.block = {static_cast<std::uint32_t>(c.threads())};
    config_.dynamic_shared_bytes = static_cast<std::uint32_t>(c.shared_bytes());
  }

  void run(const GroupedGemmTensors& t, const runtime::TensorView*, runtime::Stream* stream) override {
    module_.launch(kSm80GroupedKernel, config_,
                   {t.a, t.b, offsets_.view(t, groups_), t.d, static_cast<std::uint32_t>(extent_)}, stream);
  }

 private:
  runtime::Module module_;
  LaunchOffsets offsets_;
  std::int64_t extent_, groups_;
  runtime::LaunchConfig config_;
};

class Sm80Path final : public GroupedGemmPath {
 public:
  std::string_view name() const override { return "sm80"; }
  std::vector<std::string> refusals(const GroupedGemmProblem& p, const runtime::Device&) const override {
    std::vector<std::string> why = sm80_grouped_refusals(p);
    if (p.groups > kMaxGroups)
      why.push_back("G " + std::to_string(p.groups) + ": the group table holds up to " + std::to_string(kMaxGroups) +
                    " groups");
    return why;
  }
  std::string configuration(const GroupedGemmProblem& p, const runtime::Device&) const override {
    return "tile " + sm80_config(p).describe() + ", persistent over the groups' tiles";
  }
  std::size_t workspace_bytes(const GroupedGemmProblem&, const runtime::Device&) const override { return 0; }
  std::unique_ptr<GroupedGemmLaunch> compile(const GroupedGemmProblem& p, const runtime::Device& device,
                                             bool) const override {
    return std::make_unique<Sm80Launch>(p, sm80_config(p), device);
  }
};

}  // namespace

const GroupedGemmPath& sm80_grouped_gemm_path() {
  static const Sm80Path path;
  return path;
}

}  // namespace warpforge::ops
