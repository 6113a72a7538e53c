#include "problem_from_views.hpp"

#include <limits>
#include <optional>

namespace warpforge::ops {
namespace {

using runtime::DType;
using runtime::TensorView;

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

int base_alignment(std::uint64_t address) {
  for (int a = 16; a > 1; a /= 2)
    if (address % static_cast<std::uint64_t>(a) == 0) return a;
  return 1;
}

// One operand read as a (batch of) R x C matrix; nullopt (with a reason
// pushed) when its rank or strides say neither row- nor column-major.
struct Matrix {
  std::int64_t batch = 1, rows = 0, cols = 0;
  MatrixLayout layout;
};

std::optional<Matrix> read_matrix(const char* role, const char* dims, const TensorView& v,
                                  std::vector<std::string>& why) {
  if (v.rank() != 2 && v.rank() != 3) {
    why.push_back(std::string(role) + " " + v.describe() + " has rank " + std::to_string(v.rank()) +
                  "; " + role + " must be " + dims + " (rank 2) or batched (L, " + (dims + 1) +
                  " (rank 3)");
    return std::nullopt;
  }
  const int r = v.rank();
  Matrix m;
  m.batch = r == 3 ? v.shape()[0] : 1;
  m.rows = v.shape()[r - 2];
  m.cols = v.shape()[r - 1];
  const std::int64_t sr = v.strides()[r - 2], sc = v.strides()[r - 1];
  MatrixLayout& l = m.layout;
  l.base_alignment = base_alignment(v.address());
  l.batch_stride = m.batch > 1 ? v.strides()[0] : 0;
  // A dimension of extent 1 has no stride that matters: such a matrix is
  // read the way its other stride allows, and the unused leading dimension
  // is set to 8 (any value serves one row or column; 8 keeps copies wide).
  if (m.rows <= 1 && m.cols <= 1) {
    l.row_major = true;
    l.ld = 8;
  } else if (m.cols == 1) {
    l.row_major = sr != 1;
    l.ld = sr == 1 ? 8 : sr;
  } else if (m.rows == 1) {
    l.row_major = sc == 1;
    l.ld = sc == 1 ? 8 : sc;
  } else if (sc == 1) {
    l.row_major = true;
    l.ld = sr;
  } else if (sr == 1) {
    l.row_major = false;
    l.ld = sc;
  } else {
    why.push_back(std::string(role) + " " + v.describe() +
                  " is neither row-major (last stride 1) nor column-major " +
                  "(second-to-last stride 1); copy it to one of those layouts");
    return std::nullopt;
  }
  return m;
}

}  // namespace

ProblemFromViews problem_from_views(const TensorView& a, const TensorView& b, const TensorView* c,
                                    const TensorView& d, const GemmOptions& options) {
  ProblemFromViews out;
  auto& why = out.refusals;
  GemmProblem& p = out.problem;

  // Dtypes.
  auto half = [](DType t) { return t == DType::bf16 || t == DType::f16; };
  if (!half(a.dtype()))
    why.push_back("A is " + std::string(runtime::name(a.dtype())) +
                  "; A and B must be bf16 or f16");
  if (half(a.dtype()) && b.dtype() != a.dtype())
    why.push_back("A is " + std::string(runtime::name(a.dtype())) + " but B is " +
                  std::string(runtime::name(b.dtype())) +
                  "; A and B must have the same dtype (bf16 or f16)");
  else if (!half(b.dtype()) && !half(a.dtype()))
    why.push_back("B is " + std::string(runtime::name(b.dtype())) +
                  "; A and B must be bf16 or f16");
  if (d.dtype() != DType::f32 && !half(d.dtype()))
    why.push_back("D is " + std::string(runtime::name(d.dtype())) + "; D must be f32, bf16 or f16");
  if (c && c->dtype() != d.dtype())
    why.push_back("C is " + std::string(runtime::name(c->dtype())) + " but D is " +
                  std::string(runtime::name(d.dtype())) + "; C must have D's dtype");
  p.ab_dtype = a.dtype();
  p.d_dtype = d.dtype();

  // Devices.
  auto same_device = [&](const char* role, const TensorView& v) {
    if (v.device() == a.device()) return;
    why.push_back(std::string(role) + " is on " + v.device().describe() + " but A is on " + a.device().describe() +
                  "; all operands must be on one device");
  };
  same_device("B", b);
  same_device("D", d);
  if (c) same_device("C", *c);

  // alpha/beta against C.
  p.has_c = c != nullptr && options.beta != 0.0f;
  if (options.beta != 0.0f && !c)
    why.push_back("beta = " + std::to_string(options.beta) +
                  " but no C was given; give C, or beta = 0");

  // Shapes and layouts.
  auto ma = read_matrix("A", "(M, K)", a, why), mb = read_matrix("B", "(K, N)", b, why),
       md = read_matrix("D", "(M, N)", d, why);
  std::optional<Matrix> mc;
  if (c) mc = read_matrix("C", "(M, N)", *c, why);
  if (!ma || !mb || !md || (c && !mc)) return out;

  p.m = ma->rows;
  p.k = ma->cols;
  p.n = mb->cols;
  p.a = ma->layout;
  p.b = mb->layout;
  p.d = md->layout;
  if (mc) p.c = mc->layout;
  if (mb->rows != p.k)
    why.push_back("A is " + shape_text(a.shape()) + " and B is " + shape_text(b.shape()) +
                  ": A has K = " + std::to_string(p.k) +
                  " but B has K = " + std::to_string(mb->rows) + "; B must be (K, N)");
  if (md->rows != p.m || md->cols != p.n)
    why.push_back("D is " + shape_text(d.shape()) + " but A " + shape_text(a.shape()) + " and B " +
                  shape_text(b.shape()) + " make a (" + std::to_string(p.m) + ", " +
                  std::to_string(p.n) + ") result; D must be (M, N)");
  if (mc && (mc->rows != md->rows || mc->cols != md->cols))
    why.push_back("C is " + shape_text(c->shape()) + " but D is " + shape_text(d.shape()) +
                  "; C must have D's (M, N)");
  for (auto [name, value] : {std::pair{"M", p.m}, {"N", p.n}, {"K", p.k}}) {
    if (value < 1)
      why.push_back(std::string(name) + " = " + std::to_string(value) +
                    "; M, N and K must be >= 1");
    if (value > std::numeric_limits<std::int32_t>::max())
      why.push_back(std::string(name) + " = " + std::to_string(value) +
                    " exceeds 2^31 - 1, the largest extent supported");
  }
  for (auto [name, m] :
       {std::pair{"A", &*ma}, {"B", &*mb}, {"D", &*md}, {"C", mc ? &*mc : nullptr}}) {
    if (m && m->layout.ld > std::numeric_limits<std::int32_t>::max())
      why.push_back(std::string(name) + "'s leading dimension " + std::to_string(m->layout.ld) +
                    " exceeds 2^31 - 1, the largest supported");
  }
  // D must not overlap itself: its rows (or columns) are ld apart.
  const std::int64_t d_inner = md->layout.row_major ? md->cols : md->rows;
  if (md->rows > 1 && md->cols > 1 && md->layout.ld < d_inner)
    why.push_back("D " + d.describe() + " has leading dimension " + std::to_string(md->layout.ld) +
                  " < " + std::to_string(d_inner) +
                  ", so its elements overlap; D needs ld >= " + std::to_string(d_inner));

  // Batches: D carries L; A, B and C either have the same L or none (then
  // they are shared by every batch).
  p.l = md->batch;
  for (auto [name, m] : {std::pair{"A", &*ma}, {"B", &*mb}, {"C", mc ? &*mc : nullptr}}) {
    if (m && m->batch != 1 && m->batch != md->batch)
      why.push_back(std::string(name) + " has L = " + std::to_string(m->batch) +
                    " batches but D has L = " + std::to_string(md->batch) +
                    "; each of A, B and C has D's L, or is rank 2 (shared by all batches)");
  }
  if (md->batch > 1 && md->layout.batch_stride == 0)
    why.push_back("D " + d.describe() +
                  " has batch stride 0, so its batches overlap; give each batch its own memory");
  if (!c) p.c = {};
  if (!p.has_c) p.c = {};
  return out;
}

}  // namespace warpforge::ops
