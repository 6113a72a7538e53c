// The row ops (row_ops.hpp) as Python classes of warpforge._warpforge, each
// built from a list of tensors in its roles' order (None where absent), and
// the cached factories the package's functions and torch operators call.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <cstdlib>

#include "bindings.hpp"
#include "row_ops.hpp"
#include "tensors.hpp"

namespace nb = nanobind;

namespace warpforge::python {

namespace {

using TensorList = std::vector<std::optional<runtime::Tensor>>;

OptionalViews views_of(const TensorList& tensors) {
  OptionalViews v;
  for (const auto& t : tensors) v.emplace_back(t ? std::optional<runtime::TensorView>(*t) : std::nullopt);
  return v;
}

// The device of the first tensor present (where the stream handle belongs).
runtime::Device device_of(const OptionalViews& views) {
  for (const auto& v : views)
    if (v) return v->device();
  throw OpsError("no tensor given");
}

std::string number(double v) {
  char s[40];
  std::snprintf(s, sizeof s, "%a", v);
  return s;
}

// Binds RowOp<Traits>'s methods as the class `name` (its constructor and
// cached factory, whose keywords differ by op, are bound beside it).
template <class Traits>
nb::class_<RowOp<Traits>> bind_row_op(nb::module_& m, const char* name, const char* doc) {
  using Op = RowOp<Traits>;
  return nb::class_<Op>(m, name, doc)
      .def("check_support", &Op::check_support)
      .def_prop_ro("kernel_name", &Op::kernel_name)
      .def_prop_ro("workspace_bytes", &Op::workspace_bytes)
      .def("describe", &Op::describe)
      .def("compile", &Op::compile)
      .def(
          "execute",
          [](Op& op, const TensorList& tensors, std::optional<std::uintptr_t> stream) {
            const OptionalViews views = views_of(tensors);
            auto s = caller_stream(device_of(views), stream);
            nb::gil_scoped_release release;
            op.run(views, pointer(s));
          },
          nb::arg("tensors"), nb::arg("stream") = nb::none())
      .def(
          "execute_addresses",
          [](Op& op, const std::vector<std::uint64_t>& addresses, std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(device_of(op.samples()), stream);
            nb::gil_scoped_release release;
            op.run_at(addresses, pointer(s));
          },
          nb::arg("addresses"), nb::arg("stream") = nb::none(),
          "execute() on other data of the construction's description: a data address a tensor (0 where absent).");
}

ops::NormOptions norm_options(std::string kind, double eps) {
  return {.kind = norm_kind_named(kind), .eps = static_cast<float>(eps)};
}

}  // namespace

ops::NormKind norm_kind_named(const std::string& kind) {
  if (kind == "rms") return ops::NormKind::rms;
  if (kind == "layer") return ops::NormKind::layer;
  throw OpsError("norm kind '" + kind + "': accepted rms, layer");
}

std::string NormTraits::key(const Options& o) {
  return std::string(ops::name(o.kind)) + " " + number(o.eps);
}

NormTraits::Options NormTraits::parse(const std::string& text) {
  const auto space = text.find(' ');
  if (space == std::string::npos) throw OpsError("norm options '" + text + "': expected '<kind> <eps>'");
  return norm_options(text.substr(0, space), std::strtod(text.c_str() + space + 1, nullptr));
}

void bind_row_ops(nb::module_& m) {
  const char* cached_doc =
      "The compiled op for this description, made once and kept (tensors in the roles' order, None where absent).";
  bind_row_op<NormTraits>(m, "Norm",
                          "ops::Norm: RMSNorm or LayerNorm over the last dimension, with a fused residual "
                          "(tensors: x, residual, weight, bias, y, residual_out, mean, rstd).")
      .def(
          "__init__",
          [](RowOp<NormTraits>* self, const TensorList& t, const std::string& kind, double eps) {
            new (self) RowOp<NormTraits>(views_of(t), norm_options(kind, eps));
          },
          nb::arg("tensors"), nb::arg("kind") = "rms", nb::arg("eps") = 1e-6);
  m.def(
      "norm_op",
      [](const TensorList& t, const std::string& kind, double eps) {
        return cached_row_op<NormTraits>(views_of(t), norm_options(kind, eps));
      },
      nb::arg("tensors"), nb::arg("kind"), nb::arg("eps"), cached_doc);
  bind_row_op<NormBackwardTraits>(m, "NormBackward",
                                  "ops::NormBackward (tensors: dy, x, weight, mean, rstd, dresidual_out, dx, "
                                  "dweight, dbias).")
      .def(
          "__init__",
          [](RowOp<NormBackwardTraits>* self, const TensorList& t, const std::string& kind, double eps) {
            new (self) RowOp<NormBackwardTraits>(views_of(t), norm_options(kind, eps));
          },
          nb::arg("tensors"), nb::arg("kind") = "rms", nb::arg("eps") = 1e-6);
  m.def(
      "norm_backward_op",
      [](const TensorList& t, const std::string& kind, double eps) {
        return cached_row_op<NormBackwardTraits>(views_of(t), norm_options(kind, eps));
      },
      nb::arg("tensors"), nb::arg("kind"), nb::arg("eps"), cached_doc);
}

}  // namespace warpforge::python
