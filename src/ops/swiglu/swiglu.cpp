#include "warpforge/ops/swiglu.hpp"

#include "../rows/row_launch.hpp"
#include "../rows/row_op_state.hpp"
#include "swiglu_kernel.hpp"
#include "warpforge/error.hpp"

namespace warpforge::ops {

using rows::optional_view;
using rows::RowMatrix;
using runtime::TensorView;

namespace {

std::string dtype_of(const RowMatrix& m) {
  return std::string(runtime::name(m.dtype));
}

// Reads the tensors of one side (forward: gate, up, out; backward: dout,
// gate, up, dgate, dup, or the interleaved x and dx) into the problem.
struct Reader {
  rows::RowOpState& s;
  SwigluProblem& p;
  bool have_rows = false;

  // A row tensor of n elements a row (or 2n interleaved), like the first one read.
  std::optional<RowMatrix> read(const std::optional<TensorView>& v, const char* role, bool interleaved) {
    if (!v) return std::nullopt;
    auto m = rows::as_rows(*v, role, s.refusals);
    if (!m) return std::nullopt;
    rows::require_row_float(*m, role, s.refusals);
    if (!(v->device() == s.device))
      s.refusals.push_back(std::string(role) + " is on " + v->device().describe() + ": every tensor must be on " +
                           s.device.describe());
    std::int64_t n = m->n;
    if (interleaved) {
      if (n % 2) {
        s.refusals.push_back(std::string(role) + " holds rows of " + std::to_string(n) +
                             " elements: interleaved gate and up need an even count");
        return std::nullopt;
      }
      n /= 2;
    }
    if (!have_rows) {
      p.rows = m->rows, p.n = n, have_rows = true;
      rows::require_row_count(p.rows, s.refusals);
    } else {
      rows::require_same_rows(*m, role, p.rows, interleaved ? 2 * p.n : p.n, "the first tensor", s.refusals);
    }
    return m;
  }
};

// The pairs of the interleaved tensor count as elements twice as wide for the vector width.
int vector_of(const SwigluProblem& p, std::initializer_list<const RowMatrix*> plain,
              std::initializer_list<const RowMatrix*> interleaved) {
  int v = rows::vector_elements(p.n, plain);
  for (const RowMatrix* m : interleaved)
    while (v > 1 && m && m->alignment < std::min(16, 2 * v * m->bytes())) v /= 2;
  return v;
}

void choose(rows::RowOpState& s, SwigluProblem& p, int vector, int held) {
  // Element-wise: a long row goes in passes, no cluster needed.
  s.request = rows::row_request(p.n, vector, held, 4, 1, true);
  if (auto shape = rows::row_shape(s.request, s.refusals)) p.shape = s.shape = *shape;
}

const RowMatrix* ptr(const std::optional<RowMatrix>& m) {
  return m ? &*m : nullptr;
}

}  // namespace

struct Swiglu::State {
  rows::RowOpState op;
  SwigluProblem problem;
};

Swiglu::Swiglu(const SwigluTensors& t) : state_(std::make_unique<State>(State{rows::RowOpState(t.out.device()), {}})) {
  State& s = *state_;
  SwigluProblem& p = s.problem;
  Reader r{s.op, p};
  p.interleaved = t.x.has_value();
  if (t.x && (t.gate || t.up))
    s.op.refusals.push_back("both x and gate/up given: the inputs are one interleaved x, or gate and up");
  if (!t.x && (!t.gate || !t.up)) s.op.refusals.push_back("gate and up (or an interleaved x) are needed");
  auto x = r.read(t.x, "x", true), gate = r.read(t.gate, "gate", false), up = r.read(t.up, "up", false),
       out = r.read(t.out, "out", false);
  if (x) p.x = *x;
  if (gate) p.gate = *gate;
  if (up) p.up = *up;
  if (out) p.out = *out;
  s.op.problem = std::to_string(p.rows) + " x " + std::to_string(p.n) + " " +
                 (p.interleaved ? "x " + dtype_of(p.x) + " (interleaved)" : "gate " + dtype_of(p.gate) + ", up " + dtype_of(p.up)) +
                 " -> " + dtype_of(p.out);
  if (s.op.refusals.empty()) choose(s.op, p, vector_of(p, {ptr(gate), ptr(up), ptr(out)}, {ptr(x)}), 2);
  s.op.views.add("gate", optional_view(t.gate), rows::vector_alignment(p.shape, gate));
  s.op.views.add("up", optional_view(t.up), rows::vector_alignment(p.shape, up));
  s.op.views.add("x", optional_view(t.x), x ? std::min(16, 2 * p.shape.vector * x->bytes()) : 0);
  s.op.views.add("out", &t.out, rows::vector_alignment(p.shape, out));
}

Swiglu::~Swiglu() = default;
Swiglu::Swiglu(Swiglu&&) noexcept = default;
Swiglu& Swiglu::operator=(Swiglu&&) noexcept = default;

std::vector<std::string> Swiglu::check_support() const { return state_->op.refusals; }
std::string_view Swiglu::kernel_name() const { return state_->op.shape.span(); }
std::string Swiglu::describe() const { return state_->op.describe("Swiglu"); }

void Swiglu::compile() {
  State& s = *state_;
  s.op.compile("Swiglu", [&] { return build_swiglu_kernel(s.problem, s.op.device.target()); });
}

void Swiglu::execute(const SwigluTensors& t, runtime::Stream* stream) {
  compile();
  State& s = *state_;
  s.op.check_views("Swiglu", {optional_view(t.gate), optional_view(t.up), optional_view(t.x), &t.out});
  if (s.problem.rows == 0) return;
  std::vector<runtime::Arg> args;
  rows::append_args(args, {optional_view(t.gate), optional_view(t.up), optional_view(t.x), &t.out});
  args.emplace_back(static_cast<std::uint32_t>(s.problem.rows));
  s.op.module->launch(kSwigluKernel, rows::row_launch(s.problem.shape, s.problem.rows), args, stream);
}

struct SwigluBackward::State {
  rows::RowOpState op;
  SwigluProblem problem;
};

SwigluBackward::SwigluBackward(const SwigluBackwardTensors& t)
    : state_(std::make_unique<State>(State{rows::RowOpState(t.dout.device()), {}})) {
  State& s = *state_;
  SwigluProblem& p = s.problem;
  p.backward = true;
  p.interleaved = t.x.has_value();
  Reader r{s.op, p};
  if (t.x && (t.gate || t.up || t.dgate || t.dup || !t.dx))
    s.op.refusals.push_back("an interleaved x takes an interleaved dx alone (no gate, up, dgate, dup)");
  if (!t.x && (!t.gate || !t.up || !t.dgate || !t.dup || t.dx))
    s.op.refusals.push_back("gate and up take dgate and dup (and no dx)");
  auto dout = r.read(t.dout, "dout", false), x = r.read(t.x, "x", true), gate = r.read(t.gate, "gate", false),
       up = r.read(t.up, "up", false), dx = r.read(t.dx, "dx", true), dgate = r.read(t.dgate, "dgate", false),
       dup = r.read(t.dup, "dup", false);
  for (auto [m, into] : {std::pair{&dout, &p.out}, {&x, &p.x}, {&gate, &p.gate}, {&up, &p.up}, {&dx, &p.dx},
                         {&dgate, &p.dgate}, {&dup, &p.dup}})
    if (*m) *into = **m;
  s.op.problem = "backward " + std::to_string(p.rows) + " x " + std::to_string(p.n) + " dout " + dtype_of(p.out) +
                 (p.interleaved ? ", x " + dtype_of(p.x) + " -> dx " + dtype_of(p.dx)
                                : ", gate " + dtype_of(p.gate) + ", up " + dtype_of(p.up) + " -> dgate " +
                                      dtype_of(p.dgate) + ", dup " + dtype_of(p.dup));
  if (s.op.refusals.empty())
    choose(s.op, p, vector_of(p, {ptr(dout), ptr(gate), ptr(up), ptr(dgate), ptr(dup)}, {ptr(x), ptr(dx)}), 3);
  s.op.views.add("dout", &t.dout, rows::vector_alignment(p.shape, dout));
  s.op.views.add("gate", optional_view(t.gate), rows::vector_alignment(p.shape, gate));
  s.op.views.add("up", optional_view(t.up), rows::vector_alignment(p.shape, up));
  s.op.views.add("x", optional_view(t.x), x ? std::min(16, 2 * p.shape.vector * x->bytes()) : 0);
  s.op.views.add("dgate", optional_view(t.dgate), rows::vector_alignment(p.shape, dgate));
  s.op.views.add("dup", optional_view(t.dup), rows::vector_alignment(p.shape, dup));
  s.op.views.add("dx", optional_view(t.dx), dx ? std::min(16, 2 * p.shape.vector * dx->bytes()) : 0);
}

SwigluBackward::~SwigluBackward() = default;
SwigluBackward::SwigluBackward(SwigluBackward&&) noexcept = default;
SwigluBackward& SwigluBackward::operator=(SwigluBackward&&) noexcept = default;

std::vector<std::string> SwigluBackward::check_support() const { return state_->op.refusals; }
std::string_view SwigluBackward::kernel_name() const { return state_->op.shape.span(); }
std::string SwigluBackward::describe() const { return state_->op.describe("SwigluBackward"); }

void SwigluBackward::compile() {
  State& s = *state_;
  s.op.compile("SwigluBackward", [&] { return build_swiglu_kernel(s.problem, s.op.device.target()); });
}

void SwigluBackward::execute(const SwigluBackwardTensors& t, runtime::Stream* stream) {
  compile();
  State& s = *state_;
  const std::initializer_list<const TensorView*> views = {&t.dout, optional_view(t.gate), optional_view(t.up),
                                                          optional_view(t.x), optional_view(t.dgate),
                                                          optional_view(t.dup), optional_view(t.dx)};
  s.op.check_views("SwigluBackward", views);
  if (s.problem.rows == 0) return;
  std::vector<runtime::Arg> args;
  rows::append_args(args, views);
  args.emplace_back(static_cast<std::uint32_t>(s.problem.rows));
  s.op.module->launch(kSwigluBackwardKernel, rows::row_launch(s.problem.shape, s.problem.rows), args, stream);
}

runtime::Tensor swiglu(const TensorView& gate, const TensorView& up, runtime::Stream* stream) {
  runtime::Tensor out = runtime::Tensor::empty(gate.device(), gate.dtype(), gate.shape());
  const SwigluTensors t{.gate = gate, .up = up, .out = out};
  Swiglu(t).execute(t, stream);
  if (stream)
    stream->synchronize();
  else
    gate.device().synchronize();
  return out;
}

}  // namespace warpforge::ops
