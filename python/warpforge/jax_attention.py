"""warpforge.attention for jax.Arrays: a jax.custom_vjp function whose
forward (O and the log-sum-exp) and backward (dQ, dK, dV) are XLA FFI calls
(python/src/jax/attention_jax_ffi.cpp), usable eagerly and in jax.jit; GPU
arrays run there on XLA's stream, CPU arrays on the simulator. Arrays are
dense: q (batch, heads, seq, d) or varlen (total, heads, d). The
log-sum-exp's cotangent is not propagated (as in FlashAttention)."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from . import _warpforge
from . import jax as _registers_the_targets  # noqa: F401  (jax.ffi.register_ffi_target)

_PLACEHOLDER = np.zeros((1,), np.int32)  # cu_seqlens of a dense call (unread)


def _call_attrs(attrs):
    scale, left, right, top_left, max_q, max_k, varlen, deterministic = attrs
    return dict(scale=np.float64(scale), window_left=np.int64(left), window_right=np.int64(right),
                max_seqlen_q=np.int64(max_q), max_seqlen_k=np.int64(max_k), top_left=bool(top_left),
                varlen=bool(varlen), deterministic=bool(deterministic))


def _lse_shape(q, varlen):
    return (q.shape[1], q.shape[0]) if varlen else (q.shape[0], q.shape[1], q.shape[2])


def _forward_call(q, k, v, cu_q, cu_k, attrs):
    call = jax.ffi.ffi_call("warpforge_attention_forward",
                            (jax.ShapeDtypeStruct(q.shape, q.dtype),
                             jax.ShapeDtypeStruct(_lse_shape(q, attrs[6]), jnp.float32)))
    return call(q, k, v, cu_q, cu_k, **_call_attrs(attrs))


@functools.partial(jax.custom_vjp, nondiff_argnums=(5,))
def _attention(q, k, v, cu_q, cu_k, attrs):
    return _forward_call(q, k, v, cu_q, cu_k, attrs)


def _attention_fwd(q, k, v, cu_q, cu_k, attrs):
    out, lse = _forward_call(q, k, v, cu_q, cu_k, attrs)
    return (out, lse), (q, k, v, out, lse, cu_q, cu_k)


def _attention_bwd(attrs, residuals, cotangents):
    q, k, v, out, lse, cu_q, cu_k = residuals
    grad_out, _ = cotangents
    call = jax.ffi.ffi_call("warpforge_attention_backward",
                            (jax.ShapeDtypeStruct(q.shape, q.dtype), jax.ShapeDtypeStruct(k.shape, k.dtype),
                             jax.ShapeDtypeStruct(v.shape, v.dtype)))
    dq, dk, dv = call(grad_out.astype(out.dtype), q, k, v, out, lse, cu_q, cu_k, **_call_attrs(attrs))
    return dq, dk, dv, None, None


_attention.defvjp(_attention_fwd, _attention_bwd)


def attention(q, k, v, scale, window_left, window_right, top_left, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
              max_seqlen_k, deterministic, kernel):
    """(out, lse) of warpforge.attention (see there) on jax.Arrays."""
    if kernel not in ("auto", "automatic"):
        raise _warpforge.OpsError(f"kernel '{kernel}': warpforge.jax.attention chooses the kernel (auto)")
    varlen = cu_seqlens_q is not None
    attrs = (0.0 if scale is None else float(scale), int(window_left), int(window_right), bool(top_left),
             int(max_seqlen_q), int(max_seqlen_k), varlen, bool(deterministic))
    cu_q = _PLACEHOLDER if cu_seqlens_q is None else cu_seqlens_q
    cu_k = _PLACEHOLDER if cu_seqlens_k is None else cu_seqlens_k
    return _attention(q, k, v, jnp.asarray(cu_q, jnp.int32), jnp.asarray(cu_k, jnp.int32), attrs)
