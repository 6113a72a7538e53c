#include "warpforge/ops/norm_quantize.hpp"

#include "../rows/row_launch.hpp"
#include "../rows/row_op_state.hpp"
#include "norm_quantize_kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {

using rows::optional_view;
using runtime::DType;
using runtime::TensorView;

namespace {

void check_format(const BlockScaledFormat& f, std::vector<std::string>& why) {
  if (f.data != DType::e4m3 && f.data != DType::e5m2 && f.data != DType::e2m1)
    why.push_back("data format " + std::string(runtime::name(f.data)) + ": accepted e4m3, e5m2, e2m1");
  if (f.scale != DType::e8m0 && f.scale != DType::e4m3)
    why.push_back("scale format " + std::string(runtime::name(f.scale)) + ": accepted e8m0, e4m3");
  if (f.vec != 16 && f.vec != 32) why.push_back("vec " + std::to_string(f.vec) + ": accepted 16, 32");
}

// The data tensor: (rows, K) codes (FP4: u8 (rows, K/2) or e2m1 (rows, K)), k-major.
void check_data(const TensorView& d, const NormQuantizeProblem& p, std::vector<std::string>& why) {
  const DType code = p.options.format.data;
  const bool fp4 = code == DType::e2m1;
  const bool dtype_ok = fp4 ? (d.dtype() == DType::u8 || d.dtype() == DType::e2m1) : d.dtype() == code;
  const std::int64_t cols = fp4 && d.dtype() == DType::u8 ? p.norm.n / 2 : p.norm.n;
  const bool shape_ok = d.rank() == 2 && d.shape()[0] == p.norm.rows && d.shape()[1] == cols &&
                        (cols == 1 || d.strides()[1] == 1) && (p.norm.rows == 1 || d.strides()[0] >= cols);
  if (!dtype_ok || !shape_ok)
    why.push_back("data is " + d.describe() + ": it must be (" + std::to_string(p.norm.rows) + ", " +
                  std::to_string(cols) + ") of " + (fp4 ? "u8 (two E2M1 codes a byte) or e2m1" : std::string(runtime::name(code))) +
                  ", the last dimension contiguous");
}

void check_scales(const TensorView& s, const NormQuantizeProblem& p, std::vector<std::string>& why) {
  const BlockScaledFormat& f = p.options.format;
  const ScaleFactorLayout layout{p.norm.rows, p.norm.n, 1, f.vec};
  const bool dtype_ok = f.scale == DType::e4m3 ? s.dtype() == DType::e4m3
                                               : (s.dtype() == DType::e8m0 || s.dtype() == DType::i8 || s.dtype() == DType::u8);
  const bool flat = s.rank() == 1 && s.shape()[0] == layout.bytes() && s.is_contiguous();
  const bool six = s.rank() == 6 && s.shape() == layout.shape6() && s.strides() == layout.strides6();
  if (!dtype_ok || !(flat || six))
    why.push_back("scales are " + s.describe() + ": they must be " + std::string(runtime::name(f.scale)) +
                  " in the 128x4 layout, 1-D of " + std::to_string(layout.bytes()) + " bytes or 6-D of its shape");
}

}  // namespace

struct RmsNormQuantize::State {
  rows::RowOpState op;
  NormQuantizeProblem problem;
  std::int64_t groups = 1;  // the launch's row groups (rows::resident_groups)
};

RmsNormQuantize::RmsNormQuantize(const NormQuantizeTensors& t, NormQuantizeOptions options)
    : state_(std::make_unique<State>(State{rows::RowOpState(t.x.device()), {}, 1})) {
  State& s = *state_;
  NormQuantizeProblem& p = s.problem;
  p.options = options;
  auto& why = s.op.refusals;
  check_format(options.format, why);
  // The norm's problem (kind rms), with y the values quantized (x's place where not asked for).
  p.y = t.y.has_value();
  p.norm = describe_norm({.x = t.x, .residual = t.residual, .weight = t.weight, .y = t.y.value_or(t.x),
                          .residual_out = t.residual_out, .rstd = t.rstd},
                         {.kind = NormKind::rms, .eps = options.eps}, s.op.device, why);
  if (why.empty()) choose_norm_quantize_shape(p, s.op.device);
  const std::int64_t k = p.norm.n;
  if (k % (4 * options.format.vec) != 0)
    why.push_back("K " + std::to_string(k) + ": a multiple of 4 x vec = " + std::to_string(4 * options.format.vec) +
                  " is accepted (whole 128x4 scale tiles along K)");
  if (options.format.data == DType::e2m1 && why.empty() && p.norm.shape.vector < 2)
    why.push_back("x's rows allow accesses of one element only (odd strides or addresses): E2M1 codes need two a byte");
  check_data(t.data, p, why);
  check_scales(t.scales, p, why);
  for (const TensorView* v : {&t.data, &t.scales})
    if (!(v->device() == s.op.device)) why.push_back("a tensor is on " + v->device().describe() + ", x on " + s.op.device.describe());
  if (why.empty()) {
    const int code_bytes = std::max(1, p.norm.shape.vector * (options.format.data == DType::e2m1 ? 4 : 8) / 8);
    p.data_row_stride = t.data.rank() == 2 ? t.data.strides()[0] * runtime::bits(t.data.dtype()) / 8 : 0;
    if (rows::alignment_of(t.data.address(), static_cast<std::uint64_t>(p.data_row_stride)) < std::min(16, code_bytes))
      why.push_back("data's rows are not " + std::to_string(code_bytes) + "-byte aligned, as the codes of a vector of " +
                    std::to_string(p.norm.shape.vector) + " elements are stored");
  }
  s.op.problem = p.describe() + ", eps " + std::to_string(options.eps);
  s.op.shape = p.norm.shape;
  s.op.request = p.norm.request;
  const rows::RowShape& shape = p.norm.shape;
  s.op.views.add("x", &t.x, rows::vector_alignment(shape, p.norm.x));
  s.op.views.add("residual", optional_view(t.residual), rows::vector_alignment(shape, p.norm.residual));
  s.op.views.add("weight", optional_view(t.weight), rows::vector_alignment(shape, p.norm.weight));
  s.op.views.add("data", &t.data, std::min(16, std::max(1, shape.vector * (options.format.data == DType::e2m1 ? 4 : 8) / 8)));
  s.op.views.add("scales", &t.scales);
  s.op.views.add("residual_out", optional_view(t.residual_out), rows::vector_alignment(shape, p.norm.residual_out));
  s.op.views.add("rstd", optional_view(t.rstd), 4);
  s.op.views.add("y", optional_view(t.y), p.y ? rows::vector_alignment(shape, p.norm.y) : 0);
}

RmsNormQuantize::~RmsNormQuantize() = default;
RmsNormQuantize::RmsNormQuantize(RmsNormQuantize&&) noexcept = default;
RmsNormQuantize& RmsNormQuantize::operator=(RmsNormQuantize&&) noexcept = default;

std::vector<std::string> RmsNormQuantize::check_support() const { return state_->op.refusals; }
std::string_view RmsNormQuantize::kernel_name() const { return state_->op.shape.span(); }
std::string RmsNormQuantize::describe() const { return state_->op.describe("RmsNormQuantize"); }

void RmsNormQuantize::compile() {
  State& s = *state_;
  if (s.op.module) return;
  s.op.compile("RmsNormQuantize", [&] { return build_norm_quantize_kernel(s.problem, s.op.device.target()); });
  const rows::RowShape& shape = s.problem.norm.shape;
  s.groups = rows::resident_groups(shape, rows::persistent_groups(shape, s.problem.padded_rows(), s.op.device),
                                   *s.op.module, kNormQuantizeKernel);
}

void RmsNormQuantize::execute(const NormQuantizeTensors& t, runtime::Stream* stream) {
  compile();
  State& s = *state_;
  const std::initializer_list<const TensorView*> views = {&t.x,           optional_view(t.residual),
                                                          optional_view(t.weight), &t.data,
                                                          &t.scales,      optional_view(t.residual_out),
                                                          optional_view(t.rstd),   optional_view(t.y)};
  s.op.check_views("RmsNormQuantize", views);
  std::vector<runtime::Arg> args;
  rows::append_args(args, views);
  args.emplace_back(static_cast<std::uint32_t>(s.problem.norm.rows));
  s.op.module->launch(kNormQuantizeKernel, rows::row_launch(s.problem.norm.shape, s.groups), args, stream);
}

}  // namespace warpforge::ops
