"""The row ops for JAX (imported by warpforge.jax): differentiable functions
(jax.custom_vjp) whose forward and backward are XLA FFI calls of one handler
(warpforge_row_op, python/src/jax/row_ops_ffi.cpp), usable eagerly and in
jax.jit, on XLA's stream; CPU arrays run on the simulator.

    y = warpforge.jax.rms_norm(x, weight, eps=1e-6)
    y, h = warpforge.jax.layer_norm(x, weight, bias, residual=r)
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from . import _warpforge

_XLA_PLATFORMS = {"cuda": "CUDA", "cpu": "Host"}  # as warpforge.jax registers its targets
for _platform, _capsule in _warpforge.jax_row_op_targets.items():
    jax.ffi.register_ffi_target("warpforge_row_op", _capsule, platform=_XLA_PLATFORMS[_platform])


def row_op(op, roles, tensors, outputs, options):
    """Calls row op `op`: `tensors` maps its input roles to arrays (None where
    absent), `outputs` its output roles to jax.ShapeDtypeStruct (None where
    absent), in the op's role order `roles`; returns the outputs present."""
    present, args, results = 0, [], []
    for i, role in enumerate(roles):
        value = tensors.get(role, outputs.get(role))
        if value is None:
            continue
        present |= 1 << i
        (results if role in outputs else args).append(value)
    call = jax.ffi.ffi_call("warpforge_row_op", tuple(results))
    return call(*args, op=op, present=np.int64(present), options=options)


def _options(kind, eps):
    return f"{kind} {float(eps).hex()}"


_NORM_ROLES = ("x", "residual", "weight", "bias", "y", "residual_out", "mean", "rstd")
_NORM_BACKWARD_ROLES = ("dy", "x", "weight", "mean", "rstd", "dresidual_out", "dx", "dweight", "dbias")


def _rows(x):
    return x.shape[:-1]


def _norm_forward(x, residual, weight, bias, kind, eps):
    h_dtype = x.dtype if residual is None else jnp.promote_types(x.dtype, residual.dtype)
    outputs = {"y": jax.ShapeDtypeStruct(x.shape, x.dtype),
               "residual_out": None if residual is None else jax.ShapeDtypeStruct(x.shape, h_dtype),
               "mean": jax.ShapeDtypeStruct(_rows(x), jnp.float32) if kind == "layer" else None,
               "rstd": jax.ShapeDtypeStruct(_rows(x), jnp.float32)}
    out = list(row_op("norm", _NORM_ROLES, {"x": x, "residual": residual, "weight": weight, "bias": bias}, outputs,
                      _options(kind, eps)))
    y = out.pop(0)
    h = out.pop(0) if residual is not None else None
    mean = out.pop(0) if kind == "layer" else None
    return y, h, mean, out.pop(0)


@partial(jax.custom_vjp, nondiff_argnums=(4, 5))
def _norm(x, residual, weight, bias, kind, eps):
    y, h, _, _ = _norm_forward(x, residual, weight, bias, kind, eps)
    return y, h


def _norm_fwd(x, residual, weight, bias, kind, eps):
    y, h, mean, rstd = _norm_forward(x, residual, weight, bias, kind, eps)
    dtypes = (x.dtype, None if residual is None else residual.dtype, None if bias is None else bias.dtype)
    return (y, h), (h if residual is not None else x, weight, mean, rstd, _Static(dtypes))


class _Static:
    """Dtypes carried through custom_vjp's residuals as a pytree leafless node."""

    def __init__(self, value):
        self.value = value


jax.tree_util.register_pytree_node(_Static, lambda s: ((), s.value), lambda value, _: _Static(value))


def _norm_bwd(kind, eps, saved, cotangents):
    h, weight, mean, rstd, static = saved
    x_dtype, residual_dtype, bias_dtype = static.value
    dy, dh = cotangents
    outputs = {"dx": jax.ShapeDtypeStruct(h.shape, h.dtype),
               "dweight": None if weight is None else jax.ShapeDtypeStruct(weight.shape, weight.dtype),
               "dbias": None if bias_dtype is None else jax.ShapeDtypeStruct(h.shape[-1:], bias_dtype)}
    out = list(row_op("norm_backward", _NORM_BACKWARD_ROLES,
                      {"dy": dy, "x": h, "weight": weight, "mean": mean, "rstd": rstd,
                       "dresidual_out": dh if residual_dtype is not None else None},
                      outputs, _options(kind, eps)))
    dx = out.pop(0)
    dweight = out.pop(0) if weight is not None else None
    dbias = out.pop(0) if bias_dtype is not None else None
    return (dx.astype(x_dtype), None if residual_dtype is None else dx.astype(residual_dtype), dweight, dbias)


_norm.defvjp(_norm_fwd, _norm_bwd)


def rms_norm(x, weight=None, eps=1e-6, residual=None):
    """RMSNorm over the last dimension: y, or (y, x + residual) with a residual."""
    y, h = _norm(x, residual, weight, None, "rms", float(eps))
    return y if residual is None else (y, h)


def layer_norm(x, weight=None, bias=None, eps=1e-5, residual=None):
    """LayerNorm over the last dimension: y, or (y, x + residual) with a residual."""
    y, h = _norm(x, residual, weight, bias, "layer", float(eps))
    return y if residual is None else (y, h)
