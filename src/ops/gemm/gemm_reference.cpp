#include "warpforge/ops/gemm_reference.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "warpforge/error.hpp"
#include "warpforge/ops/half.hpp"

namespace warpforge::ops {
namespace {

using runtime::DType;

runtime::TensorView as_bytes(const runtime::TensorView& v) {
  return runtime::TensorView(v.device(), v.address(), DType::u8,
                             {static_cast<std::int64_t>(v.extent_bytes())});
}

std::int64_t offset(const HostTensor& t, const std::vector<std::int64_t>& index) {
  std::int64_t o = 0;
  for (std::size_t i = 0; i < index.size(); ++i) o += index[i] * t.strides[i];
  return o;
}

}  // namespace

HostTensor HostTensor::like(const runtime::TensorView& view) {
  if (view.dtype() != DType::f32 && view.dtype() != DType::f16 && view.dtype() != DType::bf16)
    throw OpsError("HostTensor: dtype " + std::string(runtime::name(view.dtype())) +
                   "; f32, f16 or bf16 only");
  return {view.dtype(), view.shape(), view.strides(),
          std::vector<std::uint8_t>(view.extent_bytes())};
}

HostTensor HostTensor::download(const runtime::TensorView& view) {
  HostTensor t = like(view);
  if (!t.bytes.empty()) as_bytes(view).copy_to_host(t.bytes.data(), t.bytes.size());
  return t;
}

void HostTensor::upload(const runtime::TensorView& view) const {
  if (!bytes.empty()) as_bytes(view).copy_from_host(bytes.data(), bytes.size());
}

double HostTensor::get(const std::vector<std::int64_t>& index) const {
  const std::uint8_t* p = bytes.data() + offset(*this, index) * (runtime::bits(dtype) / 8);
  if (dtype == DType::f32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == DType::f16 ? f16_bits_to_f32(h) : bf16_bits_to_f32(h);
}

void HostTensor::set(const std::vector<std::int64_t>& index, double value) {
  std::uint8_t* p = bytes.data() + offset(*this, index) * (runtime::bits(dtype) / 8);
  const float f = static_cast<float>(value);
  if (dtype == DType::f32) {
    std::memcpy(p, &f, 4);
    return;
  }
  const std::uint16_t h = dtype == DType::f16 ? f32_to_f16_bits(f) : f32_to_bf16_bits(f);
  std::memcpy(p, &h, 2);
}

double HostTensor::matrix(std::int64_t l, std::int64_t r, std::int64_t c) const {
  if (shape.size() == 3) return get({l, r, c});
  return get({r, c});
}

std::vector<double> gemm_reference(const HostTensor& a, const HostTensor& b, const HostTensor* c,
                                   double alpha, double beta) {
  const std::size_t ra = a.shape.size(), rb = b.shape.size();
  const std::int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
  std::int64_t l = 1;
  for (const HostTensor* t : {&a, &b, c})
    if (t && t->shape.size() == 3) l = std::max(l, t->shape[0]);
  std::vector<double> d(static_cast<std::size_t>(l * m * n));
  std::vector<double> brow(static_cast<std::size_t>(k * n));
  for (std::int64_t batch = 0; batch < l; ++batch) {
    for (std::int64_t kk = 0; kk < k; ++kk)
      for (std::int64_t j = 0; j < n; ++j) brow[kk * n + j] = b.matrix(batch, kk, j);
    for (std::int64_t i = 0; i < m; ++i) {
      double* out = &d[(batch * m + i) * n];
      for (std::int64_t j = 0; j < n; ++j) out[j] = 0.0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const double x = a.matrix(batch, i, kk);
        const double* bk = &brow[kk * n];
        for (std::int64_t j = 0; j < n; ++j) out[j] += x * bk[j];
      }
      for (std::int64_t j = 0; j < n; ++j)
        out[j] = alpha * out[j] + (c ? beta * c->matrix(batch, i, j) : 0.0);
    }
  }
  return d;
}

double max_relative_error(const HostTensor& got, const std::vector<double>& want, double floor) {
  const std::size_t r = got.shape.size();
  const std::int64_t m = got.shape[r - 2], n = got.shape[r - 1], l = r == 3 ? got.shape[0] : 1;
  double worst = 0.0;
  for (std::int64_t batch = 0; batch < l; ++batch)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        const double g = got.matrix(batch, i, j), w = want[(batch * m + i) * n + j];
        if (std::isnan(g)) return std::numeric_limits<double>::infinity();
        worst = std::max(worst, std::abs(g - w) / std::max(std::abs(w), floor));
      }
  return worst;
}

}  // namespace warpforge::ops
