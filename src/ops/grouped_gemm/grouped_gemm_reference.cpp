#include "warpforge/ops/grouped_gemm_reference.hpp"

#include <algorithm>
#include <cmath>

#include "warpforge/error.hpp"

namespace warpforge::ops {
namespace {

// D[r, :] = A[r, :]·B[g] for the rows r of group g; rows past the last end
// zero. a: (M, K) and bt: (G, N, K) values, K fastest in both.
GroupedReference ragged_m(std::int64_t m, std::int64_t n, std::int64_t k, std::span<const std::int32_t> offsets,
                          const std::vector<double>& a, const std::vector<double>& bt) {
  GroupedReference r{static_cast<std::int64_t>(offsets.size()), m, n, false, {}, {}};
  r.value.assign(static_cast<std::size_t>(m * n), 0.0);
  r.magnitude.assign(r.value.size(), 0.0);
  const std::vector<std::int64_t> ends = clamped_group_ends(offsets, m);
  std::int64_t begin = 0;
  for (std::size_t g = 0; g < ends.size(); ++g) {
    for (std::int64_t row = begin; row < ends[g]; ++row)
      for (std::int64_t col = 0; col < n; ++col) {
        const double* x = a.data() + row * k;
        const double* y = bt.data() + (static_cast<std::int64_t>(g) * n + col) * k;
        double sum = 0, size = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          const double product = x[kk] * y[kk];
          sum += product;
          size += std::fabs(product);
        }
        r.value[static_cast<std::size_t>(row * n + col)] = sum;
        r.magnitude[static_cast<std::size_t>(row * n + col)] = size;
      }
    begin = ends[g];
  }
  return r;
}

// A host tensor's (rows, cols) matrix (of batch `batch` for rank 3) as
// doubles, row-major, or transposed (cols, rows).
std::vector<double> dense(const HostTensor& t, std::int64_t batch, bool transposed) {
  const bool three = t.shape.size() == 3;
  const std::int64_t rows = t.shape[three ? 1 : 0], cols = t.shape[three ? 2 : 1];
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      out[static_cast<std::size_t>(transposed ? c * rows + r : r * cols + c)] = t.matrix(batch, r, c);
  return out;
}

}  // namespace

std::vector<std::int64_t> clamped_group_ends(std::span<const std::int32_t> offsets, std::int64_t extent) {
  std::vector<std::int64_t> ends;
  std::int64_t end = 0;
  for (std::int32_t o : offsets) {
    end = std::min(std::max<std::int64_t>(end, o), extent);
    ends.push_back(end);
  }
  return ends;
}

GroupedReference grouped_gemm_reference(const HostTensor& a, const HostTensor& b,
                                        std::span<const std::int32_t> offsets) {
  if (a.shape.size() != 2 || (b.shape.size() != 2 && b.shape.size() != 3))
    throw OpsError("grouped_gemm_reference: A must be (M, K) and B (G, K, N) or (K, N)");
  const std::int64_t m = a.shape[0], k = a.shape[1];
  const std::vector<double> av = dense(a, 0, false);
  if (b.shape.size() == 3) {
    if (b.shape[1] != k || b.shape[0] != static_cast<std::int64_t>(offsets.size()))
      throw OpsError("grouped_gemm_reference: B (G, K, N) must match A's K and the offsets' G");
    std::vector<double> bt;
    for (std::int64_t g = 0; g < b.shape[0]; ++g) {
      const std::vector<double> one = dense(b, g, true);  // (N, K)
      bt.insert(bt.end(), one.begin(), one.end());
    }
    return ragged_m(m, b.shape[2], k, offsets, av, bt);
  }
  // Ragged K: D[g] = A[:, ks]·B[ks, :].
  if (b.shape[0] != k) throw OpsError("grouped_gemm_reference: B (K, N) must match A's K");
  const std::int64_t n = b.shape[1], groups = static_cast<std::int64_t>(offsets.size());
  const std::vector<double> bv = dense(b, 0, false);  // (K, N)
  GroupedReference r{groups, m, n, true, {}, {}};
  r.value.assign(static_cast<std::size_t>(groups * m * n), 0.0);
  r.magnitude.assign(r.value.size(), 0.0);
  const std::vector<std::int64_t> ends = clamped_group_ends(offsets, k);
  std::int64_t begin = 0;
  for (std::int64_t g = 0; g < groups; ++g) {
    for (std::int64_t row = 0; row < m; ++row)
      for (std::int64_t col = 0; col < n; ++col) {
        double sum = 0, size = 0;
        for (std::int64_t kk = begin; kk < ends[static_cast<std::size_t>(g)]; ++kk) {
          const double product = av[static_cast<std::size_t>(row * k + kk)] * bv[static_cast<std::size_t>(kk * n + col)];
          sum += product;
          size += std::fabs(product);
        }
        const auto i = static_cast<std::size_t>((g * m + row) * n + col);
        r.value[i] = sum;
        r.magnitude[i] = size;
      }
    begin = ends[static_cast<std::size_t>(g)];
  }
  return r;
}

GroupedReference grouped_gemm_reference(const HostTensor& a, const BlockScaledOperand& b,
                                        std::span<const std::int32_t> offsets) {
  if (a.shape.size() != 2 || a.shape[1] != b.k || b.batches != static_cast<std::int64_t>(offsets.size()))
    throw OpsError("grouped_gemm_reference: A (M, K) must match B's K and B's batches the offsets' G");
  return ragged_m(a.shape[0], b.rows, b.k, offsets, dense(a, 0, false), b.values());  // B's values: (g, n, k)
}

GroupedReference grouped_gemm_reference(const BlockScaledOperand& a, const BlockScaledOperand& b,
                                        std::span<const std::int32_t> offsets) {
  if (a.k != b.k || a.batches != 1 || b.batches != static_cast<std::int64_t>(offsets.size()))
    throw OpsError("grouped_gemm_reference: A (M, K, 1) must match B's K and B's batches the offsets' G");
  return ragged_m(a.rows, b.rows, b.k, offsets, a.values(), b.values());
}

}  // namespace warpforge::ops
