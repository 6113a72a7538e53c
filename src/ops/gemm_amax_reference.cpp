#include "warpforge/ops/gemm_amax_reference.hpp"

#include <cmath>
#include <string>

#include "warpforge/error.hpp"
#include "warpforge/ops/low_precision.hpp"
#include "warpforge/ops/scale_factor_layout.hpp"

namespace warpforge::ops {

float BlockScaledOperand::value(std::int64_t r, std::int64_t kk, std::int64_t l) const {
  const std::int64_t element = r * stride_row + kk * stride_k + l * stride_batch;
  const std::uint8_t code = dtype == runtime::DType::e2m1 ? e2m1_at(data, element)
                                                          : data[static_cast<std::size_t>(element)];
  const ScaleFactorLayout layout{rows, k, batches, vec};
  const std::uint8_t scale = scales[static_cast<std::size_t>(layout.offset(r, kk / vec, l))];
  return decode(dtype, code) * decode(scale_dtype, scale);
}

std::vector<double> BlockScaledOperand::values() const {
  std::vector<double> v(static_cast<std::size_t>(batches * rows * k));
  for (std::int64_t l = 0; l < batches; ++l)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t kk = 0; kk < k; ++kk) v[static_cast<std::size_t>((l * rows + i) * k + kk)] = value(i, kk, l);
  return v;
}

GemmAmaxReference gemm_amax_reference(const BlockScaledOperand& a, const BlockScaledOperand& b) {
  if (a.k != b.k || a.batches != b.batches)
    throw OpsError("gemm_amax_reference refused: A is K " + std::to_string(a.k) + " L " +
                   std::to_string(a.batches) + ", B is K " + std::to_string(b.k) + " L " +
                   std::to_string(b.batches) + "; they must agree");
  GemmAmaxReference r{a.rows, b.rows, a.batches, {}, 0.0f};
  r.acc.resize(static_cast<std::size_t>(r.m * r.n * r.l));
  const std::vector<double> da = a.values(), db = b.values();  // decoded once
  bool nan = false;
  float amax = 0.0f;
  for (std::int64_t l = 0; l < r.l; ++l)
    for (std::int64_t i = 0; i < r.m; ++i)
      for (std::int64_t j = 0; j < r.n; ++j) {
        const double* x = &da[static_cast<std::size_t>((l * r.m + i) * a.k)];
        const double* y = &db[static_cast<std::size_t>((l * r.n + j) * a.k)];
        double sum = 0.0;
        for (std::int64_t kk = 0; kk < a.k; ++kk) sum += x[kk] * y[kk];
        const auto acc = static_cast<float>(sum);
        r.acc[static_cast<std::size_t>((l * r.m + i) * r.n + j)] = acc;
        if (std::isnan(acc))
          nan = true;
        else
          amax = std::max(amax, std::fabs(acc));
      }
  r.amax = nan ? std::numeric_limits<float>::quiet_NaN() : amax;
  return r;
}

}  // namespace warpforge::ops
