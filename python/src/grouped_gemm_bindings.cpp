// The grouped GEMM of mixture-of-experts layers (ops/grouped_gemm.hpp): the
// GroupedGemm class and the cached op behind warpforge.grouped_mm, and the
// packing of block-scaled weights (prepack_weights).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "grouped_gemm_op.hpp"
#include "op_cache.hpp"
#include "tensors.hpp"
#include "warpforge/error.hpp"

namespace nb = nanobind;
using namespace warpforge::runtime;

namespace warpforge::python {

GroupedGemmOp::GroupedGemmOp(const Views& samples, const ops::GroupedGemmOptions& options)
    : samples_(samples), op_(grouped_tensors(samples), options) {}

void GroupedGemmOp::run(const Views& views, Stream* stream) {
  std::lock_guard lock(run_mutex_);
  op_.execute(grouped_tensors(views), stream);
}

void GroupedGemmOp::run_at(const std::array<std::uint64_t, 4>& addresses, Stream* stream) {
  Views views;  // A, B, offsets, D are Views' first four
  for (std::size_t i = 0; i < 4; ++i) {
    const std::optional<TensorView>& sample = samples_[i];
    if (sample)
      views[i] =
          TensorView(sample->device(), addresses[i], sample->dtype(), sample->shape(), sample->strides());
  }
  run(views, stream);
}

std::array<std::uint64_t, 4> GroupedGemmOp::extents() const {
  std::array<std::uint64_t, 4> e{};
  for (std::size_t i = 0; i < 4; ++i)
    if (const auto& sample = samples_[i]) e[i] = sample->extent_bytes();
  return e;
}

ops::GroupedGemmTensors grouped_tensors(const GroupedGemmOp::Views& v) {
  if (!v[0] || !v[1] || !v[3]) throw OpsError("grouped GEMM: A, B and D must be given");
  auto optional = [&](std::size_t i) { return v[i] ? &*v[i] : nullptr; };
  return {*v[0], *v[1], optional(2), *v[3], optional(4), optional(5), optional(6)};
}

ops::GroupedGemmOptions grouped_gemm_options(std::string_view out_dtype, int sf_vec_size, std::string_view kernel) {
  ops::GroupedGemmOptions o;
  const auto d = parse_dtype(out_dtype);
  if (!d) throw OpsError("out_dtype '" + std::string(out_dtype) + "': accepted f32, bf16, f16");
  o.out_dtype = *d;
  o.sf_vec_size = sf_vec_size;
  const auto k = ops::parse_grouped_gemm_kernel(kernel);
  if (!k) throw OpsError("kernel '" + std::string(kernel) + "': accepted auto, stream, sm90a, sm80");
  o.kernel = *k;
  return o;
}

std::shared_ptr<GroupedGemmOp> cached_grouped_gemm_op(const GroupedGemmOp::Views& v,
                                                      const ops::GroupedGemmOptions& o) {
  const std::string options = std::string(name(o.out_dtype)) + " " + std::to_string(o.sf_vec_size) + " " +
                              std::string(ops::name(o.kernel));
  auto at = [&](std::size_t i) { return v[i] ? &*v[i] : nullptr; };
  return cached<GroupedGemmOp>(key_of({at(0), at(1), at(2), at(3), at(4), at(5), at(6)}, options),
                               [&] { return std::make_shared<GroupedGemmOp>(v, o); });
}

namespace {

using Optional = std::optional<Tensor>;

GroupedGemmOp::Views views_of(const Tensor& a, const Tensor& b, const Optional& offsets, const Tensor& d,
                              const Optional& sfa, const Optional& sfb, const Optional& amax) {
  auto view = [](const Optional& t) { return t ? std::optional<TensorView>(*t) : std::nullopt; };
  return {a, b, view(offsets), d, view(sfa), view(sfb), view(amax)};
}

DType dtype_named(const std::string& what, const std::string& text) {
  if (auto t = parse_dtype(text)) return *t;
  throw OpsError(what + " '" + text + "' is not a warpforge dtype (e2m1, e4m3, e5m2, e8m0, ...)");
}

using HostBytes = nb::ndarray<const std::uint8_t, nb::c_contig, nb::device::cpu>;

}  // namespace

void bind_grouped_gemm(nb::module_& m) {
  nb::class_<GroupedGemmOp>(m, "GroupedGemm", "ops::GroupedGemm: grouped GEMM (see warpforge.grouped_mm).")
      .def(
          "__init__",
          [](GroupedGemmOp* self, const Tensor& a, const Tensor& b, Optional offsets, const Tensor& d,
             Optional sfa, Optional sfb, Optional amax, const std::string& out_dtype, int sf_vec_size,
             const std::string& kernel) {
            new (self) GroupedGemmOp(views_of(a, b, offsets, d, sfa, sfb, amax),
                                     grouped_gemm_options(out_dtype, sf_vec_size, kernel));
          },
          nb::arg("a"), nb::arg("b"), nb::arg("offsets").none(), nb::arg("d"), nb::arg("sfa").none() = nb::none(),
          nb::arg("sfb").none() = nb::none(), nb::arg("amax").none() = nb::none(), nb::arg("out_dtype") = "bf16",
          nb::arg("sf_vec_size") = 32, nb::arg("kernel") = "auto")
      .def("check_support", &GroupedGemmOp::check_support)
      .def_prop_ro("kernel_name", &GroupedGemmOp::kernel_name)
      .def_prop_ro("workspace_bytes", &GroupedGemmOp::workspace_bytes)
      .def("describe", &GroupedGemmOp::describe)
      .def("compile", &GroupedGemmOp::compile)
      .def(
          "execute",
          [](GroupedGemmOp& op, const Tensor& a, const Tensor& b, Optional offsets, const Tensor& d, Optional sfa,
             Optional sfb, Optional amax, std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(a.device(), stream);
            nb::gil_scoped_release release;
            op.run(views_of(a, b, offsets, d, sfa, sfb, amax), pointer(s));
          },
          nb::arg("a"), nb::arg("b"), nb::arg("offsets").none(), nb::arg("d"), nb::arg("sfa").none() = nb::none(),
          nb::arg("sfb").none() = nb::none(), nb::arg("amax").none() = nb::none(), nb::arg("stream") = nb::none());

  m.def(
      "grouped_gemm_op",
      [](const Tensor& a, const Tensor& b, Optional offsets, const Tensor& d, Optional sfa, Optional sfb,
         Optional amax, const std::string& out_dtype, int sf_vec_size, const std::string& kernel) {
        return cached_grouped_gemm_op(views_of(a, b, offsets, d, sfa, sfb, amax),
                                      grouped_gemm_options(out_dtype, sf_vec_size, kernel));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("offsets").none(), nb::arg("d"), nb::arg("sfa").none() = nb::none(),
      nb::arg("sfb").none() = nb::none(), nb::arg("amax").none() = nb::none(), nb::arg("out_dtype") = "bf16",
      nb::arg("sf_vec_size") = 32, nb::arg("kernel") = "auto",
      "A compiled GroupedGemm for this description, made once and kept (warpforge.grouped_mm's cache).");

  m.def(
      "prepack_weights",
      [](HostBytes codes, HostBytes scales, const std::string& data, const std::string& scale, int vec,
         std::int64_t groups, std::int64_t k, std::int64_t n) {
        ops::PackedWeightsLayout layout{dtype_named("data", data), dtype_named("scale", scale), vec, groups, k, n};
        if (layout.data == DType::u8) layout.data = DType::e2m1;
        if (layout.scale == DType::i8) layout.scale = DType::e8m0;
        ops::PackedWeights p;
        {
          nb::gil_scoped_release release;
          p = ops::prepack_weights(layout, std::span(codes.data(), codes.size()), std::span(scales.data(), scales.size()));
        }
        return nb::make_tuple(nb::bytes(p.codes.data(), p.codes.size()), nb::bytes(p.scales.data(), p.scales.size()));
      },
      nb::arg("codes"), nb::arg("scales"), nb::arg("data"), nb::arg("scale"), nb::arg("vec"), nb::arg("groups"),
      nb::arg("k"), nb::arg("n"),
      "ops::prepack_weights on host bytes: (G, N, K) k-major codes (FP4 two a byte) and 128x4-layout scales -> "
      "(packed codes, packed scales) bytes.");
  m.def(
      "packed_weights_bytes",
      [](const std::string& data, const std::string& scale, int vec, std::int64_t groups, std::int64_t k,
         std::int64_t n) {
        ops::PackedWeightsLayout layout{dtype_named("data", data), dtype_named("scale", scale), vec, groups, k, n};
        if (layout.data == DType::u8) layout.data = DType::e2m1;
        if (layout.scale == DType::i8) layout.scale = DType::e8m0;
        return std::make_tuple(layout.code_bytes(), layout.scale_bytes());
      },
      nb::arg("data"), nb::arg("scale"), nb::arg("vec"), nb::arg("groups"), nb::arg("k"), nb::arg("n"),
      "(code bytes, scale bytes) of packed block-scaled weights.");
}

}  // namespace warpforge::python
