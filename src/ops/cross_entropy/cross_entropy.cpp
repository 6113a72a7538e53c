#include "warpforge/ops/cross_entropy.hpp"

#include <algorithm>
#include <cstdio>

#include "../rows/row_launch.hpp"
#include "../rows/row_op_state.hpp"
#include "cross_entropy_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"

namespace warpforge::ops {

using rows::optional_view;
using runtime::DType;
using runtime::TensorView;

std::string_view name(LossReduction r) {
  return r == LossReduction::none ? "none" : r == LossReduction::mean ? "mean" : "sum";
}

std::optional<LossReduction> parse_loss_reduction(std::string_view text) {
  for (LossReduction r : {LossReduction::none, LossReduction::mean, LossReduction::sum})
    if (text == name(r)) return r;
  return std::nullopt;
}

namespace {

void require_dense(const TensorView& v, const std::string& role, DType dtype, std::int64_t numel,
                   const std::string& what, std::vector<std::string>& why) {
  if (v.dtype() != dtype || v.numel() != numel || !v.is_contiguous())
    why.push_back(role + " is " + v.describe() + ": it must be a contiguous " + std::string(runtime::name(dtype)) +
                  " tensor of " + what);
}

CrossEntropyProblem describe_cross_entropy(const CrossEntropyTensors& t, const CrossEntropyOptions& o, rows::RowOpState& s) {
  CrossEntropyProblem p;
  p.options = o;
  auto& why = s.refusals;
  if (!(o.label_smoothing >= 0.0f && o.label_smoothing <= 1.0f)) {
    char v[32];
    std::snprintf(v, sizeof v, "%g", static_cast<double>(o.label_smoothing));
    why.push_back(std::string("label_smoothing ") + v + ": accepted 0 to 1");
  }
  auto logits = rows::input_rows(t.logits, "logits", why);
  if (!logits) return p;
  p.logits = *logits;
  p.rows = logits->rows;
  p.v = logits->n;
  if (p.v >= (std::int64_t{1} << 31)) why.push_back("a vocabulary of " + std::to_string(p.v) + ": up to 2^31 - 1");
  p.labels = t.labels.dtype();
  if (p.labels != DType::i64 && p.labels != DType::i32)
    why.push_back("labels are " + std::string(runtime::name(p.labels)) + ": accepted i64, i32");
  else
    require_dense(t.labels, "labels", p.labels, p.rows, "one label a row (" + std::to_string(p.rows) + ")", why);
  const bool none = o.reduction == LossReduction::none;
  require_dense(t.loss, "loss", DType::f32, none ? p.rows : 1,
                none ? "one loss a row (reduction none)" : "one element (reduction " + std::string(name(o.reduction)) + ")",
                why);
  if (t.lse) rows::require_row_statistic(*t.lse, "lse", p.rows, why);
  p.lse = t.lse.has_value();
  if (t.dlogits) {
    p.dlogits = rows::as_rows(*t.dlogits, "dlogits", why);
    if (p.dlogits) {
      rows::require_row_float(*p.dlogits, "dlogits", why);
      rows::require_same_rows(*p.dlogits, "dlogits", p.rows, p.v, "logits", why);
    }
  }
  for (const TensorView* v : {&t.labels, &t.loss, optional_view(t.lse), optional_view(t.dlogits)})
    if (v && !(v->device() == s.device))
      why.push_back("a tensor is on " + v->device().describe() + ", the logits on " + s.device.describe() +
                    ": every tensor must be on one device");
  char eps[32];
  std::snprintf(eps, sizeof eps, "%g", static_cast<double>(o.label_smoothing));
  s.problem = std::to_string(p.rows) + " x " + std::to_string(p.v) + " " + std::string(runtime::name(p.logits.dtype)) +
              ", labels " + std::string(runtime::name(p.labels)) + ", reduction " + std::string(name(o.reduction)) +
              ", ignore_index " + std::to_string(o.ignore_index) + ", label_smoothing " + eps +
              (p.dlogits ? ", gradient " + std::string(runtime::name(p.dlogits->dtype)) : std::string()) +
              (p.lse ? ", lse" : "");
  if (!why.empty()) return p;
  const int vector = rows::vector_elements(p.v, {&p.logits, p.dlogits ? &*p.dlogits : nullptr});
  // Held: the exponentials, and the logits until they are formed (f32
  // logits fill as many registers again, 16-bit ones half); label
  // smoothing's scaled Σ x (two more passes over the row) needs as many
  // again too, so as to assemble without spills (row_ops_ptxas_test.cpp).
  const bool wide = o.label_smoothing > 0.0f || p.logits.dtype == DType::f32;
  // 16-bit rows without smoothing (the prefetching kernel, its exponentials
  // staged in shared memory): 8 vectors a thread at 512 threads resident an
  // SM (128 registers), where 1024 threads held 4: the row's reductions (a
  // third of a thread's instructions at 4) over twice the elements, at V
  // 32768 one CTA instead of a cluster of 2 (ptxas -c sm_90a, V 131072: 1224
  // SASS a row-thread of 64 elements against 904 of 32, no spills).
  const bool eight = !wide && runtime::bits(p.logits.dtype) == 16 &&
                     512 * 8 * vector * 4 + 4096 <= s.device.properties().shared_bytes_per_block_optin;
  s.request = rows::row_request(p.v, vector, wide ? 2 : 1, eight ? 8 : 4, rows::max_cluster_ctas(s.device), true,
                                eight ? 512 : 1024);
  auto shape = rows::row_shape(s.request, why);
  if (!shape) return p;
  p.shape = s.shape = *shape;
  // The exponentials' bytes against what a CTA may have, less 4 KB for the reduction's static shared memory.
  p.staging_fits = std::size_t{p.staged_bytes()} + 4096 <= s.device.properties().shared_bytes_per_block_optin;
  p.groups = rows::persistent_groups(p.shape, p.rows, s.device);
  p.count_ctas = static_cast<int>(std::clamp<std::int64_t>((p.rows + 1023) / 1024, 1, 2 * s.device.properties().sm_count));
  return p;
}

}  // namespace

struct CrossEntropy::State {
  rows::RowOpState op;
  CrossEntropyProblem problem;
  std::optional<runtime::Module> count, finalize;
  std::optional<runtime::Buffer> workspace;
  // The main kernel's row groups (rows::resident_groups): at most
  // problem.groups, for which the workspace is laid out.
  std::int64_t groups = 1;
};

CrossEntropy::CrossEntropy(const CrossEntropyTensors& t, CrossEntropyOptions options)
    : state_(std::make_unique<State>(State{rows::RowOpState(t.logits.device()), {}, {}, {}, {}, 1})) {
  State& s = *state_;
  s.problem = describe_cross_entropy(t, options, s.op);
  const CrossEntropyProblem& p = s.problem;
  s.op.views.add("logits", &t.logits, rows::vector_alignment(p.shape, p.logits));
  s.op.views.add("labels", &t.labels, 4);
  s.op.views.add("loss", &t.loss, 4);
  s.op.views.add("lse", optional_view(t.lse), 4);
  s.op.views.add("dlogits", optional_view(t.dlogits), rows::vector_alignment(p.shape, p.dlogits));
}

CrossEntropy::~CrossEntropy() = default;
CrossEntropy::CrossEntropy(CrossEntropy&&) noexcept = default;
CrossEntropy& CrossEntropy::operator=(CrossEntropy&&) noexcept = default;

std::vector<std::string> CrossEntropy::check_support() const { return state_->op.refusals; }
std::string_view CrossEntropy::kernel_name() const { return state_->op.shape.span(); }

std::size_t CrossEntropy::workspace_bytes() const {
  return state_->op.refusals.empty() ? state_->problem.workspace_bytes() : 0;
}

std::string CrossEntropy::describe() const {
  const State& s = *state_;
  std::string d = s.op.describe("CrossEntropy", workspace_bytes());
  if (s.op.refusals.empty())
    d += "\n  " + std::to_string(s.problem.groups) + " row groups" +
         (s.problem.reduced() ? ", each adding its rows' losses; a last kernel adds the groups'" : "") +
         (s.problem.prefetch() ? "\n  each group's next row loaded while it reduces this one, the exponentials in " +
                                     std::to_string(s.problem.staged_bytes() / 1024) + " KB of shared memory a CTA"
                               : "");
  return d;
}

void CrossEntropy::compile() {
  State& s = *state_;
  const CrossEntropyProblem& p = s.problem;
  if (s.op.module) return;
  s.op.compile("CrossEntropy", [&] { return build_cross_entropy_kernel(p, s.op.device.target()); });
  s.groups = rows::resident_groups(p.shape, p.groups, *s.op.module, kCrossEntropyKernel, p.shared_bytes());
  if (p.options.reduction == LossReduction::mean)
    s.count.emplace(s.op.device, build_cross_entropy_count_kernel(p, s.op.device.target()));
  if (p.reduced()) {
    CrossEntropyProblem launched = p;  // the finalize kernel adds the launched groups' sums
    launched.groups = s.groups;
    s.finalize.emplace(s.op.device, build_cross_entropy_finalize_kernel(launched, s.op.device.target()));
  }
  if (p.workspace_bytes() && !p.options.caller_workspace && !s.workspace)
    s.workspace.emplace(s.op.device, p.workspace_bytes());
}

void CrossEntropy::execute(const CrossEntropyTensors& t, runtime::Stream* stream, const TensorView* workspace) {
  compile();
  State& s = *state_;
  const CrossEntropyProblem& p = s.problem;
  s.op.check_views("CrossEntropy", {&t.logits, &t.labels, &t.loss, optional_view(t.lse), optional_view(t.dlogits)});
  std::vector<std::string> why;
  rows::check_workspace(workspace, p.workspace_bytes(), p.options.caller_workspace, s.op.device, "CrossEntropy", why);
  if (!why.empty()) throw OpsError("CrossEntropy::execute refused:" + rows::join(why));
  const runtime::Arg space = runtime::Arg::pointer(rows::workspace_address(workspace, s.workspace));
  const auto rows = static_cast<std::uint32_t>(p.rows);
  if (p.options.reduction == LossReduction::mean)
    s.count->launch(kCrossEntropyCount, {.grid = {static_cast<std::uint32_t>(p.count_ctas)}, .block = {kCrossEntropyCountThreads}},
                    {t.labels, space, rows}, stream);
  std::vector<runtime::Arg> args;
  rows::append_args(args, {&t.logits, &t.labels, optional_view(t.dlogits), optional_view(t.lse)});
  if (p.reduced())
    args.push_back(space);
  else
    args.emplace_back(t.loss);
  args.emplace_back(rows);
  runtime::LaunchConfig launch = rows::row_launch(p.shape, s.groups);
  launch.dynamic_shared_bytes = p.shared_bytes();
  s.op.module->launch(kCrossEntropyKernel, launch, args, stream);
  if (p.reduced())
    s.finalize->launch(kCrossEntropyFinalize, {.grid = {1}, .block = {kCrossEntropyCountThreads}}, {space, t.loss},
                       stream);
}

struct CrossEntropyScale::State {
  rows::RowOpState op;
  rows::RowMatrix dlogits;
  bool per_row = false;
};

CrossEntropyScale::CrossEntropyScale(const CrossEntropyScaleTensors& t)
    : state_(std::make_unique<State>(State{rows::RowOpState(t.dlogits.device()), {}, false})) {
  State& s = *state_;
  auto& why = s.op.refusals;
  auto m = rows::input_rows(t.dlogits, "dlogits", why);
  if (m) {
    s.dlogits = *m;
    s.per_row = t.dloss.numel() != 1 || m->rows == 1;
    if (t.dloss.dtype() != DType::f32 || !t.dloss.is_contiguous() || (t.dloss.numel() != 1 && t.dloss.numel() != m->rows))
      why.push_back("dloss is " + t.dloss.describe() + ": a contiguous f32 of one element, or of one a row (" +
                    std::to_string(m->rows) + ")");
    if (!(t.dloss.device() == s.op.device)) why.push_back("dloss is on " + t.dloss.device().describe());
    s.op.problem = std::to_string(m->rows) + " x " + std::to_string(m->n) + " " + std::string(runtime::name(m->dtype)) +
                   (s.per_row ? " by a dloss a row" : " by one dloss");
  }
  if (why.empty()) {
    const int vector = rows::vector_elements(m->n, {&*m});
    s.op.request = rows::row_request(m->n, vector, 1, 4, 1, true);
    s.op.shape = rows::row_shape(s.op.request, why).value_or(rows::RowShape{});
  }
  s.op.views.add("dlogits", &t.dlogits, rows::vector_alignment(s.op.shape, m));
  s.op.views.add("dloss", &t.dloss, 4);
}

CrossEntropyScale::~CrossEntropyScale() = default;
CrossEntropyScale::CrossEntropyScale(CrossEntropyScale&&) noexcept = default;
CrossEntropyScale& CrossEntropyScale::operator=(CrossEntropyScale&&) noexcept = default;

std::vector<std::string> CrossEntropyScale::check_support() const { return state_->op.refusals; }
std::string_view CrossEntropyScale::kernel_name() const { return state_->op.shape.span(); }
std::string CrossEntropyScale::describe() const { return state_->op.describe("CrossEntropyScale"); }

void CrossEntropyScale::compile() {
  State& s = *state_;
  s.op.compile("CrossEntropyScale", [&] {
    return build_cross_entropy_scale_kernel(s.dlogits.dtype, s.dlogits.n, s.op.shape, s.per_row, s.op.device.target());
  });
}

void CrossEntropyScale::execute(const CrossEntropyScaleTensors& t, runtime::Stream* stream) {
  compile();
  State& s = *state_;
  s.op.check_views("CrossEntropyScale", {&t.dlogits, &t.dloss});
  if (s.dlogits.rows == 0) return;
  s.op.module->launch(kCrossEntropyScale, rows::row_launch(s.op.shape, s.dlogits.rows),
                      {t.dlogits, t.dloss, static_cast<std::uint32_t>(s.dlogits.rows)}, stream);
}

}  // namespace warpforge::ops
