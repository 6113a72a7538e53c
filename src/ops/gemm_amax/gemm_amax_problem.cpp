#include "gemm_amax_problem.hpp"

#include <limits>
#include <optional>
#include <sstream>

#include "../view_checks.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;
using runtime::TensorView;

bool is_fp8(DType t) {
  return t == DType::e4m3 || t == DType::e5m2;
}
std::string_view dtype_name(DType t) {
  return t == DType::e2m1 ? "FP4 e2m1" : runtime::name(t);
}

// A matrix operand (A, B or C) read from its view: rows × cols × batch in
// elements, strides in elements (nibbles for FP4). u8 views of FP4 count
// bytes along cols, so cols and the other strides double.
struct Matrix {
  DType dtype;
  std::int64_t rows, cols, batch;
  MatrixStrides strides;
};

std::optional<Matrix> read_matrix(const TensorView& v, const std::string& who,
                                  const char* shape_names, std::optional<DType> fp4_bytes_as,
                                  std::vector<std::string>& refusals) {
  if (v.rank() != 3) {
    refusals.push_back(who + " has shape " + dims(v.shape()) + ": expected rank 3, " + shape_names);
    return std::nullopt;
  }
  const auto& s = v.shape();
  const auto& st = v.strides();
  Matrix m{v.dtype(), s[0], s[1], s[2], {st[0], st[1], st[2]}};
  if (v.dtype() == DType::u8 && fp4_bytes_as) {  // packed FP4 bytes: (rows, cols/2, batch)
    m.dtype = *fp4_bytes_as;
    m.cols = 2 * s[1];
    m.strides = {2 * st[0], st[1], 2 * st[2]};
  }
  return m;
}

enum class Contiguous { rows, cols, none };

// Which dimension has stride 1; extents of 1 count as contiguous in either.
Contiguous contiguous(const Matrix& m) {
  if (m.strides.col == 1 || m.cols == 1) return Contiguous::cols;
  if (m.strides.row == 1 || m.rows == 1) return Contiguous::rows;
  return Contiguous::none;
}

// "every non-unit stride 16-byte aligned": the rows of the contiguous
// dimension start on 16-byte boundaries, as vector loads and TMA need.
void check_alignment(const TensorView& v, const Matrix& m, const std::string& who,
                     std::vector<std::string>& refusals) {
  const int element_bits = m.dtype == DType::e2m1 ? 4 : runtime::bits(m.dtype);
  const Contiguous c = contiguous(m);
  auto check = [&](std::int64_t stride, std::int64_t extent, const char* dim) {
    if (extent <= 1) return;
    const std::int64_t bits = stride * element_bits;
    if (bits % 128 != 0)
      refusals.push_back(
          who + " stride " + std::to_string(stride) + " along " + dim + " is " +
          (bits % 8 ? std::to_string(bits) + " bits" : std::to_string(bits / 8) + " bytes") +
          ": strides other than the contiguous dimension's must be multiples of 16 bytes (" +
          std::to_string(128 / element_bits) + " elements of " + std::string(dtype_name(m.dtype)) +
          ")");
  };
  if (c != Contiguous::rows) check(m.strides.row, m.rows, "dimension 0");
  if (c == Contiguous::rows) check(m.strides.col, m.cols, "dimension 1");
  check(m.strides.batch, m.batch, "dimension 2 (L)");
  if (v.address() % 16 != 0)
    refusals.push_back(who + " starts at address 0x" + [&] {
      std::ostringstream o;
      o << std::hex << v.address();
      return o.str();
    }() + ": the base must be 16-byte aligned");
}

std::optional<DType> data_dtype(DType t) {
  if (t == DType::e4m3 || t == DType::e5m2 || t == DType::e2m1) return t;
  if (t == DType::u8) return DType::e2m1;  // u8 means packed FP4
  return std::nullopt;
}

std::optional<DType> scale_dtype(DType t) {
  if (t == DType::e8m0 || t == DType::e4m3) return t;
  if (t == DType::i8) return DType::e8m0;  // int8 means e8m0
  return std::nullopt;
}

std::optional<DType> c_dtype(DType t) {
  switch (t) {
    case DType::f32:
    case DType::f16:
    case DType::bf16:
    case DType::e4m3:
    case DType::e5m2:
    case DType::e2m1:
      return t;
    case DType::u8:
      return DType::e2m1;
    default:
      return std::nullopt;
  }
}

void check_scales(const TensorView& v, const std::string& who, const ScaleFactorLayout& layout,
                  std::vector<std::string>& refusals) {
  const bool flat =
      v.rank() == 1 && v.shape()[0] == layout.bytes() && (v.strides()[0] == 1 || v.shape()[0] == 1);
  bool tiled = v.rank() == 6 && v.shape() == layout.shape6();
  for (int i = 0; tiled && i < 6; ++i)
    tiled = v.shape()[i] == 1 || v.strides()[i] == layout.strides6()[i];
  if (flat || tiled) return;
  refusals.push_back(
      who + " has shape " + dims(v.shape()) + " strides " + dims(v.strides()) + ": for " +
      std::to_string(layout.rows) + " rows, K " + std::to_string(layout.k) + ", L " +
      std::to_string(layout.batches) + " and sf_vec_size " + std::to_string(layout.vec) +
      " the 128x4 scale layout is 1-D (" + std::to_string(layout.bytes()) +
      ") contiguous or 6-D shape " + dims(layout.shape6()) + " strides " + dims(layout.strides6()));
}

}  // namespace

std::string GemmAmaxProblem::describe() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " L" +
         std::to_string(l) + " " + std::string(runtime::name(ab_dtype)) + " x " +
         std::string(runtime::name(sf_dtype)) + "/" + std::to_string(vec) + " -> " +
         std::string(runtime::name(c_dtype));
}

namespace {

// The operands' dtypes as the problem reads them (u8 data: packed FP4; i8
// scales: e8m0), absent where a view's dtype is refused.
struct Dtypes {
  std::optional<DType> a, b, sfa, sfb, c;
};

Dtypes check_dtypes(const TensorView& a, const TensorView& b, const TensorView& sfa, const TensorView& sfb,
                    const TensorView& c, const TensorView& amax, const GemmAmaxOptions& options,
                    std::vector<std::string>& refusals) {
  const Dtypes d{data_dtype(a.dtype()), data_dtype(b.dtype()), scale_dtype(sfa.dtype()), scale_dtype(sfb.dtype()),
                 c_dtype(c.dtype())};
  const char* data_rule = ": A and B must be e4m3, e5m2 or FP4 (e2m1, or u8 holding two e2m1 per byte)";
  if (!d.a) refusals.push_back("A dtype " + std::string(runtime::name(a.dtype())) + data_rule);
  if (!d.b) refusals.push_back("B dtype " + std::string(runtime::name(b.dtype())) + data_rule);
  if (d.a && d.b && *d.a != *d.b)
    refusals.push_back("A is " + std::string(dtype_name(*d.a)) + " but B is " + std::string(dtype_name(*d.b)) +
                       ": A and B must have one data dtype");
  const char* scale_rule = ": scales must be e8m0, e4m3 or i8 (meaning e8m0)";
  if (!d.sfa) refusals.push_back("SFA dtype " + std::string(runtime::name(sfa.dtype())) + scale_rule);
  if (!d.sfb) refusals.push_back("SFB dtype " + std::string(runtime::name(sfb.dtype())) + scale_rule);
  if (d.sfa && d.sfb && *d.sfa != *d.sfb)
    refusals.push_back("SFA is " + std::string(runtime::name(*d.sfa)) + " but SFB is " +
                       std::string(runtime::name(*d.sfb)) + ": SFA and SFB must have one scale dtype");
  if (!d.c)
    refusals.push_back("C dtype " + std::string(runtime::name(c.dtype())) +
                       ": C must be f32, f16, bf16, e4m3, e5m2 or FP4 (e2m1, or u8 holding two e2m1 per byte)");
  const auto wanted_c = c_dtype(options.c_dtype);
  if (!wanted_c)
    refusals.push_back("options.c_dtype " + std::string(runtime::name(options.c_dtype)) +
                       ": accepted f32, f16, bf16, e4m3, e5m2, e2m1");
  if (d.c && wanted_c && *d.c != *wanted_c)
    refusals.push_back("C is " + std::string(dtype_name(*d.c)) + " but options.c_dtype is " +
                       std::string(dtype_name(*wanted_c)) + ": they must agree");
  if (options.acc_dtype != DType::f32)
    refusals.push_back("acc_dtype " + std::string(runtime::name(options.acc_dtype)) + ": accumulation is f32 only");
  if (options.sf_vec_size != 16 && options.sf_vec_size != 32)
    refusals.push_back("sf_vec_size " + std::to_string(options.sf_vec_size) + ": accepted 16 and 32");
  if (amax.dtype() != DType::f32 || amax.numel() != 1)
    refusals.push_back("amax is " + amax.describe() + ": expected f32 with one element");
  return d;
}

// The combination rules (REFERENCE.md; cuDNN frontend GemmAmax).
void check_combinations(const Dtypes& d, int vec, std::vector<std::string>& refusals) {
  if (d.sfa && *d.sfa == DType::e4m3 && vec == 32)
    refusals.push_back(
        "e4m3 scales with sf_vec_size 32: e4m3 (NVFP4) scales need sf_vec_size 16; "
        "with 32 use e8m0 scales");
  if (d.a && is_fp8(*d.a) && vec == 16)
    refusals.push_back(std::string(runtime::name(*d.a)) +
                       " data with sf_vec_size 16: FP8 data takes sf_vec_size 32 (MXFP8); 16 is for FP4");
  if (d.a && is_fp8(*d.a) && d.c && is_fp8(*d.c))
    refusals.push_back(std::string(runtime::name(*d.a)) + " A/B with " + std::string(runtime::name(*d.c)) +
                       " C: FP8 inputs need C of f32, f16 or bf16");
  if (d.c && *d.c == DType::e2m1 && d.a && *d.a != DType::e2m1)
    refusals.push_back("FP4 C with " + std::string(runtime::name(*d.a)) + " A/B: FP4 C needs FP4 A and B");
}

// A (M, K, L) and B (N, K, L): major-ness, alignment, their common K and L.
void check_data(const TensorView& a, const TensorView& b, const Dtypes& d, const std::optional<Matrix>& ma,
                const std::optional<Matrix>& mb, GemmAmaxProblem& p, std::vector<std::string>& refusals) {
  if (ma) {
    p.m = ma->rows, p.k = ma->cols, p.l = ma->batch, p.a = ma->strides;
    if (contiguous(*ma) == Contiguous::none)
      refusals.push_back("A strides " + dims(a.strides()) + ": M or K must have stride 1");
    if (d.a && *d.a == DType::e2m1 && contiguous(*ma) != Contiguous::cols)
      refusals.push_back("FP4 A strides " + dims(a.strides()) + ": FP4 data must be k-major (K of stride 1)");
    check_alignment(a, *ma, "A", refusals);
  }
  if (!mb) return;
  p.n = mb->rows, p.b = mb->strides;
  if (contiguous(*mb) == Contiguous::none)
    refusals.push_back("B strides " + dims(b.strides()) + ": N or K must have stride 1");
  if (d.b && *d.b == DType::e2m1 && contiguous(*mb) != Contiguous::cols)
    refusals.push_back("FP4 B strides " + dims(b.strides()) + ": FP4 data must be k-major (K of stride 1)");
  check_alignment(b, *mb, "B", refusals);
  if (ma && mb->cols != ma->cols)
    refusals.push_back("A has K " + std::to_string(ma->cols) + " but B has K " + std::to_string(mb->cols) +
                       ": A (M, K, L) and B (N, K, L) must share K");
  if (ma && mb->batch != ma->batch)
    refusals.push_back("batch mismatch: A has L " + std::to_string(ma->batch) + ", B has L " +
                       std::to_string(mb->batch) + ": A, B and C must have one L");
}

// C (M, N, L): shape against A's and B's, major-ness (options.c_major), alignment.
void check_c(const TensorView& c, const Dtypes& d, const GemmAmaxOptions& options, const std::optional<Matrix>& ma,
             const std::optional<Matrix>& mb, const std::optional<Matrix>& mc, GemmAmaxProblem& p,
             std::vector<std::string>& refusals) {
  if (!mc) return;
  p.c = mc->strides;
  const Contiguous cm = contiguous(*mc);
  if (cm == Contiguous::none) refusals.push_back("C strides " + dims(c.strides()) + ": M or N must have stride 1");
  const bool n_major = cm == Contiguous::cols;
  if (cm != Contiguous::none && mc->rows > 1 && mc->cols > 1 && n_major != (options.c_major == CMajor::n))
    refusals.push_back(std::string("C strides ") + dims(c.strides()) + " make C " + (n_major ? "n" : "m") +
                       "-major but options.c_major is " + (options.c_major == CMajor::n ? "n" : "m") +
                       ": they must agree");
  if (d.c && *d.c == DType::e2m1 && (cm != Contiguous::cols || options.c_major != CMajor::n))
    refusals.push_back("FP4 C strides " + dims(c.strides()) + ": FP4 C must be n-major (N of stride 1)");
  check_alignment(c, *mc, "C", refusals);
  if (ma && mb && (mc->rows != ma->rows || mc->cols != mb->rows))
    refusals.push_back("C has shape (" + std::to_string(mc->rows) + ", " + std::to_string(mc->cols) +
                       ") per batch but A, B give (M, N) = (" + std::to_string(ma->rows) + ", " +
                       std::to_string(mb->rows) + ")");
  if (ma && mc->batch != ma->batch)
    refusals.push_back("batch mismatch: A has L " + std::to_string(ma->batch) + ", C has L " +
                       std::to_string(mc->batch) + ": A, B and C must have one L");
}

void check_devices(const TensorView& a, const TensorView& b, const TensorView& sfa, const TensorView& sfb,
                   const TensorView& c, const TensorView& amax, std::vector<std::string>& refusals) {
  const std::pair<const TensorView*, const char*> others[] = {
      {&b, "B"}, {&sfa, "SFA"}, {&sfb, "SFB"}, {&c, "C"}, {&amax, "amax"}};
  for (const auto& [view, who] : others)
    if (!(view->device() == a.device()))
      refusals.push_back(std::string(who) + " is on " + view->device().describe() + " but A is on " +
                         a.device().describe() + ": every tensor must be on one device");
}

}  // namespace

GemmAmaxProblem describe_gemm_amax(const TensorView& a, const TensorView& b, const TensorView& sfa,
                                   const TensorView& sfb, const TensorView& c,
                                   const TensorView& amax, const GemmAmaxOptions& options,
                                   std::vector<std::string>& refusals) {
  GemmAmaxProblem p;
  p.vec = options.sf_vec_size;
  p.tile = options.mma_tile;
  p.cluster = options.cluster;
  p.precision = options.precision;
  const Dtypes d = check_dtypes(a, b, sfa, sfb, c, amax, options, refusals);
  check_combinations(d, p.vec, refusals);
  // Shapes, major-ness, alignment.
  const auto ma = read_matrix(a, "A", "(M, K, L)", DType::e2m1, refusals);
  const auto mb = read_matrix(b, "B", "(N, K, L)", DType::e2m1, refusals);
  const auto mc = read_matrix(c, "C", "(M, N, L)", DType::e2m1, refusals);
  check_data(a, b, d, ma, mb, p, refusals);
  check_c(c, d, options, ma, mb, mc, p, refusals);
  const bool sized = p.m > 0 && p.n > 0 && p.k > 0 && p.l > 0;
  if (ma && mb && !sized)
    refusals.push_back("M, N, K, L = " + std::to_string(p.m) + ", " + std::to_string(p.n) + ", " +
                       std::to_string(p.k) + ", " + std::to_string(p.l) + ": each must be at least 1");
  if (ma && mb && (p.vec == 16 || p.vec == 32) && sized) {
    check_scales(sfa, "SFA", ScaleFactorLayout{p.m, p.k, p.l, p.vec}, refusals);
    check_scales(sfb, "SFB", ScaleFactorLayout{p.n, p.k, p.l, p.vec}, refusals);
  }
  check_devices(a, b, sfa, sfb, c, amax, refusals);
  if (d.a) p.ab_dtype = *d.a;
  if (d.sfa) p.sf_dtype = *d.sfa;
  if (d.c) p.c_dtype = *d.c;
  return p;
}

std::int64_t code_bytes(DType ab, std::int64_t elements) { return (elements * runtime::bits(ab) + 7) / 8; }

void check_k_major_operand(std::vector<std::string>& why, const char* name, DType ab, const MatrixStrides& s,
                           std::int64_t l, const KMajorOperandRule& rule) {
  if (s.col != 1) {
    why.push_back(std::string(name) + " is not K-major (K stride " + std::to_string(s.col) + "); " +
                  std::string(rule.kernel) + " reads K-major A and B" +
                  (rule.others.empty() ? "" : " (" + std::string(rule.others) + ")"));
    return;
  }
  const std::int64_t row = code_bytes(ab, s.row), batch = code_bytes(ab, s.batch);
  const std::string needs = "; " + std::string(rule.kernel) + "'s " + std::string(rule.loads) + " need a ";
  if (row % 16 != 0)
    why.push_back(std::string(name) + "'s row stride is " + std::to_string(row) + " bytes" + needs +
                  "multiple of 16");
  if (l > 1 && (batch % 16 != 0 || (rule.nonzero_batch && batch == 0)))
    why.push_back(std::string(name) + "'s batch stride is " + std::to_string(batch) + " bytes" + needs +
                  (rule.nonzero_batch ? "nonzero multiple of 16" : "multiple of 16"));
}

void check_offsets_and_batches(std::vector<std::string>& why, const GemmAmaxProblem& p, std::string_view kernel) {
  // The largest element offset a matrix reaches.
  auto span = [](const MatrixStrides& s, std::int64_t rows, std::int64_t cols, std::int64_t batches) {
    return (rows - 1) * s.row + (cols - 1) * s.col + (batches - 1) * s.batch + 1;
  };
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max();
  const bool sized = p.m > 0 && p.n > 0 && p.k > 0 && p.l > 0;  // else describe_gemm_amax refused it
  if (sized && (span(p.a, p.m, p.k, p.l) > limit || span(p.b, p.n, p.k, p.l) > limit ||
                span(p.c, p.m, p.n, p.l) > limit))
    why.push_back("problem " + p.describe() + ": " + std::string(kernel) +
                  " addresses A, B and C with 32-bit element offsets (at most 2^31 - 1)");
  if (p.l > 65535)
    why.push_back("L " + std::to_string(p.l) + ": " + std::string(kernel) + " puts L on grid z (at most 65535)");
}

}  // namespace warpforge::ops
