// The kernel family behind ops::GroupedGemm: what each kernel refuses and
// how it compiles into a launch. In the order automatic selection tries
// them: stream (packed block-scaled B; bf16 B with K contiguous at few
// tokens a group), sm90a (bf16/f16 ragged M on Hopper: the warp-specialized
// template), sm80 (bf16/f16, both forms, every device).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "grouped_gemm_problem.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/device.hpp"
#include "warpforge/runtime/stream.hpp"

namespace warpforge::ops {

class GroupedGemmLaunch {
 public:
  virtual ~GroupedGemmLaunch() = default;
  // The views match the compiled problem; workspace: the caller's, or null
  // for the launch's own.
  virtual void run(const GroupedGemmTensors& tensors, const runtime::TensorView* workspace,
                   runtime::Stream* stream) = 0;
};

class GroupedGemmPath {
 public:
  virtual ~GroupedGemmPath() = default;
  virtual std::string_view name() const = 0;
  // Every reason this kernel cannot run the problem on the device (called
  // on every problem, also a partly described one that the op refused).
  virtual std::vector<std::string> refusals(const GroupedGemmProblem& p, const runtime::Device& device) const = 0;
  // Why automatic selection passes this kernel over although it could run
  // the problem (another is faster there); nullopt where it takes it.
  virtual std::optional<std::string> passed_over(const GroupedGemmProblem&, const runtime::Device&) const {
    return std::nullopt;
  }
  // The configuration it would run (tiles, splits), for describe().
  virtual std::string configuration(const GroupedGemmProblem& p, const runtime::Device& device) const = 0;
  virtual std::size_t workspace_bytes(const GroupedGemmProblem& p, const runtime::Device& device) const = 0;
  // own_workspace: allocate (and zero) the workspace now; else every run brings one.
  virtual std::unique_ptr<GroupedGemmLaunch> compile(const GroupedGemmProblem& p, const runtime::Device& device,
                                                     bool own_workspace) const = 0;
};

// The most groups a kernel's group table (group_schedule.hpp) takes: warp 0
// reads G / 32 offsets a lane into registers.
inline constexpr std::int64_t kMaxGroups = 4096;

const GroupedGemmPath& stream_grouped_gemm_path();
const GroupedGemmPath& sm90a_grouped_gemm_path();
const GroupedGemmPath& sm80_grouped_gemm_path();

// The offsets a launch passes: the caller's, or, for one group given
// without them, its own one-element buffer holding the group's end (the
// extent), written when it is made.
class LaunchOffsets {
 public:
  LaunchOffsets(const runtime::Device& device, const GroupedGemmProblem& p);
  runtime::DevicePtr address(const GroupedGemmTensors& t) const;
  // As a kernel argument (an int32 view of `groups` elements).
  runtime::TensorView view(const GroupedGemmTensors& t, std::int64_t groups) const;

 private:
  std::optional<runtime::Buffer> own_;
};

// The extent the offsets are clamped to: M (ragged M) or K (ragged K).
inline std::int64_t group_extent(const GroupedGemmProblem& p) {
  return p.form == GroupedForm::ragged_m ? p.m : p.k;
}

}  // namespace warpforge::ops
