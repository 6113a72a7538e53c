"""The row ops for tensors of any framework: torch tensors go through
torch.ops.warpforge (differentiable), jax.Arrays through warpforge.jax
(custom_vjp), NumPy (the simulator) and CuPy arrays straight to the op, on
the caller's current stream unless `stream` says otherwise."""

import numpy as np

from . import _warpforge
from ._frameworks import current_stream as caller_stream
from ._frameworks import empty_strided, framework_of, to_tensor
from ._frameworks import dtype_name


def _contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    return tuple(strides)


def _norm(kind, x, weight, bias, eps, residual, stream):
    fw = framework_of(x)
    if fw == "jax":
        from . import jax_rows

        return (jax_rows.rms_norm(x, weight, eps, residual) if kind == "rms"
                else jax_rows.layer_norm(x, weight, bias, eps, residual))
    if fw == "torch" and stream is None:
        from . import torch_rows

        return (torch_rows.rms_norm(x, weight, eps, residual) if kind == "rms"
                else torch_rows.layer_norm(x, weight, bias, eps, residual))
    shape, rows = tuple(x.shape), tuple(x.shape[:-1])
    y = empty_strided(x, shape, _contiguous_strides(shape), dtype_name(x.dtype))
    h = None
    if residual is not None:
        h_dtype = np.promote_types(np.dtype(x.dtype), np.dtype(residual.dtype)) if fw == "numpy" else x.dtype
        h = empty_strided(x, shape, _contiguous_strides(shape), dtype_name(h_dtype))
    tensors = [x, residual, weight, bias, y, h, None, None]
    views = [None if t is None else to_tensor(t, role) for t, role in
             zip(tensors, ("x", "residual", "weight", "bias", "y", "residual_out", "mean", "rstd"))]
    _warpforge.norm_op(views, kind, float(eps)).execute(views, stream=caller_stream(x, stream))
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
