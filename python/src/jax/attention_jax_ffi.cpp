// The XLA FFI handlers of warpforge.jax.attention: the forward (O and lse)
// and the backward (dQ, dK, dV), for the CUDA platform (XLA's stream) and
// the CPU one (the simulator). XLA's buffers are dense row-major: Q, K, V,
// O (batch, heads, seq, d) or varlen (total, heads, d) with the two
// cu_seqlens (a dense call passes placeholders and varlen = false). The ops
// own their workspace (one XLA stream runs a device's calls in order).
#include <nanobind/nanobind.h>

#include "../attention_ops.hpp"
#include "../bindings.hpp"
#include "ffi_buffers.hpp"

namespace nb = nanobind;

namespace warpforge::python {
namespace {

struct MaskAttrs {
  double scale;  // 0: the default 1/sqrt(d)
  std::int64_t window_left, window_right, max_seqlen_q, max_seqlen_k;
  bool top_left, varlen, deterministic;

  ops::AttentionOptions options() const {
    return attention_options(scale > 0 ? std::optional(scale) : std::nullopt, false, window_left, window_right,
                             top_left, varlen ? max_seqlen_q : 0, varlen ? max_seqlen_k : 0, deterministic, "auto",
                             false);
  }
};

ffi::Error attention_forward(const Device& device, Stream* stream, const ffi::AnyBuffer& q, const ffi::AnyBuffer& k,
                             const ffi::AnyBuffer& v, const ffi::AnyBuffer& cu_q, const ffi::AnyBuffer& cu_k,
                             ffi::Result<ffi::AnyBuffer>& o, ffi::Result<ffi::AnyBuffer>& lse, const MaskAttrs& m) {
  return refusal_as_invalid_argument([&] {
    CallBuffers buffers(device);
    AttentionViews views;
    views.main = {buffers.dense(q, "q"), buffers.dense(k, "k"), buffers.dense(v, "v"), buffers.dense(*o, "o"),
                  buffers.dense(*lse, "lse")};
    if (m.varlen) views.cu_seqlens_q = buffers.dense(cu_q, "cu_seqlens_q"), views.cu_seqlens_k = buffers.dense(cu_k, "cu_seqlens_k");
    cached_attention_op(views, m.options(), false)->run(views, stream, nullptr);
  });
}

ffi::Error attention_backward(const Device& device, Stream* stream, const ffi::AnyBuffer& d_o,
                              const ffi::AnyBuffer& q, const ffi::AnyBuffer& k, const ffi::AnyBuffer& v,
                              const ffi::AnyBuffer& o, const ffi::AnyBuffer& lse, const ffi::AnyBuffer& cu_q,
                              const ffi::AnyBuffer& cu_k, ffi::Result<ffi::AnyBuffer>& dq,
                              ffi::Result<ffi::AnyBuffer>& dk, ffi::Result<ffi::AnyBuffer>& dv, const MaskAttrs& m) {
  return refusal_as_invalid_argument([&] {
    CallBuffers buffers(device);
    AttentionViews views;
    views.main = {buffers.dense(q, "q"),    buffers.dense(k, "k"),    buffers.dense(v, "v"),
                  buffers.dense(o, "o"),    buffers.dense(lse, "lse"), buffers.dense(d_o, "d_o"),
                  buffers.dense(*dq, "dq"), buffers.dense(*dk, "dk"), buffers.dense(*dv, "dv")};
    if (m.varlen) views.cu_seqlens_q = buffers.dense(cu_q, "cu_seqlens_q"), views.cu_seqlens_k = buffers.dense(cu_k, "cu_seqlens_k");
    cached_attention_op(views, m.options(), true)->run(views, stream, nullptr);
  });
}

#define WARPFORGE_MASK_ATTRS                                                                                   \
  double scale, std::int64_t window_left, std::int64_t window_right, std::int64_t max_seqlen_q,                \
      std::int64_t max_seqlen_k, bool top_left, bool varlen, bool deterministic
#define WARPFORGE_MASK_VALUES \
  MaskAttrs { scale, window_left, window_right, max_seqlen_q, max_seqlen_k, top_left, varlen, deterministic }

ffi::Error forward_cuda(void* stream, std::int32_t ordinal, ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v,
                        ffi::AnyBuffer cu_q, ffi::AnyBuffer cu_k, ffi::Result<ffi::AnyBuffer> o,
                        ffi::Result<ffi::AnyBuffer> lse, WARPFORGE_MASK_ATTRS) {
  return on_xla_stream(stream, ordinal, [&](const Device& device, Stream* s) {
    return attention_forward(device, s, q, k, v, cu_q, cu_k, o, lse, WARPFORGE_MASK_VALUES);
  });
}
ffi::Error forward_host(ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v, ffi::AnyBuffer cu_q,
                        ffi::AnyBuffer cu_k, ffi::Result<ffi::AnyBuffer> o, ffi::Result<ffi::AnyBuffer> lse,
                        WARPFORGE_MASK_ATTRS) {
  return attention_forward(simulator(), nullptr, q, k, v, cu_q, cu_k, o, lse, WARPFORGE_MASK_VALUES);
}
ffi::Error backward_cuda(void* stream, std::int32_t ordinal, ffi::AnyBuffer d_o, ffi::AnyBuffer q, ffi::AnyBuffer k,
                         ffi::AnyBuffer v, ffi::AnyBuffer o, ffi::AnyBuffer lse, ffi::AnyBuffer cu_q,
                         ffi::AnyBuffer cu_k, ffi::Result<ffi::AnyBuffer> dq, ffi::Result<ffi::AnyBuffer> dk,
                         ffi::Result<ffi::AnyBuffer> dv, WARPFORGE_MASK_ATTRS) {
  return on_xla_stream(stream, ordinal, [&](const Device& device, Stream* s) {
    return attention_backward(device, s, d_o, q, k, v, o, lse, cu_q, cu_k, dq, dk, dv, WARPFORGE_MASK_VALUES);
  });
}
ffi::Error backward_host(ffi::AnyBuffer d_o, ffi::AnyBuffer q, ffi::AnyBuffer k, ffi::AnyBuffer v, ffi::AnyBuffer o,
                         ffi::AnyBuffer lse, ffi::AnyBuffer cu_q, ffi::AnyBuffer cu_k, ffi::Result<ffi::AnyBuffer> dq,
                         ffi::Result<ffi::AnyBuffer> dk, ffi::Result<ffi::AnyBuffer> dv, WARPFORGE_MASK_ATTRS) {
  return attention_backward(simulator(), nullptr, d_o, q, k, v, o, lse, cu_q, cu_k, dq, dk, dv, WARPFORGE_MASK_VALUES);
}

template <class Binding>
auto with_mask_attrs(Binding binding) {
  return std::move(binding)
      .template Attr<double>("scale")
      .template Attr<std::int64_t>("window_left")
      .template Attr<std::int64_t>("window_right")
      .template Attr<std::int64_t>("max_seqlen_q")
      .template Attr<std::int64_t>("max_seqlen_k")
      .template Attr<bool>("top_left")
      .template Attr<bool>("varlen")
      .template Attr<bool>("deterministic");
}

template <class Binding>
auto forward_signature(Binding binding) {
  return with_mask_attrs(with_buffers<5, 2>(std::move(binding)));
}

template <class Binding>
auto backward_signature(Binding binding) {
  return with_mask_attrs(with_buffers<8, 3>(std::move(binding)));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(kAttentionForwardCuda, forward_cuda,
                              forward_signature(bind_on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kAttentionForwardHost, forward_host, forward_signature(ffi::Ffi::Bind()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kAttentionBackwardCuda, backward_cuda,
                              backward_signature(bind_on_cuda()));
XLA_FFI_DEFINE_HANDLER_SYMBOL(kAttentionBackwardHost, backward_host, backward_signature(ffi::Ffi::Bind()));

void bind_attention_jax(nb::module_& m) {
  nb::dict targets = nb::cast<nb::dict>(m.attr("jax_ffi_targets"));
  targets["attention_forward_cuda"] = handler_capsule(kAttentionForwardCuda);
  targets["attention_forward_cpu"] = handler_capsule(kAttentionForwardHost);
  targets["attention_backward_cuda"] = handler_capsule(kAttentionBackwardCuda);
  targets["attention_backward_cpu"] = handler_capsule(kAttentionBackwardHost);
}

}  // namespace warpforge::python
