#include "warpforge/ops/grouped_gemm.hpp"

#include "../view_checks.hpp"
#include "grouped_gemm_path.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"

namespace warpforge::ops {
namespace {

using runtime::TensorView;

// The tensors in a fixed order, with their names.
constexpr const char* kNames[] = {"A", "B", "offsets", "D", "SFA", "SFB", "amax"};
std::vector<const TensorView*> listed(const GroupedGemmTensors& t) {
  return {&t.a, &t.b, t.offsets, &t.d, t.sfa, t.sfb, t.amax};
}

std::string join(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += "\n  - " + r;
  return s;
}

// The kernels automatic selection tries, in order.
std::vector<const GroupedGemmPath*> candidates() {
  return {&stream_grouped_gemm_path(), &sm90a_grouped_gemm_path(), &sm80_grouped_gemm_path()};
}

}  // namespace

std::string_view name(GroupedGemmKernel kernel) {
  switch (kernel) {
    case GroupedGemmKernel::automatic:
      return "auto";
    case GroupedGemmKernel::stream:
      return "stream";
    case GroupedGemmKernel::sm90a:
      return "sm90a";
    case GroupedGemmKernel::sm80:
      return "sm80";
  }
  return "?";
}

std::optional<GroupedGemmKernel> parse_grouped_gemm_kernel(std::string_view text) {
  for (GroupedGemmKernel k : {GroupedGemmKernel::automatic, GroupedGemmKernel::stream, GroupedGemmKernel::sm90a,
                             GroupedGemmKernel::sm80})
    if (text == name(k)) return k;
  return std::nullopt;
}

LaunchOffsets::LaunchOffsets(const runtime::Device& device, const GroupedGemmProblem& p) {
  if (p.has_offsets) return;
  const auto end = static_cast<std::int32_t>(group_extent(p));
  own_.emplace(device, sizeof end);
  own_->copy_from_host(&end, sizeof end);
}

runtime::DevicePtr LaunchOffsets::address(const GroupedGemmTensors& t) const {
  return own_ ? own_->address() : t.offsets->address();
}

TensorView LaunchOffsets::view(const GroupedGemmTensors& t, std::int64_t groups) const {
  return TensorView(t.a.device(), address(t), runtime::DType::i32, {groups});
}

struct GroupedGemm::State {
  runtime::Device device;
  GroupedGemmProblem problem;
  std::vector<std::string> refusals;
  std::vector<std::optional<ViewDescription>> views;
  const GroupedGemmPath* path = nullptr;
  std::vector<std::pair<std::string_view, std::vector<std::string>>> passed_over;
  std::unique_ptr<GroupedGemmLaunch> launch;
  bool caller_workspace = false;
};

GroupedGemm::GroupedGemm(const GroupedGemmTensors& t, GroupedGemmOptions options)
    : state_(std::make_unique<State>(State{t.a.device(), {}, {}, {}})) {
  State& s = *state_;
  s.problem = describe_grouped_gemm(t, options, s.refusals);
  s.caller_workspace = options.caller_workspace;
  for (const TensorView* v : listed(t)) s.views.push_back(view_description(v));
  if (options.kernel == GroupedGemmKernel::stream) s.path = &stream_grouped_gemm_path();
  if (options.kernel == GroupedGemmKernel::sm90a) s.path = &sm90a_grouped_gemm_path();
  if (options.kernel == GroupedGemmKernel::sm80) s.path = &sm80_grouped_gemm_path();
  if (!s.path) {
    // The first kernel that takes the problem; where none does, the last
    // one's reasons become check_support()'s, the others' stay in describe().
    for (const GroupedGemmPath* path : candidates()) {
      std::vector<std::string> why = path->refusals(s.problem, s.device);
      if (why.empty()) {
        if (auto slower = path->passed_over(s.problem, s.device)) {
          s.passed_over.push_back({path->name(), {*slower}});
          continue;
        }
        s.path = path;
        break;
      }
      s.passed_over.push_back({path->name(), std::move(why)});
    }
    if (!s.path) {
      s.path = candidates().back();
      s.passed_over.pop_back();
    }
  }
  for (auto& why : s.path->refusals(s.problem, s.device)) s.refusals.push_back(std::move(why));
}

GroupedGemm::~GroupedGemm() = default;
GroupedGemm::GroupedGemm(GroupedGemm&&) noexcept = default;
GroupedGemm& GroupedGemm::operator=(GroupedGemm&&) noexcept = default;

std::vector<std::string> GroupedGemm::check_support() const { return state_->refusals; }

std::string_view GroupedGemm::kernel_name() const { return state_->path->name(); }

std::string GroupedGemm::describe() const {
  const State& s = *state_;
  std::string text;
  if (!s.refusals.empty()) {
    text = "GroupedGemm refuses " + s.problem.describe() + " (kernel " + std::string(s.path->name()) + "):" +
           join(s.refusals);
  } else {
    text = "GroupedGemm " + s.problem.describe() + ": kernel " + std::string(s.path->name()) + ", " +
           s.path->configuration(s.problem, s.device) + ", workspace " + std::to_string(workspace_bytes()) + " bytes";
  }
  for (const auto& [name, why] : s.passed_over) text += "\n  not " + std::string(name) + ":" + join(why);
  return text;
}

std::size_t GroupedGemm::workspace_bytes() const {
  return state_->refusals.empty() ? state_->path->workspace_bytes(state_->problem, state_->device) : 0;
}

void GroupedGemm::compile() {
  State& s = *state_;
  if (!s.refusals.empty()) throw OpsError("GroupedGemm refused " + s.problem.describe() + ":" + join(s.refusals));
  if (!s.launch) s.launch = s.path->compile(s.problem, s.device, !s.caller_workspace);
}

void GroupedGemm::execute(const GroupedGemmTensors& t, runtime::Stream* stream, const TensorView* workspace) {
  compile();
  State& s = *state_;
  std::vector<std::string> mismatches;
  const std::vector<const TensorView*> given = listed(t);
  for (std::size_t i = 0; i < given.size(); ++i) {
    const TensorView* v = given[i];
    if (view_description(v) != s.views[i]) {
      mismatches.push_back(std::string(kNames[i]) + " is " + (v ? v->describe() : std::string("absent")) +
                           ": execute() needs views of the dtype, shape and strides GroupedGemm was built with" +
                           (s.views[i] ? "" : " (none)"));
      continue;
    }
    if (!v) continue;
    if (!(v->device() == s.device))
      mismatches.push_back(std::string(kNames[i]) + " is on " + v->device().describe() + ": GroupedGemm was built for " +
                           s.device.describe());
    else if (i != 2 && i != 3 && i != 6 && v->address() % 16 != 0)  // A, B, SFA, SFB: 16-byte loads
      mismatches.push_back(std::string(kNames[i]) + " starts at an address that is not 16-byte aligned");
    else if (i == 3 && v->address() % 4 != 0)
      mismatches.push_back("D starts at an address that is not 4-byte aligned");
  }
  const std::size_t needed = workspace_bytes();
  if (workspace) {
    if (!(workspace->device() == s.device))
      mismatches.push_back("the workspace is on " + workspace->device().describe() + ": GroupedGemm was built for " +
                           s.device.describe());
    else if (!workspace->is_contiguous() || workspace->extent_bytes() < needed)
      mismatches.push_back("the workspace is " + workspace->describe() + ": it must be contiguous, of " +
                           std::to_string(needed) + " bytes or more (workspace_bytes())");
    else if (workspace->address() % 16 != 0)
      mismatches.push_back("the workspace starts at an address that is not 16-byte aligned");
  } else if (needed && s.caller_workspace) {
    mismatches.push_back("no workspace given: with GroupedGemmOptions::caller_workspace, execute() needs one of " +
                         std::to_string(needed) + " bytes (workspace_bytes()), zero-filled before its first use");
  }
  if (!mismatches.empty()) throw OpsError("GroupedGemm::execute refused:" + join(mismatches));
  s.launch->run(t, workspace, stream);
}

runtime::Tensor grouped_gemm(const TensorView& a, const TensorView& b, const TensorView* offsets,
                             GroupedGemmOptions options, runtime::Stream* stream) {
  // D's shape from A, B and the offsets as GroupedGemm reads them: (M, N),
  // or (G, M, N) for ragged K (B of rank 2 with offsets); a shape the op
  // refuses gets (1, 1), and the op says why.
  std::vector<std::int64_t> shape{1, 1};
  if (a.rank() == 2 && (b.rank() == 2 || b.rank() == 3)) shape = {a.shape()[0], b.shape()[static_cast<std::size_t>(b.rank() - 1)]};
  if (a.rank() == 2 && b.rank() == 2 && offsets && offsets->rank() == 1) shape.insert(shape.begin(), offsets->shape()[0]);
  runtime::Tensor d = runtime::Tensor::empty(a.device(), options.out_dtype, shape);
  const GroupedGemmTensors t{a, b, offsets, d};
  GroupedGemm op(t, options);
  op.execute(t, stream);
  if (stream)
    stream->synchronize();
  else
    a.device().synchronize();
  return d;
}

}  // namespace warpforge::ops
