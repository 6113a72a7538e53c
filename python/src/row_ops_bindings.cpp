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

// Binds RowOp<Traits> as the class `name` (built from the tensors and the
// options' text) and the cached factory `<Traits::kName>_op`.
template <class Traits>
void bind_row_op(nb::module_& m, const char* name, const char* doc) {
  using Op = RowOp<Traits>;
  nb::class_<Op>(m, name, doc)
      .def(
          "__init__",
          [](Op* self, const TensorList& t, const std::string& options) {
            new (self) Op(views_of(t), Traits::parse(options));
          },
          nb::arg("tensors"), nb::arg("options") = "")
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
  m.def(
      (std::string(Traits::kName) + "_op").c_str(),
      [](const TensorList& t, const std::string& options) {
        return cached_row_op<Traits>(views_of(t), Traits::parse(options));
      },
      nb::arg("tensors"), nb::arg("options") = "",
      "The compiled op for this description and options' text, made once and kept (tensors in the roles' order, "
      "None where absent).");
  m.attr((std::string(Traits::kName) + "_roles").c_str()) =
      std::vector<std::string>(Traits::kRoles.begin(), Traits::kRoles.end());
}

// Reads the words of an options' text, naming the op where there are too few.
std::vector<std::string> words(const std::string& text, std::size_t count, const char* op, const char* form) {
  std::vector<std::string> w;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) w.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (w.size() != count) throw OpsError(std::string(op) + " options '" + text + "': expected '" + form + "'");
  return w;
}

// The block-scaled formats by the names warpforge.quantize takes.
constexpr std::pair<const char*, ops::BlockScaledFormat> kFormats[] = {
    {"mxfp8", ops::kMxfp8E4m3}, {"mxfp8_e5m2", ops::kMxfp8E5m2}, {"mxfp4", ops::kMxfp4}, {"nvfp4", ops::kNvfp4}};

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
  const auto w = words(text, 2, "norm", "<rms|layer> <eps>");
  return {.kind = norm_kind_named(w[0]), .eps = static_cast<float>(std::strtod(w[1].c_str(), nullptr))};
}

std::string CrossEntropyTraits::key(const Options& o) {
  return std::string(ops::name(o.reduction)) + " " + std::to_string(o.ignore_index) + " " + number(o.label_smoothing);
}

CrossEntropyTraits::Options CrossEntropyTraits::parse(const std::string& text) {
  const auto w = words(text, 3, "cross_entropy", "<none|mean|sum> <ignore_index> <label_smoothing>");
  const auto reduction = ops::parse_loss_reduction(w[0]);
  if (!reduction) throw OpsError("reduction '" + w[0] + "': accepted none, mean, sum");
  return {.ignore_index = std::strtoll(w[1].c_str(), nullptr, 10),
          .label_smoothing = static_cast<float>(std::strtod(w[2].c_str(), nullptr)),
          .reduction = *reduction};
}

std::string NormQuantizeTraits::key(const Options& o) {
  std::string format = "?";
  for (const auto& [name, f] : kFormats)
    if (f.data == o.format.data && f.scale == o.format.scale && f.vec == o.format.vec) format = name;
  return format + " " + number(o.eps) + " " + (o.normalize ? "1" : "0");
}

NormQuantizeTraits::Options NormQuantizeTraits::parse(const std::string& text) {
  const auto w = words(text, 3, "rms_norm_quantize", "<mxfp8|mxfp8_e5m2|mxfp4|nvfp4> <eps> <0|1>");
  for (const auto& [name, f] : kFormats)
    if (w[0] == name)
      return {.format = f, .eps = static_cast<float>(std::strtod(w[1].c_str(), nullptr)), .normalize = w[2] != "0"};
  throw OpsError("format '" + w[0] + "': accepted mxfp8 (e4m3), mxfp8_e5m2, mxfp4, nvfp4");
}

void bind_row_ops(nb::module_& m) {
  bind_row_op<NormTraits>(m, "Norm", "ops::Norm: RMSNorm or LayerNorm over the last dimension, with a fused residual.");
  bind_row_op<NormBackwardTraits>(m, "NormBackward", "ops::NormBackward.");
  bind_row_op<SoftmaxTraits>(m, "Softmax", "ops::Softmax over the last dimension.");
  bind_row_op<SoftmaxBackwardTraits>(m, "SoftmaxBackward", "ops::SoftmaxBackward.");
  bind_row_op<SwigluTraits>(m, "Swiglu", "ops::Swiglu: silu(gate) · up.");
  bind_row_op<SwigluBackwardTraits>(m, "SwigluBackward", "ops::SwigluBackward.");
  bind_row_op<CrossEntropyTraits>(m, "CrossEntropy", "ops::CrossEntropy: the loss and its gradient in one pass.");
  bind_row_op<CrossEntropyScaleTraits>(m, "CrossEntropyScale", "ops::CrossEntropyScale: dlogits *= dloss.");
  bind_row_op<NormQuantizeTraits>(m, "RmsNormQuantize", "ops::RmsNormQuantize: RMSNorm + block-scaled quantization.");
}

}  // namespace warpforge::python
