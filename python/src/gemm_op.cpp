// GemmOp (gemm_op.hpp): ops::Gemm kept with its samples' description, its
// options from the package's spellings, and the cache of compiled Gemms.
#include "gemm_op.hpp"

#include <cstdio>

#include "op_cache.hpp"
#include "warpforge/error.hpp"

namespace warpforge::python {

using runtime::TensorView;

GemmOp::GemmOp(const TensorView& a, const TensorView& b, const TensorView* c, const TensorView& d,
               const ops::GemmOptions& options)
    : a_(a),
      b_(b),
      c_(c ? std::optional<TensorView>(*c) : std::nullopt),
      d_(d),
      op_(a, b, c, d, options) {}

void GemmOp::run(const TensorView& a, const TensorView& b, const TensorView* c, const TensorView& d,
                 runtime::Stream* stream) {
  std::lock_guard lock(run_mutex_);
  op_.execute(a, b, c, d, stream);
}

void GemmOp::run_at(const std::array<std::uint64_t, 4>& at, runtime::Stream* stream) {
  // A view of a sample's description at another address.
  auto view = [](const TensorView& sample, std::uint64_t address) {
    return TensorView(sample.device(), address, sample.dtype(), sample.shape(), sample.strides());
  };
  std::optional<TensorView> c;
  if (c_) c = view(*c_, at[2]);
  run(view(a_, at[0]), view(b_, at[1]), c ? &*c : nullptr, view(d_, at[3]), stream);
}

std::array<std::uint64_t, 4> GemmOp::extents() const {
  return {a_.extent_bytes(), b_.extent_bytes(), c_ ? c_->extent_bytes() : 0, d_.extent_bytes()};
}

ops::GemmOptions gemm_options(float alpha, float beta, std::string_view kernel,
                              const std::optional<std::string>& config) {
  ops::GemmOptions o{.alpha = alpha, .beta = beta};
  const auto k = ops::parse_gemm_kernel(kernel);
  if (!k)
    throw OpsError("kernel '" + std::string(kernel) + "': accepted auto, sm80, sm90a, sm100a");
  o.kernel = *k;
  if (config) {
    o.config = ops::parse_gemm_config(*config);
    if (!o.config)
      throw OpsError("config '" + *config + "': expected e.g. '128x128x32 s3 w2x2 c1x1'");
  }
  return o;
}

std::shared_ptr<GemmOp> cached_gemm_op(const TensorView& a, const TensorView& b,
                                       const TensorView* c, const TensorView& d, float alpha,
                                       float beta) {
  // Exact (hexadecimal) spellings: alphas that differ past a decimal
  // rendering's sixth digit are other ops.
  char options[64];
  std::snprintf(options, sizeof options, "%a %a", static_cast<double>(alpha),
                static_cast<double>(beta));
  return cached<GemmOp>(key_of({&a, &b, c, &d}, options), [&] {
    return std::make_shared<GemmOp>(a, b, c, d, gemm_options(alpha, beta, "auto", std::nullopt));
  });
}

}  // namespace warpforge::python
