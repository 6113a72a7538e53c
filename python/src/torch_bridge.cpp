// The table the torch extension calls (torch_bridge.hpp): gemm_amax's C
// layout, and gemm_amax's, gemm's, grouped_mm's, the row ops' and the attention forward's, backward's and decode's
// cached ops and their launches, on views
// made from plain tensor descriptions, with the options checked as the
// nanobind path checks them.
#include "torch_bridge.hpp"

#include <nanobind/nanobind.h>

#include <algorithm>
#include <array>
#include <exception>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attention_ops.hpp"
#include "bindings.hpp"
#include "gemm_amax_op.hpp"
#include "gemm_op.hpp"
#include "grouped_gemm_op.hpp"
#include "row_ops.hpp"
#include "tensors.hpp"
#include "warpforge/error.hpp"

namespace nb = nanobind;
using namespace warpforge::runtime;

namespace warpforge::python {
namespace {

using torch_bridge::GemmAmaxArgs;

// Runs `body`; a C++ exception becomes the Python error (under the GIL,
// which the caller, torch's dispatcher, may have released) and -1.
template <class Body>
int guarded(Body body) {
  try {
    body();
    return 0;
  } catch (...) {
    const std::exception_ptr p = std::current_exception();
    const PyGILState_STATE gil = PyGILState_Ensure();
    set_python_error(p);
    PyGILState_Release(gil);
    return -1;
  }
}

DType dtype_of(std::int32_t value) {
  if (value < 0 || value > static_cast<std::int32_t>(DType::f64))
    throw RuntimeError("torch extension: dtype value " + std::to_string(value) +
                       " is no warpforge DType (a build of another version?)");
  return static_cast<DType>(value);
}

std::vector<std::int64_t> dims(const std::int64_t* values, std::int32_t rank) {
  return {values, values + rank};
}

// A view of `t`: on its GPU, or on the simulator, which maps its host memory
// through `sim` for the call.
TensorView view(CallMappings& sim, const torch_bridge::Tensor& t) {
  const DType dtype = dtype_of(t.dtype);
  if (t.device >= 0)
    return TensorView(cuda_device(t.device), t.address, dtype, dims(t.shape, t.rank),
                      dims(t.strides, t.rank));
  const TensorView host(sim.device(), t.address, dtype, dims(t.shape, t.rank),
                        dims(t.strides, t.rank));  // for its extent
  return TensorView(sim.device(), sim.map(t.address, host.extent_bytes()), dtype, host.shape(),
                    host.strides());
}

// torch's int arguments are 64-bit; the options hold int.
int narrow(std::int64_t value, const char* name) {
  if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
    throw OpsError(std::string(name) + " " + std::to_string(value) + " does not fit an int");
  return static_cast<int>(value);
}

std::optional<ops::GemmAmaxTile> tile(bool given, const std::int64_t (&mn)[2], const char* name) {
  if (!given) return std::nullopt;
  return ops::GemmAmaxTile{narrow(mn[0], name), narrow(mn[1], name)};
}

ops::GemmAmaxOptions options_of(const GemmAmaxArgs& g) {
  return gemm_amax_options(g.c_dtype < 0 ? DType::f32 : dtype_of(g.c_dtype), g.c_major,
                           g.acc_dtype < 0 ? DType::f32 : dtype_of(g.acc_dtype),
                           tile(g.has_mma_tiler, g.mma_tiler_mn, "mma_tiler_mn"),
                           tile(g.has_cluster, g.cluster_shape_mn, "cluster_shape_mn"),
                           narrow(g.sf_vec_size, "sf_vec_size"), g.precision, g.kernel);
}

int c_layout(const GemmAmaxArgs& g, torch_bridge::CLayout& out) {
  return guarded([&] {
    const ops::GemmAmaxOptions o = options_of(g);
    // M, N, L from A (M, K, L) and B (N, K, L); a tensor of another rank is
    // refused by the op made next, naming it (C is then allocated as 1 x 1 x 1).
    const bool three = g.a.rank == 3 && g.b.rank == 3;
    const CLayout c = gemm_amax_c_layout(three ? g.a.shape[0] : 1, three ? g.b.shape[0] : 1,
                                         three ? g.a.shape[2] : 1, o.c_major, o.c_dtype);
    for (int i = 0; i < 3; ++i) {
      out.shape[i] = c.shape[static_cast<std::size_t>(i)];
      out.strides[i] = c.strides[static_cast<std::size_t>(i)];
    }
  });
}

int make_op(const GemmAmaxArgs& g, const torch_bridge::Tensor& c, const torch_bridge::Tensor& amax,
            void** op) {
  return guarded([&] {
    CallMappings mappings(simulator());
    const GemmAmaxOp::Views views{view(mappings, g.a),   view(mappings, g.b), view(mappings, g.sfa),
                                  view(mappings, g.sfb), view(mappings, c),   view(mappings, amax)};
    *op = cached_gemm_amax_op(views, options_of(g)).get();  // the cache keeps it
  });
}

int run(void* op, const std::uint64_t (&addresses)[6], std::uintptr_t stream) {
  return guarded([&] {
    auto& o = *static_cast<GemmAmaxOp*>(op);
    const Device& device = o.samples()[0].device();
    std::array<std::uint64_t, 6> at;
    CallMappings mappings(device);
    for (std::size_t i = 0; i < 6; ++i)
      at[i] = mappings.map(addresses[i], o.samples()[i].extent_bytes());
    auto s = caller_stream(device, stream);  // torch's default stream is 0: borrowed too
    o.run_at(at, pointer(s), true);
  });
}

int make_gemm_op(const torch_bridge::GemmArgs& g, void** op) {
  return guarded([&] {
    CallMappings mappings(simulator());
    const TensorView a = view(mappings, g.a), b = view(mappings, g.b), d = view(mappings, g.d);
    std::optional<TensorView> c;
    if (g.has_c) c = view(mappings, g.c);
    // torch's float arguments are doubles; ops::GemmOptions holds float, as
    // the nanobind path narrows them.
    *op = cached_gemm_op(a, b, c ? &*c : nullptr, d, static_cast<float>(g.alpha),
                         static_cast<float>(g.beta))
              .get();  // the cache keeps it
  });
}

// An op of four operands (GemmOp, GroupedGemmOp) on other data of its
// description: each present operand's address mapped (the simulator's host
// memory; a GPU's as it is), on torch's stream.
template <class Op>
int run_four(void* op, const std::uint64_t (&addresses)[4], std::uintptr_t stream) {
  return guarded([&] {
    auto& o = *static_cast<Op*>(op);
    const std::array<std::uint64_t, 4> extents = o.extents();
    std::array<std::uint64_t, 4> at{};
    CallMappings mappings(o.device());
    for (std::size_t i = 0; i < 4; ++i)
      if (extents[i] > 0) at[i] = mappings.map(addresses[i], extents[i]);
    auto s = caller_stream(o.device(), stream);
    o.run_at(at, pointer(s));
  });
}

int run_gemm(void* op, const std::uint64_t (&addresses)[4], std::uintptr_t stream) {
  return run_four<GemmOp>(op, addresses, stream);
}

int make_grouped_op(const torch_bridge::GroupedMmArgs& g, void** op) {
  return guarded([&] {
    CallMappings mappings(simulator());
    GroupedGemmOp::Views views{view(mappings, g.a), view(mappings, g.b), std::nullopt, view(mappings, g.d)};
    if (g.has_offs) views[2] = view(mappings, g.offs);
    ops::GroupedGemmOptions options;
    options.out_dtype = views[3]->dtype();
    *op = cached_grouped_gemm_op(views, options).get();  // the cache keeps it
  });
}

int run_grouped(void* op, const std::uint64_t (&addresses)[4], std::uintptr_t stream) {
  return run_four<GroupedGemmOp>(op, addresses, stream);
}

// An attention op (the cache keeps it) and its operands' extents in bytes
// (its tensors in order, then cu_seqlens_q, cu_seqlens_k and the workspace;
// the simulator maps that much of each address): one a description, kept
// by the torch extension's cache.
struct AttentionEntry {
  AttentionOp* op;
  std::vector<std::uint64_t> extents;
};

// The op of the forward's operands followed by `more` (the backward's dO,
// dQ, dK, dV, with its workspace the caller's).
AttentionEntry* make_attention(const torch_bridge::AttentionForwardArgs& a,
                               std::initializer_list<const torch_bridge::Tensor*> more, bool deterministic) {
  const bool backward = more.size() > 0;
  CallMappings mappings(simulator());
  AttentionViews views;
  for (const torch_bridge::Tensor* t : {&a.q, &a.k, &a.v, &a.o, &a.lse}) views.main.push_back(view(mappings, *t));
  for (const torch_bridge::Tensor* t : more) views.main.push_back(view(mappings, *t));
  if (a.has_cu_seqlens_q) views.cu_seqlens_q = view(mappings, a.cu_seqlens_q);
  if (a.has_cu_seqlens_k) views.cu_seqlens_k = view(mappings, a.cu_seqlens_k);
  // The mask is the window alone (causal is window_right 0), as the
  // Python operator passes it.
  const ops::AttentionOptions options =
      attention_options(a.has_scale ? std::optional(a.scale) : std::nullopt, false, a.window_left, a.window_right,
                        a.top_left, a.max_seqlen_q, a.max_seqlen_k, deterministic, std::string(a.kernel), backward);
  auto made = std::make_unique<AttentionEntry>();
  made->op = cached_attention_op(views, options, backward).get();
  for (const TensorView& v : views.main) made->extents.push_back(v.extent_bytes());
  made->extents.push_back(views.cu_seqlens_q ? views.cu_seqlens_q->extent_bytes() : 0);
  made->extents.push_back(views.cu_seqlens_k ? views.cu_seqlens_k->extent_bytes() : 0);
  made->extents.push_back(std::max<std::uint64_t>(made->op->workspace_bytes(), 16));
  return made.release();
}

// The entry's op on `addresses` (its tensors', then cu_seqlens_q's and
// cu_seqlens_k's: 0 without them) and the workspace's (0: none).
void run_attention(void* op, const std::uint64_t* addresses, std::uint64_t workspace, std::uintptr_t stream) {
  const auto& e = *static_cast<const AttentionEntry*>(op);
  const std::size_t n = e.extents.size() - 3;
  CallMappings mappings(e.op->device());
  std::vector<std::uint64_t> main(n);
  for (std::size_t i = 0; i < n; ++i) main[i] = mappings.map(addresses[i], e.extents[i]);
  const std::uint64_t cu_q = addresses[n] ? mappings.map(addresses[n], e.extents[n]) : 0;
  const std::uint64_t cu_k = addresses[n + 1] ? mappings.map(addresses[n + 1], e.extents[n + 1]) : 0;
  const std::uint64_t at_workspace = workspace ? mappings.map(workspace, e.extents[n + 2]) : 0;
  auto s = caller_stream(e.op->device(), stream);
  e.op->run_at(main, cu_q, cu_k, at_workspace, pointer(s));
}

int make_attention_forward(const torch_bridge::AttentionForwardArgs& a, void** op) {
  return guarded([&] { *op = make_attention(a, {}, false); });
}

int run_attention_forward(void* op, const std::uint64_t (&addresses)[7], std::uintptr_t stream) {
  return guarded([&] { run_attention(op, addresses, 0, stream); });
}

int make_attention_backward(const torch_bridge::AttentionBackwardArgs& a, void** op, std::uint64_t* workspace_bytes) {
  return guarded([&] {
    AttentionEntry* made = make_attention(a.forward, {&a.d_o, &a.dq, &a.dk, &a.dv}, a.deterministic);
    *workspace_bytes = made->extents.back();
    *op = made;
  });
}

int run_attention_backward(void* op, const std::uint64_t (&addresses)[11], std::uint64_t workspace,
                           std::uintptr_t stream) {
  return guarded([&] { run_attention(op, addresses, workspace, stream); });
}

// A decode op (the cache keeps it) and its tensors' extents in bytes (lse's
// 0 without one), then the workspace's.
struct DecodeEntry {
  std::shared_ptr<AttentionDecodeOp> op;
  std::vector<std::uint64_t> extents;
};

int make_attention_decode(const torch_bridge::AttentionDecodeArgs& a, void** op, std::uint64_t* workspace_bytes) {
  return guarded([&] {
    CallMappings mappings(simulator());
    std::vector<TensorView> views;
    for (const torch_bridge::Tensor* t : {&a.q, &a.k_cache, &a.v_cache, &a.block_table, &a.kv_lens, &a.o})
      views.push_back(view(mappings, *t));
    if (a.has_lse) views.push_back(view(mappings, a.lse));
    auto made = std::make_unique<DecodeEntry>();
    made->op = cached_attention_decode_op(views, {.scale = a.has_scale ? std::optional(a.scale) : std::nullopt,
                                                  .causal = a.causal,
                                                  .window_left = a.window_left,
                                                  .splits = narrow(a.splits, "splits"),
                                                  .caller_workspace = true});
    for (const TensorView& v : views) made->extents.push_back(v.extent_bytes());
    made->extents.resize(7, 0);
    made->extents.push_back(std::max<std::uint64_t>(made->op->workspace_bytes(), 16));
    *workspace_bytes = made->extents.back();
    *op = made.release();
  });
}

int run_attention_decode(void* op, const std::uint64_t (&addresses)[7], std::uint64_t workspace,
                         std::uintptr_t stream) {
  return guarded([&] {
    const auto& e = *static_cast<const DecodeEntry*>(op);
    CallMappings mappings(e.op->device());
    std::vector<std::uint64_t> at;
    for (std::size_t i = 0; i < 7; ++i)
      if (e.extents[i]) at.push_back(mappings.map(addresses[i], e.extents[i]));
    const std::uint64_t at_workspace = mappings.map(workspace, e.extents[7]);
    auto s = caller_stream(e.op->device(), stream);
    e.op->run_at(at, at_workspace, pointer(s));
  });
}

// The row ops: RowOp<Traits> (row_ops.hpp) made from plain descriptions and
// run on addresses, as the nanobind path's row_op factories and
// execute_addresses do.
template <class Traits>
void make_row(const torch_bridge::Tensor* const* tensors, std::int32_t count, std::string_view options, void** op) {
  CallMappings mappings(simulator());
  OptionalViews views;
  for (std::int32_t i = 0; i < count; ++i)
    views.push_back(tensors[i] ? std::optional(view(mappings, *tensors[i])) : std::nullopt);
  *op = cached_row_op<Traits>(views, Traits::parse(std::string(options))).get();  // the cache keeps it
}

template <class Traits>
void run_row(void* op, const std::uint64_t* addresses, std::int32_t count, std::uintptr_t stream) {
  auto& o = *static_cast<RowOp<Traits>*>(op);
  const OptionalViews& samples = o.samples();
  if (static_cast<std::size_t>(count) != samples.size())
    throw OpsError(std::string(Traits::kName) + ": " + std::to_string(count) + " addresses for " +
                   std::to_string(samples.size()) + " tensors");
  const runtime::Device& device = samples[Traits::kRequired[0]]->device();
  std::vector<std::uint64_t> at(samples.size());
  CallMappings mappings(device);
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (samples[i] && samples[i]->extent_bytes() > 0) at[i] = mappings.map(addresses[i], samples[i]->extent_bytes());
  auto s = caller_stream(device, stream);
  o.run_at(at, pointer(s));
}

// Calls `body` with the Traits of `kind`.
template <class Body>
int with_row_traits(torch_bridge::RowOpKind kind, Body body) {
  return guarded([&] {
    using K = torch_bridge::RowOpKind;
    switch (kind) {
      case K::norm: return body(NormTraits{});
      case K::norm_backward: return body(NormBackwardTraits{});
      case K::softmax: return body(SoftmaxTraits{});
      case K::softmax_backward: return body(SoftmaxBackwardTraits{});
      case K::swiglu: return body(SwigluTraits{});
      case K::swiglu_backward: return body(SwigluBackwardTraits{});
      case K::cross_entropy: return body(CrossEntropyTraits{});
      case K::cross_entropy_scale: return body(CrossEntropyScaleTraits{});
    }
    throw RuntimeError("torch extension: row op " + std::to_string(static_cast<int>(kind)) +
                       " is none of this build's (a build of another version?)");
  });
}

int make_row_op(torch_bridge::RowOpKind kind, const torch_bridge::Tensor* const* tensors, std::int32_t count,
                std::string_view options, void** op) {
  return with_row_traits(kind, [&](auto traits) { make_row<decltype(traits)>(tensors, count, options, op); });
}

int run_row_op(torch_bridge::RowOpKind kind, void* op, const std::uint64_t* addresses, std::int32_t count,
               std::uintptr_t stream) {
  return with_row_traits(kind, [&](auto traits) { run_row<decltype(traits)>(op, addresses, count, stream); });
}

int refuse(const char* error_class, const char* message) {
  const PyGILState_STATE gil = PyGILState_Ensure();
  try {
    nb::object type = nb::module_::import_("warpforge._warpforge").attr(error_class);
    PyErr_SetString(type.ptr(), message);
  } catch (nb::python_error& e) {
    e.restore();
  }
  PyGILState_Release(gil);
  return -1;
}

const torch_bridge::Api api{torch_bridge::kVersion, &c_layout,        &make_op,     &run,         &make_gemm_op,
                            &run_gemm,              &make_grouped_op, &run_grouped, &make_row_op, &run_row_op,
                            &refuse,                &make_attention_forward, &run_attention_forward,
                            &make_attention_backward, &run_attention_backward, &make_attention_decode,
                            &run_attention_decode};

}  // namespace

void bind_torch_bridge(nb::module_& m) {
  m.attr("_torch_bridge") = nb::capsule(&api, torch_bridge::kCapsuleName);
}

}  // namespace warpforge::python
