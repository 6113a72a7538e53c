// XLA FFI handlers behind warpforge.jax: gemm_amax and gemm as typed FFI
// calls (xla/ffi/api/ffi.h, from jax.ffi.include_dir()), one for the CUDA
// platform (on XLA's stream, on the call's device) and one for the CPU
// platform (host buffers, run on the simulator, which maps them for the call).
// Compiled only where the build found JAX's FFI headers.
//
// XLA buffers are dense row-major; warpforge.jax passes every operand in its
// physical order and these handlers view it in the logical one: A (L, M, K)
// as (M, K, L) k-major, B likewise, scales as their bytes, C (L, M, N) as
// (M, N, L) n-major or (L, N, M) as m-major.
#include <nanobind/nanobind.h>

#include <map>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "../bindings.hpp"
#include "../gemm_amax_op.hpp"
#include "../gemm_op.hpp"
#include "../grouped_gemm_op.hpp"
#include "../tensors.hpp"
#include "ffi_buffers.hpp"
#include "warpforge/dsl/kernel.hpp"
#include "warpforge/error.hpp"
#include "warpforge/ops/gemm.hpp"
#include "warpforge/runtime/module.hpp"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
namespace nb = nanobind;
using namespace warpforge::runtime;

namespace warpforge::python {
namespace {

std::optional<ops::GemmAmaxTile> tile(std::int32_t m, std::int32_t n) {
  if (m == 0 && n == 0) return std::nullopt;  // the kernel's choice
  return ops::GemmAmaxTile{m, n};
}

ffi::Error gemm_amax(const Device& device, Stream* stream, const ffi::AnyBuffer& a,
                     const ffi::AnyBuffer& b, const ffi::AnyBuffer& sfa, const ffi::AnyBuffer& sfb,
                     ffi::Result<ffi::AnyBuffer>& c, ffi::Result<ffi::AnyBuffer>& amax,
                     std::string_view c_major, std::int32_t sf_vec_size, std::int32_t mma_m,
                     std::int32_t mma_n, std::int32_t cluster_m, std::int32_t cluster_n,
                     std::string_view precision, std::string_view kernel) {
  return refusal_as_invalid_argument([&] {
    CallBuffers buffers(device);
    const bool m_major = c_major == "m";
    const GemmAmaxOp::Views views{
        buffers.rows_cols_batch(a, "a"),
        buffers.rows_cols_batch(b, "b"),
        buffers.flat(sfa, "sfa"),
        buffers.flat(sfb, "sfb"),
        m_major ? buffers.m_major(*c, "c") : buffers.rows_cols_batch(*c, "c"),
        buffers.flat(*amax, "amax")};
    const ops::GemmAmaxOptions options = gemm_amax_options(
        views[4].dtype() == DType::u8 ? DType::e2m1 : views[4].dtype(), c_major, DType::f32,
        tile(mma_m, mma_n), tile(cluster_m, cluster_n), sf_vec_size, precision, kernel);
    cached_gemm_amax_op(views, options)->run(views, stream, true);
  });
}

ffi::Error gemm_amax_cuda(void* stream, std::int32_t ordinal, ffi::AnyBuffer a, ffi::AnyBuffer b,
                          ffi::AnyBuffer sfa, ffi::AnyBuffer sfb, ffi::Result<ffi::AnyBuffer> c,
                          ffi::Result<ffi::AnyBuffer> amax, std::string_view c_major,
                          std::int32_t sf_vec_size, std::int32_t mma_m, std::int32_t mma_n,
                          std::int32_t cluster_m, std::int32_t cluster_n,
                          std::string_view precision, std::string_view kernel) {
  return on_xla_stream(stream, ordinal, [&](const Device& device, Stream* s) {
    return gemm_amax(device, s, a, b, sfa, sfb, c, amax, c_major, sf_vec_size, mma_m, mma_n,
                     cluster_m, cluster_n, precision, kernel);
  });
}

ffi::Error gemm_amax_host(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::AnyBuffer sfa,
                          ffi::AnyBuffer sfb, ffi::Result<ffi::AnyBuffer> c,
                          ffi::Result<ffi::AnyBuffer> amax, std::string_view c_major,
                          std::int32_t sf_vec_size, std::int32_t mma_m, std::int32_t mma_n,
                          std::int32_t cluster_m, std::int32_t cluster_n,
                          std::string_view precision, std::string_view kernel) {
  return gemm_amax(simulator(), nullptr, a, b, sfa, sfb, c, amax, c_major, sf_vec_size, mma_m,
                   mma_n, cluster_m, cluster_n, precision, kernel);
}

template <class Binding>
auto gemm_amax_signature(Binding binding) {
  return with_buffers<4, 2>(std::move(binding))
      .template Attr<std::string_view>("c_major")
      .template Attr<std::int32_t>("sf_vec_size")
      .template Attr<std::int32_t>("mma_m")
      .template Attr<std::int32_t>("mma_n")
      .template Attr<std::int32_t>("cluster_m")
      .template Attr<std::int32_t>("cluster_n")
      .template Attr<std::string_view>("precision")
      .template Attr<std::string_view>("kernel");
}

// D = alpha·A·B (+ beta·C): row-major A (.., M, K), B (.., K, N), D (.., M, N).
ffi::Error gemm(const Device& device, Stream* stream, const ffi::AnyBuffer& a,
                const ffi::AnyBuffer& b, const ffi::AnyBuffer* c, ffi::Result<ffi::AnyBuffer>& d,
                float alpha, float beta) {
  return refusal_as_invalid_argument([&] {
    CallBuffers buffers(device);
    const TensorView va = buffers.dense(a, "a"), vb = buffers.dense(b, "b"),
                     vd = buffers.dense(*d, "d");
    std::optional<TensorView> vc;
    if (c) vc = buffers.dense(*c, "c");
    const TensorView* c_view = vc ? &*vc : nullptr;
    cached_gemm_op(va, vb, c_view, vd, alpha, beta)->run(va, vb, c_view, vd, stream);
  });
}

ffi::Error gemm_cuda(void* stream, std::int32_t ordinal, ffi::AnyBuffer a, ffi::AnyBuffer b,
                     ffi::AnyBuffer c, ffi::Result<ffi::AnyBuffer> d, float alpha, float beta,
                     bool has_c) {
  return on_xla_stream(stream, ordinal, [&](const Device& device, Stream* s) {
    return gemm(device, s, a, b, has_c ? &c : nullptr, d, alpha, beta);
  });
}

ffi::Error gemm_host(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::AnyBuffer c,
                     ffi::Result<ffi::AnyBuffer> d, float alpha, float beta, bool has_c) {
  return gemm(simulator(), nullptr, a, b, has_c ? &c : nullptr, d, alpha, beta);
}

template <class Binding>
auto gemm_signature(Binding binding) {
  return with_buffers<3, 1>(std::move(binding))
      .template Attr<float>("alpha")
      .template Attr<float>("beta")
      .template Attr<bool>("has_c");
}

// Grouped GEMM (warpforge.jax.ragged_dot), dense row-major buffers: form
// "m" A (M, K), B (G, K, N), D (M, N); form "k" (the gradient of the
// weights) A given as (M, K) and read as Aᵀ (K, M), M contiguous, B (M, N),
// D (G, K, N); offsets int32 (G,).
ffi::Error grouped_gemm(const Device& device, Stream* stream, const ffi::AnyBuffer& a, const ffi::AnyBuffer& b,
                        const ffi::AnyBuffer& offsets, ffi::Result<ffi::AnyBuffer>& d, std::string_view form) {
  return refusal_as_invalid_argument([&] {
    CallBuffers buffers(device);
    std::optional<TensorView> va;
    if (form == "k") {
      const auto dims = a.dimensions();
      if (dims.size() != 2) throw RuntimeError("a: expected 2 dimensions (M, K), got " + std::to_string(dims.size()));
      va = buffers.view(a.untyped_data(), a.size_bytes(), dtype_of(a.element_type(), "a"), {dims[1], dims[0]},
                        {1, dims[1]});
    } else {
      va = buffers.dense(a, "a");
    }
    const GroupedGemmOp::Views views{va, buffers.dense(b, "b"), buffers.flat(offsets, "offsets"),
                                     buffers.dense(*d, "d"), std::nullopt, std::nullopt, std::nullopt};
    const ops::GroupedGemmOptions options = grouped_gemm_options(name(views[3]->dtype()), 32, "auto");
    cached_grouped_gemm_op(views, options)->run(views, stream);
  });
}

ffi::Error grouped_gemm_cuda(void* stream, std::int32_t ordinal, ffi::AnyBuffer a, ffi::AnyBuffer b,
                             ffi::AnyBuffer offsets, ffi::Result<ffi::AnyBuffer> d, std::string_view form) {
  return on_xla_stream(stream, ordinal,
                       [&](const Device& device, Stream* s) { return grouped_gemm(device, s, a, b, offsets, d, form); });
}

ffi::Error grouped_gemm_host(ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::AnyBuffer offsets, ffi::Result<ffi::AnyBuffer> d,
                             std::string_view form) {
  return grouped_gemm(simulator(), nullptr, a, b, offsets, d, form);
}

template <class Binding>
auto grouped_gemm_signature(Binding binding) {
  return with_buffers<3, 1>(std::move(binding))
      .template Attr<std::string_view>("form");
}

// Kernels written with the DSL, registered for FFI calls (warpforge.jax.kernel):
// the IR, compiled once per device. Every parameter is a pointer: the call's
// arguments, then its results, in parameter order.
struct RegisteredKernel {
  ptx::Module ir;
  std::string name;
  std::mutex mutex;
  std::map<const runtime::DeviceBackend*, std::unique_ptr<runtime::Module>> loaded;

  runtime::Module& on(const Device& device) {
    std::lock_guard lock(mutex);
    auto& m = loaded[&device.backend()];
    if (!m) m = std::make_unique<runtime::Module>(device, ir);
    return *m;
  }
};

struct KernelRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<RegisteredKernel>> kernels;
};
KernelRegistry& kernel_registry() {
  static auto* registry = new KernelRegistry();  // handlers may run until the process ends
  return *registry;
}

RegisteredKernel& registered(std::int64_t id) {
  KernelRegistry& r = kernel_registry();
  std::lock_guard lock(r.mutex);
  if (id < 0 || static_cast<std::size_t>(id) >= r.kernels.size())
    throw RuntimeError("no kernel registered under id " + std::to_string(id));
  return *r.kernels[static_cast<std::size_t>(id)];
}

ffi::Error kernel(const Device& device, Stream* stream, const ffi::RemainingArgs& args,
                  const ffi::RemainingRets& rets, std::int64_t id, std::int32_t gx, std::int32_t gy,
                  std::int32_t gz, std::int32_t bx, std::int32_t by, std::int32_t bz,
                  std::int32_t shared) {
  return refusal_as_invalid_argument([&]() -> ffi::Error {
    RegisteredKernel& k = registered(id);
    CallBuffers buffers(device);
    std::vector<runtime::Arg> launch_args;
    for (std::size_t i = 0; i < args.size(); ++i) {
      auto b = args.get<ffi::AnyBuffer>(i);
      if (b.has_error()) return b.error();
      launch_args.emplace_back(buffers.dense(b.value(), "argument"));
    }
    for (std::size_t i = 0; i < rets.size(); ++i) {
      auto b = rets.get<ffi::AnyBuffer>(i);
      if (b.has_error()) return b.error();
      launch_args.emplace_back(buffers.dense(*b.value(), "result"));
    }
    auto dim = [](std::int32_t x, std::int32_t y, std::int32_t z) {
      return runtime::Dim3{static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y),
                           static_cast<std::uint32_t>(z)};
    };
    k.on(device).launch(k.name,
                        {.grid = dim(gx, gy, gz),
                         .block = dim(bx, by, bz),
                         .dynamic_shared_bytes = static_cast<std::uint32_t>(shared)},
                        launch_args, stream);
    return ffi::Error::Success();
  });
}

ffi::Error kernel_cuda(void* stream, std::int32_t ordinal, ffi::RemainingArgs args,
                       ffi::RemainingRets rets, std::int64_t id, std::int32_t gx, std::int32_t gy,
                       std::int32_t gz, std::int32_t bx, std::int32_t by, std::int32_t bz,
                       std::int32_t shared) {
  return on_xla_stream(stream, ordinal, [&](const Device& device, Stream* s) {
    return kernel(device, s, args, rets, id, gx, gy, gz, bx, by, bz, shared);
  });
}

ffi::Error kernel_host(ffi::RemainingArgs args, ffi::RemainingRets rets, std::int64_t id,
                       std::int32_t gx, std::int32_t gy, std::int32_t gz, std::int32_t bx,
                       std::int32_t by, std::int32_t bz, std::int32_t shared) {
  return kernel(simulator(), nullptr, args, rets, id, gx, gy, gz, bx, by, bz, shared);
}

template <class Binding>
auto kernel_signature(Binding binding) {
  return std::move(binding)
      .RemainingArgs()
      .RemainingRets()
      .template Attr<std::int64_t>("kernel")
      .template Attr<std::int32_t>("grid_x")
      .template Attr<std::int32_t>("grid_y")
      .template Attr<std::int32_t>("grid_z")
      .template Attr<std::int32_t>("block_x")
      .template Attr<std::int32_t>("block_y")
      .template Attr<std::int32_t>("block_z")
      .template Attr<std::int32_t>("shared_bytes");
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(kGemmAmaxCuda, gemm_amax_cuda, gemm_amax_signature(bind_on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kGemmAmaxHost, gemm_amax_host, gemm_amax_signature(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kGemmCuda, gemm_cuda, gemm_signature(bind_on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kKernelCuda, kernel_cuda, kernel_signature(bind_on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kKernelHost, kernel_host, kernel_signature(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kGemmHost, gemm_host, gemm_signature(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kGroupedGemmCuda, grouped_gemm_cuda,
                              grouped_gemm_signature(bind_on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kGroupedGemmHost, grouped_gemm_host, grouped_gemm_signature(ffi::Ffi::Bind()));

void bind_jax(nb::module_& m) {
  nb::dict targets;
  targets["gemm_amax_cuda"] = handler_capsule(kGemmAmaxCuda);
  targets["gemm_amax_cpu"] = handler_capsule(kGemmAmaxHost);
  targets["gemm_cuda"] = handler_capsule(kGemmCuda);
  targets["gemm_cpu"] = handler_capsule(kGemmHost);
  targets["kernel_cuda"] = handler_capsule(kKernelCuda);
  targets["kernel_cpu"] = handler_capsule(kKernelHost);
  targets["grouped_gemm_cuda"] = handler_capsule(kGroupedGemmCuda);
  targets["grouped_gemm_cpu"] = handler_capsule(kGroupedGemmHost);
  m.attr("jax_ffi_targets") = targets;
  m.def(
      "jax_register_kernel",
      [](const dsl::Kernel& k) {
        KernelRegistry& r = kernel_registry();
        auto entry = std::make_unique<RegisteredKernel>();
        entry->ir = k.module();
        entry->name = k.name();
        std::lock_guard lock(r.mutex);
        r.kernels.push_back(std::move(entry));
        return static_cast<std::int64_t>(r.kernels.size() - 1);
      },
      nb::arg("kernel"), "Registers a kernel for the FFI target warpforge_kernel; returns its id.");
}

}  // namespace warpforge::python
