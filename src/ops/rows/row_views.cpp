#include "row_views.hpp"

#include <algorithm>

namespace warpforge::ops::rows {

using runtime::DType;
using runtime::TensorView;

namespace {

std::string shape_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

int alignment_of(std::uint64_t address, std::uint64_t stride_bytes) {
  const std::uint64_t both = address | stride_bytes | 16;
  return static_cast<int>(both & (~both + 1));
}

std::optional<RowMatrix> as_rows(const TensorView& view, const std::string& role, std::vector<std::string>& why) {
  const auto& shape = view.shape();
  const auto& strides = view.strides();
  const int rank = view.rank();
  if (rank < 1) {
    why.push_back(role + " is a scalar: it needs a last dimension of at least one element");
    return std::nullopt;
  }
  RowMatrix m;
  m.dtype = view.dtype();
  m.n = shape[static_cast<std::size_t>(rank - 1)];
  if (m.n < 1) {
    why.push_back(role + " is " + view.describe() + ": its last dimension holds no element");
    return std::nullopt;
  }
  if (m.n > 1 && strides[static_cast<std::size_t>(rank - 1)] != 1) {
    why.push_back(role + " is " + view.describe() + ": its last dimension must be contiguous (stride 1)");
    return std::nullopt;
  }
  // The leading dimensions, outermost first, must lie one inside the next:
  // each stride the next one's times its extent (extent-1 dimensions aside).
  m.rows = 1;
  std::int64_t row_stride = 0, expected = 0;
  bool collapses = true;
  for (int d = rank - 2; d >= 0; --d) {
    const auto i = static_cast<std::size_t>(d);
    m.rows *= shape[i];
    if (shape[i] == 1) continue;
    if (row_stride == 0)
      row_stride = strides[i];
    else if (strides[i] != expected)
      collapses = false;
    expected = strides[i] * shape[i];
  }
  if (!collapses) {
    why.push_back(role + " is " + view.describe() + ": its leading dimensions " +
                  shape_text(std::vector<std::int64_t>(shape.begin(), shape.end() - 1)) +
                  " do not collapse into one row stride (make them contiguous)");
    return std::nullopt;
  }
  m.row_stride = row_stride == 0 ? m.n : row_stride;
  if (m.rows > 1 && m.row_stride < m.n) {
    why.push_back(role + " is " + view.describe() + ": its rows overlap (row stride " + std::to_string(m.row_stride) +
                  " < " + std::to_string(m.n) + " elements)");
    return std::nullopt;
  }
  const int bytes = std::max(1, runtime::bits(m.dtype) / 8);
  m.alignment = alignment_of(view.address(), static_cast<std::uint64_t>(m.row_stride) * bytes);
  return m;
}

std::optional<RowMatrix> input_rows(const TensorView& view, const std::string& role, std::vector<std::string>& why) {
  auto m = as_rows(view, role, why);
  if (!m) return m;
  require_row_float(*m, role, why);
  require_row_count(m->rows, why);
  return m;
}

void require_row_count(std::int64_t rows, std::vector<std::string>& why) {
  constexpr std::int64_t kMaxRows = (std::int64_t{1} << 31) - 1;
  if (rows > kMaxRows)
    why.push_back(std::to_string(rows) + " rows: up to " + std::to_string(kMaxRows) + " are accepted");
}

bool is_row_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

void require_row_float(const RowMatrix& m, const std::string& role, std::vector<std::string>& why) {
  if (!is_row_float(m.dtype))
    why.push_back(role + " is " + std::string(runtime::name(m.dtype)) + ": accepted f32, f16, bf16");
}

void require_same_rows(const RowMatrix& m, const std::string& role, std::int64_t rows, std::int64_t n,
                       const std::string& like, std::vector<std::string>& why) {
  if (m.rows != rows || m.n != n)
    why.push_back(role + " holds " + std::to_string(m.rows) + " rows of " + std::to_string(m.n) + " elements; " +
                  like + " has " + std::to_string(rows) + " of " + std::to_string(n));
}

void require_row_statistic(const TensorView& view, const std::string& role, std::int64_t rows,
                           std::vector<std::string>& why) {
  if (view.dtype() != DType::f32 || view.numel() != rows || !view.is_contiguous())
    why.push_back(role + " is " + view.describe() + ": it must be a contiguous f32 tensor of one element a row (" +
                  std::to_string(rows) + ")");
}

int vector_elements(std::int64_t n, std::initializer_list<const RowMatrix*> matrices) {
  int narrowest = 16;
  for (const RowMatrix* m : matrices)
    if (m) narrowest = std::min(narrowest, m->bytes());
  for (int v = 16 / narrowest; v > 1; v /= 2) {
    if (n % v != 0) continue;
    bool fits = true;
    for (const RowMatrix* m : matrices)
      if (m && m->alignment < std::min(16, v * m->bytes())) fits = false;
    if (fits) return v;
  }
  return 1;
}

void ViewChecks::add(std::string role, const TensorView* view, int alignment) {
  Entry e{std::move(role), view != nullptr, DType::f32, {}, {}, alignment};
  if (view) e.dtype = view->dtype(), e.shape = view->shape(), e.strides = view->strides();
  entries_.push_back(std::move(e));
}

std::vector<std::string> ViewChecks::mismatches(std::initializer_list<const TensorView*> given,
                                                const runtime::Device& device, const std::string& op) const {
  std::vector<std::string> why;
  std::size_t i = 0;
  for (const TensorView* v : given) {
    if (i >= entries_.size()) break;
    const Entry& e = entries_[i++];
    if (!v && !e.present) continue;
    if (!v || !e.present) {
      why.push_back(e.role + (v ? " is given" : " is missing") + ": " + op + " was built " +
                    (v ? "without" : "with") + " one");
      continue;
    }
    if (v->dtype() != e.dtype || v->shape() != e.shape || v->strides() != e.strides) {
      why.push_back(e.role + " is " + v->describe() + ": execute() needs views of the dtype, shape and strides " +
                    op + " was built with");
    } else if (!(v->device() == device)) {
      why.push_back(e.role + " is on " + v->device().describe() + ": " + op + " was built for " + device.describe());
    } else if (e.alignment > 1 && v->address() % static_cast<std::uint64_t>(e.alignment) != 0) {
      why.push_back(e.role + " starts at an address that is not " + std::to_string(e.alignment) +
                    "-byte aligned, which the kernel built from the sample's address assumes (build " + op +
                    " from a view at this alignment)");
    }
  }
  return why;
}

std::string join(const std::vector<std::string>& reasons) {
  std::string s;
  for (const auto& r : reasons) s += "\n  - " + r;
  return s;
}

}  // namespace warpforge::ops::rows
