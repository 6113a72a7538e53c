#include "warpforge/ops/norm.hpp"

#include "../rows/row_launch.hpp"
#include "norm_kernel.hpp"
#include "norm_problem.hpp"
#include "warpforge/error.hpp"
#include "warpforge/runtime/buffer.hpp"
#include "warpforge/runtime/module.hpp"

namespace warpforge::ops {

using rows::optional_view;
using runtime::TensorView;

namespace {

// The alignment the kernels assume of a row tensor's base address.
int vector_alignment(const rows::RowShape& s, const std::optional<rows::RowMatrix>& m) {
  return m ? std::min(16, s.vector * m->bytes()) : 0;
}

}  // namespace

struct Norm::State {
  runtime::Device device;
  NormProblem problem;
  std::vector<std::string> refusals;
  rows::ViewChecks views;
  std::optional<runtime::Module> module;
  std::int64_t groups = 1;  // the launch's row groups (rows::resident_groups)
};

Norm::Norm(const NormTensors& t, NormOptions options)
    : state_(std::make_unique<State>(State{t.x.device(), {}, {}, {}, {}, 1})) {
  State& s = *state_;
  s.problem = describe_norm(t, options, s.device, s.refusals);
  const NormProblem& p = s.problem;
  s.views.add("x", &t.x, vector_alignment(p.shape, p.x));
  s.views.add("residual", optional_view(t.residual), vector_alignment(p.shape, p.residual));
  s.views.add("weight", optional_view(t.weight), vector_alignment(p.shape, p.weight));
  s.views.add("bias", optional_view(t.bias), vector_alignment(p.shape, p.bias));
  s.views.add("y", &t.y, vector_alignment(p.shape, p.y));
  s.views.add("residual_out", optional_view(t.residual_out), vector_alignment(p.shape, p.residual_out));
  s.views.add("mean", optional_view(t.mean), 4);
  s.views.add("rstd", optional_view(t.rstd), 4);
}

Norm::~Norm() = default;
Norm::Norm(Norm&&) noexcept = default;
Norm& Norm::operator=(Norm&&) noexcept = default;

std::vector<std::string> Norm::check_support() const {
  return state_->refusals;
}

std::string_view Norm::kernel_name() const {
  return state_->problem.shape.span();
}

std::string Norm::describe() const {
  const State& s = *state_;
  return rows::describe_op("Norm", s.problem.describe(), s.refusals, s.problem.shape, s.problem.request, 0);
}

void Norm::compile() {
  State& s = *state_;
  if (!s.refusals.empty()) throw OpsError("Norm refused " + s.problem.describe() + ":" + rows::join(s.refusals));
  if (s.module) return;
  s.module.emplace(s.device, build_norm_kernel(s.problem, s.device.target()));
  s.groups = rows::resident_groups(s.problem.shape, s.problem.groups, *s.module, norm_kernel_name(s.problem));
}

void Norm::execute(const NormTensors& t, runtime::Stream* stream) {
  compile();
  State& s = *state_;
  const auto why = s.views.mismatches({&t.x, optional_view(t.residual), optional_view(t.weight), optional_view(t.bias),
                                       &t.y, optional_view(t.residual_out), optional_view(t.mean),
                                       optional_view(t.rstd)},
                                      s.device, "Norm");
  if (!why.empty()) throw OpsError("Norm::execute refused:" + rows::join(why));
  if (s.problem.rows == 0) return;
  std::vector<runtime::Arg> args;
  rows::append_args(args, {&t.x, optional_view(t.residual), optional_view(t.weight), optional_view(t.bias), &t.y,
                           optional_view(t.residual_out), optional_view(t.mean), optional_view(t.rstd)});
  args.emplace_back(static_cast<std::uint32_t>(s.problem.rows));
  s.module->launch(norm_kernel_name(s.problem), rows::row_launch(s.problem.shape, s.groups), args, stream);
}

struct NormBackward::State {
  runtime::Device device;
  NormBackwardProblem problem;
  std::vector<std::string> refusals;
  rows::ViewChecks views;
  std::optional<runtime::Module> module, column_sums;
  std::optional<runtime::Buffer> workspace;
  // The launch's row groups (rows::resident_groups): at most problem.groups,
  // whose rows of the workspace are laid out for the most.
  std::int64_t groups = 1;
};

NormBackward::NormBackward(const NormBackwardTensors& t, NormOptions options)
    : state_(std::make_unique<State>(State{t.dy.device(), {}, {}, {}, {}, {}, {}, 1})) {
  State& s = *state_;
  s.problem = describe_norm_backward(t, options, s.device, s.refusals);
  const NormBackwardProblem& p = s.problem;
  s.views.add("dy", &t.dy, vector_alignment(p.shape, p.dy));
  s.views.add("x", &t.x, vector_alignment(p.shape, p.x));
  s.views.add("weight", optional_view(t.weight), vector_alignment(p.shape, p.weight));
  s.views.add("mean", optional_view(t.mean), 4);
  s.views.add("rstd", &t.rstd, 4);
  s.views.add("dresidual_out", optional_view(t.dresidual_out), vector_alignment(p.shape, p.dresidual_out));
  s.views.add("dx", &t.dx, vector_alignment(p.shape, p.dx));
  s.views.add("dweight", optional_view(t.dweight), 2);
  s.views.add("dbias", optional_view(t.dbias), 2);
}

NormBackward::~NormBackward() = default;
NormBackward::NormBackward(NormBackward&&) noexcept = default;
NormBackward& NormBackward::operator=(NormBackward&&) noexcept = default;

std::vector<std::string> NormBackward::check_support() const {
  return state_->refusals;
}

std::string_view NormBackward::kernel_name() const {
  return state_->problem.shape.span();
}

std::size_t NormBackward::workspace_bytes() const {
  return state_->refusals.empty() ? state_->problem.workspace_bytes() : 0;
}

std::string NormBackward::describe() const {
  const State& s = *state_;
  std::string d = rows::describe_op("NormBackward", s.problem.describe(), s.refusals, s.problem.shape,
                                    s.problem.request, workspace_bytes());
  if (s.refusals.empty() && (s.problem.dweight || s.problem.dbias))
    d += "\n  " + std::to_string(s.problem.groups) + " row groups each add their rows' dweight/dbias, a second "
         "kernel adds the groups'";
  return d;
}

void NormBackward::compile() {
  State& s = *state_;
  const NormBackwardProblem& p = s.problem;
  if (!s.refusals.empty()) throw OpsError("NormBackward refused " + p.describe() + ":" + rows::join(s.refusals));
  if (s.module) return;
  s.module.emplace(s.device, build_norm_backward_kernel(p, s.device.target()));
  s.groups = rows::resident_groups(p.shape, p.groups, *s.module, norm_backward_kernel_name(p), p.sums_shared_bytes());
  if (p.dweight || p.dbias) {
    const runtime::DType first = p.dweight ? p.dweight->dtype : p.dbias->dtype;
    const std::optional<runtime::DType> second =
        p.dweight && p.dbias ? std::optional<runtime::DType>(p.dbias->dtype) : std::nullopt;
    s.column_sums.emplace(s.device, build_column_sum_kernel(first, second, s.device.target()));
  }
  if (p.workspace_bytes() && !p.options.caller_workspace) s.workspace.emplace(s.device, p.workspace_bytes());
}

void NormBackward::execute(const NormBackwardTensors& t, runtime::Stream* stream, const TensorView* workspace) {
  compile();
  State& s = *state_;
  const NormBackwardProblem& p = s.problem;
  auto why = s.views.mismatches({&t.dy, &t.x, optional_view(t.weight), optional_view(t.mean), &t.rstd,
                                 optional_view(t.dresidual_out), &t.dx, optional_view(t.dweight),
                                 optional_view(t.dbias)},
                                s.device, "NormBackward");
  rows::check_workspace(workspace, p.workspace_bytes(), p.options.caller_workspace, s.device, "NormBackward", why);
  if (!why.empty()) throw OpsError("NormBackward::execute refused:" + rows::join(why));
  const runtime::DevicePtr sums = rows::workspace_address(workspace, s.workspace);
  std::vector<runtime::Arg> args;
  rows::append_args(args, {&t.dy, &t.x, optional_view(t.weight), optional_view(t.mean), &t.rstd,
                           optional_view(t.dresidual_out), &t.dx});
  if (p.workspace_bytes()) args.push_back(runtime::Arg::pointer(sums));
  args.emplace_back(static_cast<std::uint32_t>(p.rows));
  runtime::LaunchConfig launch = rows::row_launch(p.shape, s.groups);
  launch.dynamic_shared_bytes = p.sums_shared_bytes();
  s.module->launch(norm_backward_kernel_name(p), launch, args, stream);
  if (!s.column_sums) return;
  // dweight's sums, then dbias's (the workspace's blocks, each laid out for p.groups), in one launch.
  const auto groups = static_cast<std::uint32_t>(s.groups), n = static_cast<std::uint32_t>(p.n);
  const runtime::DevicePtr second_block = sums + static_cast<runtime::DevicePtr>(p.groups * p.n * 4);
  const TensorView& first_out = p.dweight ? *t.dweight : *t.dbias;
  const bool both = p.dweight && p.dbias;
  s.column_sums->launch(kColumnSumKernel,
                        column_sum_launch(p.n, both ? 2 : 1, ptx::sm_number(s.device.target()) >= 90),
                        {runtime::Arg::pointer(sums), runtime::Arg::pointer(both ? second_block : sums), first_out,
                         both ? runtime::Arg(*t.dbias) : runtime::Arg(first_out), groups, n},
                        stream);
}

namespace {

NormResult one_shot(const TensorView& x, const TensorView* weight, const TensorView* bias, const TensorView* residual,
                    NormOptions options, runtime::Stream* stream) {
  const runtime::Device& device = x.device();
  const std::int64_t rows = x.rank() >= 1 && x.shape().back() > 0 ? x.numel() / x.shape().back() : 0;
  NormResult r{runtime::Tensor::empty(device, x.dtype(), x.shape()), std::nullopt, std::nullopt,
               runtime::Tensor::empty(device, runtime::DType::f32, {rows})};
  if (residual) r.residual_out = runtime::Tensor::empty(device, residual->dtype(), x.shape());
  if (options.kind == NormKind::layer) r.mean = runtime::Tensor::empty(device, runtime::DType::f32, {rows});
  const NormTensors t{.x = x,
                      .residual = residual ? std::optional<TensorView>(*residual) : std::nullopt,
                      .weight = weight ? std::optional<TensorView>(*weight) : std::nullopt,
                      .bias = bias ? std::optional<TensorView>(*bias) : std::nullopt,
                      .y = r.y,
                      .residual_out = r.residual_out ? std::optional<TensorView>(*r.residual_out) : std::nullopt,
                      .mean = r.mean ? std::optional<TensorView>(*r.mean) : std::nullopt,
                      .rstd = r.rstd};
  Norm(t, options).execute(t, stream);
  if (stream)
    stream->synchronize();
  else
    device.synchronize();
  return r;
}

}  // namespace

NormResult rms_norm(const TensorView& x, const TensorView* weight, float eps, const TensorView* residual,
                    runtime::Stream* stream) {
  return one_shot(x, weight, nullptr, residual, {.kind = NormKind::rms, .eps = eps}, stream);
}

NormResult layer_norm(const TensorView& x, const TensorView* weight, const TensorView* bias, float eps,
                      const TensorView* residual, runtime::Stream* stream) {
  return one_shot(x, weight, bias, residual, {.kind = NormKind::layer, .eps = eps}, stream);
}

}  // namespace warpforge::ops
