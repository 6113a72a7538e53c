// Attention in the extension module: the op objects of attention_ops.hpp, their
// cache, and their bindings (warpforge.attention, warpforge.torch's
// attention operators and warpforge.jax build on them).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "attention_ops.hpp"
#include "bindings.hpp"
#include "op_cache.hpp"
#include "tensors.hpp"
#include "warpforge/error.hpp"

namespace nb = nanobind;
using warpforge::runtime::Tensor;
using warpforge::runtime::TensorView;

namespace warpforge::python {

ops::AttentionOptions attention_options(std::optional<double> scale, bool causal, std::int64_t window_left,
                                        std::int64_t window_right, bool top_left, std::int64_t max_seqlen_q,
                                        std::int64_t max_seqlen_k, bool deterministic, const std::string& kernel,
                                        bool caller_workspace) {
  const auto k = ops::parse_attention_kernel(kernel);
  if (!k) throw OpsError("kernel '" + kernel + "': accepted auto, sm80");
  return {.scale = scale,
          .causal = causal,
          .window_left = window_left,
          .window_right = window_right,
          .alignment = top_left ? ops::MaskAlignment::top_left : ops::MaskAlignment::bottom_right,
          .max_seqlen_q = max_seqlen_q,
          .max_seqlen_k = max_seqlen_k,
          .deterministic = deterministic,
          .kernel = *k,
          .caller_workspace = caller_workspace};
}

namespace {

ops::AttentionTensors forward_tensors(const AttentionViews& v) {
  return {.q = v.main.at(0), .k = v.main.at(1), .v = v.main.at(2), .o = v.main.at(3),
          .lse = v.has_lse ? &v.main.at(4) : nullptr,
          .cu_seqlens_q = v.cu_seqlens_q ? &*v.cu_seqlens_q : nullptr,
          .cu_seqlens_k = v.cu_seqlens_k ? &*v.cu_seqlens_k : nullptr};
}

ops::AttentionBackwardTensors backward_tensors(const AttentionViews& v) {
  if (v.main.size() != 9) throw OpsError("the attention backward takes 9 tensors (q, k, v, o, lse, d_o, dq, dk, dv)");
  return {.q = v.main[0], .k = v.main[1], .v = v.main[2], .o = v.main[3], .lse = v.main[4], .d_o = v.main[5],
          .dq = v.main[6], .dk = v.main[7], .dv = v.main[8],
          .cu_seqlens_q = v.cu_seqlens_q ? &*v.cu_seqlens_q : nullptr,
          .cu_seqlens_k = v.cu_seqlens_k ? &*v.cu_seqlens_k : nullptr};
}

std::string options_key(const ops::AttentionOptions& o) {
  char text[200];
  std::snprintf(text, sizeof text, "%s %d %lld %lld %d %lld %lld %d %d %d",
                o.scale ? std::to_string(*o.scale).c_str() : "-", o.causal, static_cast<long long>(o.window_left),
                static_cast<long long>(o.window_right), o.alignment == ops::MaskAlignment::top_left,
                static_cast<long long>(o.max_seqlen_q), static_cast<long long>(o.max_seqlen_k), o.deterministic,
                static_cast<int>(o.kernel), o.caller_workspace);
  // The scale exactly (hexadecimal): scales that differ past a decimal rendering are other ops.
  if (o.scale) {
    char exact[40];
    std::snprintf(exact, sizeof exact, " %a", *o.scale);
    return std::string(text) + exact;
  }
  return text;
}

AttentionViews views_from(const std::vector<Tensor>& main, const std::optional<Tensor>& cu_q,
                          const std::optional<Tensor>& cu_k, bool has_lse) {
  AttentionViews v;
  for (const Tensor& t : main) v.main.push_back(t);
  if (cu_q) v.cu_seqlens_q = *cu_q;
  if (cu_k) v.cu_seqlens_k = *cu_k;
  v.has_lse = has_lse;
  return v;
}

}  // namespace

AttentionOp::AttentionOp(const AttentionViews& v, const ops::AttentionOptions& options, bool backward) : samples_(v) {
  if (backward)
    backward_.emplace(backward_tensors(v), options);
  else
    forward_.emplace(forward_tensors(v), options);
}

std::vector<std::string> AttentionOp::check_support() const {
  return forward_ ? forward_->check_support() : backward_->check_support();
}
std::string AttentionOp::describe() const { return forward_ ? forward_->describe() : backward_->describe(); }
std::size_t AttentionOp::workspace_bytes() const {
  return forward_ ? forward_->workspace_bytes() : backward_->workspace_bytes();
}
void AttentionOp::compile() {
  if (forward_) forward_->compile();
  else backward_->compile();
}

void AttentionOp::run(const AttentionViews& v, runtime::Stream* stream, const TensorView* workspace) {
  std::lock_guard lock(run_mutex_);
  if (forward_)
    forward_->execute(forward_tensors(v), stream);
  else
    backward_->execute(backward_tensors(v), stream, workspace);
}

namespace {
TensorView view_at(const TensorView& s, std::uint64_t address) {
  return TensorView(s.device(), address, s.dtype(), s.shape(), s.strides());
}
}  // namespace

void AttentionOp::run_at(const std::vector<std::uint64_t>& main, std::uint64_t cu_q, std::uint64_t cu_k,
                         std::uint64_t workspace, runtime::Stream* stream) {
  if (main.size() != samples_.main.size() || bool(cu_q) != bool(samples_.cu_seqlens_q) ||
      bool(cu_k) != bool(samples_.cu_seqlens_k))
    throw OpsError("Attention.execute_addresses takes " + std::to_string(samples_.main.size()) +
                   " tensor addresses and cu_seqlens as the op was built (got " + std::to_string(main.size()) + ")");
  if (forward_) {  // Q, K, V, O, lse (0 where built without it), the offsets: no views made
    std::array<runtime::DevicePtr, 7> at{};
    std::copy(main.begin(), main.end(), at.begin());
    if (!samples_.has_lse) at[4] = 0;
    at[5] = cu_q;
    at[6] = cu_k;
    std::lock_guard lock(run_mutex_);
    forward_->execute_at(at, stream);
    return;
  }
  AttentionViews v;
  v.has_lse = samples_.has_lse;
  for (std::size_t i = 0; i < main.size(); ++i) v.main.push_back(view_at(samples_.main[i], main[i]));
  if (cu_q) v.cu_seqlens_q = view_at(*samples_.cu_seqlens_q, cu_q);
  if (cu_k) v.cu_seqlens_k = view_at(*samples_.cu_seqlens_k, cu_k);
  std::optional<TensorView> ws;
  if (workspace)
    ws.emplace(device(), workspace, runtime::DType::u8,
               std::vector<std::int64_t>{static_cast<std::int64_t>(std::max<std::size_t>(workspace_bytes(), 16))});
  run(v, stream, ws ? &*ws : nullptr);
}

AttentionDecodeOp::AttentionDecodeOp(const std::vector<TensorView>& s, const ops::AttentionDecodeOptions& options)
    : samples_(s),
      op_({.q = s.at(0), .k_cache = s.at(1), .v_cache = s.at(2), .block_table = s.at(3), .kv_lens = s.at(4),
           .o = s.at(5), .lse = s.size() > 6 ? &s[6] : nullptr},
          options) {}

void AttentionDecodeOp::run(const std::vector<TensorView>& s, runtime::Stream* stream, const TensorView* workspace) {
  std::lock_guard lock(run_mutex_);
  op_.execute({.q = s.at(0), .k_cache = s.at(1), .v_cache = s.at(2), .block_table = s.at(3), .kv_lens = s.at(4),
               .o = s.at(5), .lse = s.size() > 6 ? &s[6] : nullptr},
              stream, workspace);
}

void AttentionDecodeOp::run_at(const std::vector<std::uint64_t>& at, std::uint64_t workspace,
                               runtime::Stream* stream) {
  if (at.size() != samples_.size())
    throw OpsError("AttentionDecode.execute_addresses takes " + std::to_string(samples_.size()) +
                   " addresses (q, k_cache, v_cache, block_table, kv_lens, o[, lse]), got " +
                   std::to_string(at.size()));
  std::array<runtime::DevicePtr, 7> addresses{};  // lse's 0 where the op has none
  std::copy(at.begin(), at.end(), addresses.begin());
  std::lock_guard lock(run_mutex_);
  op_.execute_at(addresses, workspace, stream);
}

std::shared_ptr<AttentionOp> cached_attention_op(const AttentionViews& v, const ops::AttentionOptions& options,
                                                 bool backward) {
  std::string key = std::string(backward ? "backward " : "forward ") + options_key(options) +
                    (v.has_lse ? " lse" : "");
  for (const TensorView& t : v.main) key += key_of({&t}, "");
  key += key_of({v.cu_seqlens_q ? &*v.cu_seqlens_q : nullptr, v.cu_seqlens_k ? &*v.cu_seqlens_k : nullptr}, "");
  return cached<AttentionOp>(key, [&] { return std::make_shared<AttentionOp>(v, options, backward); });
}

std::shared_ptr<AttentionDecodeOp> cached_attention_decode_op(const std::vector<TensorView>& v,
                                                              const ops::AttentionDecodeOptions& o) {
  char text[160];
  std::snprintf(text, sizeof text, "decode %a %d %lld %d %d", o.scale ? *o.scale : 0.0, o.causal,
                static_cast<long long>(o.window_left), o.splits, o.caller_workspace);
  std::string key = text;
  for (const TensorView& t : v) key += key_of({&t}, "");
  return cached<AttentionDecodeOp>(key, [&] { return std::make_shared<AttentionDecodeOp>(v, o); });
}

void bind_attention(nb::module_& m) {
  nb::class_<AttentionOp>(m, "Attention", "ops::Attention / ops::AttentionBackward (see warpforge.attention).")
      .def("check_support", &AttentionOp::check_support)
      .def("describe", &AttentionOp::describe)
      .def_prop_ro("workspace_bytes", &AttentionOp::workspace_bytes)
      .def(
          "execute",
          [](AttentionOp& op, const std::vector<Tensor>& main, std::optional<Tensor> cu_q, std::optional<Tensor> cu_k,
             bool has_lse, std::optional<Tensor> workspace, std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(main.at(0).device(), stream);
            const AttentionViews v = views_from(main, cu_q, cu_k, has_lse);
            nb::gil_scoped_release release;
            op.run(v, pointer(s), workspace ? &*workspace : nullptr);
          },
          nb::arg("tensors"), nb::arg("cu_seqlens_q").none(), nb::arg("cu_seqlens_k").none(),
          nb::arg("has_lse") = true, nb::arg("workspace") = nb::none(), nb::arg("stream") = nb::none(),
          "Runs on other tensors of the construction's description: (q, k, v, o[, lse]) forward, (q, k, v, o, "
          "lse, d_o, dq, dk, dv) backward.")
      .def(
          "execute_addresses",
          [](AttentionOp& op, const std::vector<std::uint64_t>& main, std::uint64_t cu_q, std::uint64_t cu_k,
             std::uint64_t workspace, std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(op.device(), stream);
            nb::gil_scoped_release release;
            op.run_at(main, cu_q, cu_k, workspace, pointer(s));
          },
          nb::arg("addresses"), nb::arg("cu_seqlens_q") = 0, nb::arg("cu_seqlens_k") = 0, nb::arg("workspace") = 0,
          nb::arg("stream") = nb::none(),
          "execute() on other data of the construction's description: the tensors' data addresses in its order, "
          "the cu_seqlens' (0: absent) and the workspace's (0: none).");

  m.def(
      "attention_op",
      [](const std::vector<Tensor>& main, std::optional<Tensor> cu_q, std::optional<Tensor> cu_k, bool has_lse,
         bool backward, std::optional<double> scale, bool causal, std::int64_t window_left, std::int64_t window_right,
         bool top_left, std::int64_t max_seqlen_q, std::int64_t max_seqlen_k, bool deterministic,
         const std::string& kernel, bool caller_workspace) {
        return cached_attention_op(views_from(main, cu_q, cu_k, has_lse),
                                   attention_options(scale, causal, window_left, window_right, top_left,
                                                     max_seqlen_q, max_seqlen_k, deterministic, kernel,
                                                     caller_workspace),
                                   backward);
      },
      nb::arg("tensors"), nb::arg("cu_seqlens_q").none(), nb::arg("cu_seqlens_k").none(), nb::arg("has_lse"),
      nb::arg("backward"), nb::arg("scale").none(), nb::arg("causal"), nb::arg("window_left"),
      nb::arg("window_right"), nb::arg("top_left"), nb::arg("max_seqlen_q"), nb::arg("max_seqlen_k"),
      nb::arg("deterministic"), nb::arg("kernel"), nb::arg("caller_workspace"),
      "A compiled attention forward or backward for this description, made once and kept.");

  nb::class_<AttentionDecodeOp>(m, "AttentionDecode", "ops::AttentionDecode (see warpforge.attention_decode).")
      .def("check_support", &AttentionDecodeOp::check_support)
      .def("describe", &AttentionDecodeOp::describe)
      .def_prop_ro("workspace_bytes", &AttentionDecodeOp::workspace_bytes)
      .def(
          "execute",
          [](AttentionDecodeOp& op, const std::vector<Tensor>& tensors, std::optional<Tensor> workspace,
             std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(tensors.at(0).device(), stream);
            const std::vector<TensorView> views(tensors.begin(), tensors.end());
            nb::gil_scoped_release release;
            op.run(views, pointer(s), workspace ? &*workspace : nullptr);
          },
          nb::arg("tensors"), nb::arg("workspace") = nb::none(), nb::arg("stream") = nb::none())
      .def(
          "execute_addresses",
          [](AttentionDecodeOp& op, const std::vector<std::uint64_t>& addresses, std::uint64_t workspace,
             std::optional<std::uintptr_t> stream) {
            auto s = caller_stream(op.device(), stream);
            nb::gil_scoped_release release;
            op.run_at(addresses, workspace, pointer(s));
          },
          nb::arg("addresses"), nb::arg("workspace") = 0, nb::arg("stream") = nb::none(),
          "execute() on other data of the construction's description: the tensors' data addresses in its order "
          "(q, k_cache, v_cache, block_table, kv_lens, o[, lse]) and the workspace's (0: none).");

  m.def(
      "attention_decode_op",
      [](const std::vector<Tensor>& tensors, std::optional<double> scale, bool causal, std::int64_t window_left,
         int splits, bool caller_workspace) {
        const std::vector<TensorView> views(tensors.begin(), tensors.end());
        return cached_attention_decode_op(views, {.scale = scale,
                                                  .causal = causal,
                                                  .window_left = window_left,
                                                  .splits = splits,
                                                  .caller_workspace = caller_workspace});
      },
      nb::arg("tensors"), nb::arg("scale").none(), nb::arg("causal"), nb::arg("window_left"), nb::arg("splits"),
      nb::arg("caller_workspace"),
      "A compiled paged decode for (q, k_cache, v_cache, block_table, kv_lens, o[, lse]), made once and kept.");
}

}  // namespace warpforge::python
