#include "warpforge/ops/softmax.hpp"

#include "../rows/row_op_state.hpp"
#include "softmax_kernel.hpp"
#include "warpforge/error.hpp"

namespace warpforge::ops {

using runtime::TensorView;

namespace {

// The problem of the forward (first x, then y) or the backward (y, dy, dx):
// every tensor rows x n of a float dtype on the first one's device.
SoftmaxProblem describe_softmax(bool backward, std::initializer_list<std::pair<const char*, const TensorView*>> views,
                                rows::RowOpState& s) {
  SoftmaxProblem p;
  p.backward = backward;
  std::vector<rows::RowMatrix> m;
  for (const auto& [role, view] : views) {
    auto r = rows::as_rows(*view, role, s.refusals);
    if (!r) return p;
    rows::require_row_float(*r, role, s.refusals);
    if (!m.empty()) rows::require_same_rows(*r, role, m[0].rows, m[0].n, views.begin()->first, s.refusals);
    if (!(view->device() == s.device))
      s.refusals.push_back(std::string(role) + " is on " + view->device().describe() + ", " +
                           views.begin()->first + " on " + s.device.describe() + ": every tensor must be on one device");
    m.push_back(*r);
  }
  p.rows = m[0].rows;
  p.n = m[0].n;
  rows::require_row_count(p.rows, s.refusals);
  if (backward) {
    p.y = m[0], p.x = m[1], p.out = m[2];
  } else {
    p.x = m[0], p.y = m[1];
  }
  s.problem = std::string(backward ? "backward " : "") + std::to_string(p.rows) + " x " + std::to_string(p.n) + " " +
              (backward ? "y " + std::string(runtime::name(p.y.dtype)) + ", dy " + std::string(runtime::name(p.x.dtype)) +
                              " -> dx " + std::string(runtime::name(p.out.dtype))
                        : std::string(runtime::name(p.x.dtype)) + " -> " + std::string(runtime::name(p.y.dtype)));
  if (!s.refusals.empty()) return p;
  const int vector = rows::vector_elements(p.n, {&p.x, &p.y, backward ? &p.out : nullptr});
  // Held: x (forward); y and dy (backward).
  const int held = backward ? 2 : 1;
  s.request = rows::row_request(p.n, vector, held, 4, rows::max_cluster_ctas(s.device), true);
  if (auto shape = rows::row_shape(s.request, s.refusals)) p.shape = s.shape = *shape;
  return p;
}

}  // namespace

struct Softmax::State {
  rows::RowOpState op;
  SoftmaxProblem problem;
};

Softmax::Softmax(const TensorView& x, const TensorView& y) : state_(std::make_unique<State>(State{rows::RowOpState(x.device()), {}})) {
  State& s = *state_;
  s.problem = describe_softmax(false, {{"x", &x}, {"y", &y}}, s.op);
  s.op.views.add("x", &x, rows::vector_alignment(s.problem.shape, s.problem.x));
  s.op.views.add("y", &y, rows::vector_alignment(s.problem.shape, s.problem.y));
}

Softmax::~Softmax() = default;
Softmax::Softmax(Softmax&&) noexcept = default;
Softmax& Softmax::operator=(Softmax&&) noexcept = default;

std::vector<std::string> Softmax::check_support() const { return state_->op.refusals; }
std::string_view Softmax::kernel_name() const { return state_->op.shape.span(); }
std::string Softmax::describe() const { return state_->op.describe("Softmax"); }

void Softmax::compile() {
  State& s = *state_;
  s.op.compile("Softmax", [&] { return build_softmax_kernel(s.problem, s.op.device.target()); });
}

void Softmax::execute(const TensorView& x, const TensorView& y, runtime::Stream* stream) {
  compile();
  State& s = *state_;
  s.op.check_views("Softmax", {&x, &y});
  if (s.problem.rows == 0) return;
  s.op.module->launch(kSoftmaxKernel, rows::row_launch(s.problem.shape, s.problem.rows),
                      {x, y, static_cast<std::uint32_t>(s.problem.rows)}, stream);
}

struct SoftmaxBackward::State {
  rows::RowOpState op;
  SoftmaxProblem problem;
};

SoftmaxBackward::SoftmaxBackward(const TensorView& y, const TensorView& dy, const TensorView& dx)
    : state_(std::make_unique<State>(State{rows::RowOpState(y.device()), {}})) {
  State& s = *state_;
  s.problem = describe_softmax(true, {{"y", &y}, {"dy", &dy}, {"dx", &dx}}, s.op);
  s.op.views.add("y", &y, rows::vector_alignment(s.problem.shape, s.problem.y));
  s.op.views.add("dy", &dy, rows::vector_alignment(s.problem.shape, s.problem.x));
  s.op.views.add("dx", &dx, rows::vector_alignment(s.problem.shape, s.problem.out));
}

SoftmaxBackward::~SoftmaxBackward() = default;
SoftmaxBackward::SoftmaxBackward(SoftmaxBackward&&) noexcept = default;
SoftmaxBackward& SoftmaxBackward::operator=(SoftmaxBackward&&) noexcept = default;

std::vector<std::string> SoftmaxBackward::check_support() const { return state_->op.refusals; }
std::string_view SoftmaxBackward::kernel_name() const { return state_->op.shape.span(); }
std::string SoftmaxBackward::describe() const { return state_->op.describe("SoftmaxBackward"); }

void SoftmaxBackward::compile() {
  State& s = *state_;
  s.op.compile("SoftmaxBackward", [&] { return build_softmax_kernel(s.problem, s.op.device.target()); });
}

void SoftmaxBackward::execute(const TensorView& y, const TensorView& dy, const TensorView& dx,
                              runtime::Stream* stream) {
  compile();
  State& s = *state_;
  s.op.check_views("SoftmaxBackward", {&y, &dy, &dx});
  if (s.problem.rows == 0) return;
  s.op.module->launch(kSoftmaxBackwardKernel, rows::row_launch(s.problem.shape, s.problem.rows),
                      {y, dy, dx, static_cast<std::uint32_t>(s.problem.rows)}, stream);
}

runtime::Tensor softmax(const TensorView& x, runtime::Stream* stream) {
  runtime::Tensor y = runtime::Tensor::empty(x.device(), x.dtype(), x.shape());
  Softmax(x, y).execute(x, y, stream);
  if (stream)
    stream->synchronize();
  else
    x.device().synchronize();
  return y;
}

}  // namespace warpforge::ops
