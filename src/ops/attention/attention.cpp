// ops::Attention and ops::AttentionBackward: the problem read off the views,
// the kernel family chosen (with why the others were not), the workspace,
// and the checks every execute() makes before it launches.
#include "warpforge/ops/attention.hpp"

#include <optional>

#include "../view_checks.hpp"
#include "attention_path.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"

namespace warpforge::ops {
namespace {

using runtime::TensorView;

struct NamedView {
  const char* role;
  const TensorView* view;  // nullptr: not given
};

std::vector<NamedView> named(const AttentionTensors& t) {
  return {{"Q", &t.q}, {"K", &t.k}, {"V", &t.v}, {"O", &t.o}, {"lse", t.lse},
          {"cu_seqlens_q", t.cu_seqlens_q}, {"cu_seqlens_k", t.cu_seqlens_k}};
}
std::vector<NamedView> named(const AttentionBackwardTensors& t) {
  return {{"Q", &t.q},   {"K", &t.k},   {"V", &t.v},   {"O", &t.o},
          {"lse", &t.lse}, {"dO", &t.d_o}, {"dQ", &t.dq}, {"dK", &t.dk},
          {"dV", &t.dv}, {"cu_seqlens_q", t.cu_seqlens_q}, {"cu_seqlens_k", t.cu_seqlens_k}};
}

std::vector<std::optional<ViewDescription>> descriptions(const std::vector<NamedView>& views) {
  std::vector<std::optional<ViewDescription>> out;
  for (const NamedView& v : views)
    out.push_back(view_description(v.view));
  return out;
}

// Every way `views` differ from the op's construction.
std::vector<std::string> mismatches(const std::vector<NamedView>& views,
                                    const std::vector<std::optional<ViewDescription>>& built,
                                    const runtime::Device& device) {
  std::vector<std::string> why;
  const auto now = descriptions(views);
  for (std::size_t i = 0; i < views.size(); ++i) {
    const NamedView& v = views[i];
    if (now[i].has_value() != built[i].has_value()) {
      why.push_back(std::string(v.role) + (v.view ? " is given" : " is missing") +
                    ": execute() takes the tensors the op was built with");
      continue;
    }
    if (!v.view) continue;
    if (!(*now[i] == *built[i]))
      why.push_back(std::string(v.role) + " is " + v.view->describe() +
                    ": execute() needs a view of the dtype, shape and strides the op was built with");
    else if (!(v.view->device() == device))
      why.push_back(std::string(v.role) + " is on " + v.view->device().describe() +
                    ": the op was built for " + device.describe());
    else if (v.view->dtype() != runtime::DType::f32 && v.view->dtype() != runtime::DType::i32 &&
             v.view->address() % 16 != 0)
      why.push_back(std::string(v.role) + " starts at an address that is not 16-byte aligned");
    else if (v.view->address() % 4 != 0)
      why.push_back(std::string(v.role) + " starts at an address that is not 4-byte aligned");
  }
  return why;
}

// The family that runs `p`: the named one, or the first that accepts it;
// `passed_over` collects the reasons of those tried before it.
template <class Path>
const Path* choose(const std::vector<const Path*>& paths, AttentionKernel wanted, const AttentionProblem& p,
                   const runtime::Device& device, std::vector<std::string>& refusals,
                   std::vector<std::pair<AttentionKernel, std::vector<std::string>>>& passed_over) {
  for (const Path* path : paths) {
    if (wanted != AttentionKernel::automatic && path->kind() != wanted) continue;
    auto why = path->refusals(p, device);
    if (why.empty()) return path;
    if (wanted != AttentionKernel::automatic) {
      for (auto& r : why) refusals.push_back("kernel " + std::string(name(path->kind())) + " refuses: " + r);
      return nullptr;
    }
    passed_over.push_back({path->kind(), std::move(why)});
  }
  if (wanted != AttentionKernel::automatic) {
    std::string kinds;
    for (const Path* path : paths) kinds += (kinds.empty() ? "" : ", ") + std::string(name(path->kind()));
    refusals.push_back("kernel " + std::string(name(wanted)) + " does not run this pass; these do: " + kinds);
    return nullptr;
  }
  for (const auto& [kind, why] : passed_over)
    for (const auto& r : why) refusals.push_back("kernel " + std::string(name(kind)) + " refuses: " + r);
  passed_over.clear();
  return nullptr;
}

template <class Path, class Launch>
struct OpState {
  runtime::Device device;
  AttentionProblem problem;
  std::vector<std::string> refusals;
  std::vector<std::optional<ViewDescription>> views;
  const Path* path = nullptr;
  std::vector<std::pair<AttentionKernel, std::vector<std::string>>> passed_over;
  std::unique_ptr<Launch> launch;
  bool caller_workspace = false;
  std::optional<runtime::Buffer> workspace;

  OpState(const runtime::Device& d, const std::vector<Path const*>& paths, AttentionProblem p,
          std::vector<std::string> why, std::vector<NamedView> named_views, const AttentionOptions& options)
      : device(d), problem(std::move(p)), refusals(std::move(why)), views(descriptions(named_views)),
        caller_workspace(options.caller_workspace) {
    if (refusals.empty()) path = choose(paths, options.kernel, problem, device, refusals, passed_over);
  }

  std::string describe(const char* op) const {
    if (!refusals.empty()) return std::string(op) + " refuses " + problem.describe() + ":" + join_reasons(refusals);
    std::string s = std::string(op) + " " + problem.describe() + ": kernel " + std::string(name(path->kind())) +
                    ", " + path->configuration(problem, device) + ", workspace " +
                    std::to_string(path->workspace_bytes(problem)) + " bytes";
    for (const auto& [kind, why] : passed_over) s += "\n  not " + std::string(name(kind)) + ":" + join_reasons(why);
    return s;
  }

  void compile(const char* op) {
    if (!refusals.empty())
      throw OpsError(std::string(op) + " cannot run " + problem.describe() + ":" + join_reasons(refusals));
    if (launch) return;
    launch = path->compile(problem, device);
    const std::size_t bytes = path->workspace_bytes(problem);
    if (bytes && !caller_workspace) workspace.emplace(device, bytes);
  }
};

}  // namespace

std::string_view name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::automatic:
      return "automatic";
    case AttentionKernel::sm90a:
      return "sm90a";
    case AttentionKernel::sm80:
      return "sm80";
  }
  return "?";
}

std::optional<AttentionKernel> parse_attention_kernel(std::string_view text) {
  for (AttentionKernel k : {AttentionKernel::automatic, AttentionKernel::sm90a, AttentionKernel::sm80})
    if (text == name(k)) return k;
  if (text == "auto") return AttentionKernel::automatic;
  return std::nullopt;
}

// ---- forward ----------------------------------------------------------------

struct Attention::State : OpState<AttentionPath, AttentionLaunch> {
  using OpState::OpState;
};

Attention::Attention(const AttentionTensors& t, AttentionOptions options) {
  std::vector<std::string> why;
  AttentionProblem p = attention_problem(t, options, why);
  state_ = std::make_unique<State>(t.q.device(), attention_paths(), std::move(p), std::move(why), named(t), options);
}

Attention::~Attention() = default;
Attention::Attention(Attention&&) noexcept = default;
Attention& Attention::operator=(Attention&&) noexcept = default;

std::vector<std::string> Attention::check_support() const { return state_->refusals; }
std::string Attention::describe() const { return state_->describe("Attention"); }
std::size_t Attention::workspace_bytes() const {
  return state_->path ? state_->path->workspace_bytes(state_->problem) : 0;
}
void Attention::compile() { state_->compile("Attention"); }

void Attention::execute(const AttentionTensors& t, runtime::Stream* stream) {
  compile();
  auto why = mismatches(named(t), state_->views, state_->device);
  if (!why.empty()) throw OpsError("Attention::execute refused:" + join_reasons(why));
  const auto at = [](const TensorView* v) { return v ? v->address() : runtime::DevicePtr{0}; };
  state_->launch->run({t.q.address(), t.k.address(), t.v.address(), t.o.address(), at(t.lse), at(t.cu_seqlens_q),
                       at(t.cu_seqlens_k)},
                      stream);
}

void Attention::execute_at(const std::array<runtime::DevicePtr, 7>& at, runtime::Stream* stream) {
  compile();
  const State& s = *state_;
  // The same rules as mismatches() for what an address alone shows: given
  // where built with it, Q, K, V, O 16-byte aligned, lse and the offsets 4.
  const char* roles[] = {"Q", "K", "V", "O", "lse", "cu_seqlens_q", "cu_seqlens_k"};
  std::vector<std::string> why;
  for (std::size_t i = 0; i < at.size(); ++i) {
    const bool built = s.views[i].has_value();
    if (built != (at[i] != 0))
      why.push_back(std::string(roles[i]) + (built ? " is missing (address 0)" : " is given; the op was built without it"));
    else if (at[i] % (i < 4 ? 16 : 4) != 0)
      why.push_back(std::string(roles[i]) + " starts at an address that is not " + (i < 4 ? "16" : "4") +
                    "-byte aligned");
  }
  if (!why.empty()) throw OpsError("Attention::execute_at refused:" + join_reasons(why));
  s.launch->run(at, stream);
}

void attention(const AttentionTensors& t, AttentionOptions options, runtime::Stream* stream) {
  execute_once<Attention>(t, options, stream);
}

// ---- backward ---------------------------------------------------------------

struct AttentionBackward::State : OpState<AttentionBackwardPath, AttentionBackwardLaunch> {
  using OpState::OpState;
};

AttentionBackward::AttentionBackward(const AttentionBackwardTensors& t, AttentionOptions options) {
  std::vector<std::string> why;
  AttentionProblem p = attention_backward_problem(t, options, why);
  state_ = std::make_unique<State>(t.q.device(), attention_backward_paths(), std::move(p), std::move(why),
                                   named(t), options);
}

AttentionBackward::~AttentionBackward() = default;
AttentionBackward::AttentionBackward(AttentionBackward&&) noexcept = default;
AttentionBackward& AttentionBackward::operator=(AttentionBackward&&) noexcept = default;

std::vector<std::string> AttentionBackward::check_support() const { return state_->refusals; }
std::string AttentionBackward::describe() const { return state_->describe("AttentionBackward"); }
std::size_t AttentionBackward::workspace_bytes() const {
  return state_->path ? state_->path->workspace_bytes(state_->problem) : 0;
}
void AttentionBackward::compile() { state_->compile("AttentionBackward"); }

void AttentionBackward::execute(const AttentionBackwardTensors& t, runtime::Stream* stream,
                                const TensorView* workspace) {
  compile();
  State& s = *state_;
  auto why = mismatches(named(t), s.views, s.device);
  const std::size_t needed = workspace_bytes();
  if (workspace) {
    if (!(workspace->device() == s.device))
      why.push_back("the workspace is on " + workspace->device().describe() + ": the op was built for " +
                    s.device.describe());
    else if (!workspace->is_contiguous() || workspace->extent_bytes() < needed)
      why.push_back("the workspace is " + workspace->describe() + ": it must be contiguous, of " +
                    std::to_string(needed) + " bytes or more (workspace_bytes())");
    else if (workspace->address() % 16 != 0)
      why.push_back("the workspace starts at an address that is not 16-byte aligned");
  } else if (needed && s.caller_workspace) {
    why.push_back("no workspace given: with AttentionOptions::caller_workspace, execute() needs one of " +
                  std::to_string(needed) + " bytes (workspace_bytes())");
  }
  if (!why.empty()) throw OpsError("AttentionBackward::execute refused:" + join_reasons(why));
  const runtime::DevicePtr at = workspace ? workspace->address() : s.workspace ? s.workspace->address() : 0;
  s.launch->run(t, at, stream);
}

void attention_backward(const AttentionBackwardTensors& t, AttentionOptions options, runtime::Stream* stream) {
  execute_once<AttentionBackward>(t, options, stream);
}

}  // namespace warpforge::ops
