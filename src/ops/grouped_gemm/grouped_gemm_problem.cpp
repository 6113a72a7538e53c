#include "grouped_gemm_problem.hpp"

#include <optional>
#include <sstream>

#include "../view_checks.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;
using runtime::TensorView;

bool is_half(DType t) { return t == DType::bf16 || t == DType::f16; }
bool is_code(DType t) { return t == DType::e4m3 || t == DType::e5m2 || t == DType::e2m1 || t == DType::u8; }
DType code_dtype(DType t) { return t == DType::u8 ? DType::e2m1 : t; }
DType scale_dtype(DType t) { return t == DType::i8 ? DType::e8m0 : t; }

std::string hex(std::uint64_t v) {
  std::ostringstream o;
  o << "0x" << std::hex << v;
  return o.str();
}

// A matrix operand read from the last two dimensions of its view, rows x
// cols as the problem names them; u8 FP4 views count bytes along the
// contiguous K, so that dimension and the other strides double.
struct Matrix {
  std::int64_t rows = 0, cols = 0;
  GroupedOperand layout;
};

std::optional<Matrix> read_matrix(const TensorView& v, const std::string& who, DType dtype,
                                  std::vector<std::string>& refusals) {
  const int r = v.rank();
  const auto& s = v.shape();
  const auto& st = v.strides();
  Matrix m{s[r - 2], s[r - 1], {}};
  const bool cols = st[r - 1] == 1 || s[r - 1] == 1, rows = st[r - 2] == 1 || s[r - 2] == 1;
  if (!cols && !rows) {
    refusals.push_back(who + " strides " + dims(st) + ": one of its last two dimensions must have stride 1");
    return std::nullopt;
  }
  m.layout.cols_contiguous = cols;
  m.layout.ld = cols ? st[r - 2] : st[r - 1];
  m.layout.batch = r == 3 ? st[0] : 0;
  // Alignment: the base and every stride but the contiguous one 16-byte aligned (16-byte loads, cp.async).
  const int bits = runtime::bits(v.dtype());  // strides count the view's elements (u8 FP4: bytes)
  auto aligned = [&](std::int64_t stride, std::int64_t extent, const char* what) {
    if (extent > 1 && (stride * bits) % 128 != 0)
      refusals.push_back(who + " stride " + std::to_string(stride) + " along " + what + ": strides other than the " +
                         "contiguous dimension's must be multiples of 16 bytes (" + std::to_string(128 / bits) +
                         " elements of " + std::string(runtime::name(v.dtype())) + ")");
  };
  aligned(m.layout.ld, cols ? m.rows : m.cols, cols ? "the rows" : "the columns");
  if (r == 3) aligned(m.layout.batch, s[0], "the groups");
  if (v.address() % 16 != 0) refusals.push_back(who + " starts at address " + hex(v.address()) + ": the base must be 16-byte aligned");
  if (dtype == DType::e2m1 && v.dtype() == DType::u8) {  // packed bytes: element (nibble) strides
    m.cols *= 2;
    m.layout.ld *= 2;
  }
  return m;
}

void require_rank(const TensorView& v, const std::string& who, int rank, const std::string& shape,
                  std::vector<std::string>& refusals, bool& ok) {
  if (v.rank() == rank) return;
  refusals.push_back(who + " has shape " + dims(v.shape()) + ": expected rank " + std::to_string(rank) + ", " + shape);
  ok = false;
}

void require_flat(const TensorView& v, const std::string& who, std::int64_t bytes, const std::string& what,
                  std::vector<std::string>& refusals) {
  const bool flat = v.rank() == 1 && (v.strides()[0] == 1 || v.shape()[0] == 1);
  const std::int64_t have = flat ? v.shape()[0] * runtime::bits(v.dtype()) / 8 : -1;
  if (!flat || have != bytes)
    refusals.push_back(who + " is " + v.describe() + ": expected 1-D contiguous " + std::to_string(bytes) + " bytes (" +
                       what + ")");
  if (v.address() % 16 != 0) refusals.push_back(who + " starts at address " + hex(v.address()) + ": the base must be 16-byte aligned");
}

}  // namespace

std::string block_scaled_format_name(DType data, DType scale, int vec) {
  std::string kind = data == DType::e2m1 ? (scale == DType::e4m3 ? "NVFP4" : "MXFP4") : "MXFP8";
  if (data == DType::e2m1 && scale == DType::e8m0 && vec == 16) kind = "FP4";
  return kind + " (" + std::string(runtime::name(data)) + " x " + std::string(runtime::name(scale)) + "/" +
         std::to_string(vec) + ")";
}

std::vector<std::string> block_scaled_format_refusals(DType data, DType scale, int vec) {
  std::vector<std::string> why;
  if (data != DType::e4m3 && data != DType::e5m2 && data != DType::e2m1)
    why.push_back("block-scaled data " + std::string(runtime::name(data)) + ": accepted e4m3, e5m2 (MXFP8) and e2m1 (FP4)");
  if (scale != DType::e8m0 && scale != DType::e4m3)
    why.push_back("scale dtype " + std::string(runtime::name(scale)) + ": accepted e8m0 (i8 means e8m0) and e4m3");
  if (vec != 16 && vec != 32) why.push_back("sf_vec_size " + std::to_string(vec) + ": accepted 16 and 32");
  if (scale == DType::e4m3 && vec == 32)
    why.push_back("e4m3 scales with sf_vec_size 32: e4m3 (NVFP4) scales need sf_vec_size 16");
  if (scale == DType::e4m3 && data != DType::e2m1 && data != DType::u8)
    why.push_back("e4m3 scales with " + std::string(runtime::name(data)) + " data: e4m3 scales go with FP4 (NVFP4)");
  if ((data == DType::e4m3 || data == DType::e5m2) && vec == 16)
    why.push_back(std::string(runtime::name(data)) + " data with sf_vec_size 16: FP8 data takes sf_vec_size 32 (MXFP8)");
  return why;
}

std::string GroupedGemmProblem::describe() const {
  std::string s = form == GroupedForm::ragged_m ? "ragged M: " : "ragged K: ";
  s += std::to_string(groups) + (groups == 1 ? " group" : " groups") + ", M " + std::to_string(m) + ", N " +
       std::to_string(n) + ", K " + std::to_string(k) + ", ";
  s += scaled_a ? block_scaled_format_name(a_dtype, sf_dtype, vec) : std::string(runtime::name(a_dtype));
  s += " x ";
  s += packed_b ? (native_b ? "" : "packed ") + block_scaled_format_name(b_dtype, sf_dtype, vec)
                 : std::string(runtime::name(b_dtype));
  return s + " -> " + std::string(runtime::name(d_dtype)) + (amax ? " + amax" : "");
}

GroupedGemmProblem describe_grouped_gemm(const GroupedGemmTensors& t, const GroupedGemmOptions& options,
                                         std::vector<std::string>& refusals) {
  GroupedGemmProblem p;
  p.vec = options.sf_vec_size;
  p.has_offsets = t.offsets != nullptr;
  p.scaled_a = t.sfa != nullptr;
  p.packed_b = t.sfb != nullptr;
  p.amax = t.amax != nullptr;

  // Dtypes.
  if (p.scaled_a && !is_code(t.a.dtype()))
    refusals.push_back("A dtype " + std::string(runtime::name(t.a.dtype())) +
                       " with SFA: block-scaled A is e4m3, e5m2 or FP4 (u8 two codes a byte)");
  if (!p.scaled_a && !is_half(t.a.dtype()))
    refusals.push_back("A dtype " + std::string(runtime::name(t.a.dtype())) +
                       ": A is bf16 or f16 (or block-scaled codes given with SFA)");
  p.a_dtype = p.scaled_a ? code_dtype(t.a.dtype()) : t.a.dtype();
  if (p.packed_b && !is_code(t.b.dtype()))
    refusals.push_back("B dtype " + std::string(runtime::name(t.b.dtype())) +
                       " with SFB: packed block-scaled B is e4m3, e5m2 or FP4 (u8 two codes a byte)");
  if (!p.packed_b && !is_half(t.b.dtype()))
    refusals.push_back("B dtype " + std::string(runtime::name(t.b.dtype())) +
                       ": B is bf16 or f16 (or packed block-scaled codes given with SFB: prepack_weights)");
  p.b_dtype = p.packed_b ? code_dtype(t.b.dtype()) : t.b.dtype();
  if (p.scaled_a && !p.packed_b)
    refusals.push_back("A is block-scaled but B is " + std::string(runtime::name(t.b.dtype())) +
                       ": a block-scaled A needs a block-scaled B of its format (packed, with SFB)");
  if (!p.scaled_a && !p.packed_b && is_half(t.a.dtype()) && is_half(t.b.dtype()) && t.a.dtype() != t.b.dtype())
    refusals.push_back("A is " + std::string(runtime::name(t.a.dtype())) + " but B is " +
                       std::string(runtime::name(t.b.dtype())) + ": bf16 and f16 operands are not mixed");
  if (p.packed_b && !p.scaled_a && t.a.dtype() != DType::bf16 && is_half(t.a.dtype()))
    refusals.push_back("A is " + std::string(runtime::name(t.a.dtype())) +
                       " against block-scaled B: weight-only products are bf16 (every code times its scale is a "
                       "bf16), so A must be bf16");
  if (p.packed_b) {
    p.sf_dtype = scale_dtype(t.sfb->dtype());
    for (auto& why : block_scaled_format_refusals(p.b_dtype, p.sf_dtype, p.vec)) refusals.push_back("B: " + why);
  }
  if (p.scaled_a) {
    if (code_dtype(t.a.dtype()) != p.b_dtype || scale_dtype(t.sfa->dtype()) != p.sf_dtype)
      refusals.push_back("A is " + std::string(runtime::name(t.a.dtype())) + " with " +
                         std::string(runtime::name(t.sfa->dtype())) + " scales but B is " +
                         std::string(runtime::name(t.b.dtype())) + " with " +
                         std::string(runtime::name(t.sfb ? t.sfb->dtype() : DType::e8m0)) +
                         " scales: block-scaled A and B must share one format");
  }
  p.d_dtype = t.d.dtype();
  if (p.d_dtype != DType::f32 && p.d_dtype != DType::bf16 && p.d_dtype != DType::f16)
    refusals.push_back("D dtype " + std::string(runtime::name(p.d_dtype)) + ": D is f32, bf16 or f16");
  if (options.out_dtype != p.d_dtype)
    refusals.push_back("D is " + std::string(runtime::name(p.d_dtype)) + " but options.out_dtype is " +
                       std::string(runtime::name(options.out_dtype)) + ": they must agree");
  if (p.amax && !p.packed_b)
    refusals.push_back("amax given for a " + std::string(runtime::name(p.a_dtype)) +
                       " problem: the block-scaled forms (packed B) fold amax; bf16/f16 ones take none");
  if (p.amax && (t.amax->dtype() != DType::f32 || t.amax->numel() != 1))
    refusals.push_back("amax is " + t.amax->describe() + ": expected f32 with one element");

  // The form, from the ranks: A (M, K) always; B (G, K, N) ragged M, (K, N)
  // ragged K with offsets or one group without; packed B 1-D.
  bool ok = true;
  require_rank(t.a, "A", 2, p.scaled_a && p.a_dtype == DType::e2m1 ? "(M, K/2) bytes" : "(M, K)", refusals, ok);
  if (p.packed_b) {
    p.form = GroupedForm::ragged_m;
  } else if (t.b.rank() == 3) {
    p.form = GroupedForm::ragged_m;
  } else if (t.b.rank() == 2) {
    p.form = p.has_offsets ? GroupedForm::ragged_k : GroupedForm::ragged_m;
  } else {
    refusals.push_back("B has shape " + dims(t.b.shape()) +
                       ": expected (G, K, N) (ragged M), (K, N) (ragged K, or one group without offsets) or a "
                       "1-D packed block-scaled B");
    ok = false;
  }
  if (p.has_offsets) {
    const TensorView& o = *t.offsets;
    if (o.dtype() != DType::i32 || o.rank() != 1 || (o.shape()[0] > 1 && o.strides()[0] != 1) || o.shape()[0] < 1) {
      refusals.push_back("offsets is " + o.describe() +
                         ": expected int32 of shape (G,), G >= 1, contiguous (the groups' cumulative ends)");
      ok = false;
    } else {
      p.groups = o.shape()[0];
    }
  }
  if (!ok) return p;

  const std::optional<Matrix> a = read_matrix(t.a, "A", p.a_dtype, refusals);
  if (a) {
    p.m = a->rows, p.k = a->cols, p.a = a->layout;
    if (p.scaled_a && !a->layout.cols_contiguous && p.k > 1)
      refusals.push_back("block-scaled A strides " + dims(t.a.strides()) + ": block-scaled A must be k-major");
  }
  std::int64_t d_rows = p.m, b_k = p.k;
  if (p.packed_b) {
    if (!p.has_offsets) p.groups = 1;
    if (t.d.rank() != 2)
      refusals.push_back("D has shape " + dims(t.d.shape()) + ": expected (M, N)");
    else
      p.n = t.d.shape()[1];
    if (t.b.rank() != 1)
      refusals.push_back("B has shape " + dims(t.b.shape()) + ": a packed block-scaled B is 1-D (prepack_weights)");
    if (t.b.rank() == 1 && t.sfb->rank() == 1 && a && p.n > 0 && block_scaled_format_refusals(p.b_dtype, p.sf_dtype, p.vec).empty()) {
      const PackedWeightsLayout layout = p.packed_layout();
      require_flat(t.b, "B", layout.code_bytes(), "the packed codes of " + layout.describe(), refusals);
      require_flat(*t.sfb, "SFB", layout.scale_bytes(), "the packed scales of " + layout.describe(), refusals);
    }
  } else if (p.form == GroupedForm::ragged_m) {
    const std::optional<Matrix> b = read_matrix(t.b, "B", p.b_dtype, refusals);
    if (b) {
      p.b = b->layout, b_k = b->rows, p.n = b->cols;
      const std::int64_t groups = t.b.rank() == 3 ? t.b.shape()[0] : 1;
      if (p.has_offsets && groups != p.groups)
        refusals.push_back("B has " + std::to_string(groups) + " groups (shape " + dims(t.b.shape()) +
                           ") but offsets has " + std::to_string(p.groups) + ": one offset a group");
      if (!p.has_offsets && groups != 1)
        refusals.push_back("B has " + std::to_string(groups) +
                           " groups but no offsets were given: offsets may be absent for one group only");
    }
  } else {  // ragged K
    const std::optional<Matrix> b = read_matrix(t.b, "B", p.b_dtype, refusals);
    if (b) p.b = b->layout, b_k = b->rows, p.n = b->cols;
  }
  if (a && b_k != p.k)
    refusals.push_back("A has K " + std::to_string(p.k) + " but B has K " + std::to_string(b_k) +
                       (p.form == GroupedForm::ragged_m ? ": A (M, K) and B (G, K, N) must share K"
                                                        : ": A (M, K) and B (K, N) must share K"));

  // D: (M, N) or, ragged K, (G, M, N); its columns (N) contiguous.
  if (!p.packed_b) {
    const int rank = p.form == GroupedForm::ragged_k ? 3 : 2;
    const std::string shape = rank == 3 ? "(G, M, N)" : "(M, N)";
    if (t.d.rank() != rank) {
      refusals.push_back("D has shape " + dims(t.d.shape()) + ": expected " + shape);
    } else {
      const auto& s = t.d.shape();
      if (s[rank - 2] != d_rows || s[rank - 1] != p.n || (rank == 3 && s[0] != p.groups))
        refusals.push_back("D has shape " + dims(s) + " but A, B" + (rank == 3 ? " and offsets" : "") + " give " +
                           (rank == 3 ? "(" + std::to_string(p.groups) + ", " : "(") + std::to_string(d_rows) + ", " +
                           std::to_string(p.n) + ")");
    }
  } else if (t.d.rank() == 2 && t.d.shape()[0] != d_rows) {
    refusals.push_back("D has shape " + dims(t.d.shape()) + " but A gives M " + std::to_string(d_rows));
  }
  if (t.d.rank() >= 2) {
    const int r = t.d.rank();
    if (t.d.strides()[r - 1] != 1 && t.d.shape()[r - 1] > 1)
      refusals.push_back("D strides " + dims(t.d.strides()) + ": D must be row-major (N of stride 1)");
    else {
      p.d.ld = t.d.strides()[r - 2];
      p.d.batch = r == 3 ? t.d.strides()[0] : 0;
    }
    if (t.d.address() % 4 != 0)
      refusals.push_back("D starts at address " + hex(t.d.address()) + ": the base must be 4-byte aligned");
  }
  if (a && (p.m < 1 || p.n < 1 || p.k < 1))
    refusals.push_back("M, N, K = " + std::to_string(p.m) + ", " + std::to_string(p.n) + ", " + std::to_string(p.k) +
                       ": each must be at least 1");

  // SFA: GemmAmax's 128x4 layout over A's M rows (one batch), 1-D or as
  // its 6-D view (32, 4, RM, 4, RK, 1).
  if (p.scaled_a && a && p.m > 0 && p.k > 0 && (p.vec == 16 || p.vec == 32)) {
    const ScaleFactorLayout layout{p.m, p.k, 1, p.vec};
    bool tiled = t.sfa->rank() == 6 && t.sfa->shape() == layout.shape6();
    for (int i = 0; tiled && i < 6; ++i) tiled = t.sfa->shape()[i] == 1 || t.sfa->strides()[i] == layout.strides6()[i];
    if (!tiled)
      require_flat(*t.sfa, "SFA", layout.bytes(),
                   "the 128x4 scale layout over M " + std::to_string(p.m) + " rows and K " + std::to_string(p.k) +
                       ", or its 6-D view " + dims(layout.shape6()) + " strides " + dims(layout.strides6()),
                   refusals);
  }
  if (p.scaled_a && p.a_dtype == DType::e2m1 && p.k % 2 != 0)
    refusals.push_back("K " + std::to_string(p.k) + " with FP4 A: FP4 packs two codes a byte, so K must be even");

  // Devices.
  const std::pair<const TensorView*, const char*> others[] = {
      {&t.b, "B"}, {t.offsets, "offsets"}, {&t.d, "D"}, {t.sfa, "SFA"}, {t.sfb, "SFB"}, {t.amax, "amax"}};
  for (const auto& [view, who] : others)
    if (view && !(view->device() == t.a.device()))
      refusals.push_back(std::string(who) + " is on " + view->device().describe() + " but A is on " +
                         t.a.device().describe() + ": every tensor must be on one device");
  return p;
}

}  // namespace warpforge::ops
