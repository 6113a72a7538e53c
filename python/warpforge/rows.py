"""The row ops for tensors of any framework: torch tensors go through
torch.ops.warpforge (differentiable), jax.Arrays through warpforge.jax
(custom_vjp), NumPy (the simulator) and CuPy arrays straight to the op, on
the caller's current stream unless `stream` says otherwise."""

import importlib

import numpy as np

from . import _warpforge
from ._frameworks import current_stream as caller_stream
from ._frameworks import dtype_name, empty_strided, framework_of, to_tensor

_FORMATS = {"mxfp8": ("e4m3", "e8m0", 32), "mxfp8_e4m3": ("e4m3", "e8m0", 32), "mxfp8_e5m2": ("e5m2", "e8m0", 32),
            "mxfp4": ("e2m1", "e8m0", 32), "nvfp4": ("e2m1", "e4m3", 16)}


def quantize_format(fmt):
    """(data dtype, scale dtype, vec) of a block-scaled format as warpforge.quantize names it."""
    if fmt not in _FORMATS:
        raise _warpforge.OpsError(f"format '{fmt}': accepted mxfp8 (= mxfp8_e4m3), mxfp8_e5m2, mxfp4, nvfp4")
    return _FORMATS[fmt]


def scale_bytes(rows, k, vec):
    """Bytes of the 128x4 scale layout of rows x K (scale_factor_layout.hpp)."""
    return (rows + 127) // 128 * 128 * (((k + vec - 1) // vec + 3) // 4 * 4)


def _contiguous(like, shape, name):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return empty_strided(like, tuple(shape), tuple(strides), name)


def _run(factory, tensors, options, like, stream):
    views = [None if t is None else to_tensor(t, "tensor") for t in tensors]
    factory(views, options).execute(views, stream=caller_stream(like, stream))


_OWN = {}  # (framework, op name): its implementation, found once (an import statement a call is host time)


def _dispatch(fw, name):
    """The framework's own implementation of row op `name` (torch or JAX), or None."""
    own = _OWN.get((fw, name))
    if own is None and fw in ("jax", "torch"):
        own = _OWN[(fw, name)] = getattr(importlib.import_module(f".{fw}_rows", __package__), name)
    return own


def _norm(kind, x, weight, bias, eps, residual, stream):
    fw = framework_of(x)
    own = _dispatch(fw, "rms_norm" if kind == "rms" else "layer_norm") if fw == "jax" or stream is None else None
    if own is not None:
        return own(x, weight, eps, residual) if kind == "rms" else own(x, weight, bias, eps, residual)
    shape = tuple(x.shape)
    y = _contiguous(x, shape, dtype_name(x.dtype))
    h = None
    if residual is not None:
        h_dtype = np.promote_types(np.dtype(x.dtype), np.dtype(residual.dtype)) if fw == "numpy" else x.dtype
        h = _contiguous(x, shape, dtype_name(h_dtype))
    _run(_warpforge.norm_op, [x, residual, weight, bias, y, h, None, None], f"{kind} {float(eps).hex()}", x, stream)
    return y if residual is None else (y, h)


def rms_norm(x, weight=None, eps=1e-6, residual=None, stream=None):
    """RMSNorm over the last dimension: y = x / sqrt(mean(x²) + eps) · weight,
    or with a residual (y, h) where h = x + residual is what was normalized.
    f32, f16 or bf16; f32 statistics."""
    return _norm("rms", x, weight, None, eps, residual, stream)


def layer_norm(x, weight=None, bias=None, eps=1e-5, residual=None, stream=None):
    """LayerNorm over the last dimension: (x - mean) / sqrt(var + eps) · weight
    + bias, or with a residual (y, h) as rms_norm."""
    return _norm("layer", x, weight, bias, eps, residual, stream)


def softmax(x, stream=None):
    """Softmax over the last dimension (rows of any length: held in registers
    of a warp, a CTA or a cluster; past 262144 elements read in passes)."""
    fw = framework_of(x)
    own = _dispatch(fw, "softmax") if fw == "jax" or stream is None else None
    if own is not None:
        return own(x)
    y = _contiguous(x, tuple(x.shape), dtype_name(x.dtype))
    _run(_warpforge.softmax_op, [x, y], "", x, stream)
    return y


def swiglu(gate=None, up=None, x=None, stream=None):
    """silu(gate) · up of gate and up (..., n), or of x (..., 2n) with them
    interleaved (gate at even positions)."""
    like = gate if gate is not None else x
    fw = framework_of(like)
    own = _dispatch(fw, "swiglu") if fw == "jax" or stream is None else None
    if own is not None:
        return own(gate, up, x)
    shape = tuple(gate.shape) if gate is not None else (*x.shape[:-1], x.shape[-1] // 2)
    out = _contiguous(like, shape, dtype_name(like.dtype))
    _run(_warpforge.swiglu_op, [gate, up, x, out], "", like, stream)
    return out


def cross_entropy(logits, labels, reduction="mean", ignore_index=-100, label_smoothing=0.0, stream=None):
    """Cross-entropy of logits (..., V) against integer labels (...), with
    label smoothing and an ignore index (PyTorch's semantics); torch and JAX
    differentiate it (the gradient computed in the loss's one pass)."""
    fw = framework_of(logits)
    own = _dispatch(fw, "cross_entropy") if fw == "jax" or stream is None else None
    if own is not None:
        return own(logits, labels, reduction, ignore_index, label_smoothing)
    loss = _contiguous(logits, tuple(logits.shape[:-1]) if reduction == "none" else (1,), "f32")
    _run(_warpforge.cross_entropy_op, [logits, labels, loss, None, None],
         f"{reduction} {int(ignore_index)} {float(label_smoothing).hex()}", logits, stream)
    return loss if reduction == "none" else loss.reshape(())


def rms_norm_quantize(x, weight=None, eps=1e-6, format="mxfp8", residual=None, normalize=True, stream=None):
    """RMSNorm fused with block-scaled quantization to `format` (as
    warpforge.quantize: mxfp8, mxfp8_e5m2, mxfp4, nvfp4), bit for bit
    quantize() of the norm: (data, scales) as gemm_amax takes them for x
    (rows, K) (data (rows, K) fp8 or (rows, K/2) packed FP4 bytes, scales 1-D
    in the 128x4 layout); with a residual also h = x + residual.
    normalize=False quantizes x (· weight) as it is, on the device."""
    fw = framework_of(x)
    own = _dispatch(fw, "rms_norm_quantize") if fw == "jax" or stream is None else None
    if own is not None:
        return own(x, weight, eps, format, residual, normalize)
    data, scale, vec = quantize_format(format)
    k = x.shape[-1]
    rows = int(np.prod(x.shape[:-1]))
    codes = _contiguous(x, (rows, k // 2 if data == "e2m1" else k), "u8" if data == "e2m1" else data)
    scales = _contiguous(x, (scale_bytes(rows, k, vec),), scale)
    h = None if residual is None else _contiguous(x, tuple(x.shape), dtype_name(x.dtype))
    _run(_warpforge.rms_norm_quantize_op, [x, residual, weight, codes, scales, h, None, None],
         f"{format} {float(eps).hex()} {1 if normalize else 0}", x, stream)
    return (codes, scales) if residual is None else (codes, scales, h)
