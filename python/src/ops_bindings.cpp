// The operations: GemmAmax and Gemm (classes, and the cached objects the
// package's one-call functions use), quantize and the CPU reference of
// GemmAmax. Options arrive as the cuDNN frontend names them (c_major,
// c_dtype, mma_tiler_mn, cluster_shape_mn, sf_vec_size).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <memory>

#include "bindings.hpp"
#include "gemm_amax_op.hpp"
#include "gemm_op.hpp"
#include "op_cache.hpp"
#include "tensors.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/decoder_shapes.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/ops/gemm_amax.hpp"
#include "warpforge/ops/gemm_amax_reference.hpp"
#include "warpforge/ops/quantize.hpp"

namespace nb = nanobind;
using namespace warpforge::runtime;

namespace warpforge::python {
namespace {

using Pair = std::optional<std::tuple<int, int>>;

DType dtype_option(const std::string& option, const std::string& text) {
  if (auto t = parse_dtype(text)) return *t;
  throw OpsError(option + " '" + text +
                 "' is not a warpforge dtype (f32, f16, bf16, e4m3, e5m2, e2m1, ...)");
}

std::optional<ops::GemmAmaxTile> tile_option(const Pair& p) {
  if (!p) return std::nullopt;
  return ops::GemmAmaxTile{std::get<0>(*p), std::get<1>(*p)};
}

// Options as the cuDNN frontend's gemm_amax_wrapper_sm100 names them; c_dtype
// and c_major default to what the sample C holds (u8 bytes are packed FP4).
ops::GemmAmaxOptions options_from_sample(const Tensor& c, std::optional<std::string> c_major,
                                         std::optional<std::string> c_dtype,
                                         const std::string& acc_dtype, const Pair& mma_tiler_mn,
                                         const Pair& cluster_shape_mn, int sf_vec_size,
                                         const std::string& precision, const std::string& kernel) {
  const DType c_type = c_dtype ? dtype_option("c_dtype", *c_dtype)
                               : (c.dtype() == DType::u8 ? DType::e2m1 : c.dtype());
  const std::string major =
      c_major.value_or(c.rank() == 3 && c.strides()[0] == 1 && c.shape()[0] > 1 ? "m" : "n");
  return gemm_amax_options(c_type, major, dtype_option("acc_dtype", acc_dtype),
                           tile_option(mma_tiler_mn), tile_option(cluster_shape_mn), sf_vec_size,
                           precision, kernel);
}

GemmAmaxOp::Views views_of(const Tensor& a, const Tensor& b, const Tensor& sfa, const Tensor& sfb,
                           const Tensor& c, const Tensor& amax) {
  return {a, b, sfa, sfb, c, amax};
}

// Block-scaled formats by the names the package documents.
ops::BlockScaledFormat format_named(const std::string& name) {
  if (name == "mxfp8" || name == "mxfp8_e4m3") return ops::kMxfp8E4m3;
  if (name == "mxfp8_e5m2") return ops::kMxfp8E5m2;
  if (name == "mxfp4") return ops::kMxfp4;
  if (name == "nvfp4") return ops::kNvfp4;
  throw OpsError("format '" + name + "': accepted mxfp8 (= mxfp8_e4m3), mxfp8_e5m2, mxfp4, nvfp4");
}

using HostBytes = nb::ndarray<const std::uint8_t, nb::device::cpu>;

// A reference operand from host bytes: data (rows, K, L) as its dtype says
// (u8 or e2m1: packed FP4 (rows, K/2, L), strides in bytes = elements of u8).
ops::BlockScaledOperand operand(const HostBytes& data, const std::string& dtype,
                                const HostBytes& scales, const std::string& scale_dtype, int vec,
                                const char* role) {
  if (data.ndim() != 3)
    throw OpsError(std::string(role) + " must be 3-D (rows, K, L), got " +
                   std::to_string(data.ndim()) + "-D");
  ops::BlockScaledOperand o;
  const DType t = dtype_option(role, dtype);
  const bool fp4 = t == DType::u8 || t == DType::e2m1;
  o.dtype = fp4 ? DType::e2m1 : t;
  const std::int64_t per_byte = fp4 ? 2 : 1;
  if (fp4 && data.stride(1) != 1)
    throw OpsError(std::string(role) + ": packed FP4 must be k-major (stride 1 along K)");
  o.rows = data.shape(0);
  o.k = data.shape(1) * per_byte;
  o.batches = data.shape(2);
  o.stride_row = data.stride(0) * per_byte;
  o.stride_k = data.stride(1);
  o.stride_batch = data.stride(2) * per_byte;
  std::int64_t last = 0;
  for (std::size_t i = 0; i < 3; ++i)
    last += (static_cast<std::int64_t>(data.shape(i)) - 1) * data.stride(i);
  o.data = std::span<const std::uint8_t>(data.data(), static_cast<std::size_t>(last + 1));
  o.scale_dtype = dtype_option("scale dtype", scale_dtype) == DType::i8
                      ? DType::e8m0
                      : dtype_option("scale dtype", scale_dtype);
  o.vec = vec;
  o.scales = std::span<const std::uint8_t>(scales.data(), scales.size());
  const std::int64_t need = ops::ScaleFactorLayout{o.rows, o.k, o.batches, vec}.bytes();
  if (static_cast<std::int64_t>(scales.size()) != need)
    throw OpsError(std::string(role) + "'s scales hold " + std::to_string(scales.size()) +
                   " bytes; the 128x4 layout of this operand takes " + std::to_string(need));
  return o;
}

}  // namespace

GemmAmaxOp::GemmAmaxOp(const Views& v, const ops::GemmAmaxOptions& options)
    : samples_(v), op_(v[0], v[1], v[2], v[3], v[4], v[5], options) {}

void GemmAmaxOp::run_at(const std::array<std::uint64_t, 6>& at, runtime::Stream* stream,
                        bool zero_amax) {
  const Views& d = samples_;
  // A view of a sample's description at another address.
  auto view = [&](std::size_t i) {
    return TensorView(d[i].device(), at[i], d[i].dtype(), d[i].shape(), d[i].strides());
  };
  run({view(0), view(1), view(2), view(3), view(4), view(5)}, stream, zero_amax);
}

void GemmAmaxOp::run(const Views& v, runtime::Stream* stream, bool zero_amax) {
  std::lock_guard lock(run_mutex_);
  if (zero_amax)
    v[5].device().backend().fill(v[5].address(), 0, sizeof(float),
                                 stream ? stream->handle() : nullptr);
  op_.execute(v[0], v[1], v[2], v[3], v[4], v[5], stream);
}

ops::CMajor c_major_named(std::string_view c_major) {
  if (c_major != "m" && c_major != "n")
    throw OpsError("c_major must be 'm' or 'n', got '" + std::string(c_major) + "'");
  return c_major == "m" ? ops::CMajor::m : ops::CMajor::n;
}

ops::GemmAmaxOptions gemm_amax_options(DType c_dtype, std::string_view c_major, DType acc_dtype,
                                       std::optional<ops::GemmAmaxTile> mma_tile,
                                       std::optional<ops::GemmAmaxTile> cluster, int sf_vec_size,
                                       std::string_view precision, std::string_view kernel) {
  ops::GemmAmaxOptions o;
  const auto p = ops::parse_gemm_amax_precision(precision);
  if (!p)
    throw OpsError("precision '" + std::string(precision) +
                   "': accepted exact (the default) and fast");
  o.precision = *p;
  const auto k = ops::parse_gemm_amax_kernel(kernel);
  if (!k)
    throw OpsError("kernel '" + std::string(kernel) +
                   "': accepted auto, stream, skinny, prepass, swapped, sm90a, sm80, sm100a");
  o.kernel = *k;
  o.c_dtype = c_dtype;
  o.c_major = c_major_named(c_major);
  o.acc_dtype = acc_dtype;
  o.sf_vec_size = sf_vec_size;
  o.mma_tile = mma_tile;
  o.cluster = cluster;
  return o;
}

CLayout gemm_amax_c_layout(std::int64_t rows, std::int64_t cols, std::int64_t batches,
                           ops::CMajor c_major, DType c_dtype) {
  // FP4 C is packed bytes, two columns to a byte (gemm_amax.hpp).
  const std::int64_t n = (c_dtype == DType::u8 || c_dtype == DType::e2m1) ? (cols + 1) / 2 : cols;
  CLayout layout{.shape = {rows, n, batches}};
  layout.strides = c_major == ops::CMajor::n ? std::array<std::int64_t, 3>{n, 1, rows * n}
                                             : std::array<std::int64_t, 3>{1, rows, rows * n};
  return layout;
}

std::shared_ptr<GemmAmaxOp> cached_gemm_amax_op(const GemmAmaxOp::Views& v,
                                                const ops::GemmAmaxOptions& o) {
  const std::string options =
      std::string(name(o.c_dtype)) + (o.c_major == ops::CMajor::m ? " m " : " n ") +
      std::string(name(o.acc_dtype)) + " " + std::to_string(o.sf_vec_size) + " " +
      (o.mma_tile ? std::to_string(o.mma_tile->m) + "x" + std::to_string(o.mma_tile->n) : "-") +
      " " + (o.cluster ? std::to_string(o.cluster->m) + "x" + std::to_string(o.cluster->n) : "-") +
      " precision " + std::to_string(static_cast<int>(o.precision)) + " kernel " +
      std::to_string(static_cast<int>(o.kernel));
  return cached<GemmAmaxOp>(key_of({&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]}, options),
                            [&] { return std::make_shared<GemmAmaxOp>(v, o); });
}

void bind_ops(nb::module_& m) {
  m.def(
      "decoder_sweep",
      [] {
        std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> shapes;
        for (const ops::GemmShape& g : ops::decoder_sweep()) shapes.emplace_back(g.m, g.n, g.k);
        return shapes;
      },
      "The (M, N, K) of the decoder sweep (ops/decoder_shapes.hpp): two published decoders' four "
      "projections at M from 1 to 8192, projection-major.");
  nb::class_<GemmAmaxOp>(m, "GemmAmax",
                         "ops::GemmAmax: block-scaled GEMM + amax (see warpforge.GemmAmax).")
      .def(
          "__init__",
          [](GemmAmaxOp* self, const Tensor& a, const Tensor& b, const Tensor& sfa,
             const Tensor& sfb, const Tensor& c, const Tensor& amax,
             std::optional<std::string> c_major, std::optional<std::string> c_dtype,
             const std::string& acc_dtype, Pair mma_tiler_mn, Pair cluster_shape_mn,
             int sf_vec_size, const std::string& precision, const std::string& kernel) {
            new (self)
                GemmAmaxOp(views_of(a, b, sfa, sfb, c, amax),
                           options_from_sample(c, c_major, c_dtype, acc_dtype, mma_tiler_mn,
                                               cluster_shape_mn, sf_vec_size, precision, kernel));
          },
          nb::arg("a"), nb::arg("b"), nb::arg("sfa"), nb::arg("sfb"), nb::arg("c"), nb::arg("amax"),
          nb::arg("c_major") = nb::none(), nb::arg("c_dtype") = nb::none(),
          nb::arg("acc_dtype") = "f32", nb::arg("mma_tiler_mn") = nb::none(),
          nb::arg("cluster_shape_mn") = nb::none(), nb::arg("sf_vec_size") = 32,
          nb::arg("precision") = "exact", nb::arg("kernel") = "auto")
      .def("check_support", &GemmAmaxOp::check_support)
      .def_prop_ro("kernel_name", &GemmAmaxOp::kernel_name)
      .def_prop_ro("workspace_bytes", &GemmAmaxOp::workspace_bytes)
      .def("describe", &GemmAmaxOp::describe)
      .def("compile", &GemmAmaxOp::compile)
      .def(
          "execute",
          [](GemmAmaxOp& op, const Tensor& a, const Tensor& b, const Tensor& sfa, const Tensor& sfb,
             const Tensor& c, const Tensor& amax, std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(a.device(), stream);
            nb::gil_scoped_release release;
            op.run(views_of(a, b, sfa, sfb, c, amax), pointer(s), false);
          },
          nb::arg("a"), nb::arg("b"), nb::arg("sfa"), nb::arg("sfb"), nb::arg("c"), nb::arg("amax"),
          nb::arg("stream") = nb::none())
      .def(
          "execute_addresses",
          [](GemmAmaxOp& op, const std::array<std::uint64_t, 6>& at,
             std::optional<std::uintptr_t> stream, bool zero_amax) {
            auto s = caller_stream(op.samples()[0].device(), stream);
            nb::gil_scoped_release release;
            op.run_at(at, pointer(s), zero_amax);
          },
          nb::arg("addresses"), nb::arg("stream") = nb::none(), nb::arg("zero_amax") = false,
          "execute() on other data of the construction's description: six data addresses "
          "(A, B, SFA, SFB, C, amax); zero_amax sets amax to +0.0 first, on the same stream.");

  m.def(
      "gemm_amax_op",
      [](const Tensor& a, const Tensor& b, const Tensor& sfa, const Tensor& sfb, const Tensor& c,
         const Tensor& amax, std::optional<std::string> c_major, std::optional<std::string> c_dtype,
         const std::string& acc_dtype, Pair mma_tiler_mn, Pair cluster_shape_mn, int sf_vec_size,
         const std::string& precision, const std::string& kernel) {
        return cached_gemm_amax_op(
            views_of(a, b, sfa, sfb, c, amax),
            options_from_sample(c, c_major, c_dtype, acc_dtype, mma_tiler_mn, cluster_shape_mn,
                                sf_vec_size, precision, kernel));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("sfa"), nb::arg("sfb"), nb::arg("c"), nb::arg("amax"),
      nb::arg("c_major") = nb::none(), nb::arg("c_dtype") = nb::none(),
      nb::arg("acc_dtype") = "f32", nb::arg("mma_tiler_mn") = nb::none(),
      nb::arg("cluster_shape_mn") = nb::none(), nb::arg("sf_vec_size") = 32,
      nb::arg("precision") = "exact", nb::arg("kernel") = "auto",
      "A compiled GemmAmax for this description, made once and kept (the one-call API's cache).");

  m.def(
      "gemm_amax_c_layout",
      [](std::int64_t rows, std::int64_t cols, std::int64_t batches, const std::string& c_major,
         const std::string& c_dtype) {
        const CLayout layout = gemm_amax_c_layout(rows, cols, batches, c_major_named(c_major),
                                                  dtype_option("c_dtype", c_dtype));
        return std::make_pair(layout.shape, layout.strides);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("l"), nb::arg("c_major"), nb::arg("c_dtype"),
      "The (shape, strides) in elements of gemm_amax's C, as the cuDNN frontend allocates it.");

  nb::class_<GemmOp>(m, "Gemm", "ops::Gemm: D = alpha·A·B + beta·C (see warpforge.Gemm).")
      .def(
          "__init__",
          [](GemmOp* self, const Tensor& a, const Tensor& b, std::optional<Tensor> c,
             const Tensor& d, float alpha, float beta, const std::string& kernel,
             std::optional<std::string> config) {
            new (self)
                GemmOp(a, b, c ? &*c : nullptr, d, gemm_options(alpha, beta, kernel, config));
          },
          nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("d"), nb::arg("alpha") = 1.0f,
          nb::arg("beta") = 0.0f, nb::arg("kernel") = "auto", nb::arg("config") = nb::none())
      .def("check_support", &GemmOp::check_support)
      .def("compile", &GemmOp::compile)
      .def_prop_ro("kernel_name", &GemmOp::kernel_name)
      .def_prop_ro("config", &GemmOp::config)
      .def(
          "execute",
          [](GemmOp& op, const Tensor& a, const Tensor& b, const std::optional<Tensor>& c,
             const Tensor& d, std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(a.device(), stream);
            nb::gil_scoped_release release;
            op.run(a, b, c ? &*c : nullptr, d, pointer(s));
          },
          nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("d"),
          nb::arg("stream") = nb::none());
  m.def(
      "gemm_op",
      [](const Tensor& a, const Tensor& b, std::optional<Tensor> c, const Tensor& d, float alpha,
         float beta) { return cached_gemm_op(a, b, c ? &*c : nullptr, d, alpha, beta); },
      nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("d"), nb::arg("alpha") = 1.0f,
      nb::arg("beta") = 0.0f, "A compiled Gemm for this description, made once and kept.");

  m.def(
      "quantize",
      [](nb::ndarray<const float, nb::c_contig, nb::device::cpu> x, std::int64_t rows,
         std::int64_t k, std::int64_t batches, const std::string& format) {
        const ops::BlockScaledFormat f = format_named(format);
        if (static_cast<std::int64_t>(x.size()) != rows * k * batches)
          throw OpsError("quantize: " + std::to_string(x.size()) + " values for rows " +
                         std::to_string(rows) + " x K " + std::to_string(k) + " x batches " +
                         std::to_string(batches));
        ops::QuantizedMatrix q =
            ops::quantize(std::span<const float>(x.data(), x.size()), rows, k, batches, f);
        const ops::ScaleFactorLayout layout = q.scale_layout();
        return nb::make_tuple(nb::bytes(q.data.data(), q.data.size()),
                              nb::bytes(q.scales.data(), q.scales.size()),
                              std::string(name(f.data)), std::string(name(f.scale)), f.vec,
                              layout.shape6(), layout.strides6());
      },
      nb::arg("x"), nb::arg("rows"), nb::arg("k"), nb::arg("batches"), nb::arg("format"),
      "ops::quantize on host floats laid out (batches, rows, k): (data bytes, scale bytes, data "
      "dtype, scale "
      "dtype, vec, scale shape, scale strides).");

  m.def(
      "gemm_amax_reference",
      [](HostBytes a, const std::string& a_dtype, HostBytes sfa, HostBytes b,
         const std::string& b_dtype, HostBytes sfb, const std::string& scale_dtype,
         int sf_vec_size) {
        ops::GemmAmaxReference r;
        {
          const ops::BlockScaledOperand oa =
              operand(a, a_dtype, sfa, scale_dtype, sf_vec_size, "A");
          const ops::BlockScaledOperand ob =
              operand(b, b_dtype, sfb, scale_dtype, sf_vec_size, "B");
          nb::gil_scoped_release release;
          r = ops::gemm_amax_reference(oa, ob);
        }
        return std::make_tuple(nb::bytes(r.acc.data(), r.acc.size() * sizeof(float)), r.l, r.m, r.n,
                               r.amax);
      },
      nb::arg("a"), nb::arg("a_dtype"), nb::arg("sfa"), nb::arg("b"), nb::arg("b_dtype"),
      nb::arg("sfb"), nb::arg("scale_dtype"), nb::arg("sf_vec_size"),
      "ops::gemm_amax_reference on host bytes: (f32 accumulator bytes (L, M, N), L, M, N, amax).");
}

}  // namespace warpforge::python
